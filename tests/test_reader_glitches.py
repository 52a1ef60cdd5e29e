"""Issue 18's small glitches, each at the function that printed it, and the data-derived wall times
and the notebook page's weight fix (no browser, no site build)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from benchsite.build import notebook_page
from benchsite.build.buildcache import BuildCache
from benchsite.model.table import distinct_texts
from benchsite.views import fmt, render, walltime

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("low", "high", "shown"), [(10, 10, "10 samples"), (3, 3, "3 samples"),
                                                    (1, 1, "1 sample"), (3, 10, "3–10 samples")])
def test_a_range_whose_ends_agree_prints_one_number(low, high, shown):
    assert fmt.count_span(low, high, "sample") == shown


def _panel_frame(samples_per_run: list[int]) -> pd.DataFrame:
    rows = [dict(machine="m", platform="cpu", device_kind="cpu", jax_version="0.10.2",
                 timestamp_utc="2026-12-01T12:00:00Z", boundary="completed", run=run, variant="v", params="n=1")
            for run, n in enumerate(samples_per_run) for _ in range(n)]
    return pd.DataFrame(rows)


def _meta(frame: pd.DataFrame) -> dict:
    texts = {col: distinct_texts(frame[col]) for col in ("jax_version", "timestamp_utc", "boundary")}  # Table.texts
    return render._meta(frame, texts)


def test_the_panel_meta_line_says_10_samples_not_10_to_10():
    assert _meta(_panel_frame([10, 10, 10]))["samples"] == "10 samples"
    assert _meta(_panel_frame([3, 10]))["samples"] == "3–10 samples"
    template = (REPO / "benchsite/views/templates/panel.html").read_text()
    assert "{{ meta.samples }} samples" not in template and "sample(s)" not in template


@pytest.mark.parametrize(("n", "shown"), [(45, "45 warm samples"), (1, "1 warm sample")])
def test_warm_compile_warning_uses_a_proper_plural(n, shown):
    frame = pd.DataFrame({"boundary": ["completed"] * n, "compiles": [1] * n, "variant": ["v"] * n})
    assert render._warm_compiles(frame)["text"] == shown


def test_a_url_run_on_to_a_log_line_starts_its_own_line():
    text = "now f32[]{weak_type=False} and before f32[]{weak_type=True}https://docs.jax.dev/en/latest/x.html"
    assert fmt.unglue_urls(text).endswith("{weak_type=True}\nhttps://docs.jax.dev/en/latest/x.html")
    assert fmt.unglue_urls("see https://a.b and (https://c.d)") == "see https://a.b and (https://c.d)"


def test_detail_blocks_show_the_url_on_its_own_line_and_keep_counting_the_stored_text():
    stored = "before f32[]{weak_type=True}https://docs.jax.dev/a"
    frame = pd.DataFrame({"detail": [stored, stored], "run": [0, 1]})
    html = str(render.detail_list(frame, "fig-x on m"))
    assert "{weak_type=True}\nhttps://docs.jax.dev/a" in html and "In 2 of the" in html


def _starts(fig: str, session: str, times: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"session_id": session, "run": range(len(times)), "timestamp_utc": times,
                         "time_s": 0.1}).assign(figure_id=fig)


def test_wall_time_is_the_gap_to_the_next_process_start_of_the_same_session():
    session = "20261201T120000Z-abcd"
    frames = {"fig-a": _starts("fig-a", session, ["2026-12-01T12:00:01Z", "2026-12-01T12:00:10Z"]),
              "fig-b": _starts("fig-b", session, ["2026-12-01T12:00:04Z", "2026-12-01T12:00:13Z"])}
    times = {t.fig_id: t for t in walltime.figure_times(frames)}
    assert times["fig-a"].gaps == (3.0, 3.0)  # 12:00:01 -> 12:00:04, 12:00:10 -> 12:00:13
    assert times["fig-b"].gaps == (6.0,)  # the session's last run has no next start
    [(sid, n_figs, n_runs, span)] = walltime.session_spans(frames)
    assert (sid, n_figs, n_runs, span) == (session, 2, 4, 13.0)
    text = walltime.table(frames, lambda fig_id: f"bench/{fig_id}/")
    assert "[fig-a](bench/fig-a/) | 2 | 3 s |" in text  # equal ends: one number
    assert "**18 s**" in text  # each figure's median gap times its runs: 3 s x 2 + 6 s x 2
    assert "13 s from its start" in text


def test_a_recorded_run_wall_time_is_quoted_beside_the_budget():
    session = "20261201T120000Z-abcd"
    frames = {"fig-a": _starts("fig-a", session, ["2026-12-01T12:00:01Z", "2026-12-01T12:00:10Z"])
              .assign(run_wall_s=[2.5, 3.5]),
              "fig-b": _starts("fig-b", session, ["2026-12-01T12:00:04Z", "2026-12-01T12:00:13Z"])
              .assign(run_wall_s=[9.0, 9.0])}
    times = {t.fig_id: t for t in walltime.figure_times(frames)}
    assert times["fig-a"].walls == (2.5, 3.5) and times["fig-a"].median == 3.0  # not the gaps
    text = walltime.table(frames, lambda fig_id: f"bench/{fig_id}/", {"fig-a": 4.0, "fig-b": 8.0})
    assert "| [fig-a](bench/fig-a/) | 2 | 3.0 s [2.5 s..3.5 s] | the run | 4.0 s |" in text
    assert "| 9.0 s | the run | 8.0 s (**over**) |" in text
    assert "**24 s**" in text  # budgets times runs: 4 s x 2 + 8 s x 2
    assert "1 figure took longer than the budget at the median (fig-b)" in text


def test_a_median_just_over_its_budget_does_not_read_as_the_budget():
    session = "20261201T120000Z-abcd"
    frames = {"fig-a": _starts("fig-a", session, ["2026-12-01T12:00:01Z", "2026-12-01T12:00:10Z"])
              .assign(run_wall_s=[5.003, 5.005])}
    text = walltime.table(frames, lambda fig_id: f"bench/{fig_id}/", {"fig-a": 5.0})
    assert "| 2 | 5.004 s | the run | 5.0 s (**over**) |" in text  # not "5.0 s" beside "5.0 s (over)"


def test_wall_time_reads_in_minutes_past_a_minute():
    assert walltime.seconds(648.4) == "10 min 48 s" and walltime.seconds(59.6) == "1 min 0 s"
    assert walltime.seconds(None) == "—"


NOTEBOOK_PAGE = """<html><head><style>.md-x{color:red}</style></head><body>
<style type="text/css">
.jupyter-wrapper{--jp-used:1px;--jp-chain:var(--jp-used);--jp-unused:2px;--jp-alias:var(--jp-unused);--jp-keyword:green}
.jupyter-wrapper .jp-Cell{padding:var(--jp-chain)}
.jupyter-wrapper .bp3-menu,.jupyter-wrapper .jp-InputPrompt{margin:0}
.jupyter-wrapper .bp3-menu{color:blue}
.jupyter-wrapper .jp-Cell:not(.jp-mod-active) .jp-InputPrompt{opacity:.5}
@media (max-width:10px){.jupyter-wrapper .bp3-x{color:red}.jupyter-wrapper .jp-Cell{margin:1px}}
</style>
<style>['pre { line-height: 125%; }']</style>
<style>.highlight-ipynb .k { color: var(--jp-keyword) }</style>
<script type="module">document.querySelectorAll(".jp-Mermaid > pre.mermaid")</script>
<div class="jupyter-wrapper"><div class="jp-Cell"><div class="jp-InputPrompt">In [1]:</div></div></div>
</body></html>"""


def test_the_notebook_page_keeps_only_the_css_it_uses():
    out = notebook_page.prune_page(NOTEBOOK_PAGE)
    assert ".md-x{color:red}" in out  # a stylesheet that is not the notebook's stays as it was
    assert "bp3" not in out and "--jp-unused" not in out and "--jp-alias" not in out
    assert "--jp-used:1px" in out and "--jp-chain:var(--jp-used)" in out
    assert "--jp-keyword:green" in out  # used by another stylesheet of the page (Pygments)
    assert ".jupyter-wrapper .jp-InputPrompt{margin:0}" in out  # the used half of a selector list
    assert "@media (max-width:10px){.jupyter-wrapper .jp-Cell{margin:1px}}" in out
    assert ".jp-Cell:not(.jp-mod-active) .jp-InputPrompt{opacity:.5}" in out  # a class it excludes, not needs
    assert "['pre" not in out and "jp-Mermaid" not in out
    assert '<div class="jp-InputPrompt">In [1]:</div>' in out  # content untouched


def test_provenance_lists_one_scratch_folder_not_one_per_run():
    import pandas as pd

    from benchsite.views.render import _distinct

    frame = pd.DataFrame({"compilation_cache": ["on:/tmp/bench-first-use-cache-24x2urgu",
                                                "on:/tmp/bench-first-use-cache-9kq1zz0a", "off"]})
    texts = {"compilation_cache": distinct_texts(frame["compilation_cache"])}  # as Table.texts hands them
    assert _distinct(texts, "compilation_cache") == "off, on:<tmp>"


def _two_row_table(root: Path):
    """Three runs of two rows: run r of n=8 is (1 + r/10) and of n=16 (1 + r/2) times slower."""
    from benchfixtures import demo_figure
    from benchkit import results
    from benchsite.model.catalog import Catalog
    from benchsite.model.table import Table
    from test_results import make_row

    fig = demo_figure(root)
    rows = [make_row(run=r, sample=s, variant=v, time_s=1e-3 * (1 + (0.1 if n == 8 else 0.5) * r),
                     params=f"n={n}", machine="cpu-test-2c", figure_id="fig-demo", script_sha256="x" * 64,
                     script_path="bench_scripts/demo.py")
            for n in (8, 16) for r in range(3) for s in range(4) for v in ("fast", "slow")]
    results.write_atomic(root / "results" / "cpu-test-2c" / "demo.csv", results.to_csv_text(rows))
    cat = Catalog.build(root / "results", {"fig-demo": fig})
    return Table.of(cat.frames[("fig-demo", "cpu-test-2c")], fig)


def test_a_spread_over_several_rows_says_it_is_a_range_across_rows(tmp_path):
    """'75 % to 129 %' under 'span ... of their median' read as where the run medians lie; the
    text names what the two ends are: the spread of the row with the least and with the most."""
    assert fmt.percent_span([0.36]) == "36 %"
    assert fmt.percent_span([0.361, 0.364]) == "36 %"  # rows that agree to two figures: one value
    assert fmt.percent_span([0.75, 1.29]) == "75 % to 129 % across rows"
    assert fmt.percent_span([0.75, float("nan"), 1.29]) == \
        "75 % to 129 % across rows; 1 of 3 rows had too few samples a run to say"
    assert fmt.percent_span([float("nan")]) == "not measurable (too few samples a run)"
    spread = render.spread_text(_two_row_table(tmp_path))
    # n=8: (1.2 - 1.0) / 1.1 of its median; n=16: (2.0 - 1.0) / 1.5
    assert "(largest − smallest) / median of the 3 run medians: 18 % to 67 % across rows" in spread
    assert "span" not in spread


def test_the_wall_time_section_names_a_figure_it_left_out_for_invalid_results(tmp_path):
    """A refused results file drops its figure from the suite's sums; the section says which and
    why, in an error box, and reports it (a strict build fails), rather than summing less."""
    from benchfixtures import demo_figure, write_machine
    from benchsite.model.catalog import Catalog
    from benchsite.pages.markers import Context, expand

    root = tmp_path / "results"
    good = demo_figure(tmp_path)
    bad = demo_figure(tmp_path, id="fig-other", stem="other")
    write_machine(root, "cpu-a")
    path = write_machine(root, "cpu-a", stem="other", fig_id="fig-other")
    path.write_text(path.read_text().replace("2026-02-03T04:05:06Z", "yesterday", 1))
    cat = Catalog.build(root, {good.id: good, bad.id: bad}, preferred="cpu-a")
    problems = []
    ctx = Context(cat, "docs/page.md", lambda target: target, problems.append, cache=BuildCache())
    html = expand("<!-- bench:walltime -->", ctx)
    assert "fig-demo" in html and "summed over 1 figure" in html
    assert 'class="bench-error"' in html and "fig-other cannot be shown" in html
    assert "other.csv:2: timestamp_utc &#39;yesterday&#39; is not a UTC time" in html
    assert any("other.csv:2: timestamp_utc" in p for p in problems)
