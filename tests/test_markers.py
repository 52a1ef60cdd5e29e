"""Markers expand from data, escape what they show, and fail loudly with page:line."""

import dataclasses
import html
import html.parser
import json
import re
from pathlib import Path

import pytest

from benchkit import results
from benchkit.runner import DEFAULT_RUNS
from benchsite.build.buildcache import BuildCache
from benchsite.model import noise as noise_model
from benchsite.model import stats
from benchsite.model.catalog import Catalog
from benchsite.model.figures import Figure
from benchsite.pages import markers
from benchsite.pages.markers import Context, MarkerError, expand
from benchsite.views import fmt, verdict_rates
from test_results import make_row

# The columns results schema version 2 added, with the values one session would record.
V2 = {
    "harness_sha256": "h" * 64, "session_id": "s-1", "cpu_vendor": "AuthenticAMD", "cpu_family": "25",
    "cpu_model_number": "1", "cpu_stepping": "1", "cpu_flags_sha256": "f" * 64, "cpu_isa": "avx2",
    "cpu_governor": "performance", "cpu_mhz": "2450", "mem_total_bytes": 8 << 30, "load_avg_1m": 0.1,
    "jax_env": "", "compilation_cache": "off", "order_seed": 1, "seq": 0, "cache_hits": 0,
}


@pytest.fixture
def catalog(tmp_path):
    script = tmp_path / "demo.py"
    script.write_text("FIGURE = {}\n")
    fig = Figure(id="fig-demo", stem="demo", script=script, title="Demo <b>", caption="A & B",
                 chapter="index.md", variants=("fast", "slow"), group_by=("n",), ratio=("slow", "fast"))
    rows = [make_row(**V2, run=r, sample=s, variant=v, time_s=t * (1 + 0.01 * r), script_sha256="x" * 64,
                     detail="<script>alert(1)</script>")
            for r in range(3) for s in range(4) for v, t in (("fast", 1e-5), ("slow", 1e-3))]
    results.write_atomic(tmp_path / "results" / "cpu-test-2c" / "demo.csv", results.to_csv_text(
        [dict(r, figure_id="fig-demo") for r in rows]))
    return Catalog.build(tmp_path / "results", {"fig-demo": fig})


def ctx(catalog, problems=None):
    return Context(catalog, "docs/page.md", lambda target: "../" + target,
                   (problems if problems is not None else []).append, cache=BuildCache())


def test_value_marker_renders_median_and_range_from_the_data(catalog):
    html = expand("took <!-- bench:value fig-demo variant=slow n=8 --> here", ctx(catalog))
    assert "1.01 ms [1.00..1.02]" in html
    assert 'title="fig-demo on cpu-test-2c: median, 3 runs"' in html


def test_ratio_and_verdict(catalog):
    text = expand("<!-- bench:value fig-demo stat=ratio --> / <!-- bench:value fig-demo stat=verdict -->",
                  ctx(catalog))
    assert "100× [100..100]" in text
    # three runs: however large, the paired rule decides nothing yet, and says why
    assert ">not a result yet</a>" in text and "3 paired runs; the rule needs at least 5" in text
    assert 'href="../verdicts/"' in text  # the verdict links to "How a verdict is decided"


def nine_runs(tmp_path, slow_factor):
    """fast and slow measured in the same nine runs; each run drifts both alike."""
    script = tmp_path / "pair.py"
    script.write_text("FIGURE = {}\n")
    fig = Figure(id="fig-pair", stem="pair", script=script, title="Pair", caption="c",
                 chapter="index.md", variants=("fast", "slow"), ratio=("slow", "fast"))
    drift = [1.0, 1.2, 0.9, 1.1, 1.3, 0.95, 1.05, 1.25, 0.85]
    rows = [make_row(**V2, run=r, sample=s, variant=v, time_s=t * drift[r], params="",
                     script_sha256="x" * 64, figure_id="fig-pair")
            for r in range(9) for s in range(3) for v, t in (("fast", 1e-3), ("slow", 1e-3 * slow_factor))]
    results.write_atomic(tmp_path / "results" / "cpu-test-2c" / "pair.csv", results.to_csv_text(rows))
    return Catalog.build(tmp_path / "results", {"fig-pair": fig})


