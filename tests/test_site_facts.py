"""Catalog.site_facts: what a count over the whole site (bench:verdict-count) needs of the catalog,
in one call and as plain values: each figure's reference machine, every pair's summary that can be
made, and one machine's table models; the same with or without the build cache, warm or cold."""

import re

import pytest

from benchfixtures import demo_figure, write_machine
from benchsite.model import noise
from benchsite.model.catalog import Catalog, Unavailable


@pytest.fixture(autouse=True)
def scratch_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))


def two_figures(tmp_path):
    """fig-demo on cpu-a and cpu-b, and fig-bad (another stem) on both: every pair can be tabulated
    (:func:`unmakeable` groups fig-bad by a param cpu-b's rows lack)."""
    good = demo_figure(tmp_path)
    bad = demo_figure(tmp_path, id="fig-bad", stem="bad")
    for i, machine in enumerate(("cpu-a", "cpu-b")):
        write_machine(tmp_path / "results", machine, scale=1 + i, runs=5)
        write_machine(tmp_path / "results", machine, runs=5, stem="bad", fig_id="fig-bad")
    return {good.id: good, bad.id: bad}


def catalog(tmp_path, figures, cache=True):
    return Catalog.build(tmp_path / "results", figures, preferred="cpu-a", declared="cpu-a",
                         cache=tmp_path / "frames" if cache else None)


def unmakeable(tmp_path):
    """The figures, with fig-bad grouped by a param cpu-b's rows lack (cpu-a's rows get it)."""
    figures = two_figures(tmp_path)
    write_machine(tmp_path / "results", "cpu-a", runs=5, stem="bad", fig_id="fig-bad", sizes=(8,))
    path = tmp_path / "results" / "cpu-a" / "bad.csv"
    path.write_text(path.read_text().replace("n=8", "m=8"))
    figures["fig-bad"] = demo_figure(tmp_path, id="fig-bad", stem="bad", group_by=("m",))
    return figures


@pytest.mark.parametrize("cache", [True, False])
def test_site_facts_are_each_pairs_summary_and_reference(tmp_path, cache):
    figures = two_figures(tmp_path)
    cat = catalog(tmp_path, figures, cache)
    facts = cat.site_facts()
    one = catalog(tmp_path, figures, cache)  # asked pair by pair
    assert facts.refs == {fig_id: one.reference(fig_id) for fig_id in sorted(figures)} == {
        "fig-bad": "cpu-a", "fig-demo": "cpu-a"}
    assert facts.summaries == {key: one.summary(*key) for key in sorted(one.frames)}
    assert len(facts.summaries) == 4 and all(s.runs == 5 for s in facts.summaries.values())
    names = [(t.fig.id, t.machine) for t in cat.tables("cpu-b")]
    assert names == [(t.fig.id, t.machine) for t in one.tables("cpu-b")]
    assert names == [("fig-bad", "cpu-b"), ("fig-demo", "cpu-b")]
    assert [t.quantities for t in cat.tables("cpu-b")] == [t.quantities for t in one.tables("cpu-b")]


@pytest.mark.parametrize("cache", [True, False])
def test_the_count_of_compared_cells_is_the_cells_the_comparisons_show(tmp_path, cache):
    """/verdicts counts the cells the /bench comparisons show: a cell two machines measured at other
    parameters under the same row (a size picked per platform: n=16 here, with m=2 on cpu-b alone)
    is a different workload, left out of the comparison, and so out of the count (fig-dtype-cost's
    axpy rows were counted: 248 where the pages show 244)."""
    from benchsite.model import cells

    figures = two_figures(tmp_path)
    path = tmp_path / "results" / "cpu-b" / "demo.csv"
    path.write_text(path.read_text().replace("n=16", "m=2;n=16"))
    cat = catalog(tmp_path, figures, cache)
    shown = [c for fig_id in sorted(figures) for c in cells.of_machines(cat, fig_id, "cpu-b", "cpu-a")]
    assert len(shown) == 3 + 3 + 3  # fig-bad's two rows and fig-demo's n=8: fast, slow, slow / fast
    assert noise.shown(cat).unpaired == len(shown)


@pytest.mark.parametrize("cache", [True, False])
def test_a_pair_whose_table_cannot_be_made_is_left_out_and_named(tmp_path, cache):
    figures = unmakeable(tmp_path)
    cat = catalog(tmp_path, figures, cache)
    facts = cat.site_facts()
    bad = str(tmp_path / "results" / "cpu-b" / "bad.csv")
    assert sorted(facts.summaries) == [("fig-bad", "cpu-a"), ("fig-demo", "cpu-a"), ("fig-demo", "cpu-b")]
    assert [(t.fig.id, t.machine) for t in cat.tables("cpu-b")] == [("fig-demo", "cpu-b")]
    assert cat.errors[("fig-bad", "cpu-b")].startswith(f"{bad}:1: ") and ("fig-bad", "cpu-b") not in cat.frames
    for ask in (cat.summary, cat.table):
        with pytest.raises(Unavailable, match="no params m"):
            ask("fig-bad", "cpu-b")
    fresh = catalog(tmp_path, figures, cache)  # its table asked first: the same error, then the same facts
    with pytest.raises(Unavailable, match="no params m"):
        fresh.table("fig-bad", "cpu-b")
    assert fresh.site_facts().summaries == facts.summaries


