"""The /bench pages: generated from the catalog, every number from the data, links that
mkdocs can check, stale results marked, bad files named, light pages with many machines."""

import re

import pytest

import benchfixtures
from benchfixtures import demo_figure, render_page, write_machine
from benchkit.provenance import sha256_file
from benchkit.schema import SCHEMA_VERSION
from benchsite.build.buildcache import BuildCache
from benchsite.model.catalog import Catalog, Unavailable
from benchsite.pages import pages
from benchsite.pages.markers import Context, MarkerError, expand
from conftest import REPO, committed_catalog

docs = benchfixtures.docs  # the fixture: a docs folder whose chapter embeds fig-demo


def build(tmp_path, machines, **fig_overrides):
    fig = demo_figure(tmp_path, **fig_overrides)
    for i, machine in enumerate(machines):
        write_machine(tmp_path / "results", machine, scale=1 + i, runs=5)
    return Catalog.build(tmp_path / "results", {fig.id: fig}, preferred=machines[0])


@pytest.fixture(autouse=True)
def scratch_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))


def test_every_figure_and_machine_gets_a_page(tmp_path):
    cat = build(tmp_path, ["cpu-a", "cpu-b"])
    generated = pages.generated_pages(cat)
    sessions = {f"bench/fig-demo/{m}/20260101T000000Z-test.md" for m in ("cpu-a", "cpu-b")}  # a permalink each
    changes = {"bench/changes/cpu-a.md", "bench/changes/cpu-b.md"}
    assert set(generated) == {"bench/index.md", "bench/fig-demo/index.md", "bench/fig-demo/cpu-a.md",
                              "bench/fig-demo/cpu-b.md"} | sessions | changes
    assert "<!-- bench:page fig-demo -->" in generated["bench/fig-demo/index.md"].text  # mkdocs expands it
    # A page the build writes is made from the model, with no marker written to be parsed back.
    assert all("bench:" not in generated[src].text and generated[src].make is not None
               for src in generated if src.count("/") >= 2 and not src.endswith("index.md"))
    assert "{ #fig-demo--cpu-b }" in generated["bench/fig-demo/cpu-b.md"].text  # same anchor as its tab


def test_index_lists_each_figure_on_each_machine_with_its_headline(tmp_path, docs):
    cat = build(tmp_path, ["cpu-a", "cpu-b"])
    html = render_page(cat, "bench/index.md", docs)
    rows = [line for line in html.splitlines() if "](fig-demo/cpu-" in line]
    assert len(rows) == 2 and "](fig-demo/cpu-a.md)" in rows[0]  # the preferred machine first
    assert "](fig-demo/index.md)" in html and "](fig-demo/cpu-b.md)" in html
    assert "](../results/cpu-b/demo.csv.gz)" in html
    assert "100× &#91;100..100&#93;" in html and "slow / fast at n=16 · 5 runs" in html
    assert "2026-02-03" in html and "jax 0.10.2" in html
    assert "[The chapter](../chapter.md#fig-demo)" in html
    assert "Demo &#124; figure" in html  # a pipe cannot break the table
    assert "**⚠\u00a0stale**" in html  # the fixture's sha256 is not the script's


def test_lists_of_every_machine_read_each_ones_summary_not_its_samples(tmp_path, docs):
    # The index and a figure's machines table name every machine (a hundred, some day): each row
    # comes from the pair's stored summary, made when the pair was first tabulated, so a build
    # that has it reads no results file back for these pages, and shows the same rows.
    fig = build(tmp_path, ["cpu-a", "cpu-b"]).figures
    made = Catalog.build(tmp_path / "results", fig, preferred="cpu-a", cache=tmp_path / "frames")
    first = render_page(made, "bench/index.md", docs)
    assert "100× &#91;100..100&#93;" in first and "**⚠\u00a0stale**" in first and "jax 0.10.2" in first
    again = Catalog.build(tmp_path / "results", fig, preferred="cpu-a", cache=tmp_path / "frames")
    assert render_page(again, "bench/index.md", docs) == first
    assert again.frames._loaded == {}  # no samples read back
    assert again.summary("fig-demo", "cpu-b") == made.summary("fig-demo", "cpu-b")
    assert again.summary("fig-demo", "cpu-b").runs == made.table("fig-demo", "cpu-b").runs == 5


