"""A results file is data, never markup: every text from a CSV reaches the page escaped."""

import csv
import io

import pytest

from conftest import REFERENCE, REPO

PAYLOADS = {
    "device_kind": "<img src=x onerror=alert(1)>",
    "cpu_model": '"><script>alert(2)</script>',
    "xla_flags": "--x=<iframe src=//evil.example>",
    "boundary": "completed<style>body{display:none}</style>",
    "dtype": "float32<b>bold</b>",
    "shape": "<svg onload=alert(4)>",
    "jax_version": "0.10.2<script>alert(5)</script>",
    "git_commit": "<a href=javascript:alert(6)>x</a>",
}


POISONED, STEM = "cpu-evil-2c", "transfer_cost"  # a figure tests/test_bad_site.py leaves whole


def add_poisoned_machine(root):
    """A machine whose results carry markup in every text field, beside ``root``'s others
    (tests/conftest.py, damaged_results: its lenient build is read here)."""
    src = REPO / "results" / REFERENCE / f"{STEM}.csv"
    rows = list(csv.DictReader(io.StringIO(src.read_text())))
    for row in rows:
        row.update(PAYLOADS, machine=POISONED, params=row["params"] + "<svg onload=alert(7)>")
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path = root / POISONED / f"{STEM}.csv"
    path.parent.mkdir()
    path.write_text(out.getvalue())


@pytest.mark.slow
def test_no_payload_survives_as_markup(damaged_lenient):
    site, proc = damaged_lenient
    assert POISONED not in proc.stderr  # valid data: nothing in it is refused (a strict build takes it)
    page = (site / "how-good-is-this-number" / "index.html").read_text()
    assert POISONED in page
    for needle in ("<img src=x", "<script>alert", "<iframe", "<style>body", "<b>bold", "<svg onload",
                   "<a href=javascript"):
        assert needle not in page, needle
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # shown, as text
