"""Derived quantities (bandwidth, FLOP/s, error, size), their tables and markers; ranked
tables and side-file links. Fixtures are small CSVs whose values the tests choose."""

import pytest

from benchkit import provenance, results
from benchkit.schema import format_params
from benchsite.build.buildcache import BuildCache
from benchsite.model import metrics
from benchsite.model.catalog import Catalog, CodeHash
from benchsite.model.figures import Figure, FigureError, read_figure
from benchsite.model.table import Table
from benchsite.pages.markers import Context, MarkerError, expand
from benchsite.views import quantities
from benchsite.views.render import machine_panel, table
from test_results import make_row

MACHINE = "cpu-test-2c"


def rows_for(variant: str, time_s: float, runs: int = 3, **extra) -> list[dict]:
    """Four samples per run; run r is (1 + r/10) times slower, so the runs disagree."""
    return [make_row(run=r, sample=s, variant=variant, time_s=time_s * (1 + r / 10),
                     figure_id="fig-demo", script_sha256="x" * 64, **extra)
            for r in range(runs) for s in range(4)]


@pytest.fixture
def demo(tmp_path):
    """A dtype-style figure: two variants with bytes, FLOPs and errors; ops and files for the
    ranked table and the side-file link."""
    script = tmp_path / "demo.py"
    script.write_text("FIGURE = {}\n")
    fig = Figure(id="fig-demo", stem="demo", script=script, title="Demo", caption="c",
                 chapter="index.md", variants=("wide", "narrow"), group_by=("n",),
                 extra={"metrics": ["bandwidth", "flop_rate", "error"]})
    data = (rows_for("wide", 1e-3, bytes_moved=2e9, flops=4e9, max_rel_error=1e-7)
            + rows_for("narrow", 2e-3, bytes_moved=1e9, flops=4e9, max_rel_error=4e-3)
            + rows_for("op", 3e-3, params=format_params({"op": "dot.1"}), detail="dot <f32>")
            + rows_for("op", 1e-3, params=format_params({"op": "fusion"}), detail="tanh")
            + rows_for("op", 6e-3, params=format_params({"op": "dot"}), detail="dot")
            + rows_for("file", 5e-2, params=format_params({"part": "trace"}), size_bytes=14_000.0))
    folder = tmp_path / "results" / MACHINE
    results.write_atomic(folder / "demo.csv", results.to_csv_text(data))
    (folder / "demo.trace.json.gz").write_bytes(b"\x1f\x8b")
    return Catalog.build(tmp_path / "results", {"fig-demo": fig})


def ctx(catalog):
    return Context(catalog, "docs/page.md", lambda target: "../" + target, [].append, cache=BuildCache())


def frame(catalog):
    return catalog.frames[("fig-demo", MACHINE)]


# --- the metrics themselves -----------------------------------------------------------------

def test_rates_divide_by_each_runs_median_time(demo):
    wide = frame(demo)[frame(demo)["variant"] == "wide"]
    s = metrics.summary(wide, "bandwidth")
    # 2e9 bytes in 1 ms, 1.1 ms, 1.2 ms: median run 1.1 ms
    assert s.median == pytest.approx(2e9 / 1.1e-3)
    assert s.high == pytest.approx(2e12) and s.low == pytest.approx(2e9 / 1.2e-3)
    assert quantities.shown(wide, "flop_rate") == "3.64 TFLOP/s [3.33..4.00]"


def test_identical_values_in_every_run_say_so(demo):
    narrow = frame(demo)[frame(demo)["variant"] == "narrow"]
    assert quantities.shown(narrow, "error") == "4.0e-03 [same in all 3 runs]"


def test_rows_without_the_quantity_show_a_dash_not_a_zero(demo):
    ops = frame(demo)[frame(demo)["variant"] == "op"]
    assert quantities.shown(ops, "bandwidth") == "—"


def test_one_groupby_over_a_tables_rows_gives_each_rows_own_summaries(demo):
    """What the metric tables read (Table.metric, one groupby over every row) is, row by row,
    what each row's own groupby gives, with a variant that lacks the quantity as None."""
    f = frame(demo)
    parts = [f[f["variant"].isin(["wide", "narrow"])], f[f["variant"] == "op"],
             f[(f["variant"] == "narrow") & (f["run"] > 0)], f[f["variant"] == "file"]]
    for name in ("bandwidth", "flop_rate", "error", "size", "time"):
        joined = metrics.by_row_and_variant(parts, name)
        assert joined == [metrics.by_variant(part, name) for part in parts], name
        # against each variant's own per-run values (Metric.per_run: a groupby of that variant alone)
        apart = [{v: metrics.summary(part[part["variant"] == v], name) for v in sorted(set(part["variant"]))}
                 for part in parts]
        assert joined == apart, name
        assert [list(d) for d in joined] == [list(metrics.by_variant(part, name)) for part in parts], name
    assert metrics.by_row_and_variant(parts, "bandwidth")[1] == {"op": None}
    assert metrics.by_row_and_variant([], "error") == []
    tab = Table.of(f, demo.figures["fig-demo"])
    assert tab.metric("bandwidth") == tuple(r.metric("bandwidth") for r in tab.rows)


def test_si_prefix_follows_the_median():
    s = metrics.stats.Summary(median=1.5e3, low=999.0, high=2e3, runs=2)
    assert quantities.si_range(s, "B") == "1.50 kB [0.999..2.00]"


