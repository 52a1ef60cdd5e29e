"""``stat=min`` and ``stat=mean``: one statistic per run, then median [min..max] over runs."""

import math

import numpy as np
import pandas as pd
import pytest

from benchkit import results
from benchkit.archive import quantile
from benchsite.build.buildcache import BuildCache
from benchsite.model import stats, table
from benchsite.model.catalog import Catalog
from benchsite.model.figures import Figure
from benchsite.pages.markers import Context, expand
from test_results import make_row

# Run r's isolated samples: 1, 2, 3 and a 10 ms stall, all scaled by (1 + r/10).
ISOLATED_MS = (1.0, 2.0, 3.0, 10.0)
# Loop samples of unequal length: 1 ms/call over 10 calls, 4 ms/call over 30 calls.
LOOP = ((1e-3, 10), (4e-3, 30))


@pytest.fixture
def catalog(tmp_path):
    script = tmp_path / "stats_demo.py"
    script.write_text("FIGURE = {}\n")
    fig = Figure(id="fig-stats-demo", stem="stats_demo", script=script, title="t", caption="c",
                 chapter="index.md", variants=("isolated", "loop"))
    rows = [make_row(run=r, sample=s, variant="isolated", time_s=ms * 1e-3 * (1 + r / 10))
            for r in range(3) for s, ms in enumerate(ISOLATED_MS)]
    rows += [make_row(run=r, sample=s, variant="loop", boundary="loop", time_s=t, calls=calls)
             for r in range(3) for s, (t, calls) in enumerate(LOOP)]
    results.write_atomic(tmp_path / "results" / "cpu-test-2c" / "stats_demo.csv", results.to_csv_text(
        [dict(r, figure_id="fig-stats-demo") for r in rows]))
    return Catalog.build(tmp_path / "results", {"fig-stats-demo": fig})


def value(catalog, args: str) -> str:
    ctx = Context(catalog, "docs/page.md", lambda target: target, [].append, cache=BuildCache())
    return expand(f"<!-- bench:value fig-stats-demo {args} -->", ctx)


def test_min_is_each_runs_fastest_sample_summarised_over_runs(catalog):
    assert "1.10 ms [1.00..1.20]" in value(catalog, "stat=min variant=isolated")


def test_mean_keeps_the_stall_that_the_median_drops(catalog):
    # Per-run means 4.0, 4.4, 4.8 ms; per-run medians 2.5, 2.75, 3.0 ms.
    assert "4.40 ms [4.00..4.80]" in value(catalog, "stat=mean variant=isolated")
    assert "2.75 ms [2.50..3.00]" in value(catalog, "stat=median variant=isolated")


def test_mean_weights_each_sample_by_the_calls_it_averaged(catalog):
    # (1 ms x 10 + 4 ms x 30) / 40 calls = 3.25 ms; an unweighted mean would say 2.5 ms.
    assert "3.25 ms [3.25..3.25]" in value(catalog, "stat=mean variant=loop")


# --- the table model's statistics, in numpy, against pandas' -----------------------------------

def test_run_medians_and_summaries_are_what_pandas_computes():
    """The table model and the value markers take each run's median (``stats.per_run_median``) and
    each cell's median [min..max] (``stats.summarize``) in numpy: the same numbers as pandas'
    groupby and Series reductions, to the bit, for odd and even counts, runs out of order, values
    that round differently, and NaN (skipped; a run with nothing left is NaN)."""
    rng = np.random.default_rng(7)
    for count in (1, 2, 3, 4, 7, 10):
        runs = rng.permutation(np.repeat(rng.choice(50, size=5, replace=False), count))
        times = rng.lognormal(-9, 1, size=runs.size) * (1 + 1e-16 * rng.integers(0, 3, size=runs.size))
        for values in (times, np.where(rng.random(runs.size) < 0.3, np.nan, times)):
            theirs = pd.DataFrame({"run": runs, "x": values}).groupby("run")["x"].median()
            pd.testing.assert_series_equal(stats.per_run_median(runs, values, "x"), theirs, check_exact=True)
        s = pd.Series(theirs.to_numpy())
        for values in (s, s.where(s.index % 3 != 1)):
            summary = stats.summarize(values)
            expected = (float(values.median()), float(values.min()), float(values.max()), int(values.size))
            np.testing.assert_equal((summary.median, summary.low, summary.high, summary.runs), expected)
            np.testing.assert_equal(summary.values, values.to_numpy(dtype=float))  # every run, NaN kept, in order
    huge = np.array([1e308, 9e307, 1e308])  # an odd count's middle is taken as it is: 1e308 + 1e308 overflows
    pd.testing.assert_series_equal(stats.per_run_median(np.array([1, 2, 2]), huge, "x"),
                                   pd.DataFrame({"run": [1, 2, 2], "x": huge}).groupby("run")["x"].median())
    empty = pd.DataFrame({"run": np.array([], dtype=np.int64), "x": np.array([])})
    pd.testing.assert_series_equal(stats.run_medians(empty, "x"), empty.groupby("run")["x"].median())
    assert math.isnan(stats.summarize(pd.Series([float("nan")])).median)


