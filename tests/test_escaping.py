"""A results file is data, never markup: every text from a CSV reaches the page escaped."""

import csv
import io
import shutil

import pytest

from conftest import REFERENCE, REPO, build_site

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


def poisoned_results(tmp_path):
    src = REPO / "results" / REFERENCE / "dispatch_vs_completion.csv"
    rows = list(csv.DictReader(io.StringIO(src.read_text())))
    for row in rows:
        row.update(PAYLOADS, machine="cpu-evil-2c", params=row["params"] + "<svg onload=alert(7)>")
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    shutil.copytree(REPO / "results", tmp_path / "results")
    path = tmp_path / "results" / "cpu-evil-2c" / "dispatch_vs_completion.csv"
    path.parent.mkdir()
    path.write_text(out.getvalue())
    return path.parent.parent


@pytest.mark.slow
def test_no_payload_survives_as_markup(tmp_path):
    proc = build_site(tmp_path / "site", poisoned_results(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    page = (tmp_path / "site" / "what-the-clock-caught" / "index.html").read_text()
    assert "cpu-evil-2c" in page
    for needle in ("<img src=x", "<script>alert", "<iframe", "<style>body", "<b>bold", "<svg onload",
                   "<a href=javascript"):
        assert needle not in page, needle
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # shown, as text
