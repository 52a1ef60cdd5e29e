"""``quotes.select`` and ``quotes.pair``: the rows whose values, as text, are the filters' values.

A page asks hundreds of selections of the same frames, so ``select`` numbers a column's texts once
per frame and compares numbers; these tests hold it to the plain rule (``astype(str) == value``,
filter after filter) and to numbering each column once while the frame lives.
"""

import gc
import re

import numpy as np
import pandas as pd
import pytest

from benchsite.model import quotes
from benchsite.model.figures import Figure


def _frame() -> pd.DataFrame:
    n = 12
    return pd.DataFrame({
        "figure_id": ["fig-demo"] * n,
        "machine": ["cpu-test-2c"] * n,
        "variant": ["a", "b", "c"] * 4,
        "boundary": ["completed"] * 6 + ["dispatch"] * 6,
        "dtype": np.array(["float32", None] * 6, dtype=object),  # missing: matches no text
        "run": np.repeat(np.arange(4), 3),
        "time_s": np.linspace(1e-3, 2e-3, n),
        "p_n": pd.array(["8", "16", None, "8"] * 3, dtype="string"),  # missing stays missing
        "p_k": [1, 2.5, 1, 2.5] * 3,  # numbers compared by their text
    }, index=np.arange(100, 100 + n))


def _plain(frame: pd.DataFrame, filters: dict[str, str]) -> pd.DataFrame:
    """The rule ``select`` keeps, one filter after another on the frame's text."""
    for key, want in filters.items():
        col = key if key in quotes.FILTER_COLUMNS else f"p_{key}"
        frame = frame[frame[col].astype(str) == want]
    return frame


FILTERS = [{"variant": "a"}, {"variant": "b", "boundary": "dispatch"}, {"n": "8"}, {"n": "16", "variant": "b"},
           {"dtype": "float32"}, {"dtype": "float32", "k": "1.0"}, {"k": "2.5", "n": "16"}]


@pytest.mark.parametrize("filters", FILTERS)
def test_select_is_the_plain_rule_on_the_text_of_each_value(filters):
    frame = _frame()
    found = quotes.select(frame, dict(filters))
    assert found.equals(_plain(frame, filters)) and found.index.equals(_plain(frame, filters).index)


@pytest.mark.parametrize("filters", [{"variant": "z"}, {"n": "<NA>"}, {"n": "nan"}, {"dtype": "None"},
                                     {"dtype": "nan"}, {"k": "1"}, {"variant": "a", "k": "3.5"}])
def test_select_of_no_rows_names_the_filters_figure_and_machine(filters):
    assert _plain(_frame(), filters).empty  # the plain rule finds none either
    with pytest.raises(quotes.NoRows, match=r"no rows match .* in fig-demo on cpu-test-2c"):
        quotes.select(_frame(), dict(filters))


def test_select_of_an_unknown_key_says_so():
    with pytest.raises(ValueError, match="no column or parameter 'size'"):
        quotes.select(_frame(), {"size": "8"})


FIG = Figure(id="fig-demo", stem="demo", script=None, title="t", caption="c", chapter="index.md",
             variants=("a", "b", "c"), ratio=("a", "b"))


@pytest.mark.parametrize("opts", [{}, {"boundary": "completed"}, {"n": "8", "a": "c", "b": "a"}, {"variant": "a"}])
def test_pair_is_each_variant_selected_within_the_options_selection(opts):
    frame = _frame()
    a, b = quotes.variants(dict(opts), FIG)
    rest = {k: v for k, v in opts.items() if k not in ("a", "b")}
    within = _plain(frame, rest)
    if within[within["variant"] == b].empty:  # {"variant": "a"} leaves no b rows
        with pytest.raises(quotes.NoRows, match=rf"no rows match {{'variant': '{b}'}} in fig-demo"):
            quotes.pair(frame, dict(opts), FIG)
        return
    pair = quotes.pair(frame, dict(opts), FIG)
    for found, variant in zip(pair, (a, b)):
        want = within[within["variant"] == variant]
        assert found.equals(want) and found.index.equals(want.index)


