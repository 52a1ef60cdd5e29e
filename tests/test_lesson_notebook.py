"""The lesson notebook: it executes (smoke sizes), its executor fails loudly, and
the stored copy is a complete full-size execution with no typed numbers in prose."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

REPO = Path(__file__).resolve().parents[1]
LESSONS = REPO / "docs" / "lessons"
NOTEBOOK = LESSONS / "benchmark-async-work.ipynb"
EXECUTOR = LESSONS / "execute.py"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_executor(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(EXECUTOR), *args], capture_output=True, text=True,
                          timeout=180, cwd=REPO, check=False)


def code_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if c.cell_type == "code"]


def errors(nb: nbformat.NotebookNode) -> list[str]:
    return [f"{o.ename}: {o.evalue}" for c in code_cells(nb) for o in c.outputs
            if o.output_type == "error"]


def stream_text(nb: nbformat.NotebookNode) -> str:
    return "".join(o.text for c in code_cells(nb) for o in c.outputs if o.output_type == "stream")


@pytest.mark.timeout(150)
def test_notebook_executes_in_smoke_mode_without_touching_the_stored_copy(tmp_path: Path) -> None:
    before = sha(NOTEBOOK)
    done = run_executor("--smoke", "--out-dir", str(tmp_path), str(NOTEBOOK))
    assert done.returncode == 0, done.stderr
    executed = nbformat.read(tmp_path / NOTEBOOK.name, as_version=4)
    assert errors(executed) == []
    assert all(c.execution_count for c in code_cells(executed)), "a code cell did not run"
    assert "smoke=True" in stream_text(executed)
    assert sha(NOTEBOOK) == before, "the smoke run overwrote the stored notebook"


def test_executor_names_the_failing_cell_and_keeps_the_old_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("x = 1"), new_code_cell("1 / 0")]), broken)
    before = sha(broken)
    done = run_executor(str(broken))  # in place: a failure must leave the file as it was
    assert done.returncode == 1
    assert f"{broken}: cell 2 failed: ZeroDivisionError" in done.stderr
    assert sha(broken) == before


def test_executor_reports_an_unreadable_notebook(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{ not json")
    done = run_executor(str(bad))
    assert done.returncode == 1
    assert str(bad) in done.stderr
    assert bad.read_text() == "{ not json"


def test_stored_notebook_is_a_complete_full_size_execution() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    counts = [c.execution_count for c in code_cells(nb)]
    assert counts == list(range(1, len(counts) + 1)), "not executed top to bottom in one kernel"
    assert errors(nb) == []
    assert "smoke=False" in stream_text(nb), "the stored outputs come from a smoke run"
    assert "machine" in stream_text(nb), "the provenance cell printed nothing"


def test_stored_lesson_names_its_machine_as_make_bench_does() -> None:
    """The label the lesson prints is a results folder's name: a reader can match the lesson's
    numbers with the figures measured on the same machine."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    label = re.search(r"^machine\s+(\S+)$", stream_text(nb), flags=re.M).group(1)
    assert (REPO / "results" / label).is_dir(), f"the lesson ran on {label!r}; results/ has no such folder"


def prose(markdown: str) -> str:
    """Markdown with code (fenced and inline) and HTML tags removed."""
    markdown = re.sub(r"```.*?```", " ", markdown, flags=re.DOTALL)
    markdown = re.sub(r"`[^`]*`", " ", markdown)
    markdown = re.sub(r"<code>.*?</code>", " ", markdown, flags=re.DOTALL)
    return re.sub(r"<[^>]+>", " ", markdown)


def test_prose_carries_no_typed_numbers() -> None:
    # Every figure on the page is an executed output; prose that quoted one
    # would go stale the next time the notebook runs on other hardware.
    nb = nbformat.read(NOTEBOOK, as_version=4)
    for index, cell in enumerate(nb.cells, start=1):
        if cell.cell_type == "markdown":
            found = re.findall(r"\S*\d\S*", prose(cell.source))
            assert not found, f"{NOTEBOOK.name}: markdown cell {index} types numbers: {found}"


def test_prose_filter_finds_numbers_outside_code() -> None:
    assert re.findall(r"\d", prose("takes 12 ms, `n = 96` and <code>(64,)</code>")) == ["1", "2"]


def test_notebook_times_with_the_project_harness() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    source = "\n".join(c.source for c in code_cells(nb))
    assert "from benchkit import" in source
    copied = re.findall(r"def (time_completed|time_dispatch|time_first_call|collect|check_close)\b",
                        source)
    assert copied == [], f"the notebook redefines harness functions: {copied}"
