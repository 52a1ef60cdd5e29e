"""Comparing machines or sessions: ratio of medians, a verdict only by the unpaired
rule (docs/verdicts.md), and no verdict across different hardware unless asked."""

import pytest

from benchfixtures import demo_figure
from benchkit import results
from benchsite.model import cells, stats
from benchsite.model.catalog import Catalog
from benchsite.model.load import ResultFile, load
from benchsite.model.table import Table, groups
from benchsite.views import compare
from test_results import make_row

# The version 2 provenance of one machine: what a session on it records.
HARDWARE = {
    "platform": "cpu", "device_kind": "cpu", "device_count": 1, "cpu_vendor": "AuthenticAMD",
    "cpu_family": "25", "cpu_model_number": "1", "cpu_count": 2,
}
V2 = {
    "harness_sha256": "h" * 64, "session_id": "s-20260203-a", "cpu_stepping": "1", "cpu_flags_sha256": "f" * 64,
    "cpu_isa": "avx2", "cpu_governor": "performance", "cpu_mhz": "2450", "mem_total_bytes": 8 << 30,
    "load_avg_1m": 0.1, "jax_env": "", "compilation_cache": "off", "order_seed": 1, "seq": 0, "cache_hits": 0,
}




def write_machine(root, machine, scale=1.0, runs=5, sizes=(8, 16), spread=0.01, sha="x" * 64, stem="demo",
                  fig_id="fig-demo", variants=(("fast", 1e-5), ("slow", 1e-3)), hardware=None, **provenance):
    """``runs`` runs of every variant at every size; run r is ``1 + spread * r`` slower.
    ``hardware`` overrides columns of HARDWARE; other keywords override provenance."""
    extra = {**V2, **HARDWARE, **(hardware or {}), **provenance}
    rows = [make_row(**{**extra, "run": r, "sample": s, "variant": v,
                        "time_s": t * scale * n / 8 * (1 + spread * r), "params": f"n={n}", "machine": machine,
                        "figure_id": fig_id, "script_sha256": sha, "git_commit": "0123456789abcdef0123",
                        "jax_version": "0.10.2", "script_path": f"bench_scripts/{stem}.py",
                        "timestamp_utc": extra.get("timestamp_utc", "2026-02-03T04:05:06Z")})
            for n in sizes for r in range(runs) for s in range(4) for v, t in variants]
    path = root / machine / f"{stem}.csv"
    results.write_atomic(path, results.to_csv_text(rows))
    return path


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
    assert "ratio of medians 2" in slow.decision.reason


def test_three_runs_a_side_are_never_a_result(tmp_path, fig):
    # an exact rank-sum test cannot reach its level with three runs against three
    a = frame_of(write_machine(tmp_path, "cpu-a", scale=2.0, runs=3))
    b = frame_of(write_machine(tmp_path, "cpu-b", scale=1.0, runs=3))
    assert {c.verdict for c in compare.cells(a, b, fig)} == {"not a result yet"}


def test_difference_inside_the_spread_is_not_a_result(tmp_path, fig):
    a = frame_of(write_machine(tmp_path, "cpu-a", scale=1.05, spread=0.2))
    b = frame_of(write_machine(tmp_path, "cpu-b", scale=1.0, spread=0.2))
    verdicts = {c.verdict for c in compare.cells(a, b, fig) if not c.is_ratio}
    assert verdicts == {"not a result yet"}


def test_one_run_decides_nothing(tmp_path, fig):
    a = frame_of(write_machine(tmp_path, "cpu-a", scale=3.0, runs=1))
    b = frame_of(write_machine(tmp_path, "cpu-b"))
    assert {c.verdict for c in compare.cells(a, b, fig)} == {cells.ONE_RUN}


def test_only_cells_both_machines_measured_are_compared(tmp_path, fig):
    a = frame_of(write_machine(tmp_path, "gpu-a", sizes=(8, 16, 4096)))
    b = frame_of(write_machine(tmp_path, "cpu-b", sizes=(8, 16)))
    assert {c.group for c in compare.cells(a, b, fig)} == {"n=8", "n=16"}


def test_a_row_measured_at_other_params_is_not_compared(tmp_path):
    """A row keyed by op alone but measured at another size on each machine (an axpy sized
    from each machine's cache) is a different workload: left out, never a ratio or a verdict."""
    fig = demo_figure(tmp_path, group_by=("op",))
    def one(machine, n):
        rows = [make_row(**{**V2, **HARDWARE, "run": r, "sample": s, "variant": v, "time_s": t * (1 + 0.01 * r),
                            "params": f"n={size};op={op}", "machine": machine, "figure_id": "fig-demo"})
                for op, size in (("axpy", n), ("matmul", 64)) for r in range(5) for s in range(3)
                for v, t in (("fast", 1e-5 * (size if op == "axpy" else 1)), ("slow", 1e-3))]
        path = tmp_path / machine / "demo.csv"
        results.write_atomic(path, results.to_csv_text(rows))
        return frame_of(path)
    found = compare.cells(one("cpu-a", 1 << 20), one("cpu-b", 1 << 25), fig, machines=True)
    assert found and {c.group for c in found} == {"op=matmul"}


def test_quantities_are_the_tables_numbers(tmp_path, fig):
    frame = frame_of(write_machine(tmp_path, "cpu-a", spread=0.3, runs=4))
    tab = Table.of(frame, fig)
    for label, rows in groups(frame, fig):
        row = next(r for r in tab.rows if r.label == label)
        for variant in fig.variants:
            expected = stats.summarize(stats.run_medians(rows[rows["variant"] == variant]))
            assert tab.quantities[(label, variant)][0] == row.cells[variant] == expected
        ratio = stats.summarize(stats.ratio_per_run(*(rows[rows["variant"] == v] for v in fig.ratio)))
        assert tab.quantities[(label, "slow / fast")][0] == row.ratio == ratio