def test_every_metric_says_how_a_view_shows_it():
    """The model names a style (and a unit); the view knows each style (views/quantities.py)."""
    s = metrics.stats.Summary(median=1.5e3, low=1e3, high=2e3, runs=3)
    shown = {name: quantities.metric(m, s) for name, m in metrics.METRICS.items()}
    assert shown == {"time": "1500 s [1000..2000]", "bandwidth": "1.50 kB/s [1.00..2.00]",
                     "flop_rate": "1.50 kFLOP/s [1.00..2.00]", "error": "1.5e+03 [1.0e+03..2.0e+03]",
                     "size": "1.50 kB [1.00..2.00]"}


def test_unknown_metric_is_refused():
    with pytest.raises(ValueError, match="unknown metric 'speed'"):
        metrics.get("speed")


def test_a_figure_asking_for_an_unknown_metric_names_its_file_and_line(tmp_path):
    script = tmp_path / "fig.py"
    script.write_text('"""doc"""\nFIGURE = {"title": "t", "caption": "c", "chapter": "x.md",\n'
                      '          "variants": ["a"], "metrics": ["error", "speed"]}\n')
    with pytest.raises(FigureError, match=r"fig.py:2: FIGURE metrics \['speed'\] unknown"):
        read_figure(script)


# --- tables ---------------------------------------------------------------------------------

def test_time_table_is_unchanged_by_the_metric_option(demo):
    html = table(Table.of(frame(demo), demo.figures["fig-demo"]))
    assert "1.10 ms [1.00..1.20]" in html and "2.20 ms [2.00..2.40]" in html
    assert "GB/s" not in html


def test_panel_adds_one_table_per_metric_in_figure_order(demo):
    tab = Table.of(frame(demo), demo.figures["fig-demo"], CodeHash("x" * 64, provenance.harness_sha256()))
    html = machine_panel(tab, "demo.csv", "verdicts/")
    order = [html.index(label) for label in ("Achieved bandwidth", "Achieved FLOP/s", "Error against")]
    assert order == sorted(order)
    assert "455 GB/s" in html  # narrow: 1e9 bytes / 2.2 ms


# --- markers --------------------------------------------------------------------------------

def test_value_stats_for_each_metric(demo):
    text = expand("<!-- bench:value fig-demo stat=bandwidth variant=narrow --> | "
                  "<!-- bench:value fig-demo stat=error variant=wide --> | "
                  "<!-- bench:value fig-demo stat=size variant=file part=trace -->", ctx(demo))
    assert "455 GB/s [417..500]" in text
    assert "1.0e-07 [same in all 3 runs]" in text
    assert "14.0 kB [same in all 3 runs]" in text


def test_error_ratio_divides_per_run_errors(demo):
    text = expand("<!-- bench:value fig-demo stat=error-ratio a=narrow b=wide -->", ctx(demo))
    assert "40000× [40000..40000]" in text


def test_error_ratio_refuses_to_divide_by_a_zero_error(demo, tmp_path):
    zero = [dict(r, max_rel_error=0.0) for r in rows_for("wide", 1e-3)] + rows_for("narrow", 1e-3,
                                                                                 max_rel_error=1e-3)
    results.write_atomic(tmp_path / "results" / MACHINE / "demo.csv", results.to_csv_text(zero))
    cat = Catalog.build(tmp_path / "results", demo.figures)
    with pytest.raises(MarkerError, match="non-zero error"):
        expand("<!-- bench:value fig-demo stat=error-ratio a=narrow b=wide -->", ctx(cat))


def test_a_metric_stat_on_rows_without_it_fails_the_build(demo):
    with pytest.raises(MarkerError, match="page.md:1: .*carry no bandwidth"):
        expand("<!-- bench:value fig-demo stat=bandwidth variant=op -->", ctx(demo))


def test_detail_stat_shows_the_text_escaped(demo):
    text = expand("<!-- bench:value fig-demo stat=detail variant=op op=dot.1 -->", ctx(demo))
    assert "dot &lt;f32&gt;" in text and "<f32>" not in text


def test_ranked_table_orders_by_median_and_keeps_the_top(demo):
    html = expand("<!-- bench:ranked fig-demo variant=op by=op top=2 -->", ctx(demo))
    assert html.index("<code>dot</code>") < html.index("<code>dot.1</code>")
    assert "<code>fusion</code>" not in html
    assert "dot &lt;f32&gt;" in html  # detail text is escaped
    assert "60 %" in html and "30 %" in html  # 6 and 3 of the 10 ms summed
    assert "top 2 of 3 (one line per op), together 90 % of the sum" in html


def test_ranked_marker_needs_variant_and_by(demo):
    with pytest.raises(MarkerError, match="needs variant= and by="):
        expand("<!-- bench:ranked fig-demo variant=op -->", ctx(demo))
    with pytest.raises(MarkerError, match="no parameter 'size'"):
        expand("<!-- bench:ranked fig-demo variant=op by=size -->", ctx(demo))


def test_file_marker_links_an_existing_side_file_only(demo):
    html = expand("<!-- bench:file fig-demo name=trace.json.gz -->", ctx(demo))
    assert f'href="../results/{MACHINE}/demo.trace.json.gz"' in html
    with pytest.raises(MarkerError, match="no side file demo.memory.prof"):
        expand("<!-- bench:file fig-demo name=memory.prof -->", ctx(demo))
