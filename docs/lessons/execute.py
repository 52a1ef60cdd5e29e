"""Execute the lesson notebooks and store their outputs (``make lesson``).

The site build renders the outputs stored in each notebook and never executes
it, so this script is the only place a lesson runs. A cell that raises stops
the run with the notebook and cell named, and the stored notebook is left
exactly as it was (the new version replaces it in one rename, only on success).

    python docs/lessons/execute.py                       # every lesson, in place
    python docs/lessons/execute.py --smoke --out-dir D   # tiny sizes, copies into D

``--smoke`` (or ``BENCH_SMOKE=1``) reaches the notebook as ``BENCH_SMOKE=1``.
The kernel always starts in the notebook's own folder, wherever the output goes,
so the notebook finds the repository and its harness the same way every time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from benchkit.results import write_atomic  # one atomic writer for the project

LESSONS = Path(__file__).resolve().parent

CELL_TIMEOUT_S = 600  # one cell; far above any lesson cell's full-size run


class LessonFailed(RuntimeError):
    """A cell raised; the message names the notebook and the cell."""


def lesson_notebooks(folder: Path = LESSONS) -> list[Path]:
    return sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))


def first_error(nb: nbformat.NotebookNode) -> tuple[int, str]:
    """Index (from 1, counting every cell) and a one-line summary of the first error output."""
    for index, cell in enumerate(nb.cells, start=1):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                return index, f"{output.get('ename')}: {output.get('evalue')}"
    return 0, "no error output recorded"


def execute(notebook: Path, out: Path, *, smoke: bool) -> float:
    """Run every cell of ``notebook`` and write the result to ``out``; seconds taken."""
    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", allow_errors=False,
                            record_timing=False,  # per-cell timestamps would churn every diff
                            resources={"metadata": {"path": str(notebook.parent)}})
    env = {**os.environ, "BENCH_SMOKE": "1" if smoke else "0"}
    start = time.perf_counter()
    try:
        client.execute(env=env)
    except CellExecutionError as err:
        index, summary = first_error(nb)
        raise LessonFailed(f"{notebook}: cell {index} failed: {summary}\n{err}") from None
    elapsed = time.perf_counter() - start
    write_atomic(out, nbformat.writes(nb))
    return elapsed


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Execute lesson notebooks and store their outputs.")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every docs/lessons/*.ipynb")
    parser.add_argument("--smoke", action="store_true", default=os.environ.get("BENCH_SMOKE") == "1",
                        help="tiny sizes, for tests (BENCH_SMOKE=1 does the same)")
    parser.add_argument("--out-dir", type=Path,
                        help="write executed copies here instead of replacing the notebooks")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    notebooks = [p.resolve() for p in args.notebooks] or lesson_notebooks()
    failed = 0
    for notebook in notebooks:
        out = args.out_dir / notebook.name if args.out_dir else notebook
        try:
            seconds = execute(notebook, out, smoke=args.smoke)
        except LessonFailed as err:
            print(f"lesson FAILED {err}", file=sys.stderr)
            failed += 1
            continue
        except (RuntimeError, OSError, ValueError) as err:  # unreadable file, dead kernel, timeout
            print(f"lesson FAILED {notebook}: {type(err).__name__}: {err}", file=sys.stderr)
            failed += 1
            continue
        print(f"lesson {notebook.name}: executed in {seconds:.1f} s (smoke={args.smoke}) -> {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