def test_pair_whose_options_match_nothing_names_the_options():
    with pytest.raises(quotes.NoRows, match=r"no rows match \{'n': '32'\} in fig-demo"):
        quotes.pair(_frame(), {"n": "32"}, FIG)


def test_a_column_is_made_text_once_per_frame_however_many_selections_ask(monkeypatch):
    made = []
    astype = pd.Series.astype
    monkeypatch.setattr(pd.Series, "astype", lambda self, *a, **k: made.append(self.name) or astype(self, *a, **k))
    frame = _frame()
    for variant in ("a", "b", "c", "a"):
        quotes.select(frame, {"variant": variant, "n": "8"} if variant != "c" else {"variant": variant})
        quotes.pair(frame, {"n": "8"}, FIG)
    assert sorted(made) == ["p_n", "variant"]
    quotes.select(_frame(), {"variant": "a"})  # another frame is numbered on its own
    assert sorted(made) == ["p_n", "variant", "variant"]


def test_a_frames_numbering_goes_with_the_frame():
    frame = _frame()
    quotes.select(frame, {"variant": "a"})
    key = id(frame)
    assert key in quotes._CODED
    del frame
    gc.collect()
    assert key not in quotes._CODED


def test_the_same_rows_are_taken_once_per_frame_whichever_filters_name_them():
    """A page's value, its claim and its ratio ask the same rows again: they are taken from the frame
    once (the frame every caller is handed is read, never changed), by filters or a variant pair."""
    frame = _frame()
    first = quotes.select(frame, {"variant": "a", "boundary": "completed"})
    assert quotes.select(frame, {"boundary": "completed", "variant": "a"}) is first
    assert quotes.pair(frame, {"boundary": "completed"}, FIG).a is first
    assert quotes.select(frame, {"variant": "b"}) is not first
    assert quotes.select(_frame(), {"variant": "a", "boundary": "completed"}) is not first  # another frame


def _metric_frame() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    frame = _frame().assign(time_s=rng.lognormal(-9, 0.3, 12), bytes_moved=[4096.0, np.nan, 8192.0] * 4,
                            max_rel_error=rng.choice([0.0, 1e-7, 3e-7], 12), flops=np.nan, size_bytes=1024.0)
    return frame.assign(variant=["a", "b"] * 6)


@pytest.mark.parametrize("name", ["bandwidth", "flop_rate", "error", "size"])
@pytest.mark.parametrize("filters", [{"variant": "a"}, {"variant": "b"}, {"boundary": "completed"}])
def test_a_metric_value_is_the_number_metrics_summary_gives(name, filters):
    """``stat=bandwidth`` and its kin: one variant's rows by the table's numbers, several variants'
    by ``metrics.summary``: the same Summary, NaN runs and all, or no data for none."""
    from benchsite.model import metrics

    frame = _metric_frame()
    want = metrics.summary(quotes.select(frame, dict(filters)), name)
    if want is None:
        with pytest.raises(ValueError, match=f"carry no {name} data"):
            quotes.metric(frame, dict(filters), name)
    else:
        assert repr(quotes.metric(frame, dict(filters), name)) == repr(want)


def test_one_variants_metric_is_not_grouped_by_pandas(monkeypatch):
    from benchsite.model import metrics

    want = metrics.summary(quotes.select(_metric_frame(), {"variant": "a"}), "bandwidth")
    monkeypatch.setattr(metrics, "summary", lambda rows, name: pytest.fail("grouped by pandas"))
    assert quotes.metric(_metric_frame(), {"variant": "a"}, "bandwidth") == want


