"""Whether two variants measured in the same runs differ: the paired verdict and the
equivalence verdict, with NumPy and the standard library only.

This is the one implementation of both rules: ``benchsite.model.stats`` (the site) and
``python -m benchkit compare`` (a reader's terminal) call the same functions, so a
verdict pasted into a review is the verdict the site would print for the same runs.

* :func:`paired_verdict`: per-run log ratios d_i = log(a_i / b_i) of two variants'
  run medians; "a result" when enough runs agree in sign (a one-sided sign test) and
  the median d clears an effect floor. Otherwise "not a result yet", which never
  means "no difference".
* :func:`paired_equivalence`: "the same within ±m" when the sign test's interval for
  the median d lies inside ±log(1 + m); the margin is always the caller's.

docs/verdicts.md on the site explains both and measures their error rates.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RESULT = "a result"
NOT_YET = "not a result yet"

# --- the verdict rule's constants (justified by simulations on the site: docs/verdicts.md) ---
MIN_EFFECT = 0.03  # a difference under 3 % is never "a result", however consistent
MAD_TO_SD = 1.4826  # MAD x this = the standard deviation, for normal data
PAIRED_MIN_RUNS = 5  # fewer paired runs than this decide nothing
PAIRED_ALPHA = 0.05  # one-sided level of the sign test on the per-run ratios
PAIRED_K = 2.0  # the median log ratio must exceed PAIRED_K robust SDs of the log ratios

# --- the equivalence rule's constants (docs/verdicts.md, "The same within a margin") ---
SAME = "the same"  # the start of an equivalence verdict's text: "the same within ±5 %"
EQUIV_ALPHA = 0.05  # each of the two one-sided tests; the interval is a 1 - 2 x 0.05 = 90 % one


@dataclass(frozen=True)
class Verdict:
    """What the rule decided and why. ``str()`` is the short verdict."""

    text: str  # "a result", "not a result yet", or a refusal such as "different hardware: not a verdict"
    reason: str  # one sentence: the numbers the rule looked at
    ratio: float = float("nan")  # the effect: exp(median log ratio) paired, ratio of medians unpaired
    floor: float = float("nan")  # the effect floor as a fraction (0.03 = 3 %)
    runs: int = 0  # paired runs, or the smaller side's runs

    @property
    def is_result(self) -> bool:
        return self.text == RESULT

    def __str__(self) -> str:
        return self.text


def _percent(frac: float) -> str:
    """A fraction as a percentage for a sentence: 4.8 %, 27 %, 120 % (never 1.2e+02 %)."""
    value = 100 * frac
    return f"{value:.2g} %" if abs(value) < 10 else f"{value:.0f} %"


def robust_sd(x: np.ndarray) -> np.ndarray:
    """MAD_TO_SD x the median absolute deviation along the last axis."""
    med = np.median(x, axis=-1, keepdims=True)
    return MAD_TO_SD * np.median(np.abs(x - med), axis=-1)


def _binom_tail(n: int, k: int) -> float:
    """P(X >= k) for X ~ Binomial(n, 1/2): k or more of n runs agree by chance."""
    return sum(math.comb(n, j) for j in range(k, n + 1)) / 2 ** n


@functools.cache
def sign_agree_needed(n: int, alpha: float = PAIRED_ALPHA) -> int | None:
    """The fewest of n paired runs that must agree in sign (one-sided sign test at
    ``alpha``); None when even all n would not be enough."""
    return next((k for k in range(n + 1) if _binom_tail(n, k) <= alpha), None)


def _paired_decide(d: np.ndarray) -> tuple[np.ndarray, ...]:
    """The paired rule on log ratios ``d`` (last axis: runs), vectorised for the
    simulation: (is a result, median d, agreeing runs, floor in log units)."""
    n = d.shape[-1]
    med = np.median(d, axis=-1)
    agree = np.where(med > 0, (d > 0).sum(axis=-1), (d < 0).sum(axis=-1))
    floor = np.maximum(math.log1p(MIN_EFFECT), PAIRED_K * robust_sd(d))
    need = sign_agree_needed(n) if n >= PAIRED_MIN_RUNS else None
    ok = (agree >= need) & (np.abs(med) > floor) if need is not None else np.zeros(med.shape, bool)
    return ok, med, agree, floor


def paired_verdict(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> Verdict:
    """Variants a and b measured in the same runs: ``a`` and ``b`` are their run medians,
    aligned run by run (``a[i]`` and ``b[i]`` from run i).

    "a result" when (1) at least PAIRED_MIN_RUNS runs have both, (2) the per-run
    log ratios d_i = log(a_i / b_i) agree in sign in enough runs for a one-sided
    sign test at PAIRED_ALPHA, and (3) |median d| exceeds the floor
    max(log(1 + MIN_EFFECT), PAIRED_K x robust SD of the d_i)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    keep = (a > 0) & (b > 0) & np.isfinite(a) & np.isfinite(b)
    d = np.log(a[keep] / b[keep])
    n = d.size
    if n < PAIRED_MIN_RUNS:
        runs = f"{n} paired run{'' if n == 1 else 's'}"
        return Verdict(NOT_YET, f"{runs}; the rule needs at least {PAIRED_MIN_RUNS}", runs=n,
                       ratio=float(np.median(np.exp(d))) if n else float("nan"))
    ok, med, agree, floor = (np.asarray(x).item() for x in _paired_decide(d))
    need = sign_agree_needed(n)
    # The median of the per-run ratios, as a figure's ratio column shows it: with an even number of
    # runs the mean of the two middle ratios (exp of the median log ratio would be their geometric mean).
    ratio, floor_frac = float(np.median(np.exp(d))), math.expm1(floor)
    facts = (f"median per-run ratio {ratio:.3g}, {agree} of {n} runs in that direction "
             f"({need} needed), floor {_percent(floor_frac)}")
    if ok:
        return Verdict(RESULT, facts, ratio, floor_frac, n)
    why = "too few runs agree" if agree < need else "the difference is inside the floor"
    return Verdict(NOT_YET, f"{why}: {facts}", ratio, floor_frac, n)


