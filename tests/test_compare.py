"""Comparing machines: ratio of medians, and a verdict only beyond both run-to-run spreads."""

import pytest

from benchfixtures import demo_figure, write_machine
from benchsite import compare, render
from benchsite.catalog import Catalog
from benchsite.load import ResultFile, load


def frame_of(path):
    return load(ResultFile(path.parent.name, path.stem, path))


@pytest.fixture
def fig(tmp_path):
    return demo_figure(tmp_path)


def test_twice_as_slow_with_tight_runs_is_a_result(tmp_path, fig):
    a = frame_of(write_machine(tmp_path, "cpu-a", scale=2.0))
    b = frame_of(write_machine(tmp_path, "cpu-b", scale=1.0))
    cells = {(c.group, c.quantity): c for c in compare.cells(a, b, fig)}
    slow = cells[("n=16", "slow")]
    assert slow.ratio == pytest.approx(2.0)
    assert slow.verdict == "a result"
    # the figure's own ratio (slow / fast) is the same on both machines: nothing to report
    same = cells[("n=16", "slow / fast")]
    assert same.ratio == pytest.approx(1.0) and same.verdict == "not a result yet"


def test_difference_inside_the_spread_is_not_a_result(tmp_path, fig):
    a = frame_of(write_machine(tmp_path, "cpu-a", scale=1.05, spread=0.2))
    b = frame_of(write_machine(tmp_path, "cpu-b", scale=1.0, spread=0.2))
    verdicts = {c.verdict for c in compare.cells(a, b, fig) if not c.is_ratio}
    assert verdicts == {"not a result yet"}


def test_one_run_decides_nothing(tmp_path, fig):
    a = frame_of(write_machine(tmp_path, "cpu-a", scale=3.0, runs=1))
    b = frame_of(write_machine(tmp_path, "cpu-b"))
    assert {c.verdict for c in compare.cells(a, b, fig)} == {compare.ONE_RUN}


def test_only_cells_both_machines_measured_are_compared(tmp_path, fig):
    a = frame_of(write_machine(tmp_path, "gpu-a", sizes=(8, 16, 4096)))
    b = frame_of(write_machine(tmp_path, "cpu-b", sizes=(8, 16)))
    assert {c.group for c in compare.cells(a, b, fig)} == {"n=8", "n=16"}


def test_quantities_are_the_tables_numbers(tmp_path, fig):
    frame = frame_of(write_machine(tmp_path, "cpu-a", spread=0.3, runs=4))
    found = compare.quantities(frame, fig)
    for label, rows in render.groups(frame, fig):
        for variant in fig.variants:
            assert found[(label, variant)][0] == render.cell_summary(rows, variant)
        assert found[(label, "slow / fast")][0] == render.ratio_summary(rows, fig)


def test_html_and_text_show_the_same_rows(tmp_path, fig):
    a = frame_of(write_machine(tmp_path, "cpu-a", scale=2.0))
    b = frame_of(write_machine(tmp_path, "cpu-b"))
    cells = compare.cells(a, b, fig)
    html, text = compare.html_table(cells, "cpu-a", "cpu-b"), compare.text_table(cells, "cpu-a", "cpu-b")
    for row in compare.table_rows(cells):
        assert all(value in text for value in row)
        assert all(value in html for value in row[:2])
    assert "ratio = median on cpu-a / median on cpu-b; 4 of 6 differences exceed" in text


# --- make compare --------------------------------------------------------------------------

STEM, FIG_ID = "dispatch_vs_completion", "fig-dispatch-vs-completion"
VARIANTS = (("dispatch", 1e-5), ("completed", 1e-3))


def real_machine(root, machine, **kw):
    """Results for the repository's real first figure, so the CLI finds its script."""
    return write_machine(root, machine, stem=STEM, fig_id=FIG_ID, variants=VARIANTS, **kw)


def test_cli_prints_each_figure_with_ratio_and_verdict(tmp_path, capsys):
    real_machine(tmp_path, "cpu-a", scale=2.0)
    real_machine(tmp_path, "cpu-b")
    assert compare.main(["cpu-a", "cpu-b", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert FIG_ID in out and "ratio = median on cpu-a / median on cpu-b" in out
    assert "2.00×" in out and "a result" in out
    assert "STALE" in out  # the fixture's recorded sha256 is not the script's


def test_cli_names_the_bad_file_and_line(tmp_path, capsys):
    real_machine(tmp_path, "cpu-a")
    bad = real_machine(tmp_path, "cpu-b")
    lines = bad.read_text().splitlines()
    lines[3] += ",surplus"  # a damaged row on line 4
    bad.write_text("\n".join(lines) + "\n")
    assert compare.main(["cpu-a", "cpu-b", "--results", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert f"{FIG_ID}: skipped, invalid results" in captured.out
    assert f"{bad}:4:" in captured.err


def test_cli_refuses_an_unknown_machine(tmp_path, capsys):
    real_machine(tmp_path, "cpu-a")
    assert compare.main(["cpu-a", "cpu-nope", "--results", str(tmp_path)]) == 2
    assert "cpu-nope" in capsys.readouterr().err


def test_report_skips_figures_one_machine_lacks(tmp_path):
    real_machine(tmp_path, "cpu-a")
    (tmp_path / "cpu-b").mkdir()
    text, problems = compare.report(Catalog.build(tmp_path), "cpu-a", "cpu-b")
    assert f"{FIG_ID}: skipped, no results on cpu-b" in text and not problems
