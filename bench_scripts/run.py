"""Run every figure script (or ``--only`` some) R times and write results/<machine>/.

Before a figure's file is replaced, the session it holds is kept in compact form under
``results/<machine>/sessions/<session_id>/`` (``benchkit.archive``, standard library
only), so every session keeps its page. The measuring itself is ``benchkit.runner``.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from benchkit import archive, runner
from benchkit.layout import results_file

BENCH_DIR = Path(__file__).resolve().parent  # this checkout's figure scripts: the ones beside this file

Publish = Callable[[runner.Figure, Path, Path], runner.Outcome]


def _identity(part: Path) -> tuple[str, str]:
    """(machine, session) of a run's staged rows: which file they replace, and which session they are."""
    with part.open(newline="", encoding="utf-8") as fh:
        first = next(csv.DictReader(fh))
    return first["machine"], first["session_id"]


def keeping_sessions(publish: Publish) -> Publish:
    """``publish``, after the file it is about to replace has had its session archived.

    Here rather than before the whole session: only now is it known that every run of the
    figure succeeded (a failed figure keeps its old file, which needs no archive) and
    which machine folder the runs write. A file that cannot be archived (damaged) is
    reported and replaced all the same (:func:`benchkit.archive.keep_before_replacing`)."""
    def publish_keeping(fig: runner.Figure, results: Path, staging: Path) -> runner.Outcome:
        try:
            machine, session = _identity(fig.parts[0])
        except (OSError, StopIteration, KeyError, IndexError) as err:  # its staged rows unreadable
            print(f"{fig.stem}: the previous session was not kept ({err})", file=sys.stderr, flush=True)
        else:
            archive.keep_before_replacing(results_file(results, machine, fig.stem), results, session)
        return publish(fig, results, staging)
    return publish_keeping


def main(argv: Sequence[str] | None = None, bench_dir: Path = BENCH_DIR) -> int:
    original = runner.publish
    runner.publish = keeping_sessions(original)  # run_session looks it up when it publishes
    try:
        return runner.main(argv, bench_dir=bench_dir)
    finally:
        runner.publish = original


if __name__ == "__main__":
    sys.exit(main())