@dataclass(frozen=True)
class Equivalence:
    """What the equivalence rule decided and why. ``str()`` is the short verdict: "the same within
    ±5 %", or "could not show the same within ±5 %" (never "different": that is the other rules')."""

    text: str
    reason: str  # one sentence: the interval, the margin, the runs
    margin: float  # the caller's margin as a fraction (0.05 = ±5 %)
    ratio: float = float("nan")  # the point estimate: exp(median d) paired, exp(Hodges-Lehmann shift) unpaired
    low: float = float("nan")  # the interval of the ratio (a / b), exp of the interval of d
    high: float = float("nan")
    runs: int = 0  # paired runs, or the smaller side's runs

    @property
    def is_same(self) -> bool:
        return self.text.startswith(SAME)

    def __str__(self) -> str:
        return self.text


def check_margin(margin: object) -> float:
    """A margin as a fraction strictly between 0 and 1; anything else is refused (no default)."""
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 < margin < 1:
        raise ValueError(f"an equivalence margin is a fraction between 0 and 1 (0.05 = ±5 %), not {margin!r}")
    return float(margin)


def _binom_lower(n: int, k: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, j) for j in range(k + 1)) / 2 ** n


@functools.cache
def sign_interval_rank(n: int, alpha: float = EQUIV_ALPHA) -> int | None:
    """The k for which [d_(k), d_(n+1-k)] (1-based order statistics of n per-run log ratios) is the
    sign test's interval for their median with each tail at most ``alpha``: the largest k with
    P(Binomial(n, 1/2) <= k - 1) <= alpha. None when even [min, max] misses (n too small)."""
    k = next((j for j in range(n // 2 + 1, 0, -1) if _binom_lower(n, j - 1) <= alpha), None)
    return k


def margin_text(margin: float) -> str:
    """A margin as the verdicts say it: ±5 %."""
    return f"±{_percent(margin)}"


def same_label(margin: float) -> str:
    return f"{SAME} within {margin_text(margin)}"


def _equiv_decide(diffs: np.ndarray, k: int | None, margin: float) -> tuple[np.ndarray, ...]:
    """TOST on sorted log differences (last axis), vectorised: (the same, low, high) with
    [low, high] = [x_(k), x_(N+1-k)] and the margin ±log(1 + margin)."""
    if k is None:
        nan = np.full(diffs.shape[:-1], np.nan)
        return np.zeros(diffs.shape[:-1], bool), nan, nan
    x = np.sort(diffs, axis=-1)
    low, high = x[..., k - 1], x[..., x.shape[-1] - k]
    bound = math.log1p(margin)
    return (low > -bound) & (high < bound), low, high


def _paired_same(d: np.ndarray, margin: float) -> tuple[np.ndarray, ...]:
    return _equiv_decide(d, sign_interval_rank(d.shape[-1]), margin)


def _equivalence(ok: bool, low: float, high: float, est: float, margin: float, runs: int,
                 how: str) -> Equivalence:
    interval = f"{math.exp(low):.3g}..{math.exp(high):.3g}"
    facts = (f"{how} {interval} (point {math.exp(est):.3g}), margin {1 / (1 + margin):.3g}..{1 + margin:.3g}, "
             f"{runs} runs" if low == low else f"{runs} runs: too few for a {how}")
    if ok:
        return Equivalence(same_label(margin), facts, margin, math.exp(est), math.exp(low), math.exp(high), runs)
    text = f"could not show {same_label(margin)}" + (f" (interval {interval}×)" if low == low else "")
    return Equivalence(text, facts, margin, math.exp(est), math.exp(low), math.exp(high), runs)


def paired_equivalence(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
                       margin: float) -> Equivalence:
    """Variants a and b measured in the same runs (as :func:`paired_verdict` takes them) are "the same
    within ±margin" when the sign test's interval for the median per-run log ratio d_i (each tail
    at most EQUIV_ALPHA: two one-sided tests) lies inside ±log(1 + margin)."""
    margin = check_margin(margin)
    a, b = np.asarray(a, float), np.asarray(b, float)
    keep = (a > 0) & (b > 0) & np.isfinite(a) & np.isfinite(b)
    d = np.log(a[keep] / b[keep])
    est = float(np.median(d)) if d.size else float("nan")
    ok, low, high = (np.asarray(x).item() for x in _paired_same(d, margin))
    how = f"sign-test interval (at least {100 * (1 - 2 * EQUIV_ALPHA):.0f} %) of the per-run ratio"
    return _equivalence(ok, low, high, est, margin, int(d.size), how)
