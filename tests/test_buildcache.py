"""The build cache: made once per distinct input, never served for a changed one."""

import posixpath

import pytest
from markupsafe import escape

from benchfixtures import demo_figure, write_machine
from benchkit import provenance
from benchsite.build.buildcache import BuildCache
from benchsite.core import cachefile, urls
from benchsite.model.catalog import CodeHash
from benchsite.model.load import ResultFile, load
from benchsite.model.table import Table
from benchsite.views import chart, render


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    calls = []

    def fake_chart(tab):  # drawing is what the cache saves; count it
        calls.append(tab.machine)
        return f"<svg>{tab.frame['time_s'].sum()}</svg>"

    monkeypatch.setattr(chart, "table_chart", fake_chart)
    path = write_machine(tmp_path / "results", "cpu-a")
    yield demo_figure(tmp_path), path, calls


def table_of(path, fig, current=None):
    return Table.of(load(ResultFile(path.parent.name, path.stem, path)), fig, current)


def test_a_chart_is_drawn_once_then_read_back(setup):
    fig, path, calls = setup
    first = BuildCache().chart_placeholder(table_of(path, fig))
    again = BuildCache()  # a new build: memory is empty, the disk is not
    assert again.chart_placeholder(table_of(path, fig)) == first
    assert calls == ["cpu-a"]
    assert again.fill(f"<p>{first}</p>", str).startswith("<p><svg>")


def test_changed_samples_draw_a_new_chart(setup):
    fig, path, calls = setup
    cache = BuildCache()
    before = cache.chart_placeholder(table_of(path, fig))
    write_machine(path.parents[1], "cpu-a", scale=2.0)
    assert cache.chart_placeholder(table_of(path, fig)) != before
    assert calls == ["cpu-a", "cpu-a"]


def test_a_chart_is_drawn_again_under_other_code(setup, monkeypatch):
    """Charts are keyed on the one code version (``cachefile.code_version``: every file of the
    package), not on a list of the files that draw them: tests/test_code_version.py."""
    fig, path, calls = setup
    first = BuildCache().chart_placeholder(table_of(path, fig))
    monkeypatch.setattr(cachefile, "code_version", lambda: "another version")
    assert BuildCache().chart_placeholder(table_of(path, fig)) != first
    assert calls == ["cpu-a", "cpu-a"]


def test_a_panel_is_rendered_again_when_its_inputs_change(setup, monkeypatch):
    fig, path, _ = setup
    rendered = []
    real = render.machine_panel
    monkeypatch.setattr(render, "machine_panel", lambda tab, url, rule, svg, ceiling="":
                        rendered.append((tab.stale, url)) or real(tab, url, rule, svg, ceiling))
    harness = provenance.harness_sha256()
    one, two = table_of(path, fig, CodeHash("x" * 64, harness)), table_of(path, fig, CodeHash("y" * 64, harness))
    cache = BuildCache()
    digest = "d" * 64  # the results file's sha256
    panel = cache.machine_panel(one, "a.csv", "verdicts/", digest)
    assert cache.machine_panel(one, "a.csv", "verdicts/", digest) == panel
    cache.machine_panel(two, "a.csv", "verdicts/", digest)  # the script changed: stale now
    cache.machine_panel(one, "../a.csv", "../verdicts/", digest)  # another page's link
    assert [url for _, url in rendered] == ["a.csv", "a.csv", "../a.csv"]
    assert [bool(stale) for stale, _ in rendered] == [False, True, False]
    assert "<!--bench-chart:" in panel and "<svg" not in panel  # the chart goes in after Markdown


def test_a_panel_shown_on_several_pages_is_made_once_with_each_pages_links(setup, monkeypatch):
    """Site links: the chapter, the figure page and the machine page share one panel, and each
    page's fill makes its CSV and rule links relative to that page."""
    fig, path, _ = setup
    rendered = []
    real = render.machine_panel
    monkeypatch.setattr(render, "machine_panel", lambda *args: rendered.append(args) or real(*args))
    tab, cache = table_of(path, fig), BuildCache()
    csv, rule = urls.site_link("results/cpu-a/demo.csv.gz"), urls.site_link(render.RULE_PATH)
    panels = [cache.machine_panel(tab, csv, rule, "d" * 64) for _ in range(3)]
    assert len(rendered) == 1 and len(set(panels)) == 1

    def relative(page: str):
        return lambda target: posixpath.relpath(target, page) + ("/" if target.endswith("/") else "")

    chapter = cache.fill(panels[0], relative("what-the-clock-caught"))
    machine = cache.fill(panels[0], relative("bench/fig-demo/cpu-a"))
    assert 'href="../results/cpu-a/demo.csv.gz"' in chapter and 'href="../../../results/cpu-a/demo.csv.gz"' in machine
    assert "bench-link" not in chapter + machine and "<svg" in chapter
    with pytest.raises(ValueError, match="cannot be a site link"):
        urls.site_link('a" onclick="x')


