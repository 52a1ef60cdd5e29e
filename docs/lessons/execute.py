"""Execute the lesson notebooks and store each run with the machine's results (``make lesson``).

The site build renders a stored run and never executes a notebook, so this
script is the only place a lesson runs. It never writes ``docs/lessons/``: the
executed notebook goes to ``results/<machine>/lessons/<name>.ipynb``, beside the
figures that machine measured (results/README.md, "The executed lesson"), so a
reader's ``make bench`` changes nothing tracked outside ``results/<machine>/``.
The machine label is the one ``make bench`` gives its results folder
(``benchkit.provenance.machine_label``; ``MACHINE=`` overrides it). A cell that
raises stops the run with the notebook and cell named, and the stored run is
left exactly as it was (the new one replaces it in one rename, only on success).

    python docs/lessons/execute.py                       # every lesson, into results/<machine>/lessons/
    python docs/lessons/execute.py --results R           # into R/<machine>/lessons/ instead
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

from benchkit import provenance
from benchkit.results import write_atomic  # one atomic writer for the project

LESSONS = Path(__file__).resolve().parent
REPO = LESSONS.parents[1]  # this checkout
RESULTS_DIR = REPO / "results"
LESSONS_DIR = "lessons"  # results/<machine>/lessons/<name>.ipynb (benchsite/pages/lesson_outputs.py reads it)
STAGING = REPO / ".bench" / "lesson-staging"  # temp files live outside results/
SMOKE_RESULTS = REPO / ".bench" / "smoke-results"  # make bench-smoke's folder

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


def machine() -> str:
    """This machine's results folder name, as the figure scripts and the lesson's own provenance
    cell derive it (``MACHINE=`` wins). Called after a notebook ran: jax then takes a device only
    once the kernel has let go of it."""
    fields = {**provenance.collect_host(), **provenance.collect_jax()}
    return provenance.machine_label(
        str(fields["platform"]), str(fields["device_kind"]), str(fields["cpu_model"]),
        int(fields["cpu_count"]), os.environ.get("MACHINE"), cpu_vendor=str(fields["cpu_vendor"]),
        cpu_family=str(fields["cpu_family"]), cpu_model_number=str(fields["cpu_model_number"]),
        device_count=int(fields["device_count"]))


def check_machine_override() -> None:
    """A bad ``MACHINE=`` fails before minutes of execution, not after."""
    label = os.environ.get("MACHINE")
    if label and not provenance.LABEL_RE.match(label):
        raise SystemExit(f"MACHINE={label!r}: use lower-case letters, digits, '.', '_' and '-'")


def stored_path(results: Path, label: str, notebook: Path) -> Path:
    return results / label / LESSONS_DIR / notebook.name


def execute(notebook: Path, out: Path | None, *, smoke: bool, results: Path = RESULTS_DIR) -> tuple[float, Path]:
    """Run every cell of ``notebook`` and write the result to ``out`` (None: this machine's place
    under ``results``); seconds taken and where it went."""
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
    label = machine()
    nb.metadata["bench"] = {"machine": label, "smoke": smoke, "executed_utc": provenance.utc_now(),
                            "seconds": round(elapsed, 1)}
    out = out or stored_path(results, label, notebook)
    write_atomic(out, nbformat.writes(nb) + "\n", staging=STAGING)
    return elapsed, out


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Execute lesson notebooks and store their outputs.")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every docs/lessons/*.ipynb")
    parser.add_argument("--smoke", action="store_true", default=os.environ.get("BENCH_SMOKE") == "1",
                        help="tiny sizes, for tests (BENCH_SMOKE=1 does the same)")
    parser.add_argument("--results", type=Path,
                        help="results folder: the run goes to <results>/<machine>/lessons/ (default: results/; "
                             "with --smoke, .bench/smoke-results/, so that results/ never holds a smoke run)")
    parser.add_argument("--out-dir", type=Path,
                        help="write executed copies straight into this folder instead (smoke checks)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    notebooks = [p.resolve() for p in args.notebooks] or lesson_notebooks()
    check_machine_override()
    results = (args.results or (SMOKE_RESULTS if args.smoke else RESULTS_DIR)).resolve()
    failed = 0
    for notebook in notebooks:
        out = args.out_dir / notebook.name if args.out_dir else None
        try:
            seconds, out = execute(notebook, out, smoke=args.smoke, results=results)
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
