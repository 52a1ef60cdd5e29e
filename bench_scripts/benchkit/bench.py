"""Time your own JAX code: :class:`Bench`, the harness as a library.

::

    import jax, jax.numpy as jnp
    from benchkit import Bench

    bench = Bench("tanh_sum")
    bench.time("tanh", jax.jit(lambda x: jnp.tanh(x).sum()), jnp.ones(1_000_000))
    bench.run()

Run as a script, ``bench.run()`` starts ``runs`` separate processes, each running the same
script again as a worker (as pyperf does): each worker warms every function up, then times
them interleaved in shuffled rounds at the chosen boundary, counting compiles inside every
timed window, and writes its rows with provenance. The parent merges the runs into
``<results>/<machine>/<name>.csv`` (the site's results schema), prints a Markdown summary (the
median per call, the spread between runs and, for two or more functions, each one's paired
verdict and equivalence verdict against the first), and returns it as a :class:`Report`.

Boundaries: ``completed`` (the call and its output ready: what a caller waits for),
``dispatch`` (until the call returns, output maybe not ready), ``loop`` (calls back to back,
blocked once at the end: throughput), and :meth:`Bench.first_call` (a fresh function's first
call, split into the ahead-of-time stages trace, lower, compile and first execute).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import archive, compiles, layout, provenance, report, runner, verdicts
from .figure import Config, Recorder, ReferenceMismatch, check_close
from .results import read_rows, to_csv_text, write_atomic
from .schema import figure_id_for
from .timing import Sample, time_first_call

NAME_RE = re.compile(r"[a-z][a-z0-9_]*")  # a results file's stem: its figure id is fig-<stem with - for _>
LABEL_RE = re.compile(r"[a-z0-9][a-z0-9._-]*")  # a function's label: the ``variant`` column
TIMED_BOUNDARIES = ("completed", "dispatch", "loop")
FIRST_CALL_SAMPLES = 8  # first calls per run: each one compiles a fresh function
# Samples per function and run at least. The harness's own minimum is 5, sized for figures whose
# budget buys many more; a millisecond call gets only a few dozen from the 50 ms budget, and on a
# shared machine a slow stretch of a second can hold the median of fewer (the chapter's figure).
MIN_SAMPLES_PER_RUN = 30
EXIT_USAGE, EXIT_MISMATCH, EXIT_FAILED = 2, 3, 4  # a worker's exit status, read by the parent


class BenchError(SystemExit):
    """Something the user must fix, said in one message: a function that fails or does not
    compile, values that differ, a bad name or setting, a run that failed. Left uncaught it
    ends the script as ``sys.exit("benchkit: ...")`` does: the message, exit status 1, no
    traceback, nothing written. ``except BenchError`` catches it (it is not an ``Exception``)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"benchkit: {message}")
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass
class _Cell:
    label: str
    fn: Callable
    args: tuple
    boundary: str  # a timed boundary, or "first-call" (``fn`` makes a fresh function)
    check: Any = None  # a reference value, a callable returning one, or None
    rtol: float = 1e-5
    atol: float = 1e-6
    samples: int = FIRST_CALL_SAMPLES
    minimum: int | None = None  # samples per run at least (None: the harness's minimum)


def describe(args: Sequence[Any]) -> tuple[str, str]:
    """(dtype, shape) columns for a call's arguments: each array leaf's dtype (distinct ones
    joined with ``+``) and shape (``1024x1024``; leaves joined with ``,``)."""
    import jax

    leaves = [leaf for leaf in jax.tree_util.tree_leaves(tuple(args)) if hasattr(leaf, "shape")]
    dtypes = sorted({str(leaf.dtype) for leaf in leaves})
    shapes = ["x".join(map(str, leaf.shape)) or "scalar" for leaf in leaves]
    return "+".join(dtypes) or "none", ",".join(shapes)