def test_what_a_page_is_handed_is_left_as_it_was_taken(tmp_path):
    """``select`` and ``pair`` hand every caller the same frame for the same rows (and the frame
    itself where nothing filters): after a page's markers (values of every kind, a ranking, a detail
    list, claims) have read them, each kept set of rows is still ``frame[mask]`` of the frame as it
    was loaded, and each column's numbering still the frame's. A caller that changed what it was
    handed would change every later caller's numbers."""
    from benchkit import results
    from benchsite.build.buildcache import BuildCache
    from benchsite.model.catalog import Catalog
    from benchsite.pages.markers import Context, expand
    from test_results import make_row

    script = tmp_path / "demo.py"
    script.write_text("FIGURE = {}\n")
    fig = Figure(id="fig-demo", stem="demo", script=script, title="t", caption="c", chapter="index.md",
                 variants=("a", "b"), ratio=("a", "b"), group_by=("n",))
    rng = np.random.default_rng(3)
    rows = [make_row(variant=v, params=f"n={n}", run=r, sample=s, bytes_moved=4096 * n,
                     time_s=float(rng.lognormal(-9, 0.2)) * (1 + (v == "a")), detail="" if s else f"compiled {v}",
                     max_rel_error=float(rng.choice([1e-7, 3e-7])))
            for v in ("a", "b") for n in (8, 16) for r in range(6) for s in range(4)]
    results.write_atomic(tmp_path / "results" / "cpu-test-2c" / "demo.csv", results.to_csv_text(rows))
    cat = Catalog.build(tmp_path / "results", {"fig-demo": fig})
    frames = [cat.table("fig-demo", "cpu-test-2c").frame, cat.frame("fig-demo", "cpu-test-2c")]
    loaded = [frame.copy(deep=True) for frame in frames]
    stats_ = ["median", "min", "mean", "rate", "compiles", "ratio", "diff", "lost", "verdict", "same margin=0.5",
              "range", "within", "runs", "field key=n", "detail", "bandwidth", "error", "error-ratio"]
    two = ("ratio", "diff", "lost", "verdict", "same margin=0.5", "error-ratio")  # of a pair: no variant=
    page = "\n".join([*(f"<!-- bench:value fig-demo stat={s} {f} -->" for s in stats_
                        for f in ("", "n=8", "variant=a n=16") if not (f.startswith("variant") and s in two)),
                      "<!-- bench:ranked fig-demo variant=a by=n -->", "<!-- bench:detail fig-demo variant=b -->",
                      "<!-- bench:detail fig-demo -->",
                      'A <!-- bench:claim fig-demo ratio(n="last") > 1 -->is slower<!-- /bench:claim -->.'])
    problems = []
    ctx = Context(cat, "docs/page.md", lambda target: target, problems.append, cache=BuildCache())
    expand(page, ctx)
    assert not problems
    checked = 0
    for frame, was in zip(frames, loaded):
        pd.testing.assert_frame_equal(frame, was, check_exact=True)
        _, columns, kept = quotes._entry(frame)
        for key, taken in kept.items():
            mask = np.unpackbits(np.frombuffer(key, dtype=np.uint8))[:len(frame)].astype(bool)
            pd.testing.assert_frame_equal(taken, was[mask], check_exact=True)
            checked += 1
        for col, (codes, numbers) in columns.items():
            texts = was[col].astype(str).to_numpy()
            assert all(texts[i] == text for text, number in numbers.items() for i in np.flatnonzero(codes == number))
    assert checked >= 5


# --- two rows compared: each side's own filters (a.KEY=VALUE, b.KEY=VALUE) ----------------------

def _rows_frame() -> pd.DataFrame:
    """``step`` at devices=1 in runs 0..8 and at devices=8 in runs 0..9 (run 9 on that side only,
    far off), with ``other`` beside them; each run drifts both sizes alike, devices=8 about 1.2x."""
    rng = np.random.default_rng(11)
    drift = [1.0, 1.3, 0.8, 1.1, 1.25, 0.9, 1.05, 1.2, 0.85, 5.0]
    rows = [{"figure_id": "fig-demo", "machine": "cpu-test-2c", "variant": v, "boundary": "completed",
             "dtype": "float32", "run": r, "time_s": 1e-3 * drift[r] * (1.2 if d == "8" else 1.0)
             * (3.0 if v == "other" else 1.0) * float(rng.lognormal(0, 0.02)), "p_devices": d}
            for v in ("step", "other") for d in ("1", "8") for r in range(10 if d == "8" else 9) for _ in range(3)]
    return pd.DataFrame(rows)