def test_a_stored_summary_of_a_pair_that_cannot_be_tabulated_names_the_file_read_this_time(tmp_path):
    # The summary keeps the error of a pair whose rows lack a group_by param, and the error
    # names the file: two copies of one folder, one cache, each build names its own copy.
    fig = demo_figure(tmp_path, group_by=("m",))  # the rows have n=..., no m
    for name in ("a", "b"):
        write_machine(tmp_path / name / "results", "cpu-a")
    for name in ("a", "b"):
        cat = Catalog.build(tmp_path / name / "results", {fig.id: fig}, cache=tmp_path / "frames")
        with pytest.raises(Unavailable, match="results have no params m") as err:
            cat.summary(fig.id, "cpu-a")
        assert str(err.value).startswith(f"{tmp_path / name / 'results' / 'cpu-a' / 'demo.csv'}:1: ")


def test_chapter_link_only_when_the_chapter_embeds_the_figure(tmp_path, docs):
    (docs / "chapter.md").write_text("# The chapter\n\nNo figure yet.\n")
    html = render_page(build(tmp_path, ["cpu-a"]), "bench/index.md", docs)
    assert "not in a chapter yet" in html and "chapter.md#" not in html


def test_figure_page_has_tabs_comparison_cite_and_code(tmp_path, docs):
    cat = build(tmp_path, ["cpu-a", "cpu-b"])
    html = render_page(cat, "bench/fig-demo/index.md", docs)
    assert 'id="fig-demo--cpu-a"' in html and 'id="fig-demo--cpu-b"' in html  # stable tab anchors
    assert "[Link to this figure](#fig-demo)" in html
    assert "## Across machines" in html and "cpu-b vs cpu-a" in html
    assert '<td data-label="ratio" data-key>2.00×</td><td data-label="verdict" data-key>a result</td>' in html
    assert html.count("Cite this result") == 2
    assert '--8<-- "' in html and ':measure"' in html
    assert "<strong>Stale</strong>: on cpu-a, the script changed after" in html and "; on cpu-b, the script" in html
    assert "/results/cpu-b/demo.csv.gz" in html


MARK = '<strong class="bench-stale-mark">⚠\u00a0stale</strong>'  # a cell's mark (bench.css: under the value)


def stale_catalog(tmp_path, stale: str | None) -> Catalog:
    """Two machines of the demo figure, cpu-a the reference; ``stale``'s script sha256 is not today's."""
    fig = demo_figure(tmp_path)
    for i, machine in enumerate(["cpu-a", "cpu-b"]):
        sha = "x" * 64 if machine == stale else sha256_file(fig.script)
        write_machine(tmp_path / "results", machine, scale=1 + i, runs=5, sha=sha)
    return Catalog.build(tmp_path / "results", {fig.id: fig}, preferred="cpu-a")


def compare_cells(html: str) -> list[tuple[str, str]]:
    """(machine, cell) of the first comparison's machine columns: 6 rows, a cell each."""
    table = html[html.index('<table class="bench-compare"'):]
    found = re.findall(r'<td data-label="(cpu-[ab])">(.*?)</td>', table[:table.index("</table>")])
    assert len(found) == 12 and {m for m, _ in found} == {"cpu-a", "cpu-b"}
    return found


