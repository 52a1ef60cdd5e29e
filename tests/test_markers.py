"""Markers expand from data, escape what they show, and fail loudly with page:line."""

import pytest

from benchsite.catalog import Catalog
from benchsite.figures import Figure
from benchsite.markers import Context, MarkerError, expand
from harness import results
from test_results import make_row


@pytest.fixture
def catalog(tmp_path):
    script = tmp_path / "demo.py"
    script.write_text("FIGURE = {}\n")
    fig = Figure(id="fig-demo", stem="demo", script=script, title="Demo <b>", caption="A & B",
                 chapter="index.md", variants=("fast", "slow"), group_by=("n",), ratio=("slow", "fast"))
    rows = [make_row(run=r, sample=s, variant=v, time_s=t * (1 + 0.01 * r), script_sha256="x" * 64,
                     detail="<script>alert(1)</script>")
            for r in range(3) for s in range(4) for v, t in (("fast", 1e-5), ("slow", 1e-3))]
    results.write_atomic(tmp_path / "results" / "cpu-test-2c" / "demo.csv", results.to_csv_text(
        [dict(r, figure_id="fig-demo") for r in rows]))
    return Catalog.build(tmp_path / "results", {"fig-demo": fig})


def ctx(catalog, problems=None):
    return Context(catalog, "docs/page.md", lambda target: "../" + target,
                   (problems if problems is not None else []).append)


def test_value_marker_renders_median_and_range_from_the_data(catalog):
    html = expand("took <!-- bench:value fig-demo variant=slow n=8 --> here", ctx(catalog))
    assert "1.01 ms [1.00..1.02]" in html
    assert 'title="fig-demo on cpu-test-2c: median, 3 runs"' in html


def test_ratio_and_verdict(catalog):
    text = expand("<!-- bench:value fig-demo stat=ratio --> / <!-- bench:value fig-demo stat=verdict -->",
                  ctx(catalog))
    assert "100× [100..100]" in text and "a result" in text


def test_figure_marker_escapes_text_and_embeds_the_script_section(catalog):
    out = expand("<!-- bench:figure fig-demo -->", ctx(catalog))
    assert "### Demo &lt;b&gt; { #fig-demo }" in out
    assert "A &amp; B" in out and "<script>" not in out
    assert '--8<-- "' in out and ':measure"' in out
    assert 'href="../results/cpu-test-2c/demo.csv"' in out
    assert "STALE" in out  # the recorded sha256 is not the script's


def test_unknown_marker_names_page_and_line(catalog):
    with pytest.raises(MarkerError, match=r"docs/page.md:3: unknown marker bench:chart"):
        expand("a\nb\n<!-- bench:chart fig-demo -->", ctx(catalog))


def test_unknown_figure_and_stat_fail(catalog):
    with pytest.raises(MarkerError, match="no figure script defines fig-nope"):
        expand("<!-- bench:value fig-nope -->", ctx(catalog))
    with pytest.raises(MarkerError, match="unknown stat 'mode'"):
        expand("<!-- bench:value fig-demo stat=mode -->", ctx(catalog))
    with pytest.raises(MarkerError, match="no rows match"):
        expand("<!-- bench:value fig-demo variant=medium -->", ctx(catalog))


def test_markers_inside_code_fences_are_left_alone(catalog):
    page = "```\n<!-- bench:nonsense -->\n```\n"
    assert expand(page, ctx(catalog)) == page


def test_a_figure_without_results_is_reported_not_hidden(catalog, tmp_path):
    empty = Catalog.build(tmp_path / "nothing", catalog.figures)
    problems = []
    out = expand("<!-- bench:figure fig-demo -->", ctx(empty, problems))
    assert "cannot be shown" in out and problems
