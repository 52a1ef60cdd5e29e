"""One figure script = one ``measure(recorder)`` function plus ``figure_main``.

Run as ``python bench_scripts/<stem>.py`` it orchestrates R separate processes
(see ``runner``); each of those runs it again with ``--worker``, measures once,
and writes its rows, with provenance, to a staging file.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import compiles, layout, provenance, timing
from .results import to_csv_text, write_atomic
from .runner import CANNOT_RUN_HERE, figure_settings
from .schema import format_params


class ReferenceMismatch(AssertionError):
    """The computation disagrees with its independent NumPy reference."""


@dataclass(frozen=True)
class Config:
    """How this process should measure."""

    run: int
    smoke: bool
    platform: str
    seed: int = 0  # the run's order seed: variants are measured in an order drawn from it
    process_index: int = 0  # which of the run's processes this is (FIGURE "processes")
    process_count: int = 1

    @property
    def budget_s(self) -> float:
        return 0.02 if self.smoke else timing.BUDGET_S

    @property
    def min_samples(self) -> int:
        return 3 if self.smoke else timing.MIN_SAMPLES

    @property
    def accelerator(self) -> bool:
        return self.platform != "cpu"


def cell_key(variant: str, boundary: str, params: dict[str, object] | None) -> str:
    """How the ``after`` column names a cell: ``variant|boundary|params``."""
    return f"{variant}|{boundary}|{format_params(params or {})}"


class Recorder:
    """Collects one process's samples as rows of the results schema.

    Every recorded sample gets ``seq``, its position in the run's measuring
    order, and ``after``, the cell (``variant|boundary|params``) whose sample
    was taken just before it in this process (empty for the first). ``order``
    is a ``random.Random`` seeded with the run's order seed (``config.seed``):
    :meth:`interleaved` draws each round's visiting order from it, and
    :meth:`shuffled` orders blocks that cannot be interleaved.
    """

    def __init__(self, config: Config, artifacts: Path | None = None, *,
                 clock: timing.Clock | None = None, block: timing.Block | None = None) -> None:
        self.config = config
        self.rows: list[dict[str, Any]] = []
        self.order = random.Random(config.seed)
        self._next_sample: dict[tuple, int] = defaultdict(int)
        self._next_seq = 0
        self._last_cell = ""  # the cell of the sample taken last: the next one's ``after``
        self._artifacts = artifacts
        # Only tests pass these: fakes whose timing they control.
        self._timing_kw = {k: v for k, v in (("clock", clock), ("block", block)) if v is not None}

    def artifact(self, name: str) -> Path:
        """Where to write a side file (a trace, a profile). The first run's
        side files are published beside the CSV as ``<stem>.<name>``."""
        if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name):
            raise ValueError(f"artifact name {name!r}: lower-case letters, digits, '.', '_', '-'")
        if self._artifacts is None:
            raise RuntimeError("this recorder has no artifact folder (not running as a worker)")
        self._artifacts.mkdir(parents=True, exist_ok=True)
        return self._artifacts / name

    def add(self, variant: str, boundary: str, samples: Iterable[timing.Sample], *,
            dtype: str, shape: str, params: dict[str, object] | None = None,
            after: str | None = None, **extra: object) -> None:
        """Record samples for one (variant, params), in the order they were taken;
        ``extra`` fills optional columns. Each sample's ``seq`` is the next
        position in the run's measuring order; its ``after`` is the cell recorded
        just before it (``after`` given: the first sample's, for rows recorded out
        of the order they were taken in)."""
        params_text = format_params(params or {})
        key = (variant, params_text)
        cell = cell_key(variant, boundary, params)
        for s in samples:
            usage = s.usage.columns() if s.usage is not None else {}
            self.rows.append({"variant": variant, "boundary": boundary, "dtype": dtype,
                              "shape": shape, "params": params_text, "run": self.config.run,
                              "process_index": self.config.process_index,
                              "process_count": self.config.process_count,
                              "sample": self._next_sample[key], "seq": self._next_seq,
                              "after": self._last_cell if after is None else after,
                              "lead_in": s.lead_in, "calls": s.calls, "compiles": s.compiles,
                              "cache_hits": s.cache_hits, "time_s": s.time_s, **usage, **extra})
            self._next_sample[key] += 1
            self._next_seq += 1
            self._last_cell, after = cell, None

    def collect(self, variant: str, boundary: str, fn: Callable, args: Sequence, *,
                dtype: str, shape: str, params: dict[str, object] | None = None,
                loop_calls: int = 50, maximum: int = timing.MAX_SAMPLES, calls: int | None = None,
                **extra: object) -> list[timing.Sample]:
        """Warm up, time within this run's budget, record, and return the samples
        of one cell. To compare variants or sizes, use :meth:`interleaved`.

        ``maximum`` caps the sample count (never below the run's minimum) where
        one sample's wall time far exceeds its timed interval: a dispatch-only
        time of a long computation waits for the output after the clock stops,
        so a budget of timed work alone would ask for the full cap of slow samples.
        ``calls`` fixes the calls per ``dispatch``/``completed`` sample (default:
        enough for a sample to span ``timing.MIN_SAMPLE_S``).
        """
        samples = timing.collect(boundary, fn, args, budget_s=self.config.budget_s,
                                 minimum=self.config.min_samples, maximum=maximum,
                                 loop_calls=loop_calls, calls=calls, **self._timing_kw)
        self.add(variant, boundary, samples, dtype=dtype, shape=shape, params=params,
                 after=cell_key(variant, boundary, params), **extra)  # its own sizing ran last
        return samples

    def interleaved(self) -> Interleaved:
        """Cells measured together, interleaved in seeded shuffled rounds::

            with rec.interleaved() as cells:
                cells.collect("dispatch", "dispatch", f, (x,), dtype="float32", shape="8")
                cells.collect("completed", "completed", f, (x,), dtype="float32", shape="8")
            # measured and recorded when the block ends
        """
        return Interleaved(self)

    def shuffled(self, items: Iterable[Any]) -> list[Any]:
        """``items`` in an order drawn from this run's seed: for blocks that must
        run one after another (first calls of fresh functions, say)."""
        out = list(items)
        self.order.shuffle(out)
        return out


@dataclass
class _Planned:
    cell: timing.Cell
    variant: str
    boundary: str
    columns: dict[str, Any]


class Interleaved:
    """Cells added with :meth:`collect` (a function at a boundary) or
    :meth:`sample` (a script's own sampler) are measured by :meth:`run`, or on
    leaving the ``with`` block: every cell warmed up, each sized from the run's
    budget, then one sample per cell per round, in an order shuffled per round
    with the recorder's seeded ``random.Random``. Samples are recorded in the
    order they were taken, so ``seq`` is the execution order."""

    def __init__(self, rec: Recorder) -> None:
        self.rec = rec
        self.planned: list[_Planned] = []
        self.samples: list[list[timing.Sample]] | None = None

    def collect(self, variant: str, boundary: str, fn: Callable, args: Sequence, *,
                dtype: str, shape: str, params: dict[str, object] | None = None,
                loop_calls: int = 50, maximum: int = timing.MAX_SAMPLES, calls: int | None = None,
                minimum: int | None = None, **extra: object) -> None:
        """As :meth:`Recorder.collect`, measured later, interleaved with the other cells."""
        least = self.rec.config.min_samples if minimum is None else minimum
        cell = timing.Cell(boundary, fn, args, loop_calls=loop_calls, calls=calls, minimum=least,
                           maximum=maximum)
        self._plan(cell, variant, boundary, dtype, shape, params, extra)

    def sample(self, variant: str, boundary: str, sampler: Callable[[], Any], count: int, *,
               dtype: str, shape: str, params: dict[str, object] | None = None,
               warmup: Callable[[], Any] | None = None, **extra: object) -> None:
        """``count`` samples from ``sampler()``, which returns a :class:`~benchkit.Sample`,
        a ``(Sample, {column: value})`` pair (columns that differ per sample), or a
        list of such pairs: several rows from one measurement (first-call stages),
        where the dict may also name the row's ``variant``. ``warmup`` runs once,
        untimed, with every other cell's warm-up."""
        cell = timing.Cell(boundary, sampler=sampler, count=count, warmup=warmup)
        self._plan(cell, variant, boundary, dtype, shape, params, extra)

    def _plan(self, cell: timing.Cell, variant: str, boundary: str, dtype: str, shape: str,
              params: dict[str, object] | None, extra: dict[str, object]) -> None:
        if self.samples is not None:
            raise RuntimeError("these cells were already measured")
        format_params(params or {})  # a bad parameter fails now, not after the measuring
        columns = {"dtype": dtype, "shape": shape, "params": params, **extra}
        self.planned.append(_Planned(cell, variant, boundary, columns))

    def run(self) -> list[list[timing.Sample]]:
        """Measure every cell, record the samples, return them per cell (in the
        order the cells were added)."""
        if self.samples is not None:
            raise RuntimeError("these cells were already measured")
        taken = timing.interleave([p.cell for p in self.planned], self.rec.order,
                                  budget_s=self.rec.config.budget_s, **self.rec._timing_kw)
        self.samples = [[] for _ in self.planned]
        sized = [p for p in self.planned if p.cell.sampler is None]
        if sized:  # warm-up and sizing ran every cell; the last one sized ran just before round 1
            last = sized[-1]
            self.rec._last_cell = cell_key(last.variant, last.boundary, last.columns["params"])
        for index, got in taken:
            plan = self.planned[index]
            before = self.rec._last_cell  # every row of one measurement ran after the same cell
            for item in got if isinstance(got, list) else [got]:
                sample, more = item if isinstance(item, tuple) else (item, {})
                columns = {**plan.columns, **more}
                variant = columns.pop("variant", plan.variant)
                self.rec.add(variant, plan.boundary, [sample], after=before, **columns)
                self.samples[index].append(sample)
        return self.samples

    def __enter__(self) -> Interleaved:
        return self

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        if kind is None and self.samples is None:
            self.run()


# --8<-- [start:check]
def check_close(actual: Any, reference: Any, *, rtol: float, atol: float, what: str) -> float:
    """Compare with an independent NumPy result before any timing is trusted.

    Returns the largest absolute error relative to the largest reference value
    (a norm-wise error that stays meaningful where entries pass through zero);
    raises :class:`ReferenceMismatch`
    (which stops the script before it writes anything) when out of tolerance.
    """
    import numpy as np

    got = np.asarray(actual, dtype=np.float64)
    want = np.asarray(reference, dtype=np.float64)
    if got.shape != want.shape:
        raise ReferenceMismatch(f"{what}: shape {got.shape} != reference shape {want.shape}")
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        worst = float(np.max(np.abs(got - want)))
        raise ReferenceMismatch(f"{what}: differs from the NumPy reference by up to {worst:.3g} "
                                f"(rtol={rtol}, atol={atol}); not timing a wrong answer")
    scale = max(float(np.max(np.abs(want), initial=0.0)), np.finfo(np.float64).tiny)
    return float(np.max(np.abs(got - want), initial=0.0)) / scale
# --8<-- [end:check]


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Measure one figure (R runs unless --worker).")
    parser.add_argument("--worker", action="store_true", help="measure once, in this process")
    parser.add_argument("--run-index", type=int, default=0)
    parser.add_argument("--session", default="", help="worker: the session id (one make bench)")
    parser.add_argument("--seed", type=int, default=None,
                        help="worker: order seed for this run (default: derived from the run index)")
    parser.add_argument("--out", type=Path, help="worker: where to write this run's rows")
    parser.add_argument("--artifacts", type=Path, help="worker: folder for side files")
    parser.add_argument("--smoke", action="store_true", default=os.environ.get("BENCH_SMOKE") == "1",
                        help="tiny sizes and budgets, so the script is exercised quickly")
    parser.add_argument("--coordinator", default="", help="worker of a multi-process run: host:port")
    parser.add_argument("--num-processes", type=int, default=1, help="worker: processes in the run")
    parser.add_argument("--process-id", type=int, default=0, help="worker: this process's index")
    parser.add_argument("--runs", type=int, help="orchestrator: number of processes (R)")
    parser.add_argument("--results", type=Path, help="orchestrator: results root folder")
    parser.add_argument("--repo", type=Path, default=None,
                        help="worker: the git work tree provenance reads (default: the current directory's)")
    return parser.parse_args(argv)


class CannotRunHere(RuntimeError):
    """This machine cannot run the figure (too few devices, no accelerator): reported, not failed."""


def start_runtime(script: Path, args: argparse.Namespace) -> None:
    """Before anything touches a backend: the figure's simulated CPU devices (``FIGURE``
    ``"cpu_devices"``), then, in a multi-process run, ``jax.distributed`` with the
    coordinator the runner chose. Refuses (``CannotRunHere``) when the figure needs more
    devices (``"min_devices"``, counted over every process) than there are."""
    import jax

    settings = figure_settings(script)
    if "cpu_devices" in settings:
        jax.config.update("jax_num_cpu_devices", int(settings["cpu_devices"]))
    if args.coordinator:
        jax.distributed.initialize(coordinator_address=args.coordinator, num_processes=args.num_processes,
                                   process_id=args.process_id, initialization_timeout=60)
    need = int(settings.get("min_devices", 1))
    if jax.device_count() < need:
        raise CannotRunHere(f"needs {need} devices across its processes; this machine has "
                            f"{jax.device_count()} ({jax.devices()[0].platform})")


# --8<-- [start:worker]
def run_worker(script: Path, measure: Callable[[Recorder], None], args: argparse.Namespace) -> int:
    seed = args.seed if args.seed is not None else 1000 + args.run_index
    try:
        start_runtime(script, args)  # multi-process: joins the run's jax.distributed runtime
    except CannotRunHere as err:
        print(f"{script.name}: cannot run here: {err}", file=sys.stderr)
        return CANNOT_RUN_HERE
    compiles.disable_persistent_cache()  # before provenance, which records the cache's state
    repo = args.repo or layout.find_repo()
    fields = provenance.collect_all(script, repo, session_id=args.session, order_seed=seed)
    config = Config(run=args.run_index, smoke=args.smoke, platform=str(fields["platform"]), seed=seed,
                    process_index=args.process_id, process_count=args.num_processes)
    recorder = Recorder(config, args.artifacts)
    meter = provenance.LoadMeter().start()  # what else ran while this process measured
    try:
        measure(recorder)
    except ReferenceMismatch as err:
        print(f"{script.name}: reference check failed: {err}", file=sys.stderr)
        return 3
    except compiles.PersistentCacheHit as err:
        print(f"{script.name}: refused: {err}", file=sys.stderr)
        return 5
    except CannotRunHere as err:
        print(f"{script.name}: cannot run here: {err}", file=sys.stderr)
        return CANNOT_RUN_HERE
    if not recorder.rows and config.process_index == 0:  # other processes may leave the recording to 0
        print(f"{script.name}: measure() recorded no samples", file=sys.stderr)
        return 4
    fields.update(meter.stop())
    write_atomic(args.out, to_csv_text({**fields, **row} for row in recorder.rows))
    return 0
# --8<-- [end:worker]


def figure_main(script_file: str, measure: Callable[[Recorder], None],
                argv: Sequence[str] | None = None) -> None:
    """Entry point of every figure script."""
    script = Path(script_file).resolve()
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.worker:
        if args.out is None:
            sys.exit("--worker needs --out")
        sys.exit(run_worker(script, measure, args))
    from . import runner

    argv2 = ["--only", script.stem] + (["--smoke"] if args.smoke else [])
    argv2 += ["--runs", str(args.runs)] if args.runs else []
    argv2 += ["--results", str(args.results)] if args.results else []
    sys.exit(runner.main(argv2, bench_dir=script.parent))
