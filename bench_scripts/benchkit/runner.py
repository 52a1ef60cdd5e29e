"""Run figure scripts R times each, as separate processes, and publish atomically.

Standard library only: this process never imports jax; its workers do.

* One run = one process (``<script> --worker``), so run-to-run spread is
  measured between processes, not assumed.
* One invocation is a session (one id, recorded on every row). Runs are
  interleaved across figures: run 1 of every figure, then run 2, ..., so a
  figure's runs are spread over the session; each run gets an order seed.
* A figure's file in ``results/<machine>/`` is replaced in one rename only when
  all R runs succeeded; a failure or an interrupt leaves the old file as it was.
* Only the folder of the machine that measured is written.
* One ``make bench`` at a time: a second is refused while the lock is held.
* A figure whose ``FIGURE`` sets ``"processes": N`` runs as N worker processes
  per run, started together with a coordinator address on 127.0.0.1 (a free
  port), ``--num-processes`` and ``--process-id``; they join one
  ``jax.distributed`` runtime and each writes its own rows (``process_index``,
  ``process_count``). A worker that dies or hangs fails the run within the
  figure's timeout: every other worker of the run is killed and reaped, nothing
  is published, and the port is free again.
* A worker that exits with ``CANNOT_RUN_HERE`` (the figure needs more devices
  than this machine has) marks its figure skipped, with the worker's reason;
  that is not a failure of the session.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import hashlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .layout import default_results, figure_scripts, results_file, side_file
from .provenance import new_session_id
from .results import read_rows, to_csv_text, write_atomic

try:
    import fcntl
except ImportError:  # Windows: a byte-range lock instead
    fcntl = None
    import msvcrt

DEFAULT_RUNS = 6  # with the budgets below, a whole session measures in under ten minutes on 2 cores
RUN_TIMEOUT_S = 900  # one process of one figure; far above any figure's budget
MULTI_TIMEOUT_S = 300  # one multi-process run (default; FIGURE "timeout_s" overrides): a hung peer
CANNOT_RUN_HERE = 6  # a worker's exit status: this machine cannot run the figure (not a failure)
POLL_S = 0.05  # how often a multi-process run's workers are checked
# FIGURE keys that shape how a figure runs: worker processes per run, a run's time limit,
# simulated CPU devices per process (set before the backend starts), devices it needs in all,
# and the wall time one run should take here (a budget: reported when exceeded, never enforced).
RUNTIME_KEYS = ("processes", "timeout_s", "cpu_devices", "min_devices", "budget_s")


class BenchLocked(RuntimeError):
    pass


@dataclass(frozen=True)
class Outcome:
    stem: str
    ok: bool
    wall_s: float
    message: str
    skipped: bool = False  # the machine cannot run this figure: reported, not a failure


def _try_lock(fh: Any) -> bool:
    """Take an exclusive lock on an open file without waiting: ``flock`` on POSIX, ``msvcrt``'s
    byte-range lock on Windows. Either way the operating system drops it when the process dies."""
    try:
        if fcntl is not None:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:
            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
    except OSError:
        return False
    return True


@contextlib.contextmanager
def bench_lock(state_dir: Path) -> Iterator[None]:
    """Hold ``state_dir/lock`` for the whole run; the kernel drops it if we die."""
    state_dir.mkdir(parents=True, exist_ok=True)
    fh = open(state_dir / "lock", "a+")
    if not _try_lock(fh):
        fh.seek(0)
        holder = fh.read().strip() or "unknown"
        fh.close()
        raise BenchLocked(f"another benchmark run holds {state_dir / 'lock'} ({holder}); "
                          "refusing to start a second one: wait for it or stop it") from None
    fh.seek(0)
    fh.truncate()
    fh.write(f"pid {os.getpid()} since {time.strftime('%H:%M:%S')}\n")
    fh.flush()
    try:
        yield
    finally:
        fh.close()


def _merge(stem: str, parts: list[Path], walls: dict[Path, float] | None = None) -> tuple[str, str]:
    """All runs' rows as one CSV text, and the machine label they agree on. ``walls``:
    each part's run wall time as the runner saw it (start-up, import and compiles
    included), written into its rows' ``run_wall_s``."""
    walls = walls or {}
    rows = [{**row, "run_wall_s": f"{walls[part]:.3f}"} if part in walls else row
            for part in parts for row in read_rows(part)]
    machines = {row["machine"] for row in rows}
    if len(machines) != 1:
        raise RuntimeError(f"{stem}: runs disagree on the machine label: {sorted(machines)}")
    return to_csv_text(rows), machines.pop()


