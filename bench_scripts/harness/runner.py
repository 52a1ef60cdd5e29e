"""Run figure scripts R times each, as separate processes, and publish atomically.

Standard library only: this process never imports jax; its workers do.

* One run = one process (``<script> --worker``), so run-to-run spread is
  measured between processes, not assumed.
* A figure's file in ``results/<machine>/`` is replaced in one rename only when
  all R runs succeeded; a failure or an interrupt leaves the old file as it was.
* Only the folder of the machine that measured is written.
* One ``make bench`` at a time: a second is refused while the lock is held.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .results import read_rows, to_csv_text, write_atomic

BENCH_DIR = Path(__file__).resolve().parents[1]
REPO = BENCH_DIR.parent
DEFAULT_RUNS = 5
RUN_TIMEOUT_S = 900  # one process of one figure; far above any figure's budget


class BenchLocked(RuntimeError):
    pass


@dataclass(frozen=True)
class Outcome:
    stem: str
    ok: bool
    wall_s: float
    message: str


def figure_scripts(bench_dir: Path = BENCH_DIR) -> list[Path]:
    """Every figure script: top-level ``*.py`` in ``bench_scripts/`` except ``run.py``."""
    return sorted(p for p in bench_dir.glob("*.py") if p.name != "run.py" and not p.name.startswith("_"))


@contextlib.contextmanager
def bench_lock(state_dir: Path) -> Iterator[None]:
    """Hold ``state_dir/lock`` for the whole run; the kernel drops it if we die."""
    state_dir.mkdir(parents=True, exist_ok=True)
    fh = open(state_dir / "lock", "a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
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


def _merge(stem: str, parts: list[Path]) -> tuple[str, str]:
    """All runs' rows as one CSV text, and the machine label they agree on."""
    rows = [row for part in parts for row in read_rows(part)]
    machines = {row["machine"] for row in rows}
    if len(machines) != 1:
        raise RuntimeError(f"{stem}: runs disagree on the machine label: {sorted(machines)}")
    return to_csv_text(rows), machines.pop()


# --8<-- [start:runs]
def run_figure(script: Path, runs: int, smoke: bool, results: Path, staging: Path,
               index: str = "") -> Outcome:
    stem, started = script.stem, time.monotonic()
    for old in staging.glob(f"{stem}.run*"):
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    parts = [staging / f"{stem}.run{i}.csv" for i in range(runs)]
    side = staging / f"{stem}.run0.artifacts"
    try:
        for i, part in enumerate(parts):
            elapsed = time.monotonic() - started
            print(f"{index}{stem}: run {i + 1} of {runs} (elapsed {elapsed:.1f} s)", flush=True)
            cmd = [sys.executable, str(script), "--worker", "--run-index", str(i), "--out", str(part)]
            cmd += ["--artifacts", str(side if i == 0 else staging / f"{stem}.run{i}.artifacts")]
            proc = subprocess.run(cmd + (["--smoke"] if smoke else []), stderr=subprocess.PIPE,
                                  text=True, timeout=RUN_TIMEOUT_S)
            if proc.returncode != 0:
                tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
                return Outcome(stem, False, time.monotonic() - started,
                               f"run {i + 1} exited {proc.returncode}:\n{tail}")
        text, machine = _merge(stem, parts)
        for item in sorted(side.glob("*")) if side.is_dir() else []:
            write_atomic(results / machine / f"{stem}.{item.name}", item.read_bytes(), staging=staging)
        write_atomic(results / machine / f"{stem}.csv", text, staging=staging)
        (staging.parent / "last_machine").write_text(machine)  # the site quotes this machine
        wall = time.monotonic() - started
        return Outcome(stem, True, wall, f"{runs} runs -> {results / machine / (stem + '.csv')}")
    except subprocess.TimeoutExpired:
        return Outcome(stem, False, time.monotonic() - started, f"a run exceeded {RUN_TIMEOUT_S} s")
    except (OSError, ValueError, RuntimeError, csv.Error) as err:
        return Outcome(stem, False, time.monotonic() - started, str(err))
    finally:
        for leftover in staging.glob(f"{stem}.run*"):
            shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
# --8<-- [end:runs]


def _summary(outcomes: list[Outcome], total_s: float) -> str:
    lines = ["", "summary:"]
    for o in outcomes:
        lines.append(f"  {'ok    ' if o.ok else 'FAILED'} {o.stem:<32} {o.wall_s:7.1f} s  "
                     f"{o.message.splitlines()[0] if o.ok else ''}")
    failed = [o.stem for o in outcomes if not o.ok]
    lines.append(f"  {len(outcomes) - len(failed)} of {len(outcomes)} figures measured "
                 f"in {total_s:.1f} s")
    if failed:
        lines.append(f"  failed: {', '.join(failed)} (their previous results are unchanged)")
    return "\n".join(lines)


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench_scripts/run.py", description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=int(os.environ.get("R", DEFAULT_RUNS) or DEFAULT_RUNS),
                   help="processes per figure (R); default 5 or $R")
    p.add_argument("--smoke", action="store_true", default=os.environ.get("BENCH_SMOKE") == "1",
                   help="tiny sizes and budgets")
    p.add_argument("--results", type=Path, default=REPO / "results", help="results root folder")
    p.add_argument("--only", nargs="*", default=None, help="figure stems to run (default: all)")
    return p.parse_args(argv)


def _interrupt_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # same clean-up path as Ctrl-C


def main(argv: Sequence[str] | None = None, bench_dir: Path = BENCH_DIR) -> int:
    signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
    args = _parse(sys.argv[1:] if argv is None else argv)
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
    started, outcomes = time.monotonic(), []
    try:
        with bench_lock(state):
            for k, script in enumerate(scripts, 1):
                outcome = run_figure(script, args.runs, args.smoke, args.results, state / "staging",
                                     index=f"[{k}/{len(scripts)}] ")
                if not outcome.ok:
                    print(f"[{k}/{len(scripts)}] {script.stem} FAILED: {outcome.message}", file=sys.stderr)
                outcomes.append(outcome)
    except BenchLocked as err:
        print(err, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: the figure in progress was not written; results/ is as it was",
              file=sys.stderr)
        return 130
    print(_summary(outcomes, time.monotonic() - started))
    return 0 if all(o.ok for o in outcomes) else 1