@pytest.mark.parametrize("stale", ["cpu-a", "cpu-b"])
def test_the_across_machines_table_marks_each_cell_of_a_stale_machine(tmp_path, docs, stale):
    # The stale note and the machines table said a machine's results were stale, while its cells
    # against the reference (cpu-a) read as current. Which machine is stale comes from the catalog
    # (its script's sha256 is not today's), the reference's included.
    cat = stale_catalog(tmp_path, stale)
    assert cat.stale() == [("fig-demo", stale)]
    html = render_page(cat, "bench/fig-demo/index.md", docs)
    cells = compare_cells(html)
    assert [m for m, text in cells if text.endswith(f" {MARK}")] == [stale] * 6
    assert f"<strong>Stale</strong>: on {stale}, the script changed after" in html
    # the cells, the machines table's row, and the note under the comparison that says what it means
    assert html.count("⚠\u00a0stale") == 6 + 1 + 1
    assert f"<strong>⚠\u00a0stale</strong>: {stale} recorded its results before the figure's script" in html


@pytest.mark.parametrize("stale", ["cpu-a", "cpu-b", None])
def test_a_machine_pages_comparison_marks_each_cell_of_a_stale_machine(tmp_path, docs, stale):
    # cpu-b's page compared it with the reference (cpu-a) and marked no cell, while the figure page's
    # table marked every cell of whichever was stale: its own cells, the reference's, or none.
    cat = stale_catalog(tmp_path, stale)
    assert cat.stale() == ([("fig-demo", stale)] if stale else [])
    html = render_page(cat, "bench/fig-demo/cpu-b.md", docs)
    assert "## Compared with cpu-a" in html
    cells = compare_cells(html)
    assert [m for m, text in cells if text.endswith(f" {MARK}")] == [stale] * 6 * bool(stale)
    # the note under the table says what the mark means, and the stale note it points to is at the top
    assert html.count("⚠\u00a0stale") == (6 + 1 if stale else 0)
    said = f"<strong>⚠\u00a0stale</strong>: {stale} recorded its results before the figure's script"
    # the top note names the reference as such: "these results" are not the page's own
    named = " (the reference machine, in the comparison below)" if stale == "cpu-a" else ""
    at_top = f"<strong>Stale</strong>: on {stale}{named}, the script changed after"
    assert (said in html, at_top in html) == (bool(stale), bool(stale))
    assert not stale or html.index(at_top) < html.index("## Compared with cpu-a") < html.index(said)
    # the reference's own page compares nothing, and says at its top whether it is stale
    own = render_page(cat, "bench/fig-demo/cpu-a.md", docs)
    assert "## Compared with" not in own and "⚠\u00a0stale" not in own
    assert ("<strong>Stale</strong>: on cpu-a, the script changed after" in own) == (stale == "cpu-a")


def test_machine_page_cites_figure_machine_version_date_commit_and_url(tmp_path, docs):
    cat = build(tmp_path, ["cpu-a", "cpu-b"])
    html = render_page(cat, "bench/fig-demo/cpu-b.md", docs)
    cite = re.search(r"<pre><code>(.*?)</code></pre>", html, flags=re.S).group(1)
    for needle in ("fig-demo", "cpu-b", "jax       0.10.2", "2026-02-03", "0123456789ab",
                   "url       &lt;site address&gt;/bench/fig-demo/cpu-b/", "STALE"):
        assert needle in cite, needle
    assert "<details class=\"bench-cite\" open>" in html
    assert "## Compared with cpu-a" in html
    assert "[All machines for this figure](index.md)" in html
    # The code is shown once, on the figure page; each machine page links there.
    assert "[shown on the figure's page](index.md#code)" in html and '--8<-- "' not in html


def test_many_machines_keep_the_figure_page_light(tmp_path, docs):
    machines = [f"cpu-m{i:02d}" for i in range(pages.MAX_TABS + 2)]
    cat = build(tmp_path, machines)
    html = render_page(cat, "bench/fig-demo/index.md", docs)
    assert "bench-tabs" not in html and html.count('class="bench-samples"') == 1  # one machine's chart
    assert all(f"]({m}.md)" in html for m in machines)  # every machine is one click away
    assert f"{len(machines)} machines" in html


