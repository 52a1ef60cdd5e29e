"""The headline: the one cell the index quotes, chosen by the figure or by default."""

import textwrap

import pytest

from benchfixtures import demo_figure, write_machine
from benchsite.model.figures import FigureError, read_figure
from benchsite.model.load import ResultFile, load
from benchsite.model.table import Table
from benchsite.views import quantities


def headline(frame, fig):
    return Table.of(frame, fig).headline


@pytest.fixture
def frame(tmp_path):
    path = write_machine(tmp_path / "r", "cpu-a", sizes=(8, 16, 32))
    return load(ResultFile("cpu-a", "demo", path))


def test_default_is_the_ratio_in_the_last_row(tmp_path, frame):
    head = headline(frame, demo_figure(tmp_path))
    assert head.what == "slow / fast at n=32" and head.is_ratio
    assert quantities.headline(head).startswith("100×")


def test_default_without_a_ratio_is_the_first_variant(tmp_path, frame):
    head = headline(frame, demo_figure(tmp_path, ratio=None))
    assert head.what == "fast at n=32" and quantities.headline(head) == "40.4 µs [40.0..40.8]"


def test_a_named_headline_wins(tmp_path, frame):
    fig = demo_figure(tmp_path, headline=(("n", "8"), ("variant", "slow")))
    head = headline(frame, fig)
    assert head.what == "slow at n=8" and quantities.headline(head).startswith("1.01 ms")


def test_a_headline_cell_the_machine_lacks_gives_none(tmp_path, frame):
    assert headline(frame, demo_figure(tmp_path, headline=(("n", "4096"),))) is None


def script_with(tmp_path, headline_literal):
    script = tmp_path / "fig_x.py"
    script.write_text(textwrap.dedent(f'''
        FIGURE = {{"title": "t", "caption": "c", "chapter": "c.md", "variants": ["a", "b"],
                  "group_by": ["n"], "headline": {headline_literal}}}
    '''))
    return script


def test_headline_key_is_read_and_checked(tmp_path):
    fig = read_figure(script_with(tmp_path, '{"variant": "b", "n": 1024}'))
    assert fig.headline == (("n", "1024"), ("variant", "b"))
    with pytest.raises(FigureError, match=r"fig_x.py:2: FIGURE headline has unknown key\(s\) size"):
        read_figure(script_with(tmp_path, '{"size": 3}'))
    with pytest.raises(FigureError, match="needs a FIGURE ratio"):
        read_figure(script_with(tmp_path, '{"stat": "ratio"}'))
    with pytest.raises(FigureError, match="'c' is not one of its variants"):
        read_figure(script_with(tmp_path, '{"variant": "c"}'))


def test_a_ratio_of_two_named_variants(tmp_path, frame):
    fig = demo_figure(tmp_path, ratio=None, headline=(("a", "slow"), ("b", "fast"), ("n", "8"), ("stat", "ratio")))
    head = headline(frame, fig)
    assert head.what == "slow / fast at n=8" and head.is_ratio and quantities.headline(head).startswith("100×")


def test_a_ratio_of_two_variants_is_checked(tmp_path):
    with pytest.raises(FigureError, match="with stat 'ratio', a and b"):
        read_figure(script_with(tmp_path, '{"stat": "ratio", "a": "a"}'))
    with pytest.raises(FigureError, match="headline b 'c' is not one of its variants"):
        read_figure(script_with(tmp_path, '{"stat": "ratio", "a": "a", "b": "c"}'))
    assert read_figure(script_with(tmp_path, '{"stat": "ratio", "a": "b", "b": "a"}')).headline[0] == ("a", "b")


def test_a_declared_headline_the_data_lacks_is_a_warning_naming_the_script(tmp_path):
    from types import SimpleNamespace

    from benchsite.model.catalog import Catalog
    from benchsite.pages import markers

    write_machine(tmp_path / "r", "cpu-a")
    fig = demo_figure(tmp_path, headline=(("n", "4096"),))
    said: list[str] = []
    ctx = SimpleNamespace(catalog=Catalog.build(tmp_path / "r", figures={fig.id: fig}), on_problem=said.append)
    markers._check_headline(fig, ctx)
    assert said == ["demo.py:1: FIGURE headline {'n': '4096'} names no cell of fig-demo on cpu-a (rows: n=8, n=16)"]