def test_within_spreads_are_the_quartile_rule_of_each_run_to_the_bit():
    """``stats.within_spreads`` takes every (variant, run)'s quartiles at once: the numbers of
    ``benchkit.archive.quantile`` (the rule the kept sessions were written with) asked of each run's
    sorted samples in turn, to the bit: runs of 1 to 9 samples (under four is no spread), ties, a
    zero median, variants in any order."""
    rng = np.random.default_rng(11)
    for _ in range(30):
        parts = [(v, r, rng.integers(1, 10)) for v in rng.permutation(["a", "b", "c"])[:rng.integers(1, 4)]
                 for r in rng.choice(20, size=rng.integers(1, 6), replace=False)]
        rows = [(v, int(r), float(t)) for v, r, n in parts
                for t in np.round(rng.lognormal(-9, 0.5, size=n), int(rng.integers(6, 12)))]
        if rng.random() < 0.2:
            rows += [(rows[0][0], 99, 0.0)] * 5  # a zero median: no spread
        frame = pd.DataFrame(rows, columns=["variant", "run", "time_s"]).sample(frac=1, random_state=1)
        expected = {}
        for variant in dict.fromkeys(frame["variant"]):
            fracs = []
            for _, part in sorted(frame[frame["variant"] == variant].groupby("run")["time_s"]):
                ordered = sorted(part.tolist())
                mid = float(quantile(ordered, 0.5))
                fracs.append(float("nan") if len(ordered) < stats.MIN_WITHIN_SAMPLES or mid == 0
                             else float(quantile(ordered, 0.75) - quantile(ordered, 0.25)) / mid)
            kept = [f for f in fracs if f == f]
            expected[variant] = float(np.median(kept)) if kept else float("nan")
        got = stats.within_spreads(frame)
        assert list(got) == list(expected)
        np.testing.assert_equal(list(got.values()), list(expected.values()))


def test_a_rows_ratio_and_verdict_pair_only_the_runs_both_variants_have(tmp_path):
    """A variant missing from some runs: the ratio column and the paired verdict are over the runs
    both variants have, each run's a over that same run's b (pandas' index alignment, spelled out)."""
    script = tmp_path / "pair_demo.py"
    script.write_text("FIGURE = {}\n")
    fig = Figure(id="fig-pair-demo", stem="pair_demo", script=script, title="t", caption="c",
                 chapter="index.md", variants=("a", "b"), ratio=("a", "b"))
    rng = np.random.default_rng(3)
    for a_runs, b_runs in (([0, 1, 2, 3, 4, 5, 6, 7], [1, 2, 4, 5, 6, 7, 9]),  # some in one variant only
                           ([5, 3, 8, 1, 9, 2], [2, 8, 5, 3, 1]),  # out of order
                           ([0, 1, 2], [3, 4, 5])):  # none in common
        rows = [{"variant": v, "run": r, "time_s": float(rng.lognormal(-9, 0.2)) * (1.5 if v == "a" else 1)}
                for v, runs in (("a", a_runs), ("b", b_runs)) for r in runs for _ in range(3)]
        frame = pd.DataFrame(rows)
        row = table.Table.of(frame.assign(machine="m"), fig).rows[0]
        medians = frame.groupby(["variant", "run"])["time_s"].median()
        a, b = medians.loc["a"], medians.loc["b"]
        common = a.index.intersection(b.index)
        assert row.ratio == (stats.summarize(a[common] / b[common]) if len(common) else None)
        assert row.ratio is None or row.ratio.values == tuple((a[common] / b[common]).tolist())
        assert repr(row.verdict) == repr(stats.paired_verdict(a, b))
        assert row.verdict.runs == len(common)