# --8<-- [start:runs]
def run_seed(session: str, stem: str, run: int) -> int:
    """The order seed of one run: reproducible from the recorded session id."""
    return int.from_bytes(hashlib.sha256(f"{session}:{stem}:{run}".encode()).digest()[:4], "big")


@dataclass
class Figure:
    """One figure's progress through a session."""

    script: Path
    parts: list[Path] = field(default_factory=list)
    walls: dict[Path, float] = field(default_factory=dict)  # each part's run wall time
    wall_s: float = 0.0
    error: str | None = None
    skipped: str | None = None  # why this machine cannot run it
    processes: int = 1  # worker processes per run (FIGURE "processes")
    timeout_s: float = RUN_TIMEOUT_S
    budget_s: float | None = None  # wall seconds one run should take (FIGURE "budget_s")

    def __post_init__(self) -> None:
        settings = figure_settings(self.script)
        self.processes = int(settings.get("processes", 1))
        default = MULTI_TIMEOUT_S if self.processes > 1 else RUN_TIMEOUT_S
        self.timeout_s = float(settings.get("timeout_s", default))
        self.budget_s = float(settings["budget_s"]) if "budget_s" in settings else None

    @property
    def stem(self) -> str:
        return self.script.stem

    @property
    def done(self) -> bool:
        return self.error is not None or self.skipped is not None


def figure_settings(script: Path) -> dict:
    """The ``RUNTIME_KEYS`` of a script's ``FIGURE`` literal (read, never imported: this
    process has no jax); {} when there is none."""
    try:
        tree = ast.parse(script.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}  # the worker reports a broken script itself
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FIGURE" for t in node.targets):
            try:
                meta = ast.literal_eval(node.value)
            except ValueError:
                return {}
            return {k: meta[k] for k in RUNTIME_KEYS if k in meta}
    return {}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now, for one run's coordinator."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_STOP = {signal.SIGINT, signal.SIGTERM}
# Holding the stop signals while a worker starts needs POSIX signal masks; elsewhere (Windows)
# there are none to hold, and an interrupt in that gap is handled as at any other moment.
_MASKS = hasattr(signal, "pthread_sigmask")


def _mask(how: str, signals: Any) -> Any:
    """``signal.pthread_sigmask(signal.<how>, signals)`` where signal masks exist."""
    return signal.pthread_sigmask(getattr(signal, how), signals) if _MASKS else set()


def _unblock_stop_signals() -> None:  # in the worker, before exec: it starts interruptible
    _mask("SIG_UNBLOCK", _STOP)


_START = {"preexec_fn": _unblock_stop_signals} if _MASKS else {}


def _run_worker(cmd: list[str]) -> tuple[int, str]:
    """The worker's exit status and stderr. Ctrl-C or SIGTERM at any moment, even while the worker
    is being started, stops it too: the signals are held until the process object exists, so the
    interrupt lands where the worker is killed (a worker started in that gap used to outlive the
    runner, holding its output open)."""
    held = _mask("SIG_BLOCK", _STOP)
    try:
        proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, **_START)
        with proc:
            try:
                _mask("SIG_SETMASK", held)  # a held interrupt is raised here
                _, stderr = proc.communicate(timeout=RUN_TIMEOUT_S)
            except BaseException:
                proc.kill()
                raise
    finally:
        _mask("SIG_SETMASK", held)
    return proc.returncode, stderr