@pytest.mark.parametrize("count, page, tables", [
    (2, "bench/fig-demo/index.md", 1), (pages.MAX_TABS + 2, "bench/fig-demo/index.md", 0),
    (pages.MAX_TABS + 2, "bench/fig-demo/cpu-m01.md", 1)])
def test_a_comparison_table_is_made_only_where_a_page_shows_it(tmp_path, docs, monkeypatch, count, page, tables):
    # Past MAX_TABS machines the figure page leaves each comparison to its machine's page: it makes
    # none (it made one a machine, a hundred with a hundred folders), and a machine page its own.
    from benchsite.views import compare

    made = []
    real = compare.html_table
    monkeypatch.setattr(compare, "html_table", lambda *a, **k: made.append(a[1]) or real(*a, **k))
    cat = build(tmp_path, [f"cpu-m{i:02d}" for i in range(count)])
    html = render_page(cat, page, docs)
    assert len(made) == tables
    assert html.count('class="bench-compare') == tables


def test_a_figure_page_counts_valid_machines_for_its_comparisons(tmp_path, docs, monkeypatch):
    # Past MAX_TABS machines of which one has an unreadable results file, MAX_TABS remain valid: the
    # figure page still shows (and makes) each comparison, as its "Across machines" section always did.
    from benchsite.views import compare

    made = []
    real = compare.html_table
    monkeypatch.setattr(compare, "html_table", lambda *a, **k: made.append(a[1]) or real(*a, **k))
    machines = [f"cpu-m{i:02d}" for i in range(pages.MAX_TABS + 1)]
    cat = build(tmp_path, machines)
    bad = tmp_path / "results" / machines[-1] / "demo.csv"
    bad.write_text(bad.read_text().replace(f"\n{SCHEMA_VERSION},", "\n7,", 1))
    cat = Catalog.build(tmp_path / "results", cat.figures, preferred=machines[0])
    html = render_page(cat, "bench/fig-demo/index.md", docs)
    assert len(made) == pages.MAX_TABS - 1 and html.count('class="bench-compare') == pages.MAX_TABS - 1


def test_chapter_shows_a_few_machines_and_links_the_rest(tmp_path, docs):
    cat = build(tmp_path, [f"cpu-m{i:02d}" for i in range(pages.MAX_TABS + 2)])
    ctx = Context(cat, "docs/chapter.md", lambda t: "/" + t, [].append, src_uri="chapter.md", docs_dir=docs,
                  cache=BuildCache())
    html = expand("<!-- bench:figure fig-demo -->", ctx)
    assert html.count('type="radio"') == pages.MAX_TABS
    assert ("[On /bench: every machine, its history and a cite block](bench/fig-demo/index.md) "
            "(2 more machines there)") in html


def test_a_bad_file_is_named_on_the_index_and_reported(tmp_path, docs):
    cat = build(tmp_path, ["cpu-a", "cpu-b"])
    bad = tmp_path / "results" / "cpu-b" / "demo.csv"
    bad.write_text(bad.read_text().replace(f"\n{SCHEMA_VERSION},", "\n7,", 1))  # schema version 7 on line 2
    cat = Catalog.build(tmp_path / "results", cat.figures, preferred="cpu-a")
    problems = []
    html = render_page(cat, "bench/index.md", docs, problems)
    assert "**invalid results**" in html and "demo.csv:2:" in html
    assert problems and "demo.csv:2:" in problems[0]
    assert "cannot be shown" in render_page(cat, "bench/fig-demo/cpu-b.md", docs)


def test_a_figure_without_results_still_has_its_page(tmp_path, docs):
    fig = demo_figure(tmp_path)
    cat = Catalog.build(tmp_path / "none", {fig.id: fig})
    assert "no results yet" in render_page(cat, "bench/index.md", docs)
    assert "cannot be shown" in render_page(cat, "bench/fig-demo/index.md", docs)