def test_the_value_markers_ratio_and_difference_pair_only_the_runs_both_variants_have():
    """``stats.ratio_per_run`` and ``diff_per_run`` (the value markers' ``ratio`` and ``diff``)
    pair through ``stats.common_runs``, as the table model does: each run's a against that same
    run's b, over the runs both have, by run; the difference per timed window times a's calls.
    The reference is pandas' index alignment, spelled out."""
    rng = np.random.default_rng(11)
    for a_runs, b_runs in (([0, 1, 2, 3, 4, 5, 6, 7], [1, 2, 4, 5, 6, 7, 9]),  # some in one variant only
                           ([5, 3, 8, 1, 9, 2], [2, 8, 5, 3, 1]),  # out of order
                           ([0, 1, 2], [3, 4, 5])):  # none in common
        frames = [pd.DataFrame([{"run": r, "time_s": float(rng.lognormal(-9, 0.2)) * scale,
                                 "calls": int(rng.integers(1, 50))} for r in runs for _ in range(3)])
                  for runs, scale in ((a_runs, 1.5), (b_runs, 1.0))]
        a, b = (f.groupby("run")["time_s"].median() for f in frames)
        calls = frames[0].groupby("run")["calls"].median()
        common = a.index.intersection(b.index)
        expected = {"ratio": a[common] / b[common], "diff": a[common] - b[common],
                    "window": (a[common] - b[common]) * calls[common]}
        got = {"ratio": stats.ratio_per_run(*frames), "diff": stats.diff_per_run(*frames),
               "window": stats.diff_per_run(*frames, per_window=True)}
        for name, series in got.items():
            pd.testing.assert_series_equal(series, expected[name], check_exact=True, check_index_type=False,
                                           obj=f"{name} over runs {a_runs} and {b_runs}")


def _summary_by_numpy(values):
    """``stats.summarize`` as it was, all numpy: what the plain-Python one must give to the bit."""
    every = np.asarray(values, dtype=float)
    kept = every[~np.isnan(every)]
    if not kept.size:
        return (math.nan, math.nan, math.nan, int(every.size), tuple(every.tolist()))
    with np.errstate(over="ignore", invalid="ignore"):  # 1e308 + 1.5e308, inf - inf
        return (float(np.median(kept)), float(kept.min()), float(kept.max()), int(every.size),
                tuple(every.tolist()))


def test_summarize_gives_numpys_median_min_and_max_to_the_bit():
    """``stats.summarize`` sorts in plain Python (a table asks it of every cell): the same median,
    min and max as ``np.median``, ``min`` and ``max`` of the values that are not NaN, to the bit
    (the sign of a zero included): odd and even counts, ties, NaN, infinities, sums that overflow."""
    rng = np.random.default_rng(38)
    cases = [[], [math.nan], [1.0], [2.0, 1.0], [0.0, -0.0, 0.0], [-0.0, 0.0], [-0.0, 1.0, 0.0, 2.0],
             [1e308, 1.5e308], [math.inf, 1.0], [-math.inf, math.inf], [math.nan, 3.0, 1.0, math.nan]]
    for _ in range(400):
        n = int(rng.integers(1, 12))
        values = rng.lognormal(-9, 1, n)
        if rng.random() < 0.3:
            values = np.round(values, 5)  # ties
        if rng.random() < 0.2:
            values[rng.integers(n)] = math.nan
        if rng.random() < 0.1:
            values[rng.integers(n)] = rng.choice([0.0, -0.0, math.inf, -1.0])
        cases.append(values.tolist())
    for values in cases:
        for given in (values, np.asarray(values, dtype=float), pd.Series(values, dtype=float)):
            got = stats.summarize(given)
            assert repr((got.median, got.low, got.high, got.runs, got.values)) == repr(_summary_by_numpy(values))