def test_a_warm_catalog_gives_the_facts_a_cold_one_made_and_reads_no_samples_for_them(tmp_path):
    figures = unmakeable(tmp_path)
    cold_cat = catalog(tmp_path, figures)
    cold = cold_cat.site_facts()
    warm_cat = catalog(tmp_path, figures)
    warm = warm_cat.site_facts()
    assert warm == cold and len(warm.summaries) == 3
    assert warm_cat.frames._loaded == {}  # every summary, and the unmakeable pair's error, from the build cache
    assert warm_cat.errors[("fig-bad", "cpu-b")] == cold_cat.errors[("fig-bad", "cpu-b")]
    assert noise.shown(warm_cat) == noise.shown(catalog(tmp_path, figures, cache=False))
    tables = catalog(tmp_path, figures).tables("cpu-a")  # read back from the build cache
    made = catalog(tmp_path, figures, cache=False).tables("cpu-a")
    assert [t.quantities for t in tables] == [t.quantities for t in made] and len(tables) == 2


@pytest.mark.parametrize("cache", [True, False])
def test_a_false_count_measures_the_noise_where_sim_noise_does_when_the_preferred_machines_tables_cannot_be_made(
        tmp_path, cache):
    """cpu-a (preferred and declared) has only fig-bad, whose rows lack its group_by param: once every
    pair's summary is asked, cpu-a has no frames left and the noise is measured on cpu-b, as at 1861def
    (the noise machine was chosen before the summaries dropped cpu-a's frame: ValueError, too few cells)."""
    good, bad = demo_figure(tmp_path), demo_figure(tmp_path, id="fig-bad", stem="bad", group_by=("m",))
    write_machine(tmp_path / "results", "cpu-a", runs=5, stem="bad", fig_id="fig-bad")
    write_machine(tmp_path / "results", "cpu-b", runs=5)
    figures = {good.id: good, bad.id: bad}
    for what in ("paired-false", "unpaired-false"):
        cat = catalog(tmp_path, figures, cache)
        found = noise.verdict_count(cat, what, 0, 5)
        assert found.noise.machine == noise.sim_noise(cat, "measured").machine == "cpu-b"
        assert found.noise.cells > 0 and ("fig-bad", "cpu-a") in cat.errors


@pytest.mark.parametrize("cache", [True, False])
def test_a_pair_with_no_results_is_unavailable_with_or_without_a_build_cache(tmp_path, cache):
    """Not a FileNotFoundError (1861def's summary() with a build cache hashed the missing file first)."""
    cat = catalog(tmp_path, two_figures(tmp_path), cache)
    for ask in (cat.summary, cat.table):
        with pytest.raises(Unavailable, match="fig-demo: no results on cpu-z in "):
            ask("fig-demo", "cpu-z")
    assert ("fig-demo", "cpu-z") not in cat.errors


def test_a_warm_catalog_reads_no_results_file_even_for_the_pair_whose_table_cannot_be_made(tmp_path, monkeypatch):
    """The unmakeable pair's error is kept under the build cache as its summary: a warm catalog names
    it without loading the file. (``frames._loaded`` cannot show this: the pair's frame is dropped
    once it fails, so a warm build that loaded it and failed again left ``_loaded`` empty too.)"""
    from benchsite.model import catalog as catalog_module

    figures = unmakeable(tmp_path)
    cold = catalog(tmp_path, figures)
    cold.site_facts()
    loaded, load = [], catalog_module.load
    monkeypatch.setattr(catalog_module, "load", lambda file, *a, **k: loaded.append(file.path) or load(file, *a, **k))
    warm = catalog(tmp_path, figures)
    assert warm.site_facts() == cold.site_facts()
    assert warm.errors == cold.errors and loaded == []


@pytest.mark.parametrize("cache", [True, False])
def test_a_figure_page_stops_at_a_listed_pair_whose_table_cannot_be_made(tmp_path, cache):
    """page_facts as summary(): on a catalog that has not asked the pair yet, the figure page's
    machines list raises the file's own error rather than leaving the machine out."""
    cat = catalog(tmp_path, unmakeable(tmp_path), cache)
    bad = str(tmp_path / "results" / "cpu-b" / "bad.csv")
    with pytest.raises(Unavailable, match=f"^{re.escape(bad)}:1: .*no params m"):
        cat.page_facts("fig-bad", None, 4)
    assert cat.page_facts("fig-bad", "cpu-a", 4).tables.keys() == {"cpu-a"}