def _kill_all(procs: list[subprocess.Popen]) -> None:
    """Kill and reap every worker still running: none outlives its run."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
    for proc in procs:
        proc.wait()


def _run_group(cmds: list[list[str]], errs: list[Path], timeout_s: float) -> list[int | None]:
    """Start one run's workers together and wait for all of them. The first worker to fail
    (or the deadline) ends the run: the others are killed at once, since a peer of a dead
    process waits in its collectives until the runtime's own (long) heartbeat timeout.
    Returns each worker's exit status; ``None`` for one killed because another failed or
    the time ran out. Interrupts are handled as in :func:`_run_worker`."""
    procs: list[subprocess.Popen] = []
    held = _mask("SIG_BLOCK", _STOP)
    try:
        try:
            for cmd, err in zip(cmds, errs):
                with open(err, "w") as fh:
                    procs.append(subprocess.Popen(cmd, stderr=fh, stdout=subprocess.DEVNULL,
                                                  **_START))
            _mask("SIG_SETMASK", held)  # a held interrupt is raised here
            deadline = time.monotonic() + timeout_s
            while True:
                codes = [p.poll() for p in procs]  # every worker, each time (any() would stop early)
                if None not in codes or any(c not in (None, 0) for c in codes) or time.monotonic() > deadline:
                    break
                time.sleep(POLL_S)
        finally:
            _kill_all(procs)  # on success there is nothing left to kill
    finally:
        _mask("SIG_SETMASK", held)
    return codes


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _worker_cmd(fig: Figure, run: int, session: str, smoke: bool, staging: Path, out: Path) -> list[str]:
    return [sys.executable, str(fig.script), "--worker", "--run-index", str(run), "--out", str(out),
            "--artifacts", str(staging / f"{fig.stem}.run{run}.artifacts"),
            "--session", session, "--seed", str(run_seed(session, fig.stem, run))] + (["--smoke"] if smoke else [])


def run_once(fig: Figure, run: int, session: str, smoke: bool, staging: Path) -> None:
    """One process (or ``fig.processes`` together) measures one run of one figure into staging files."""
    if fig.processes > 1:
        return run_group(fig, run, session, smoke, staging)
    part = staging / f"{fig.stem}.run{run}.csv"
    started = time.monotonic()
    try:
        returncode, stderr = _run_worker(_worker_cmd(fig, run, session, smoke, staging, part))
    except subprocess.TimeoutExpired:
        fig.error = f"run {run + 1} exceeded {RUN_TIMEOUT_S} s"
        return
    finally:
        fig.walls[part] = time.monotonic() - started
        fig.wall_s += fig.walls[part]
    if returncode == CANNOT_RUN_HERE:
        fig.skipped = _tail(stderr, 3) or "this machine cannot run it"
    elif returncode != 0:
        fig.error = f"run {run + 1} exited {returncode}:\n{_tail(stderr)}"
    else:
        fig.parts.append(part)


def run_group(fig: Figure, run: int, session: str, smoke: bool, staging: Path) -> None:
    """One run of a multi-process figure: ``fig.processes`` workers under one coordinator,
    one staging file each; all of them, or the run failed."""
    n, port = fig.processes, free_port()
    staging.mkdir(parents=True, exist_ok=True)
    parts = [staging / f"{fig.stem}.run{run}.p{i}.csv" for i in range(n)]
    errs = [staging / f"{fig.stem}.run{run}.p{i}.err" for i in range(n)]
    cmds = [_worker_cmd(fig, run, session, smoke, staging, part)
            + ["--coordinator", f"127.0.0.1:{port}", "--num-processes", str(n), "--process-id", str(i)]
            for i, part in enumerate(parts)]
    started = time.monotonic()
    try:
        codes = _run_group(cmds, errs, fig.timeout_s)
    finally:
        wall = time.monotonic() - started
        fig.walls.update((part, wall) for part in parts)
        fig.wall_s += wall
    stderr = [e.read_text(errors="replace") if e.exists() else "" for e in errs]
    if all(c == 0 for c in codes):
        fig.parts.extend(parts)
    elif CANNOT_RUN_HERE in codes:
        fig.skipped = _tail(stderr[codes.index(CANNOT_RUN_HERE)], 3) or "this machine cannot run it"
    else:
        fig.error = f"run {run + 1} of {n} processes failed: " + "; ".join(
            f"process {i} {_status(c, fig.timeout_s)}" for i, c in enumerate(codes))
        first = next((i for i, c in enumerate(codes) if c not in (None, 0)), 0)
        fig.error += f"\nprocess {first}:\n{_tail(stderr[first])}"


def _status(code: int | None, timeout_s: float) -> str:
    if code is None:
        return f"killed (still running when the run ended; limit {timeout_s:g} s)"
    if code < 0:
        return f"died of signal {signal.Signals(-code).name}"
    return f"exited {code}"


def publish(fig: Figure, results: Path, staging: Path) -> Outcome:
    """All runs succeeded: one atomic replace per file, side files of run 0 first."""
    try:
        text, machine = _merge(fig.stem, fig.parts, fig.walls)
        side = staging / f"{fig.stem}.run0.artifacts"
        for item in sorted(side.glob("*")) if side.is_dir() else []:
            write_atomic(side_file(results, machine, fig.stem, item.name), item.read_bytes(), staging=staging)
        write_atomic(results_file(results, machine, fig.stem), text, staging=staging)
        (staging.parent / "last_machine").write_text(machine)  # the site quotes this machine
    except (OSError, ValueError, RuntimeError, csv.Error) as err:
        return Outcome(fig.stem, False, fig.wall_s, str(err))
    return Outcome(fig.stem, True, fig.wall_s,
                   f"{len(fig.parts) // fig.processes} runs -> {results_file(results, machine, fig.stem)}")


def run_session(scripts: list[Path], runs: int, smoke: bool, results: Path, staging: Path,
                session: str) -> list[Outcome]:
    """Round r runs every figure's run r, so each figure's R runs span the whole
    session and its run-to-run spread sees the session's drift, not ten seconds of
    it. Figures are visited in a different order each round. Nothing is published
    until the last round; a figure whose run failed stops there and keeps its old file."""
    _clear(staging)
    figures = [Figure(s) for s in scripts]
    started = time.monotonic()
    try:
        for run in range(runs):
            order = list(figures)
            random.Random(run_seed(session, "order", run)).shuffle(order)
            for k, fig in enumerate(f for f in order if not f.done):
                elapsed = time.monotonic() - started
                print(f"[round {run + 1}/{runs}, {k + 1}/{len(order)}] {fig.stem} "
                      f"(elapsed {elapsed:.1f} s)", flush=True)
                run_once(fig, run, session, smoke, staging)
                took = fig.walls.get(next(reversed(fig.walls), None), 0.0) if fig.walls else 0.0
                if fig.budget_s is not None and not smoke and took > fig.budget_s:
                    print(f"{fig.stem}: run {run + 1} took {took:.1f} s, over its budget of "
                          f"{fig.budget_s:g} s", flush=True)
                if fig.error:
                    print(f"{fig.stem} FAILED: {fig.error}", file=sys.stderr, flush=True)
                elif fig.skipped:
                    print(f"{fig.stem} skipped: {fig.skipped}", file=sys.stderr, flush=True)
        return [_outcome(f, results, staging) for f in figures]
    finally:
        _clear(staging)


def _outcome(fig: Figure, results: Path, staging: Path) -> Outcome:
    if fig.skipped is not None:
        return Outcome(fig.stem, True, fig.wall_s, f"cannot run here: {fig.skipped}", skipped=True)
    if fig.error is not None:
        return Outcome(fig.stem, False, fig.wall_s, fig.error)
    return publish(fig, results, staging)


def _clear(staging: Path) -> None:
    for leftover in staging.glob("*.run*") if staging.is_dir() else []:
        shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
# --8<-- [end:runs]


def _summary(outcomes: list[Outcome], total_s: float) -> str:
    lines = ["", "summary:"]
    for o in outcomes:
        state = "skipped" if o.skipped else "ok     " if o.ok else "FAILED "
        lines.append(f"  {state} {o.stem:<32} {o.wall_s:7.1f} s  "
                     f"{o.message.splitlines()[0] if o.ok else ''}")
    failed = [o.stem for o in outcomes if not o.ok]
    skipped = [o.stem for o in outcomes if o.skipped]
    lines.append(f"  {len(outcomes) - len(failed) - len(skipped)} of {len(outcomes)} figures measured "
                 f"in {total_s:.1f} s")
    if skipped:
        lines.append(f"  skipped: {', '.join(skipped)} (this machine cannot run them; nothing written)")
    if failed:
        lines.append(f"  failed: {', '.join(failed)} (their previous results are unchanged)")
    return "\n".join(lines)


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench_scripts/run.py", description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=int(os.environ.get("R", DEFAULT_RUNS) or DEFAULT_RUNS),
                   help=f"processes per figure (R); default {DEFAULT_RUNS} or $R")
    p.add_argument("--smoke", action="store_true", default=os.environ.get("BENCH_SMOKE") == "1",
                   help="tiny sizes and budgets")
    p.add_argument("--results", type=Path, default=None,
                   help="results root folder (default: results/ at the top of this git work tree)")
    p.add_argument("--only", nargs="*", default=None, help="figure stems to run (default: all)")
    p.add_argument("--session", default="", help="session id (default: a new one, from the clock)")
    return p.parse_args(argv)


def _interrupt_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # same clean-up path as Ctrl-C


def main(argv: Sequence[str] | None = None, *, bench_dir: Path) -> int:
    """Run the figure scripts of ``bench_dir`` (``--only`` some) as a session."""
    signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
    args = _parse(sys.argv[1:] if argv is None else argv)
    args.results = args.results or default_results()
    if args.runs < 1:
        print("--runs must be at least 1", file=sys.stderr)
        return 2
    scripts = figure_scripts(bench_dir)
    if args.only:
        unknown = set(args.only) - {s.stem for s in scripts}
        if unknown:
            print(f"no such figure script: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        scripts = [s for s in scripts if s.stem in args.only]
    state = args.results.resolve().parent / ".bench"
    session = args.session or new_session_id()
    started, outcomes = time.monotonic(), []
    try:
        with bench_lock(state):
            print(f"session {session}: {len(scripts)} figures x {args.runs} runs, interleaved", flush=True)
            outcomes = run_session(scripts, args.runs, args.smoke, args.results, state / "staging", session)
    except BenchLocked as err:
        print(err, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: the figure in progress was not written; results/ is as it was",
              file=sys.stderr)
        return 130
    print(_summary(outcomes, time.monotonic() - started))
    return 0 if all(o.ok for o in outcomes) else 1
