"""The validator's quick reading of a results file (``load._split_quick``) gives the records the
``csv`` module gives: each line's cells as ``line.split(",")``, however a line's commas fall
(``load._cells`` splits the run's repeated provenance once per distinct text)."""

from __future__ import annotations

import csv
import io
import random

import pytest

from benchkit.layout import discover
from benchsite.model import load
from conftest import REPO


def _plain(lines: list[str]) -> list[list[str]]:
    return [line.split(",") if line else [] for line in lines]


@pytest.mark.parametrize("file", [f for f in discover(REPO / "results")], ids=lambda f: f"{f.machine}/{f.stem}")
def test_the_committed_files_read_as_csv_reads_them(file):
    text = file.path.read_text(encoding="utf-8")
    lines = text.split("\n")
    lines.pop()
    assert load._cells(lines) == _plain(lines)
    quick = load._split_quick(text)
    if quick is not None:  # a file with a quoted cell over two lines is csv's alone
        assert quick == list(csv.reader(io.StringIO(text), strict=True))


def test_any_line_splits_into_the_cells_split_gives():
    """Lines with fewer or more commas than the header, blank lines, a header without ``variant``,
    repeated and distinct provenance: the cells are ``split(",")``'s, each row its own list."""
    rng = random.Random(20261206)
    header = "a,b,c,variant,x,y"
    for _ in range(300):
        lines = [rng.choice([header, "p,q,variant,z", "a,b,c,d,e,f"])]
        for _ in range(rng.randrange(0, 12)):
            cells = [rng.choice(["", "1", "r1", "r2", "long text", "x"]) for _ in range(rng.randrange(0, 9))]
            lines.append(",".join(cells))
        got = load._cells(lines)
        assert got == _plain(lines)
        assert len({id(row) for row in got}) == len(got)  # a row's list is its own