def test_every_figure_declares_the_cell_it_exists_for_and_the_data_has_it():
    """The /bench index quotes the declared cell, not the last row: e.g. pytree-block's effect is
    the cheap-first program (its last row, one-jit, is the case where blocking one leaf is fine)."""
    from benchsite.model.catalog import Catalog
    from conftest import REFERENCE, REPO

    cat = Catalog.build(REPO / "results", preferred=REFERENCE, bench_dir=REPO / "bench_scripts")
    for fig in cat.figures.values():
        assert fig.headline, f"{fig.script_rel}: FIGURE declares no headline"
        if (fig.id, REFERENCE) in cat.frames:
            assert cat.table(fig.id, REFERENCE).headline is not None, fig.id
    pytree = cat.table("fig-pytree-block", REFERENCE)
    assert pytree.rows[-1].label == "program=one-jit"
    assert pytree.headline.what == "whole-tree / one-leaf at program=cheap-first"


def test_a_ratio_headline_carries_its_paired_verdict(tmp_path):
    """Quoted alone (the /bench index, a cite block), a ratio says whether it is a result: three
    runs cannot be one; nine runs that all agree are. A time, and a ratio that is a part of its
    whole, carry none."""
    few = load(ResultFile("cpu-a", "demo", write_machine(tmp_path / "few", "cpu-a", runs=3)))
    many = load(ResultFile("cpu-a", "demo", write_machine(tmp_path / "many", "cpu-a", runs=9)))
    fig = demo_figure(tmp_path)
    table = Table.of(few, fig)
    assert table.headline.verdict is table.rows[-1].verdict and table.headline.verdict.text == "not a result yet"
    assert headline(many, fig).verdict.text == "a result"
    named = demo_figure(tmp_path, ratio=None, headline=(("a", "slow"), ("b", "fast"), ("n", "8"), ("stat", "ratio")))
    assert headline(many, named).verdict.text == "a result" and headline(few, named).verdict.text == "not a result yet"
    assert headline(many, demo_figure(tmp_path, ratio_verdict=False)).verdict is None
    # ratio_verdict speaks of the figure's ratio; a pair the headline names is a comparison it chose
    named_part = demo_figure(tmp_path, ratio=None, ratio_verdict=False,
                             headline=(("a", "slow"), ("b", "fast"), ("n", "8"), ("stat", "ratio")))
    assert headline(many, named_part).verdict.text == "a result"
    assert headline(many, demo_figure(tmp_path, headline=(("variant", "slow"),))).verdict is None


def test_a_named_pairs_ratio_divides_each_run_by_the_same_run(tmp_path, frame):
    """The headline's own pair (not the figure's ratio) pairs runs as the table model does
    (stats.paired_runs): over the runs both variants have, run r by run r, whatever the order."""
    import numpy as np

    from benchsite.model import stats

    keep = ~((frame["variant"] == "fast") & (frame["run"] == 0))  # fast lost its run 0
    part = frame[keep].iloc[::-1]  # and the rows come in reverse
    fig = demo_figure(tmp_path, ratio=None, headline=(("a", "slow"), ("b", "fast"), ("n", "8"), ("stat", "ratio")))
    head = headline(part, fig)
    rows = part[part["p_n"] == "8"]
    medians = rows.groupby(["variant", "run"])["time_s"].median()
    slow, fast = medians.loc["slow"], medians.loc["fast"]
    expected = (slow[[1, 2]].to_numpy() / fast[[1, 2]].to_numpy())
    assert head.summary.runs == 2
    np.testing.assert_array_equal(head.summary.values, expected)
    assert head.summary == stats.summarize(expected)