@pytest.mark.parametrize(("factor", "said"), [(1.10, "a result"), (1.01, "not a result yet")])
def test_verdict_is_paired_run_by_run(tmp_path, factor, said):
    # the drift spans far more than the difference; run by run the difference is steady
    text = expand("<!-- bench:value fig-pair stat=verdict -->", ctx(nine_runs(tmp_path, factor)))
    assert f">{said}</a>" in text
    assert "9 of 9 runs" in text


def two_sizes(tmp_path):
    """One variant, ``step``, at n=128 and n=1024 in the same nine runs (n=1024 1.3x, drifting alike),
    and n=1024 alone in a tenth run; the figure declares no ratio."""
    script = tmp_path / "sizes.py"
    script.write_text("FIGURE = {}\n")
    fig = Figure(id="fig-sizes", stem="sizes", script=script, title="Sizes", caption="c",
                 chapter="index.md", variants=("step",), group_by=("n",))
    drift = [1.0, 1.2, 0.9, 1.1, 1.3, 0.95, 1.05, 1.25, 0.85, 9.0]
    rows = [make_row(**V2, run=r, sample=s, variant="step", time_s=1e-3 * drift[r] * (1.3 if n == 1024 else 1.0),
                     params=f"n={n}", script_sha256="x" * 64, figure_id="fig-sizes")
            for n in (128, 1024) for r in range(10 if n == 1024 else 9) for s in range(3)]
    results.write_atomic(tmp_path / "results" / "cpu-test-2c" / "sizes.csv", results.to_csv_text(rows))
    return Catalog.build(tmp_path / "results", {"fig-sizes": fig})


def test_a_value_compares_two_rows_run_by_run_and_its_title_names_both_sides(tmp_path):
    page = ctx(two_sizes(tmp_path))
    sides = "a=step b=step a.n=1024 b.n=128"
    said = expand(f"<!-- bench:value fig-sizes stat=verdict {sides} -->", page)
    assert ">a result</a>" in said and "9 of 9 runs" in said  # run 9 (n=1024 only) is not paired
    assert ('title="fig-sizes on cpu-test-2c: verdict, 10 runs; a = step, n=1024 against b = step, n=128; '
            'paired rule: median per-run ratio 1.3,') in said
    ratio = expand(f"<!-- bench:value fig-sizes stat=ratio {sides} boundary=completed -->", page)
    assert ">1.30× [1.30..1.30]</span>" in ratio
    assert ("a = step, n=1024 against b = step, n=128 (both boundary=completed)") in ratio
    variants = expand("<!-- bench:value fig-pair stat=ratio a=slow b=fast -->", ctx(nine_runs(tmp_path, 1.1)))
    assert 'title="fig-pair on cpu-test-2c: ratio, 9 runs">' in variants  # one pair of variants: as it was


def test_an_option_given_twice_stops_the_build(tmp_path):
    """Two values of one side's filter (or of any option) would leave the last: refused instead."""
    with pytest.raises(MarkerError, match=r"option a\.n given twice"):
        expand("<!-- bench:value fig-sizes stat=ratio a=step b=step a.n=1024 a.n=128 b.n=128 -->",
               ctx(two_sizes(tmp_path)))


@pytest.mark.parametrize("stat", ["median", "runs", "range", "field key=n", "detail"])
def test_a_sides_filter_on_a_statistic_that_compares_nothing_stops_the_build(tmp_path, stat):
    with pytest.raises(MarkerError, match=rf"bench:value fig-sizes stat={stat} a.n=1024: a.n: "
                                          rf"stat={stat.split()[0]} compares nothing"):
        expand(f"<!-- bench:value fig-sizes stat={stat} a.n=1024 -->", ctx(two_sizes(tmp_path)))


def test_figure_panel_names_the_ratio_statistic_and_links_the_rule(tmp_path):
    page = ctx(nine_runs(tmp_path, 1.10))
    out = page.cache.fill(expand("<!-- bench:figure fig-pair -->", page), page.link)  # as the build does
    assert "median [min..max] of the per-run ratios" in out and "not one column divided by the other" in out
    assert "<strong>a result</strong>" in out and "paired rule of" in out
    assert '<a href="../verdicts/">How a verdict is decided</a>' in out