def _options(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """benchkit's own options, wherever they are in ``argv``; the rest are the script's."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--worker", action="store_true")
    p.add_argument("--run-index", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--session", default="")
    p.add_argument("--out", type=Path)
    p.add_argument("--repo", type=Path)
    p.add_argument("--runs", type=int)
    p.add_argument("--results", type=Path)
    return p.parse_known_args(list(argv))


class Bench:
    """A set of functions timed together, in ``runs`` separate processes (see the module's
    docstring). ``name`` names the results file; ``results`` is its root folder (default:
    ``results/`` at the top of the current git work tree, else of the current folder);
    ``repo`` is the git work tree whose commit the rows record (default: the current
    directory's); ``margin`` is the equivalence verdict's margin (0.10: ±10 %).
    ``--runs N`` and ``--results DIR`` on the script's command line override them."""

    def __init__(self, name: str, *, runs: int = runner.DEFAULT_RUNS, results: Path | str | None = None,
                 repo: Path | str | None = None, margin: float = 0.10, min_samples: int = MIN_SAMPLES_PER_RUN,
                 argv: Sequence[str] | None = None, quiet: bool = False) -> None:
        if not NAME_RE.fullmatch(name):
            raise BenchError(f"Bench name {name!r}: lower-case letters, digits and '_', starting with a letter "
                             "(it names the results file)")
        self.name = name
        self.opts, self.script_args = _options(sys.argv[1:] if argv is None else argv)
        self.runs = runs if self.opts.runs is None else self.opts.runs
        if self.runs < 1:
            raise BenchError(f"runs must be at least 1, not {self.runs}")
        try:
            verdicts.check_margin(margin)
        except ValueError as err:
            raise BenchError(f"margin: {err}") from None
        if isinstance(min_samples, bool) or not isinstance(min_samples, int) or min_samples < 1:
            raise BenchError(f"min_samples must be a whole number of at least 1, not {min_samples!r}")
        self.min_samples = min_samples
        self.results = Path(self.opts.results or results or layout.default_results())
        self.repo = Path(self.opts.repo or repo) if (self.opts.repo or repo) else None
        self.margin = margin
        self.quiet = quiet
        self.cells: list[_Cell] = []

    # -- what to time ---------------------------------------------------------------------
    def time(self, label: str, fn: Callable, *args: Any, boundary: str = "completed", check: Any = None,
             rtol: float = 1e-5, atol: float = 1e-6) -> Bench:
        """Time ``fn(*args)`` at ``boundary``. ``check``: a reference value (or a callable
        returning one) the output must match (``rtol``/``atol``) before anything is timed."""
        if boundary not in TIMED_BOUNDARIES:
            raise BenchError(f"boundary {boundary!r}: one of {', '.join(TIMED_BOUNDARIES)} "
                             "(a first call: Bench.first_call)")
        self._add(_Cell(label, fn, tuple(args), boundary, check, rtol, atol, minimum=self.min_samples))
        return self

    def first_call(self, label: str, make: Callable[[], Callable], *args: Any,
                   samples: int = FIRST_CALL_SAMPLES) -> Bench:
        """Time the first call of a fresh function, ``samples`` times a run: ``make()`` must
        return a new Python function each time (jitting the same one again reuses its
        trace). Rows: ``<label>`` (the whole first call) and ``<label>:<stage>`` per stage."""
        self._add(_Cell(label, make, tuple(args), "first-call", samples=samples))
        return self

    def _add(self, cell: _Cell) -> None:
        if not LABEL_RE.fullmatch(cell.label):
            raise BenchError(f"label {cell.label!r}: lower-case letters, digits, '.', '_', '-'")
        if any(c.label == cell.label for c in self.cells):
            raise BenchError(f"label {cell.label!r} is used twice")
        self.cells.append(cell)

    # -- running ----------------------------------------------------------------------------
    def run(self) -> report.Report | None:
        """As a worker (started by the parent): measure once, write the rows, exit.
        Otherwise: run the workers, write the results file, print and return the report."""
        if not self.cells:
            raise BenchError("nothing to time: call bench.time(...) before bench.run()")
        if self.opts.worker:
            sys.exit(self._work())
        script = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
        if script is None or not script.is_file():
            raise BenchError("Bench.run() starts separate processes that run your script again: "
                             "run it as a script (python your_script.py), not from a notebook or a prompt")

        def command(run: int, out: Path, seed: int, session: str) -> list[str]:
            return [sys.executable, str(script), *self.script_args, "--worker", "--run-index", str(run),
                    "--seed", str(seed), "--session", session, "--out", str(out)] + (
                        ["--repo", str(self.repo)] if self.repo else [])
        path = run_processes(self.name, command, self.runs, self.results, quiet=self.quiet)
        self._record(path, script)
        labels = [c.label for c in self.cells]  # listed as added; the first timed one is the baseline
        first = next((c.label for c in self.cells if c.boundary != "first-call"), None)
        found = report.Report.from_rows(read_rows(path), path, margin=self.margin, order=labels, baseline=first)
        if not self.quiet:
            print(found.markdown())
        return found

    def _record(self, path: Path, script: Path) -> None:
        """The side file beside the results (``<name>.compare.json``, the compare command's format)
        that lets a site show them as a figure whose code is this script: written when every
        function was timed at one boundary (a first call's stage rows and mixed boundaries do not
        fit one table); otherwise any older one is removed and the user is told."""
        side = side_file(path)
        timed = {c.boundary for c in self.cells}
        if len(timed) != 1 or "first-call" in timed:
            side.unlink(missing_ok=True)
            if not self.quiet:
                print(f"{path}: no side file (first calls or more than one boundary), so a site build lists it "
                      "as results without a script; keep it outside a site's results/ folder", file=sys.stderr)
            return
        repo = self.repo or layout.find_repo(script.parent)
        shown = script.relative_to(repo.resolve()).as_posix() if repo and script.is_relative_to(repo.resolve()) \
            else script.name
        source = script.read_text(encoding="utf-8")
        digest = hashlib.sha256(source.encode()).hexdigest()
        labels = [c.label for c in self.cells]
        write_side(side, {
            "format": SIDE_FORMAT, "made_by": "benchkit Bench", "title": f"{self.name}: {', '.join(labels)}",
            "command": shlex.join(["python", shown, *self.script_args]), "boundary": timed.pop(),
            "margin": self.margin, "args": "", "ratio": [labels[1], labels[0]] if len(labels) > 1 else None,
            "versions": [{"variant": label, "target": f"{shown}:{label}", "revision": "", "path": shown,
                          "sha256": digest, "source": source} for label in labels]})

    def _work(self) -> int:
        """One worker process: check, measure every cell interleaved, write the rows."""
        try:
            rows = measure_cells(self.cells, Path(sys.argv[0]), self.name, self.opts)
        except BenchError as err:
            print(err, file=sys.stderr)
            return EXIT_MISMATCH
        except Exception as err:  # the user's function failed: its error, without our frames
            print(f"{type(err).__name__}: {first_line(err)}", file=sys.stderr)
            return EXIT_FAILED
        write_atomic(self.opts.out, to_csv_text(rows))
        return 0


def first_line(err: BaseException) -> str:
    """An error's message in one line (jax's runtime errors run to many): the first, marked when cut."""
    lines = [line for line in str(err).splitlines() if line.strip()]
    return (lines[0] + (" […]" if len(lines) > 1 else "")) if lines else type(err).__name__


def _reference(cell: _Cell) -> Any:
    return cell.check() if callable(cell.check) else cell.check


def _first_call_rows(cell: _Cell) -> Callable[[], list[tuple[Sample, dict]]]:
    import jax

    def sample() -> list[tuple[Sample, dict]]:
        with compiles.count() as seen:
            split = time_first_call(jax.jit(cell.fn()), cell.args)
        split["first-call"] = sum(split.values())
        rows = []
        for stage, t in split.items():
            mine = stage in ("compile", "first-call")  # the backend compile belongs to these two
            name = cell.label if stage == "first-call" else f"{cell.label}:{stage}"
            rows.append((Sample(t, 1, seen.n if mine else 0, seen.cache_hits if mine else 0), {"variant": name}))
        return rows
    return sample


def measure_cells(cells: Sequence[_Cell], script: Path, name: str, opts: argparse.Namespace, *,
                  clock: Any = None, block: Any = None) -> list[dict]:
    """What one worker does: provenance, the optional checks (raise :class:`BenchError` on a
    mismatch), then every cell warmed up and timed interleaved. Returns the rows to write.
    ``clock`` and ``block``: fakes whose timing a test controls (default: the real ones)."""
    import jax

    compiles.disable_persistent_cache()
    fields = provenance.collect_all(script, opts.repo or layout.find_repo(), session_id=opts.session,
                                    order_seed=opts.seed)
    fields["figure_id"] = figure_id_for(name)
    config = Config(run=opts.run_index, smoke=False, platform=str(fields["platform"]), seed=opts.seed)
    rec = Recorder(config, clock=clock, block=block)
    errors: dict[str, float] = {}
    for cell in cells:
        if cell.boundary != "first-call" and cell.check is not None:
            try:
                errors[cell.label] = check_close(jax.block_until_ready(cell.fn(*cell.args)), _reference(cell),
                                                 rtol=cell.rtol, atol=cell.atol, what=cell.label)
            except ReferenceMismatch as err:
                raise BenchError(str(err)) from None
    meter = provenance.LoadMeter().start()
    with rec.interleaved() as planned:
        for cell in cells:
            dtype, shape = describe(cell.args)
            extra = {"max_rel_error": errors[cell.label]} if cell.label in errors else {}
            if cell.boundary == "first-call":
                sampler = _first_call_rows(cell)
                planned.sample(cell.label, "first-call", sampler, cell.samples, dtype=dtype, shape=shape,
                               warmup=sampler, **extra)
            else:
                planned.collect(cell.label, cell.boundary, cell.fn, cell.args, dtype=dtype, shape=shape,
                                loop_calls=10, minimum=cell.minimum, **extra)
    fields.update(meter.stop())
    return [{**fields, **row} for row in rec.rows]


Command = Callable[[int, Path, int, str], list[str]]
SIDE_NAME = "compare.json"  # results/<machine>/<name>.compare.json: what made the results, and its code
SIDE_FORMAT = 1


def side_file(results_file: Path) -> Path:
    """``<name>.compare.json`` beside ``<name>.csv``."""
    return results_file.with_name(f"{results_file.stem}.{SIDE_NAME}")


def write_side(path: Path, record: dict) -> None:
    write_atomic(path, json.dumps(record, indent=1) + "\n")


def _run_worker(cmd: list[str]) -> tuple[int, str]:
    """A worker's exit status and stderr. No code runs in the child before it starts the worker
    (no ``preexec_fn``): the parent here is the user's script, which has usually imported jax and
    started its threads, and forking such a process to run Python in it can deadlock. On Ctrl-C
    ``subprocess.run`` kills the worker before the interrupt goes on."""
    try:
        done = subprocess.run(cmd, stderr=subprocess.PIPE, text=True, timeout=runner.RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return -1, f"still running after {runner.RUN_TIMEOUT_S} s: stopped"
    return done.returncode, done.stderr


def run_processes(name: str, command: Command, runs: int, results: Path, *, quiet: bool = False) -> Path:
    """Run ``runs`` worker processes one after another (``command(run, out, seed, session)``
    builds each one's command line), merge their rows and replace
    ``<results>/<machine>/<name>.csv`` in one rename. A worker that fails stops the session
    with its own message (:class:`BenchError`); nothing is written then."""
    session = provenance.new_session_id()
    with tempfile.TemporaryDirectory(prefix="benchkit-") as tmp:
        staging, parts, walls = Path(tmp), [], {}
        started = time.monotonic()
        for run in range(runs):
            if not quiet:
                print(f"[{name}] run {run + 1} of {runs} (elapsed {time.monotonic() - started:.1f} s)",
                      file=sys.stderr, flush=True)
            part = staging / f"{name}.run{run}.csv"
            t0 = time.monotonic()
            code, stderr = _run_worker(command(run, part, runner.run_seed(session, name, run), session))
            walls[part] = time.monotonic() - t0
            if code != 0:
                said = runner._tail(stderr, 8) or f"exit status {code}"
                raise BenchError(f"{name}: run {run + 1} failed: {said}")
            parts.append(part)
        text, machine = runner._merge(name, parts, walls)
        out = layout.results_file(results, machine, name)
        archive.keep_before_replacing(out, results, session, quiet=quiet)
        write_atomic(out, text)  # a temporary file beside it, then one rename
    return out

