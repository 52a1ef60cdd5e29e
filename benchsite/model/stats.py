"""Statistics derived from samples; nothing here is ever stored back.

Two kinds of spread, kept apart:
* within a process: IQR / median of one run's samples;
* between processes: (max - min) / median of the R run medians.

Whether a difference is "a result" (docs/verdicts.md, "How a verdict is decided"):
* two variants measured in the same runs are PAIRED by run: :func:`paired_verdict`
  looks at the per-run log ratios d_i = log(a_i / b_i) (a sign test plus an
  effect floor);
* two sessions or machines are not paired: :func:`unpaired_verdict` uses an
  exact rank-sum test on the run medians plus an effect floor.
:func:`simulate_error_rates` measures both rules' error rates on simulated runs;
the page shows its table and a test keeps the rates within bounds.

Whether two things are "the same within ±m" is a third rule, not the absence of a result
(docs/verdicts.md, "The same within a margin"): :func:`paired_equivalence` asks whether a
distribution-free interval for the median per-run log ratio (the sign test's) lies inside
±log(1 + m), and :func:`unpaired_equivalence` the same of the Hodges–Lehmann interval from the
rank-sum; the margin is always the caller's. :func:`simulate_equivalence_rates` measures it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from benchkit import verdicts
from benchkit.verdicts import (  # the paired and equivalence rules: one implementation, shared with benchkit
    EQUIV_ALPHA,
    MIN_EFFECT,
    NOT_YET,
    PAIRED_MIN_RUNS,
    RESULT,
    Equivalence,
    Verdict,
    _equiv_decide,
    _equivalence,
    _paired_decide,
    _paired_same,
    _percent,
    check_margin,
    robust_sd,
)
from benchkit.verdicts import MAD_TO_SD as MAD_TO_SD  # re-exported: the pages and tests read them here
from benchkit.verdicts import PAIRED_ALPHA as PAIRED_ALPHA
from benchkit.verdicts import PAIRED_K as PAIRED_K
from benchkit.verdicts import SAME as SAME
from benchkit.verdicts import margin_text as margin_text
from benchkit.verdicts import same_label as same_label
from benchkit.verdicts import sign_agree_needed as sign_agree_needed
from benchkit.verdicts import sign_interval_rank as sign_interval_rank

NOISY_WITHIN = 0.10  # IQR/median above 10 % is noisy,
VERY_NOISY_WITHIN = 0.25  # above 25 % very noisy (thresholds as in torch.utils.benchmark)

UNPAIRED_MIN_RUNS = 3  # runs needed on each side
UNPAIRED_ALPHA = 0.025  # one-sided level of the exact rank-sum (Mann-Whitney) test
UNPAIRED_K = 1.5  # the log ratio of medians must exceed UNPAIRED_K robust SDs (the larger side's)


# --- the simulation's model of run noise (docs/verdicts.md) ---
SIM_RUN_SD = 0.02  # each run median's own log-normal noise, per variant
SIM_DRIFT_SD = 0.03  # a per-run drift shared by every variant of that run (one process)
SIM_RUNS = (5, 6, 9)  # 6: the runs of a default session (benchkit.runner.DEFAULT_RUNS)
SIM_SHIFTS = (0, 1, 2, 3)  # true differences, in spreads (SD of the log run medians)
SIM_TRIALS = 4000
SIM_SEED = 20260
SIM_MARGINS = (0.05, 0.10, 0.25)  # equivalence margins the page simulates
SIM_EQUIV_SHIFTS = (0.0, 0.5, 1.0, 1.5)  # true differences, in margins (log(1 + m) units)


@dataclass(frozen=True)
class Summary:
    """One quantity across R runs: median, min and max of the per-run values
    (``values`` keeps them, in run order, for the verdict rules)."""

    median: float
    low: float
    high: float
    runs: int
    values: tuple[float, ...] = field(default=(), compare=False, repr=False)

    @property
    def range_frac(self) -> float:
        return (self.high - self.low) / self.median if self.median else float("nan")

    def overlaps(self, other: Summary) -> bool:
        """Whether the two [min..max] ranges meet (shown; no longer the verdict rule)."""
        return self.low <= other.high and other.low <= self.high


def summarize(values: pd.Series | np.ndarray) -> Summary:
    """Median [min..max] of the values that are not NaN (as pandas reduces them); ``runs`` and
    ``values`` count every one. In numpy: a table asks this of every cell, a page of every value."""
    every = np.asarray(values, dtype=float).tolist()
    kept = sorted(v for v in every if v == v)  # NaN is the one value not equal to itself
    if not kept:
        return Summary(math.nan, math.nan, math.nan, len(every), tuple(every))
    if 0.0 in kept:  # which of 0.0 and -0.0 numpy's partition, min and max leave is numpy's own
        ours = np.asarray(kept)
        return Summary(float(np.median(ours)), float(ours.min()), float(ours.max()), len(every), tuple(every))
    return Summary(median_of(kept), kept[0], kept[-1], len(every), tuple(every))


def median_of(ordered: list[float]) -> float:
    """``np.median`` of a sorted list of floats with no NaN, in plain Python: the middle value, or
    the mean of the middle two (``(a + b) / 2``, numpy's arithmetic to the bit), without numpy's
    set-up for each call (a table asks a median of every cell, a few values each). Where a zero
    is among them, numpy's own: which of 0.0 and -0.0 its partition leaves in the middle is its own."""
    if 0.0 in ordered:
        return float(np.median(np.asarray(ordered)))
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2


def run_medians(frame: pd.DataFrame, column: str = "time_s") -> pd.Series:
    """Median of ``column`` (``time_s`` unless told) per run, indexed by run."""
    return per_run_median(frame["run"].to_numpy(), frame[column].to_numpy(dtype=float), column)


def per_run_median(runs: np.ndarray, values: np.ndarray, name: str = "time_s") -> pd.Series:
    """The median of ``values`` in each run, indexed by run in order: the numbers of
    ``groupby("run").median()`` on a float column, in numpy (a table asks it of every cell): one
    sort, NaN skipped (a run with no value left is NaN), the median of an even count the mean of
    the middle two, as pandas takes it. (Pandas' own selection can leave a zero's sign as the
    input had it; a time is never zero.)"""
    keys, medians = per_run_medians(runs, values)
    return pd.Series(medians, index=pd.Index(keys, name="run"), name=name)


def per_run_medians(runs: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`per_run_median` as two arrays, (runs in order, their medians), for a caller that
    wants the numbers alone (no Series to make: ``metrics.by_row_and_variant``)."""
    values = np.asarray(values, dtype=float)
    if not runs.size:
        return runs, values
    values, starts, (runs,) = _parts(values, runs)
    return runs, _part_medians(values, starts)


def _parts(values: np.ndarray, *keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """``values`` cut into parts of one value of every key (not empty): the values sorted part by
    part (parts in order of the keys, the first outermost; NaN last within a part), where each part
    starts, and each key's value there. One sort for every part."""
    order = np.lexsort((values, *reversed(keys)))
    values, keys = values[order], [k[order] for k in keys]
    new = np.zeros(values.size, dtype=bool)
    new[0] = True
    for k in keys:
        new[1:] |= k[1:] != k[:-1]
    starts = np.flatnonzero(new)
    return values, starts, [k[starts] for k in keys]


def _part_medians(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Each part's median (:func:`_parts`): NaN skipped, an even count's the mean of the middle two."""
    counts = np.add.reduceat(~np.isnan(values), starts)  # the values that are not NaN, first in each part
    low, high = values[starts + np.maximum(counts - 1, 0) // 2], values[starts + counts // 2]
    # An odd count's middle is taken as it is; an even count's mean overflows as pandas' does.
    with np.errstate(over="ignore"):
        return np.where(counts % 2 == 1, high, (low + high) / 2)


def _part_within(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Each part's IQR / median (:func:`_parts`), NaN where it has fewer than ``MIN_WITHIN_SAMPLES``
    samples or a zero median."""
    sizes = np.diff(np.r_[starts, values.size])

    def quantiles(q: float) -> np.ndarray:
        # benchkit.archive.quantile (the rule the kept sessions' quartiles were written with) of
        # every part at once, step for step: the same numbers
        h = (sizes - 1) * q
        lo = h.astype(np.intp)  # int(h): h is not negative
        hi = np.minimum(lo + 1, sizes - 1)
        return values[starts + lo] + (h - lo) * (values[starts + hi] - values[starts + lo])

    mid = quantiles(0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = (quantiles(0.75) - quantiles(0.25)) / mid
    frac[(sizes < MIN_WITHIN_SAMPLES) | (mid == 0)] = np.nan
    return frac


def cell_runs(cells: np.ndarray, runs: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, ...]:
    """Every (cell, run) of a table at once, in order of cell, then run: (cell, run, the run's
    median of ``values`` as :func:`per_run_medians` takes it, the run's IQR / median as
    :func:`within_spreads` takes it). ``cells`` numbers each sample's cell (a row and variant)."""
    values = np.asarray(values, dtype=float)
    if not values.size:
        return cells, runs, values, values
    values, starts, (cells, runs) = _parts(values, cells, runs)
    return cells, runs, _part_medians(values, starts), _part_within(values, starts)


def median_over_runs(fracs: list[float]) -> float:
    """A cell's within-run spread from its runs' (:func:`within_spreads`): their median, NaN left
    out; NaN when none is left."""
    kept = sorted(v for v in fracs if v == v)
    return median_of(kept) if kept else float("nan")


def run_minima(frame: pd.DataFrame) -> pd.Series:
    """Fastest sample per run: the least-disturbed call each process managed."""
    return frame.groupby("run")["time_s"].min()


def run_means(frame: pd.DataFrame) -> pd.Series:
    """Mean seconds per call per run. A sample that averaged ``calls`` calls
    counts ``calls`` times, so loops of different lengths combine correctly."""
    weighted = (frame["time_s"] * frame["calls"]).groupby(frame["run"]).sum()
    return weighted / frame.groupby("run")["calls"].sum()


MIN_WITHIN_SAMPLES = 4  # an IQR of fewer samples a run says nothing


def within_spreads(frame: pd.DataFrame, by: str = "variant") -> dict[str, float]:
    """For each ``by`` value, the median over runs of each run's IQR / median; NaN where runs
    have fewer than ``MIN_WITHIN_SAMPLES`` samples (a wall time, a first call: one value a run).
    One sort for all of them: a table asks this of every cell."""
    seen: dict = {}  # each key's code, in order of first appearance (no sort of the keys' texts)
    key_codes = np.fromiter(map(lambda v: seen.setdefault(v, len(seen)), frame[by].tolist()), dtype=np.intp,
                            count=len(frame))
    runs, times = frame["run"].to_numpy(), frame["time_s"].to_numpy(dtype=float)
    codes, _, _, frac = cell_runs(key_codes, runs, times)
    fracs: list[list[float]] = [[] for _ in seen]
    for code, value in zip(codes.tolist(), frac.tolist()):
        fracs[code].append(value)
    return {key: median_over_runs(fracs[code]) for key, code in seen.items()}  # in order of first appearance


def within_spread(frame: pd.DataFrame) -> float:
    """:func:`within_spreads` of one cell's samples."""
    return within_spreads(frame.assign(_cell=0), by="_cell")[0]


def ratio_per_run(a: pd.DataFrame, b: pd.DataFrame) -> pd.Series:
    """Per-run ratio of run medians a / b, over the runs both have (``paired_runs``), by run."""
    ra, rb = run_medians(a), run_medians(b)
    runs, in_a, in_b = common_runs(ra, rb)
    return pd.Series(ra.to_numpy()[in_a] / rb.to_numpy()[in_b], index=runs, name=ra.name)


def diff_per_run(a: pd.DataFrame, b: pd.DataFrame, per_window: bool = False) -> pd.Series:
    """Per-run difference of run medians a - b, in seconds per call, over the runs both have
    (``paired_runs``), by run; with ``per_window``, times a's calls per sample: what a whole
    timed window of a (a loop of ``calls`` calls) lost against b."""
    ra, rb = run_medians(a), run_medians(b)
    runs, in_a, in_b = common_runs(ra, rb)
    lost = ra.to_numpy()[in_a] - rb.to_numpy()[in_b]
    if per_window:  # a's calls per run share a's runs, so the same positions pick them
        lost = lost * run_medians(a, "calls").to_numpy()[in_a]
    return pd.Series(lost, index=runs, name=None if per_window else ra.name)  # a window's loss is not a time_s


# --- the verdict rules ---------------------------------------------------------------------

def common_runs(a: pd.Series, b: pd.Series) -> tuple[pd.Index, np.ndarray, np.ndarray]:
    """The runs two series indexed by run both have, in run order, and where each is in ``a``
    and in ``b``: the one pairing rule of two variants measured in the same runs."""
    runs, in_a, in_b = np.intersect1d(a.index, b.index, assume_unique=True, return_indices=True)
    return pd.Index(runs, name="run"), in_a, in_b


def paired_runs(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Two variants' run medians (indexed by run) over the runs both have, aligned run by run in
    run order: what the ratio column and the paired verdict compare."""
    _, in_a, in_b = common_runs(a, b)
    return a.to_numpy(dtype=float)[in_a], b.to_numpy(dtype=float)[in_b]


def paired_verdict(a: pd.Series | np.ndarray, b: pd.Series | np.ndarray) -> Verdict:
    """:func:`benchkit.verdicts.paired_verdict` of two variants' run medians: Series indexed by run
    (paired over the runs both have, :func:`paired_runs`) or arrays already aligned run by run."""
    if isinstance(a, pd.Series) and isinstance(b, pd.Series):
        a, b = paired_runs(a, b)
    return verdicts.paired_verdict(a, b)


def paired_equivalence(a: pd.Series | np.ndarray, b: pd.Series | np.ndarray, margin: float) -> Equivalence:
    """:func:`benchkit.verdicts.paired_equivalence`, with run medians as :func:`paired_verdict` takes them."""
    check_margin(margin)
    if isinstance(a, pd.Series) and isinstance(b, pd.Series):
        a, b = paired_runs(a, b)
    return verdicts.paired_equivalence(a, b, margin)


@functools.cache
def _rank_sum_counts(n: int, m: int) -> tuple[int, ...]:
    """How many orderings of n a-runs and m b-runs give each U (pairs with a > b)."""
    if n == 0 or m == 0:
        return (1,)
    out = [0] * (n * m + 1)
    for u, c in enumerate(_rank_sum_counts(n - 1, m)):
        out[u + m] += c
    for u, c in enumerate(_rank_sum_counts(n, m - 1)):
        out[u] += c
    return tuple(out)


@functools.cache
def rank_sum_needed(n: int, m: int, alpha: float = UNPAIRED_ALPHA) -> int | None:
    """The least U (of n x m pairs, a above b) that an exact one-sided rank-sum test
    at ``alpha`` calls significant; None when none is."""
    counts = _rank_sum_counts(n, m)
    total, tail, need = sum(counts), 0, None
    for u in range(n * m, -1, -1):
        tail += counts[u]
        if tail / total > alpha:
            break
        need = u
    return need


def _unpaired_decide(la: np.ndarray, lb: np.ndarray) -> tuple[np.ndarray, ...]:
    """The unpaired rule on log run medians (last axis: runs), vectorised:
    (is a result, log ratio of medians, U of the side above, floor in log units)."""
    n, m = la.shape[-1], lb.shape[-1]
    u = (la[..., :, None] > lb[..., None, :]).sum(axis=(-1, -2))
    u_other = (la[..., :, None] < lb[..., None, :]).sum(axis=(-1, -2))
    # both sides' medians in one call each (row by row, the same numbers); np.stack would cast a
    # float32 side to float64 and take its median there, so only sides of one dtype
    if la.shape == lb.shape and la.dtype == lb.dtype:
        both = np.stack((la, lb))
        (med_a, med_b), (sd_a, sd_b) = np.median(both, axis=-1), robust_sd(both)
    else:
        med_a, med_b, sd_a, sd_b = np.median(la, axis=-1), np.median(lb, axis=-1), robust_sd(la), robust_sd(lb)
    effect = med_a - med_b
    floor = np.maximum(math.log1p(MIN_EFFECT), UNPAIRED_K * np.maximum(sd_a, sd_b))
    u_dir = np.where(effect > 0, u, u_other)
    need = rank_sum_needed(n, m) if min(n, m) >= UNPAIRED_MIN_RUNS else None
    ok = (u_dir >= need) & (np.abs(effect) > floor) if need is not None else np.zeros(effect.shape, bool)
    return ok, effect, u_dir, floor


def unpaired_verdict(a: Summary | np.ndarray, b: Summary | np.ndarray) -> Verdict:
    """Two sessions or machines (runs not paired): the run medians of each side.

    "a result" when (1) each side has at least UNPAIRED_MIN_RUNS runs, (2) an
    exact one-sided rank-sum test at UNPAIRED_ALPHA puts one side's runs above
    the other's (with few runs: all of them beyond all of the other's), and (3)
    |log(median a / median b)| exceeds max(log(1 + MIN_EFFECT), UNPAIRED_K x the
    larger robust SD of the two sides' log run medians)."""
    va = np.asarray(a.values if isinstance(a, Summary) else a, float)
    vb = np.asarray(b.values if isinstance(b, Summary) else b, float)
    va, vb = va[(va > 0) & np.isfinite(va)], vb[(vb > 0) & np.isfinite(vb)]
    n = min(va.size, vb.size)
    if n < UNPAIRED_MIN_RUNS:
        ratio = float(np.median(va) / np.median(vb)) if n else float("nan")
        return Verdict(NOT_YET, f"{va.size} and {vb.size} runs; the rule needs at least "
                       f"{UNPAIRED_MIN_RUNS} on each side", ratio=ratio, runs=n)
    ok, effect, u, floor = (np.asarray(x).item() for x in _unpaired_decide(np.log(va), np.log(vb)))
    need = rank_sum_needed(va.size, vb.size)
    ratio, floor_frac = math.exp(effect), math.expm1(floor)
    needed = f"{need} needed" if need is not None else "no count is enough with so few runs"
    facts = (f"ratio of medians {ratio:.3g}, {u} of {va.size * vb.size} run pairs in that direction "
             f"({needed}), floor {_percent(floor_frac)}")
    if ok:
        return Verdict(RESULT, facts, ratio, floor_frac, n)
    why = "the runs overlap too much" if need is None or u < need else "the difference is inside the floor"
    return Verdict(NOT_YET, f"{why}: {facts}", ratio, floor_frac, n)


# --- the same within a margin: two one-sided tests on an interval ------------------------------

@functools.cache
def rank_sum_interval_rank(n: int, m: int, alpha: float = EQUIV_ALPHA) -> int | None:
    """The k for which [D_(k), D_(nm+1-k)] of the n x m differences a_i - b_j is the Hodges-Lehmann
    interval for the shift (each tail at most ``alpha`` by the exact rank-sum distribution);
    None when even [min, max] misses."""
    need = rank_sum_needed(n, m, alpha)
    return None if need is None else n * m - need + 1


def _unpaired_same(la: np.ndarray, lb: np.ndarray, margin: float) -> tuple[np.ndarray, ...]:
    n, m = la.shape[-1], lb.shape[-1]
    diffs = (la[..., :, None] - lb[..., None, :]).reshape(*la.shape[:-1], n * m)
    k = rank_sum_interval_rank(n, m) if min(n, m) >= UNPAIRED_MIN_RUNS else None  # as the unpaired rule
    return _equiv_decide(diffs, k, margin)


def unpaired_equivalence(a: Summary | np.ndarray, b: Summary | np.ndarray, margin: float) -> Equivalence:
    """Two sessions or machines (runs not paired) are "the same within ±margin" when the
    Hodges-Lehmann interval for the shift of the log run medians (from the exact rank-sum
    distribution, each tail at most EQUIV_ALPHA) lies inside ±log(1 + margin)."""
    margin = check_margin(margin)
    va = np.asarray(a.values if isinstance(a, Summary) else a, float)
    vb = np.asarray(b.values if isinstance(b, Summary) else b, float)
    la, lb = np.log(va[(va > 0) & np.isfinite(va)]), np.log(vb[(vb > 0) & np.isfinite(vb)])
    if not (la.size and lb.size):
        return _equivalence(False, math.nan, math.nan, math.nan, margin, 0, "no runs:")
    est = float(np.median(la[:, None] - lb[None, :]))
    ok, low, high = (np.asarray(x).item() for x in _unpaired_same(la, lb, margin))
    how = f"Hodges-Lehmann interval (at least {100 * (1 - 2 * EQUIV_ALPHA):.0f} %) of the ratio"
    return _equivalence(ok, low, high, est, margin, int(min(la.size, lb.size)), how)


def verdict(a: pd.Series, b: pd.Series) -> str:
    """The paired rule's short verdict for two variants' run medians (indexed by run)."""
    return paired_verdict(a, b).text


# --- the simulation ------------------------------------------------------------------------

@dataclass(frozen=True)
class Rate:
    rule: str  # "paired" (two variants, same runs) or "unpaired" (two sessions)
    runs: int  # R
    shift: float  # true difference in spreads (0: none)
    rate: float  # fraction of trials the rule called "a result"

    @property
    def error(self) -> float:
        """False-positive rate when shift == 0, else the false-negative rate."""
        return self.rate if self.shift == 0 else 1.0 - self.rate


def sim_spread(run_sd: float = SIM_RUN_SD, drift_sd: float = SIM_DRIFT_SD) -> float:
    """The simulation's unit of difference: the SD of one variant's log run medians."""
    return math.hypot(run_sd, drift_sd)


def simulate_error_rates(runs=SIM_RUNS, shifts=SIM_SHIFTS, trials: int = SIM_TRIALS, seed: int = SIM_SEED,
                         run_sd: float = SIM_RUN_SD, drift_sd: float = SIM_DRIFT_SD) -> list[Rate]:
    """How often each rule says "a result" on simulated run medians (seeded).

    A run's log median is drift_i + e_i (+ the shift for variant a): drift_i ~ N(0,
    drift_sd) is shared by both variants of run i (one process: a busy neighbour, a
    clock state), e_i ~ N(0, run_sd) is each variant's own. The paired rule sees
    both variants of the same R runs; the unpaired rule sees two sessions of R runs
    each, whose drifts are independent. Shifts are in spreads (:func:`sim_spread`)."""
    rng = np.random.default_rng(seed)
    spread = sim_spread(run_sd, drift_sd)
    out = []
    for r in runs:
        for shift in shifts:
            drift = rng.normal(0.0, drift_sd, (trials, r))
            la = drift + rng.normal(0.0, run_sd, (trials, r)) + shift * spread
            lb = drift + rng.normal(0.0, run_sd, (trials, r))
            out.append(Rate("paired", r, shift, float(_paired_decide(la - lb)[0].mean())))
            other = rng.normal(0.0, drift_sd, (trials, r)) + rng.normal(0.0, run_sd, (trials, r))
            out.append(Rate("unpaired", r, shift, float(_unpaired_decide(la, other)[0].mean())))
    return out


@dataclass(frozen=True)
class EquivRate:
    rule: str  # "paired" or "unpaired"
    runs: int  # R
    margin: float  # the margin the rule was asked about (0.05 = ±5 %)
    shift: float  # the true difference, in margins (1: exactly at the margin)
    rate: float  # fraction of trials the rule called "the same"

    @property
    def error(self) -> float:
        """False equivalence at or beyond the margin; else one minus the power."""
        return self.rate if self.shift >= 1 else 1.0 - self.rate


def simulate_equivalence_rates(runs=SIM_RUNS, margins=SIM_MARGINS, shifts=SIM_EQUIV_SHIFTS,
                               trials: int = SIM_TRIALS, seed: int = SIM_SEED, run_sd: float = SIM_RUN_SD,
                               drift_sd: float = SIM_DRIFT_SD) -> list[EquivRate]:
    """How often each equivalence rule says "the same" on the runs of :func:`simulate_error_rates`'s
    model, with a true log ratio of ``shift`` x log(1 + margin) (seeded)."""
    rng = np.random.default_rng(seed)
    out = []
    for r in runs:
        for margin in margins:
            for shift in shifts:
                drift = rng.normal(0.0, drift_sd, (trials, r))
                la = drift + rng.normal(0.0, run_sd, (trials, r)) + shift * math.log1p(margin)
                lb = drift + rng.normal(0.0, run_sd, (trials, r))
                other = rng.normal(0.0, drift_sd, (trials, r)) + rng.normal(0.0, run_sd, (trials, r))
                out.append(EquivRate("paired", r, margin, shift, float(_paired_same(la - lb, margin)[0].mean())))
                out.append(EquivRate("unpaired", r, margin, shift, float(_unpaired_same(la, other, margin)[0].mean())))
    return out


def noise_from_runs(cells: list[np.ndarray], pairs: list[tuple[np.ndarray, np.ndarray]]) -> tuple[float, float]:
    """The simulation's (run_sd, drift_sd) from measured runs: ``cells`` are run medians of one
    variant in one row (at least five runs each), ``pairs`` two variants' run medians aligned run by
    run. In the model, the SD of a cell's log run medians is hypot(run_sd, drift_sd) and the SD of
    a pair's log ratios sqrt(2) x run_sd: each is taken as the median over cells (pairs) of the
    sample SD, so one very noisy cell does not set the noise of all."""
    total = [np.std(np.log(c), ddof=1) for c in cells if len(c) >= PAIRED_MIN_RUNS]
    own = [np.std(np.log(a / b), ddof=1) / math.sqrt(2) for a, b in pairs if len(a) >= PAIRED_MIN_RUNS]
    if not total or not own:
        raise ValueError("too few cells with enough runs to measure the noise")
    run_sd, spread = float(np.median(own)), float(np.median(total))
    return run_sd, math.sqrt(max(spread ** 2 - run_sd ** 2, 0.0))


def noise_label(within: float) -> str:
    if within != within:  # NaN: no run had enough samples
        return "not rated"
    if within > VERY_NOISY_WITHIN:
        return "very noisy"
    return "noisy" if within > NOISY_WITHIN else "steady"