def test_verdict_rates_table_comes_from_the_simulation(catalog):
    out = expand("<!-- bench:verdict-rates -->", ctx(catalog))
    assert out.count("<tr>") == 2 + 2 * (1 + 3)  # two header rows, two rules x (its row, R = 5, 6, 9)
    assert "false positives" in out and "power at a true shift of" in out and "3 spreads" in out and "seed" in out
    assert "one spread = 3.6 %" in expand("<!-- bench:verdict-rates -->", ctx(catalog))
    assert "one spread = 36 %" in expand("<!-- bench:verdict-rates scale=10 -->", ctx(catalog))
    with pytest.raises(MarkerError, match="noise= is model or measured"):
        expand("<!-- bench:verdict-rates noise=2 -->", ctx(catalog))
    with pytest.raises(MarkerError, match="unknown options"):
        expand("<!-- bench:verdict-rates rule=maybe -->", ctx(catalog))
    with pytest.raises(MarkerError, match="too few cells"):  # three runs a cell measure no noise
        expand("<!-- bench:verdict-rates noise=measured -->", ctx(catalog))


def test_equivalence_rates_and_measured_noise(tmp_path):
    page = ctx(nine_runs(tmp_path, 1.10))
    same = expand("<!-- bench:verdict-rates rule=same -->", page)
    assert same.count("<tr>") == 2 + 2 * (1 + 3 * 3)  # two header rows, two rules x (its row, R x margins)
    assert "false equivalence: “the same” at" in same and "<td>±5 %</td>" in same
    measured = expand("<!-- bench:verdict-rates noise=measured -->", page)
    assert "the noise measured on cpu-test-2c (medians over 2 cells and 1 ratio pairs" in measured
    assert "one spread = 3.6 %" not in measured


class _Table(html.parser.HTMLParser):
    """A table's header cells as (text, colspan, rowspan) a row, and its body's rows as they come,
    each a list of (tag, text, colspan), with where each <tbody> starts: enough to read a table by
    its columns as a reader does."""

    def __init__(self, text: str):
        super().__init__()
        self.head, self.body, self.starts, self.attrs, self._in, self._cell = [], [], [], {}, None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.attrs = a
        elif tag in ("thead", "tbody"):
            self._in = tag
            if tag == "tbody":
                self.starts.append(len(self.body))
        elif tag == "tr":
            (self.head if self._in == "thead" else self.body).append([])
        elif tag in ("th", "td"):
            self._cell = [tag, "", int(a.get("colspan", 1)), int(a.get("rowspan", 1))]

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1] += data

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self._cell is not None:
            tag_, text, span, rows = self._cell
            rows_ = self.head if self._in == "thead" else self.body
            rows_[-1].append((text, span, rows) if self._in == "thead" else (tag_, text, span))
            self._cell = None

    def columns(self) -> list[str]:
        """Each column's heading as a reader reads it: the heading over it, then its own."""
        grid: dict[tuple[int, int], str] = {}
        for r, row in enumerate(self.head):
            c = 0
            for text, span, rows in row:
                while (r, c) in grid:
                    c += 1
                for dr in range(rows):
                    for dc in range(span):
                        grid[(r + dr, c + dc)] = text
                c += span
        width = max(c for _, c in grid) + 1
        return [" / ".join(dict.fromkeys(grid[(r, c)] for r in range(len(self.head)))) for c in range(width)]


def _made_up_rates(rule: str) -> noise_model.Rates:
    """Every rate of a simulation, each a different number (0.10 %, 0.20 %, ...) in the order the
    simulation's keys come, so that a cell shown under the wrong rule, R, margin or shift shows."""
    if rule == "same":
        keys = [(w, r, m, s) for w in ("paired", "unpaired") for r in stats.SIM_RUNS for m in stats.SIM_MARGINS
                for s in stats.SIM_EQUIV_SHIFTS]
        made = [stats.EquivRate(*k, rate=(i + 1) / 1000) for i, k in enumerate(keys)]
    else:
        keys = [(w, r, s) for w in ("paired", "unpaired") for r in stats.SIM_RUNS for s in stats.SIM_SHIFTS]
        made = [stats.Rate(*k, rate=(i + 1) / 1000) for i, k in enumerate(keys)]
    return noise_model.Rates(rule, noise_model.SimNoise(0.02, 0.03, 0.036), tuple(made))


EQUIV_COLUMNS = {0.0: "“the same” at a true difference of / none",
                 0.5: "“the same” at a true difference of / half the margin",
                 1.0: "false equivalence: “the same” at / the margin",
                 1.5: "false equivalence: “the same” at / 1.5 margins"}