def test_data_that_spells_a_site_link_is_shown_as_it_is(setup):
    """A recorded value (here XLA_FLAGS) that reads like a site link is escaped text, which fill
    leaves alone: the same on every page."""
    fig, path, _ = setup
    tab = table_of(path, fig)
    value = "--dump=" + str(urls.site_link("verdicts/"))  # exactly what the build writes
    tab.frame["xla_flags"] = value
    html = str(render.machine_panel(tab, urls.site_link("results/cpu-a/demo.csv.gz"), "verdicts/"))
    filled = BuildCache().fill(html, lambda target: "../" + target)
    assert str(escape(value)) in filled and 'href="../results/cpu-a/demo.csv.gz"' in filled


def test_a_validated_file_is_read_back_until_its_bytes_change(tmp_path):
    path = write_machine(tmp_path / "results", "cpu-a")
    file, cache = ResultFile("cpu-a", "demo", path), tmp_path / "frames"
    first = load(file, cache)
    assert len(list(cache.glob("*.pkl"))) == 1 and load(file, cache).equals(first)
    write_machine(tmp_path / "results", "cpu-a", scale=2.0)
    assert load(file, cache)["time_s"].sum() == pytest.approx(2 * first["time_s"].sum())
    path.write_text(path.read_text().replace("cpu-a", "cpu-b", 1).replace("\n", "\nbroken\n", 1))
    with pytest.raises(ValueError, match=r"demo\.csv:2:"):  # a bad file is never cached, always named
        load(file, cache)


def test_a_chart_drawn_by_one_build_cache_is_read_back_by_another(tmp_path, monkeypatch):
    """What a warming worker draws (benchsite/build/parallel.py), the build reads back from disk."""
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    fig = demo_figure(tmp_path)
    tabs = [table_of(write_machine(tmp_path / "results", m, scale=s), fig) for m, s in (("cpu-a", 1), ("cpu-b", 2))]
    worker = BuildCache()
    drawn = [worker.fill(worker.chart_placeholder(t), str) for t in tabs]
    monkeypatch.setattr(chart, "table_chart", lambda tab: pytest.fail("drawn twice"))
    build = BuildCache()
    assert [build.fill(build.chart_placeholder(t), str) for t in tabs] == drawn and all("<svg" in d for d in drawn)


def test_the_cache_is_the_projects_being_built_not_the_installs(tmp_path, monkeypatch):
    """A plugin installed from a wheel kept its cache beside the installed package (read-only, or
    shared by every site): the plugins name the project (the folder of its mkdocs.yml) first."""
    monkeypatch.delenv("BENCH_CACHE", raising=False)
    monkeypatch.setattr(cachefile, "_PROJECT", [cachefile.REPO])
    assert cachefile.cache_dir() == cachefile.REPO / ".cache" / "bench"
    cachefile.use_project(tmp_path)
    assert cachefile.cache_dir() == tmp_path / ".cache" / "bench"
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "chosen"))
    assert cachefile.cache_dir() == tmp_path / "chosen"


def test_the_chart_key_tells_apart_any_change_to_what_a_chart_is_drawn_from(setup):
    """``chart_key`` hashes the drawing's input column by column (a numeric column's bytes, a text
    column's values): one sample's time, one variant's name, one row index, each makes another key."""
    from benchsite.build.buildcache import _chart_key

    fig, path, _ = setup
    tab = table_of(path, fig)
    key = _chart_key(tab)
    assert _chart_key(table_of(path, fig)) == key  # the same samples read again: the same key

    def edited(change):
        frame = tab.frame.copy()
        change(frame)
        return _chart_key(Table.of(frame, fig))

    first = tab.rows[0].samples.index[0]
    assert edited(lambda f: f.loc.__setitem__((first, "time_s"), f.loc[first, "time_s"] * (1 + 1e-12))) != key
    assert edited(lambda f: f.loc.__setitem__((first, "boundary"), "dispatch ")) != key
    assert edited(lambda f: setattr(f, "index", f.index + 1)) != key

    # The same frame, a row drawing other samples of it (as many: its first in place of its last): the
    # key hashes which samples each row draws, not only the frame and their count.
    import dataclasses
    samples = tab.rows[0].samples
    for swapped in (len(samples) - 1, len(samples) // 2):  # the last sample, and one in the middle
        drawn = [0 if i == swapped else i for i in range(len(samples))]
        other = dataclasses.replace(tab.rows[0], samples=samples.iloc[drawn])
        assert _chart_key(dataclasses.replace(tab, rows=(other, *tab.rows[1:]))) != key