def _by_hand(frame: pd.DataFrame, a: dict, b: dict) -> tuple[np.ndarray, np.ndarray]:
    """Each side's run medians (pandas, not ``stats``), over the runs both sides have, in run order."""
    med = [_plain(frame, side).groupby("run")["time_s"].median() for side in (a, b)]
    runs = sorted(set(med[0].index) & set(med[1].index))
    return med[0][runs].to_numpy(), med[1][runs].to_numpy()


ROWS = {"a": "step", "b": "step", "a.devices": "8", "b.devices": "1"}


def test_two_rows_ratio_and_verdict_are_the_paired_rule_on_their_run_medians():
    frame = _rows_frame()
    ra, rb = _by_hand(frame, {"variant": "step", "devices": "8"}, {"variant": "step", "devices": "1"})
    assert len(ra) == 9  # run 9 (devices=8 only) is not paired
    ratio = quotes.ratio(frame, dict(ROWS), FIG)
    assert ratio.runs == 9 and ratio == quotes.stats.summarize(ra / rb)
    decided, want = quotes.verdict(frame, dict(ROWS), FIG), quotes.stats.paired_verdict(ra, rb)
    assert (decided.text, decided.ratio, decided.reason) == (want.text, want.ratio, want.reason)
    assert decided.text == "a result"  # a steady 1.2x, run by run
    same = quotes.equivalence(frame, {**ROWS, "margin": "0.05"}, FIG)
    assert same == quotes.stats.paired_equivalence(ra, rb, 0.05)


def test_a_side_filter_narrows_that_side_only_within_the_common_selection():
    frame = _rows_frame()
    pair = quotes.pair(frame, {**ROWS, "dtype": "float32"}, FIG)
    for found, want in zip(pair, ({"variant": "step", "devices": "8"}, {"variant": "step", "devices": "1"})):
        assert found.equals(_plain(frame, want))
    across = quotes.pair(frame, {"a": "other", "b": "step", "a.devices": "1", "devices": "1"}, FIG)
    assert across.a.equals(_plain(frame, {"variant": "other", "devices": "1"}))
    assert across.b.equals(_plain(frame, {"variant": "step", "devices": "1"}))


def test_a_side_filter_on_an_unknown_column_names_it_as_that_sides():
    with pytest.raises(ValueError, match=r"no column or parameter 'size' in the results for b\.size="):
        quotes.pair(_rows_frame(), {"a": "step", "b": "step", "b.size": "8"}, FIG)


def test_a_side_selection_of_no_rows_names_that_sides_selection():
    with pytest.raises(quotes.NoRows, match=r"no rows match \{'variant': 'step', 'a\.devices': '16'\} in fig-demo"):
        quotes.pair(_rows_frame(), {"a": "step", "b": "step", "a.devices": "16"}, FIG)


@pytest.mark.parametrize("key", ["a.variant", "b.", "a."])
def test_a_side_filter_that_is_not_a_filter_is_refused(key):
    with pytest.raises(ValueError, match=rf"{re.escape(key)}= is not a side's filter"):
        quotes.pair(_rows_frame(), {"a": "step", "b": "step", key: "other"}, FIG)


@pytest.mark.parametrize("key", ["a.devices", "b.devices", "a", "b"])
def test_a_side_option_left_to_a_selection_that_compares_nothing_says_so(key):
    for quote in (quotes.median, quotes.runs, quotes.within):
        with pytest.raises(ValueError, match=rf"{re.escape(key)}= names a side of two things compared"):
            quote(_rows_frame(), {"variant": "step", key: "8"})