@pytest.mark.parametrize("rule", ["differ", "same"])
def test_verdict_rates_group_their_rows_by_rule_and_each_rate_sits_under_its_column(rule):
    """The simulated rates were a table with the rule in words as its first column, the same two
    values on all 18 rows of the equivalence table, which wrapped to three lines in every row and
    pushed its last column out of a desktop's page. Now each rule heads a group of rows (a <tbody>
    under one row naming it, across every column), no cell repeats it, and every rate still sits in
    its rule's group, on its R's (and margin's) row, under its shift's column: read as a reader reads
    the table, each cell is the rate the simulation gave for that place."""
    found = _made_up_rates(rule)
    table = _Table(verdict_rates.rates_table(found))
    columns = table.columns()
    shifts = {s: (EQUIV_COLUMNS[s] if rule == "same" else "false positives (no difference)" if s == 0
                  else f"power at a true shift of / {s} spread{'s' if s != 1 else ''}")
              for s in (stats.SIM_EQUIV_SHIFTS if rule == "same" else stats.SIM_SHIFTS)}
    assert columns == ["R"] + (["margin"] if rule == "same" else []) + list(shifts.values())
    assert "data-columns" in table.attrs and "data-cards" not in table.attrs  # bench-cards.js: no cards
    groups = [table.body[a:b] for a, b in zip(table.starts, table.starts[1:] + [len(table.body)])]
    assert [g[0] for g in groups] == [[("th", what, len(columns))] for _, what in verdict_rates.RULES]
    shown = {}
    for (key, _), group in zip(verdict_rates.RULES, groups):
        for row in group[1:]:
            assert [tag for tag, _, span in row] == ["td"] * len(columns) and {span for *_, span in row} == {1}
            cells = dict(zip(columns, (text for _, text, _ in row)))
            place = (key, int(cells["R"])) + ((cells["margin"],) if rule == "same" else ())
            shown.update({place + (s,): cells[heading] for s, heading in shifts.items()})
    expected = {(r.rule, r.runs) + ((stats.margin_text(r.margin),) if rule == "same" else ()) + (r.shift,):
                fmt.percent(r.rate) for r in found.rates}
    assert shown == expected


def test_how_many_verdicts_the_site_shows(tmp_path):
    page = ctx(nine_runs(tmp_path, 1.10))
    assert ">1</span>" in expand("<!-- bench:verdict-count what=paired -->", page)
    assert ">0</span>" in expand("<!-- bench:verdict-count what=unpaired -->", page)
    assert ">1 machine</span>" in expand("<!-- bench:verdict-count what=machines -->", page)
    implied = expand("<!-- bench:verdict-count what=paired-false -->", page)
    assert "1 verdicts x" in implied and f"paired rule, R = {DEFAULT_RUNS}" in implied
    table = expand("<!-- bench:verdict-rates noise=measured -->", page)  # the same rate as the table's
    rate = float(re.search(r"verdicts x (\S+) %", implied).group(1)) / 100  # as the count used it
    shown = re.search(r"<td>9</td>\n?<td>([^<]+)</td>", table).group(1)  # the table's, to two figures
    assert shown == fmt.percent(rate)
    with pytest.raises(MarkerError, match="needs what="):
        expand("<!-- bench:verdict-count -->", page)


def test_same_value_names_its_margin_and_interval(tmp_path):
    page = ctx(nine_runs(tmp_path, 1.01))
    text = expand("<!-- bench:value fig-pair stat=same margin=0.05 -->", page)
    assert ">the same within ±5 %</a>" in text and "sign-test interval" in text
    assert 'href="../verdicts/#the-same-within-a-margin"' in text
    far = expand("<!-- bench:value fig-pair stat=same margin=0.05 a=fast b=slow -->", ctx(nine_runs(tmp_path, 1.5)))
    assert "could not show the same within ±5 % (interval" in far
    with pytest.raises(MarkerError, match="needs margin="):
        expand("<!-- bench:value fig-pair stat=same -->", page)


def test_verdict_rule_constants_come_from_the_code(catalog):
    assert ">3.0 %</span>" in expand("<!-- bench:verdict-rule min-effect -->", ctx(catalog))
    assert "8 of 9" in expand("<!-- bench:verdict-rule paired-agree -->", ctx(catalog))
    with pytest.raises(MarkerError, match="needs one of"):
        expand("<!-- bench:verdict-rule nonsense -->", ctx(catalog))