def test_a_page_marker_with_options_fails_with_page_and_line(tmp_path, docs):
    # A machine's page is made by the build from the model (pages.machine_body), not from a marker.
    cat = build(tmp_path, ["cpu-a"])
    ctx = Context(cat, "docs/bench/x.md", lambda t: t, [].append, cache=BuildCache())
    with pytest.raises(ValueError, match=r"docs/bench/x.md:1: .*takes no options"):
        expand("<!-- bench:page fig-demo machine=cpu-a -->", ctx)


def test_a_machine_anchor_lands_on_its_panel_with_one_machine_too(tmp_path, docs):
    """/bench/<fig>/#<fig>--<machine> is the documented link to one machine's result: with a single
    machine there is no tab bar, but the panel still carries that id."""
    cat = build(tmp_path, ["cpu-a"])
    html = render_page(cat, "bench/fig-demo/index.md", docs)
    assert 'id="fig-demo--cpu-a"' in html and "bench-tab-label" not in html


def test_a_headline_ratio_is_quoted_with_its_verdict_linked_to_the_rule(tmp_path, docs):
    html = render_page(build(tmp_path, ["cpu-a"]), "bench/index.md", docs)
    row = next(line for line in html.splitlines() if "](fig-demo/cpu-a.md)" in line)
    # five runs whose ratios all agree: a result, with the rule's reason as the link's title
    assert 'slow / fast at n=16 · 5 runs · [a result](../verdicts.md "median per-run ratio 100, 5 of 5' in row, row
    cite = pages.cite_text(demo_figure(tmp_path), "cpu-a",
                           Context(build(tmp_path, ["cpu-a"]), "docs/x.md", lambda t: "/" + t, [].append,
                                   cache=BuildCache()))
    rule = r"\(paired rule: <site address>/verdicts/, applied when the page was built\)"
    assert re.search(rf"\nverdict   a result {rule}\n", cite), cite


def test_chapter_link_names_the_chapter_by_its_title_not_a_front_matter_comment(tmp_path, docs):
    (docs / "chapter.md").write_text("---\n# a comment in the front matter\nsearch:\n  boost: 2\n---\n\n"
                                     "# The chapter\n\n<!-- bench:figure fig-demo -->\n")
    html = render_page(build(tmp_path, ["cpu-a"]), "bench/index.md", docs)
    assert "[The chapter](" in html and "a comment in the front matter" not in html


FRONT_MATTERS = [
    "# Plain\n\ntext\n",
    "---\n# a comment\nsearch:\n  boost: 2\n---\n\n# The chapter\n",
    "---\ntitle: t\n...\n# Ended by dots\n",
    "---   \nhide: [toc]\n---\t\n# Spaces after the dashes\n",
    "---\n- a list, not a mapping\n---\n# Kept whole\n",
    "---\njust text\n---\n# A scalar block\n",
    "---\n# only a comment\n---\n# An empty block\n",
    "---\nkey: [unclosed\n---\n# Bad YAML\n",
    "---\nno end\n# Never closed\n",
    "title: MultiMarkdown\nauthor: x\n    more\n\n# After the meta\n",
    "title: t\r\n\r\n# Windows lines\r\nmore\r\n",
    "# Old Mac\rline\r",
    "text first\r# Heading after a lone CR\r",
    "#\n\nthe heading sign alone\n",
    "#   \t\n",
    "no heading at all\n",
    "",
]


@pytest.mark.parametrize("text", FRONT_MATTERS)
def test_a_chapters_title_is_found_after_its_front_matter_as_mkdocs_splits_it(text):
    """pages.chapter_title splits the front matter without importing MkDocs (only the build
    layer does); it must find the title that the first heading of get_data's page would give."""
    from mkdocs.utils import meta

    found = re.search(r"^#\s+(.+)$", meta.get_data(text)[0], flags=re.M)
    assert pages.chapter_title(text) == (found.group(1).strip() if found else None)


