"""What a figure x machine pair's chart and panel show, held to the one-thing-at-a-time rule they were
first written by (issue 38's cold budget made them do each panel, or each frame, at once)."""

import re

import numpy as np
import pandas as pd

from benchsite.model import stats
from benchsite.views import chart, render


def _panel(rng, n):
    frame = pd.DataFrame({"variant": rng.choice(["a", "b", "c"], n), "run": rng.integers(0, 7, n),
                          "sample": rng.permutation(n), "boundary": "completed",
                          "time_s": rng.lognormal(-8, 1.5, n)})
    variants, runs = ["a", "b", "c", "unmeasured"], sorted(set(frame["run"].tolist()))
    log = bool(rng.integers(0, 2))
    ax = chart.axes.time_axis(float(frame["time_s"].min()), float(frame["time_s"].max()), log)
    fr = chart.frame("", variants, 30.0, chart.Measured([20.0] * 4, 40, [30.0]), len(runs))

    def y_of(seconds):
        return fr.bottom - ax.frac(np.asarray(seconds, dtype=float)) * chart.PLOT_H
    return frame, variants, runs, fr, y_of


def test_median_ticks_bands_and_sample_numbers_are_each_runs_own():
    """Each run's median tick where ``y_of`` of that median alone puts it, each variant's band from
    ``y_of`` of its highest and lowest run median, ``data-samples`` only on a run whose samples are
    not 0, 1, 2, ... in order, and the dot size from the largest run: as one run at a time made them."""
    rng = np.random.default_rng(38)
    for _ in range(40):
        n = int(rng.integers(1, 150))
        frame, variants, runs, fr, y_of = _panel(rng, n)
        if rng.integers(0, 2):  # some runs numbered 0, 1, 2, ... (no data-samples), others not
            frame["sample"] = frame.groupby(["variant", "run"]).cumcount() * int(rng.integers(1, 3))
        groups, bands, medians, most = chart.marks(frame, variants, runs, fr, y_of)
        order = np.argsort(frame["sample"].to_numpy(), kind="stable")
        ordered = frame.iloc[order]
        want_medians, want_bands, want_samples = [], [], []
        for i, variant in enumerate(variants):
            mine = [(j, run, ordered[(ordered["variant"] == variant) & (ordered["run"] == run)])
                    for j, run in enumerate(runs)]
            mine = [m for m in mine if len(m[2])]
            if not mine:
                continue
            x0 = fr.left + fr.slot * i
            meds = [stats.median_of(sorted(rows["time_s"].tolist())) for _, _, rows in mine]
            y_lo, y_hi = y_of([max(meds), min(meds)])
            want_bands.append({"x": chart._f(x0 + fr.slot * 0.05), "y": chart._f(y_lo),
                               "w": chart._f(fr.slot * 0.9), "h": chart._f(max(y_hi - y_lo, 1.0))})
            for (j, _, rows), med in zip(mine, meds):
                centre = x0 + fr.slot * 0.08 + fr.strip * (j + 0.5)
                want_medians.append(f"M{chart._f(centre - fr.strip * 0.45)} {chart._f(float(y_of([med])[0]))}"
                                    f"h{chart._f(fr.strip * 0.9)}")
                numbers = rows["sample"].tolist()
                want_samples.append("" if numbers == list(range(len(numbers))) else " ".join(map(str, numbers)))
        got_samples = [s or "" for s in
                       re.findall(r'<path data-run="[^"]*"(?: data-samples="([^"]*)")?',
                                                "".join(str(g["paths"]) for g in groups))]
        assert medians == want_medians
        assert bands == want_bands
        assert got_samples == want_samples
        assert most == frame.groupby(["variant", "run"]).size().max()


def test_a_panel_of_variants_it_does_not_show_still_sizes_its_dots():
    """Samples of no variant the chart shows: nothing drawn, the dot size still from its largest run."""
    frame = pd.DataFrame({"variant": ["x"] * 12, "run": [0] * 12, "sample": range(12), "boundary": "completed",
                          "time_s": np.linspace(1e-3, 2e-3, 12)})
    ax = chart.axes.time_axis(1e-3, 2e-3, False)
    fr = chart.frame("", ["a"], 30.0, chart.Measured([20.0], 40, [30.0]), 1)
    assert chart.marks(frame, ["a"], [0], fr, lambda s: fr.bottom - ax.frac(np.asarray(s, dtype=float))) == (
        [], [], [], 12)


def test_warm_compiles_counts_what_the_filtered_frame_held():
    """``render._warm_compiles`` (two columns in numpy) says what filtering the frame said: warm
    samples (not first-call) that compiled, an empty count being none, and their variants."""
    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(1, 40))
        compiles = rng.choice([0.0, 1.0, 2.0, np.nan], n)
        frame = pd.DataFrame({"boundary": rng.choice(["completed", "first-call", "dispatch"], n),
                              "compiles": compiles if rng.integers(0, 2) else np.nan_to_num(compiles).astype(int),
                              "variant": rng.choice(["a", "b<&>"], n)})
        warm = frame[(frame["boundary"] != "first-call") & (frame["compiles"] > 0)]
        want = None if warm.empty else {
            "count": len(warm), "text": render.fmt.count(len(warm), "warm sample"),
            "variants": ", ".join(sorted({str(v) for v in warm["variant"]}))}
        assert render._warm_compiles(frame) == want