def test_figure_marker_escapes_text_and_embeds_the_script_section(catalog):
    page = ctx(catalog)
    out = page.cache.fill(expand("<!-- bench:figure fig-demo -->", page), page.link)  # as the build does
    assert "### Demo &lt;b&gt; { #fig-demo }" in out
    assert "A &amp; B" in out and "<script>" not in out
    assert '--8<-- "' in out and ':measure"' in out
    assert 'href="../results/cpu-test-2c/demo.csv.gz"' in out
    assert "STALE" in out  # the recorded sha256 is not the script's


def test_a_chapters_figure_stashes_what_search_skips_and_the_page_gets_it_back(catalog, monkeypatch):
    """Markdown, mkdocs' anchor collection and the search indexer read a chapter's figure without its
    tables, spread, chart and provenance (each a placeholder); the finished page is the same."""
    page = ctx(catalog)
    text = expand("<!-- bench:figure fig-demo -->", page)
    assert "<details" not in text and "<table" not in text and "bench-spread" not in text
    assert "A &amp; B" in text and 'class="bench-verdict"' in text  # what search reads stays
    assert text.count("<!--bench-html:") >= 4
    whole = ctx(catalog)
    monkeypatch.setattr(markers, "stash_unindexed", lambda html, stash: html)
    assert page.cache.fill(text, page.link) == whole.cache.fill(expand("<!-- bench:figure fig-demo -->", whole),
                                                                 whole.link)


def test_stash_unindexed_keeps_anchors_and_search_values_in_the_text():
    cache = BuildCache()
    html = ('<p>kept</p>\n<table data-search-exclude>\n<tr><td><table class="x"><tr><td>1</td></tr></table></td></tr>\n'
            '</table>\n<details data-search-exclude id="a">anchor</details>\n'
            '<ul data-search-exclude data-search-boost="2"><li>boost</li></ul>\n<div data-search-exclude>open')
    stashed = markers.stash_unindexed(html, cache.stash)
    assert stashed.count("<!--bench-html:") == 1 and "<table" not in stashed  # the outer table, nested one inside
    assert 'id="a"' in stashed and 'data-search-boost="2"' in stashed and "open" in stashed
    assert cache.fill(stashed, str) == html
    table = html[html.index("<table"):html.index("</table>\n<details") + len("</table>")]
    assert stashed == html.replace(table, cache.stash(table))  # the whole outer table, not up to the inner end
    other = '<p data-search-exclude-not>indexed</p>\n<p data-search-excluded="">indexed</p>\n'
    assert markers.stash_unindexed(other, cache.stash) == other  # another attribute: Material indexes these


@pytest.mark.parametrize("chapter", [
    "# Page\n\n<!-- bench:figure fig-demo -->\n\nAfter *it*.\n",
    "# Page\n\nText right above\n<!-- bench:figure fig-demo -->\nand *below*.\n",
    "# Page\n\n- item\n\n    <!-- bench:figure fig-demo -->\n\n!!! note\n    <!-- bench:figure fig-demo -->\n",
    "# Page\n\n<!-- bench:figure fig-demo -->\n\n<!-- bench:figure fig-demo -->\n"])