def test_every_chapter_title_is_the_one_mkdocs_front_matter_split_gives():
    from mkdocs.utils import meta

    chapters = sorted((REPO / "docs").rglob("*.md"))
    assert len(chapters) > 5
    for path in chapters:
        text = path.read_text(encoding="utf-8")
        found = re.search(r"^#\s+(.+)$", meta.get_data(text)[0], flags=re.M)
        assert pages.chapter_title(text) == (found.group(1).strip() if found else None), path


def test_the_ceilings_of_a_machine_are_made_once_for_all_its_figures_and_show_the_same(monkeypatch):
    """Each figure that moves bytes sets its rows against its machine's ceilings (``pages.ceiling_section``):
    the ceilings are made once per machine and build, and every section is what ``panel_section``
    makes with ceilings of its own: on every machine of one catalog, not the first machine's on the next."""
    from benchsite.core.urls import machine_path, site_link
    from benchsite.views import roofline
    from conftest import REFERENCE

    cat = committed_catalog(preferred=REFERENCE)
    ctx = Context(cat, "docs/bench/x.md", lambda t: t, [].append, cache=BuildCache())
    made = []
    real = roofline.ceilings
    monkeypatch.setattr(roofline, "ceilings", lambda frame: made.append(1) or real(frame))
    machines = cat.machines(roofline.CEILING_FIGURE)
    assert len(machines) >= 2 and REFERENCE in machines  # two machines measured their ceilings today
    tabs = [cat.table(fig_id, m) for m in machines for fig_id in sorted(cat.figures) if m in cat.machines(fig_id)]
    shown = {(tab.fig.id, tab.machine): ctx.cache.fill(pages.ceiling_section(tab, ctx), lambda p: p) for tab in tabs}
    assert len(made) == len(machines)  # once a machine (six figures move bytes on the reference today)
    for m in machines:
        assert sum(bool(shown[(tab.fig.id, m)]) for tab in tabs if tab.machine == m) >= 2, m
    for tab in tabs:
        if shown[(tab.fig.id, tab.machine)]:
            alone = roofline.panel_section(tab.frame, cat.frame(roofline.CEILING_FIGURE, tab.machine),
                                           list(tab.fig.group_by), f"{tab.fig.id} on {tab.machine}",
                                           site_link(machine_path(roofline.CEILING_FIGURE, tab.machine)),
                                           chart=tab.fig.id == roofline.CEILING_FIGURE)
            assert shown[(tab.fig.id, tab.machine)] == ctx.cache.fill(alone, lambda p: p), (tab.fig.id, tab.machine)


def test_roofline_markers_on_one_machine_make_its_ceilings_once_and_say_what_they_said(monkeypatch):
    """Every ``bench:roofline`` marker of a page shares the machine's ceilings with the panels
    (``pages.roofline_ceilings``): made once per build, each marker's text as when made alone."""
    from benchsite.views import roofline
    from conftest import REFERENCE

    shows = ["show=ceiling kind=memory", "show=ceiling kind=compute dtype=float32",
             "show=intensity op=matmul n=64", "show=percent op=matmul n=64",
             "show=ceiling kind=memory ceiling=fig-naive-vs-blocked"]  # another figure's: no probe, no ceiling
    texts = [f"<!-- bench:roofline fig-machine-peak {s} -->" for s in shows]

    def expanded(cat, text):
        try:
            return expand(text, Context(cat, "docs/x.md", lambda t: t, [].append, cache=BuildCache()))
        except MarkerError as err:  # a ceiling that cannot be read: what the marker says
            return str(err)

    alone = [expanded(committed_catalog(preferred=REFERENCE), t) for t in texts]
    made = []
    real = roofline.ceilings
    monkeypatch.setattr(roofline, "ceilings", lambda frame: made.append(1) or real(frame))
    cat = committed_catalog(preferred=REFERENCE)
    assert [expanded(cat, t) for t in texts] == alone and len(made) == 2  # once a ceiling figure
    assert "no memory ceiling measured" in alone[-1] and "no memory ceiling measured" not in alone[0]