def test_html_and_text_show_the_same_rows(tmp_path, fig):
    a = frame_of(write_machine(tmp_path, "cpu-a", scale=2.0))
    b = frame_of(write_machine(tmp_path, "cpu-b"))
    cells = compare.cells(a, b, fig)
    html, text = compare.html_table(cells, "cpu-a", "cpu-b"), compare.text_table(cells, "cpu-a", "cpu-b")
    for row in compare.table_rows(cells):
        assert all(value in text for value in row)
        assert all(value in html for value in row[:2])
    assert "ratio = median on cpu-a / median on cpu-b; 4 of 6 differences are results" in text
    assert "median [min..max] of the per-run medians" in text and "How a verdict is decided" in text
    linked = compare.html_table(cells, "cpu-a", "cpu-b", "../../verdicts/")
    assert '<a href="../../verdicts/">How a verdict is decided</a>' in linked


# --- the hardware must match unless machines are compared on purpose ------------------------

def test_different_hardware_is_not_a_verdict_unless_asked(tmp_path, fig):
    a = frame_of(write_machine(tmp_path, "cpu-a", scale=2.0, hardware={"cpu_model_number": "17"}))
    b = frame_of(write_machine(tmp_path, "cpu-b"))
    refused = compare.cells(a, b, fig)
    assert {c.verdict for c in refused} == {cells.DIFFERENT_HARDWARE} == {"different hardware: not a verdict"}
    assert compare.results_count(refused, short=True) == cells.DIFFERENT_HARDWARE
    asked = {c.verdict for c in compare.cells(a, b, fig, machines=True)}
    assert stats.RESULT in asked


@pytest.mark.parametrize("column", cells.HARDWARE_COLUMNS)
def test_each_hardware_column_counts(tmp_path, fig, column):
    changed = {"device_count": 2, "cpu_count": 8}.get(column, "other")
    a = frame_of(write_machine(tmp_path, "cpu-a", hardware={column: changed}))
    b = frame_of(write_machine(tmp_path, "cpu-b"))
    assert cells.hardware_check(a, b) == cells.DIFFERENT_HARDWARE


def test_unknown_hardware_cannot_be_told_apart(tmp_path, fig):
    a = frame_of(write_machine(tmp_path, "cpu-a", scale=2.0, hardware={"cpu_vendor": "unknown"}))
    b = frame_of(write_machine(tmp_path, "cpu-b"))
    assert {c.verdict for c in compare.cells(a, b, fig)} == {cells.UNKNOWN_HARDWARE}


def test_same_hardware_two_sessions_gets_verdicts(tmp_path, fig):
    a = frame_of(write_machine(tmp_path, "cpu-a", scale=2.0, session_id="s-1"))
    b = frame_of(write_machine(tmp_path, "cpu-b", session_id="s-2"))
    assert cells.hardware_check(a, b) is None
    assert stats.RESULT in {c.verdict for c in compare.cells(a, b, fig)}


# --- make compare --------------------------------------------------------------------------

STEM, FIG_ID = "dispatch_vs_completion", "fig-dispatch-vs-completion"
VARIANTS = (("dispatch", 1e-5), ("completed", 1e-3))


def real_machine(root, machine, **kw):
    """Results for the repository's real first figure, so the CLI finds its script."""
    return write_machine(root, machine, stem=STEM, fig_id=FIG_ID, variants=VARIANTS, **kw)


def test_cli_prints_each_figure_with_ratio_and_verdict(tmp_path, capsys):
    real_machine(tmp_path, "cpu-a", scale=2.0, session_id="s-20260203-a")
    real_machine(tmp_path, "cpu-b", session_id="s-20260204-b", timestamp_utc="2026-02-04T01:02:03Z")
    assert compare.main(["cpu-a", "cpu-b", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert FIG_ID in out and "ratio = median on cpu-a / median on cpu-b" in out
    assert "2.00×" in out and "a result" in out
    assert "STALE" in out  # the fixture's recorded sha256 is not the script's
    # which sessions are compared, with when they ran
    assert "session s-20260203-a (2026-02-03T04:05:06Z)" in out
    assert "session s-20260204-b (2026-02-04T01:02:03Z)" in out


def test_cli_refuses_a_verdict_across_hardware_unless_told(tmp_path, capsys):
    real_machine(tmp_path, "cpu-a", scale=2.0, hardware={"cpu_vendor": "GenuineIntel"})
    real_machine(tmp_path, "cpu-b")
    assert compare.main(["cpu-a", "cpu-b", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "different hardware: not a verdict" in out and "a result" not in out.replace("not a result", "")
    assert compare.main(["cpu-a", "cpu-b", "--results", str(tmp_path), "--machines"]) == 0
    out = capsys.readouterr().out
    assert "different hardware" not in out and "a result" in out


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
    # A folder compared with itself: its bad file is named once, not once for A and once for B.
    assert compare.main(["cpu-b", "cpu-b", "--results", str(tmp_path)]) == 1
    assert capsys.readouterr().err.count(f"{bad}:4:") == 1


def test_cli_refuses_an_unknown_machine(tmp_path, capsys):
    real_machine(tmp_path, "cpu-a")
    assert compare.main(["cpu-a", "cpu-nope", "--results", str(tmp_path)]) == 2
    assert "cpu-nope" in capsys.readouterr().err


def test_report_skips_figures_one_machine_lacks(tmp_path):
    real_machine(tmp_path, "cpu-a")
    (tmp_path / "cpu-b").mkdir()
    text, problems = compare.report(Catalog.build(tmp_path), "cpu-a", "cpu-b")
    assert f"{FIG_ID}: skipped, no results on cpu-b" in text and not problems