def test_the_sites_markdown_and_search_make_the_same_page_of_a_stashed_figure(catalog, monkeypatch, tmp_path, chapter):
    """What the site's Markdown (mkdocs.yml's extensions), its search plugin (the index, and the page it
    leaves) and mkdocs' anchor collection make of a chapter whose figure's unindexed elements are
    stashed is, once filled, what they make of the figure as it is, wherever the marker is."""
    from types import SimpleNamespace

    import markdown
    from mkdocs.config import load_config

    site = load_config(str(Path(__file__).parents[1] / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    search = site["plugins"]["material/search"]
    script = catalog.figures["fig-demo"].script
    script.write_text("FIGURE = {}\n# --8<-- [start:measure]\nx = 1\n# --8<-- [end:measure]\n")
    monkeypatch.chdir(script.parent)  # where its snippet line is found

    def page(stash) -> tuple:
        monkeypatch.setattr(markers, "stash_unindexed", stash)
        made = ctx(catalog)
        text = expand(chapter, made)
        md = markdown.Markdown(extensions=site["markdown_extensions"], extension_configs=site["mdx_configs"])
        html = md.convert(text)
        search.on_config(site)  # a fresh index
        built = SimpleNamespace(content=html, meta={}, toc=[], url="page/", title="Page")
        search.on_page_context({}, page=built, config=site, nav=None)  # indexes it, strips data-search-* values
        search.on_post_build(config=site)  # writes the index
        index = (Path(site["site_dir"]) / "search" / "search_index.json").read_text()
        anchors = sorted(re.findall(r"""\s(?:id|name)=["']([^"']*)""", "".join(map(str, md.htmlStash.rawHtmlBlocks))))
        return made.cache.fill(built.content, made.link), json.loads(index)["docs"], anchors

    stashed = page(markers.stash_unindexed)
    assert "<table" in stashed[0] and "bench-spread" in stashed[0] and stashed[1] and stashed[2]
    assert stashed == page(lambda html, stash: html)


def test_unknown_marker_names_page_and_line(catalog):
    with pytest.raises(MarkerError, match=r"docs/page.md:3: unknown marker bench:chart"):
        expand("a\nb\n<!-- bench:chart fig-demo -->", ctx(catalog))


def test_unknown_figure_and_stat_fail(catalog):
    with pytest.raises(MarkerError, match="no figure script defines fig-nope"):
        expand("<!-- bench:value fig-nope -->", ctx(catalog))
    with pytest.raises(MarkerError, match="unknown stat 'mode'"):
        expand("<!-- bench:value fig-demo stat=mode -->", ctx(catalog))


def test_a_claim_the_build_cannot_check_stops_it_with_page_and_line_not_a_traceback(catalog):
    """A claim naming a row the data lacks (n=4096: the demo has n=8) raised ClaimError, which the
    plugin does not turn into a build error: every build, lenient too, ended in a traceback."""
    with pytest.raises(MarkerError, match=r"^docs/page.md:2: bench:claim fig-demo ratio\(n=4096\) > 1: "):
        expand("a\n<!-- bench:claim fig-demo ratio(n=4096) > 1 -->x<!-- /bench:claim -->", ctx(catalog))


def test_a_value_that_matches_no_rows_is_a_warning_and_an_error_box_not_an_abort(catalog):
    """Another machine may lack a variant or a size the prose quotes: a lenient build goes on with the
    problem shown where the number would have been, and a strict one fails on the warning (page:line)."""
    problems = []
    out = expand("a\nit took <!-- bench:value fig-demo variant=medium --> here\n"
                 "<!-- bench:value fig-demo stat=ratio a=slow b=fast n=4096 -->", ctx(catalog, problems))
    assert problems == [
        "docs/page.md:2: bench:value fig-demo variant=medium: no rows match {'variant': 'medium'} "
        "in fig-demo on cpu-test-2c",
        "docs/page.md:3: bench:value fig-demo stat=ratio a=slow b=fast n=4096: no rows match {'n': '4096'} "
        "in fig-demo on cpu-test-2c"]
    boxes = re.findall(r'<(span|div) class="bench-error"[^>]*>(.*?)</\1>', out, re.DOTALL)
    assert [kind for kind, _ in boxes] == ["span", "div"]  # inside a sentence, and a line of its own
    assert all(html.unescape(p) in html.unescape(text) for p, (_, text) in zip(problems, boxes))
    assert out.startswith("a\nit took <span") and out.split("\n")[1].endswith("</span> here")


def test_markers_inside_code_fences_are_left_alone(catalog):
    page = "```\n<!-- bench:nonsense -->\n```\n"
    assert expand(page, ctx(catalog)) == page


def test_a_figure_without_results_is_reported_not_hidden(catalog, tmp_path):
    empty = Catalog.build(tmp_path / "nothing", catalog.figures)
    problems = []
    out = expand("<!-- bench:figure fig-demo -->", ctx(empty, problems))
    assert "cannot be shown" in out and problems


def test_rate_is_calls_per_second_of_each_run(catalog):
    # run medians of "slow" are 1.00, 1.01 and 1.02 ms: 1000, 990 and 980 per second
    assert "990 /s [980..1000]" in expand("<!-- bench:value fig-demo stat=rate variant=slow -->", ctx(catalog))


def test_field_shows_a_parameter_or_a_column_not_a_measurement(catalog):
    assert ">8<" in expand("<!-- bench:value fig-demo stat=field key=n -->", ctx(catalog))
    assert ">cpu<" in expand("<!-- bench:value fig-demo stat=field key=platform variant=fast -->", ctx(catalog))
    with pytest.raises(MarkerError, match="needs key="):
        expand("<!-- bench:value fig-demo stat=field -->", ctx(catalog))
    with pytest.raises(MarkerError, match="no column or parameter 'width'"):
        expand("<!-- bench:value fig-demo stat=field key=width -->", ctx(catalog))


@pytest.fixture
def loop_catalog(tmp_path):
    """Two variants of a timed loop of 4 calls: 'slow' compiled in its window and logged why."""
    script = tmp_path / "loops.py"
    script.write_text("FIGURE = {}\n")
    fig = Figure(id="fig-loops", stem="loops", script=script, title="Loops", caption="c",
                 chapter="index.md", variants=("slow", "fast"), ratio=("slow", "fast"))
    said = "CACHE MISS <at> line 3\n\n  different & new"
    rows = [make_row(**V2, run=r, sample=s, variant=v, boundary="loop", calls=4, time_s=t, compiles=c,
                     detail=d, params="", script_sha256="x" * 64, figure_id="fig-loops")
            for r in range(3) for s in range(2)
            for v, t, c, d in (("slow", 3e-3 + r * 1e-3, 1 + (r == 2) * (s == 1), said if s == 0 else "other"),
                               ("fast", 1e-3, 0, ""))]
    results.write_atomic(tmp_path / "results" / "cpu-test-2c" / "loops.csv", results.to_csv_text(rows))
    return Catalog.build(tmp_path / "results", {"fig-loops": fig})


def test_compiles_stat_is_a_count_with_its_spread(loop_catalog):
    text = expand("<!-- bench:value fig-loops stat=compiles variant=fast --> then "
                  "<!-- bench:value fig-loops stat=compiles variant=slow -->", ctx(loop_catalog))
    assert ">0</span> then " in text
    assert ">1 [1..1.5]</span>" in text  # run medians 1, 1, 1.5


def test_diff_and_lost_stats_from_the_run_medians(loop_catalog):
    text = expand("<!-- bench:value fig-loops stat=diff --> / <!-- bench:value fig-loops stat=lost -->",
                  ctx(loop_catalog))
    assert "3.00 ms [2.00..4.00]" in text  # per call: (3, 4, 5) ms - 1 ms
    assert "12.0 ms [8.00..16.0]" in text  # per window of 4 calls


def test_detail_marker_lists_each_text_once_escaped_with_its_count(loop_catalog):
    out = expand("<!-- bench:detail fig-loops variant=slow -->", ctx(loop_catalog))
    assert out.count("<pre") == 2
    assert "CACHE MISS &lt;at&gt; line 3\n\n  different &amp; new" in out
    assert "In 3 of the 6 samples, 3 runs" in out
    assert out.index("CACHE MISS") < out.index("other")  # first seen first


def test_detail_marker_says_so_when_nothing_was_logged(loop_catalog):
    out = expand("<!-- bench:detail fig-loops variant=fast -->", ctx(loop_catalog))
    assert "Nothing logged in any of the 6 samples, 3 runs" in out and "<pre" not in out
    problems = []
    out = expand("<!-- bench:detail fig-loops variant=medium -->", ctx(loop_catalog, problems))
    assert problems == ["docs/page.md:1: bench:detail fig-loops variant=medium: no rows match "
                        "{'variant': 'medium'} in fig-loops on cpu-test-2c"] and 'class="bench-error"' in out


def test_figure_meta_line_counts_samples_when_params_are_empty(loop_catalog):
    page = ctx(loop_catalog)
    out = page.cache.fill(expand("<!-- bench:figure fig-loops -->", page), page.link)  # as the build does
    assert "3 runs (separate processes) × 2 samples" in out


def test_a_page_with_front_matter_names_its_file_line(catalog, monkeypatch):
    """mkdocs hands the hook the Markdown without its front matter; a marker's message still names
    the line of the file (a chapter may carry ``search: boost``)."""
    from types import SimpleNamespace

    from conftest import load_hook

    bench = load_hook("plugin", monkeypatch)
    source = "---\nsearch:\n  boost: 1.5\n---\n\n# Title\n\n<!-- bench:chart fig-demo -->\n"
    body = source.split("---\n\n", 1)[1]
    page = SimpleNamespace(meta={"search": {"boost": 1.5}}, file=SimpleNamespace(content_string=source))
    first = bench._first_line(page, body)
    assert first == 6
    assert bench._first_line(SimpleNamespace(meta={}, file=None), source) == 1
    with pytest.raises(MarkerError, match=r"docs/page.md:8: unknown marker bench:chart"):
        expand(body, dataclasses.replace(ctx(catalog), first_line=first))
