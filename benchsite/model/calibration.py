"""The A/A calibration: how often each verdict rule is wrong on this machine's own noise.

fig-aa-calibration measures one computation as two variants, ``A`` and ``B``, in the same runs
(bench_scripts/aa_calibration.py). Each table row is one A/A pair, assumed to have nothing to find
(two executables of one program at the same speed), so every "a result" a rule calls on it counts as a
false positive. :func:`measured` counts them per rule in
:data:`RULES`; :func:`simulated` runs the same rule, on the same comparison of the same number of
runs, over run medians drawn from the simulation's noise model (``stats.simulate_error_rates``),
so the page can set the measured rate beside the simulated one. Model layer: table and stats only.

A rule is a name, a sentence saying how it compares A with B, a function of A's and B's run
medians (aligned by run, in run order) that returns a ``stats.Verdict``, and what counts as the
wrong call on A/A data. Adding a rule (an equivalence rule, say) is one more line in ``RULES``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from benchsite.model import stats
from benchsite.model.table import Table

FIGURE_ID = "fig-aa-calibration"
PAIR = ("A", "B")
SIM_TRIALS = 2000  # per rule, run count and noise: a rate near 2 % within about 0.3 percentage points
INTERVAL = 0.95  # the exact (Clopper-Pearson) interval given with each measured rate


def paired(a: np.ndarray, b: np.ndarray) -> stats.Verdict:
    """The paired rule, as a figure's ratio column uses it: A against B, run by run."""
    return stats.paired_verdict(a, b)


def halves(a: np.ndarray, b: np.ndarray) -> stats.Verdict:
    """The unpaired rule, as /bench compares two sessions: A in the earlier half of the runs
    against B in the later half (the larger half when R is odd). No run is on both sides, so
    nothing pairs them, and the two sides are apart in time as two sessions are."""
    k = len(a) // 2
    return stats.unpaired_verdict(a[:k], b[k:])


def is_result(verdict: stats.Verdict) -> bool:
    return verdict.is_result


# The rules' wrong calls on many A/A trials at once (one per row, runs along the last axis, every
# value positive and finite), by the functions the rules themselves decide with: the same calls as
# the rule trial by trial, in one pass (the simulation runs thousands of trials per rule).

def _paired_results(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return stats._paired_decide(np.log(a / b))[0]


def _halves_results(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    k = a.shape[-1] // 2
    return stats._unpaired_decide(np.log(a[..., :k]), np.log(b[..., k:]))[0]


@dataclass(frozen=True)
class Rule:
    name: str
    how: str  # how A and B are compared, for the page
    compare: Callable[[np.ndarray, np.ndarray], stats.Verdict]
    wrong: Callable[[stats.Verdict], bool] = is_result  # the false call on A/A data
    false_call: str = f'"{stats.RESULT}"'  # what that call reads, for the page
    # The wrong call on many trials at once (rows of positive, finite run medians), exactly as
    # ``wrong(compare(a, b))`` row by row; None: :func:`simulated` asks the rule trial by trial.
    wrong_in_rows: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None


EQUIVALENCE_MARGIN = 0.10  # the margin the A/A rows ask the equivalence rule to show


def same(a: np.ndarray, b: np.ndarray) -> stats.Equivalence:
    """The paired equivalence rule at ``EQUIVALENCE_MARGIN``: on A/A data "the same" is the
    truth, so its wrong call is failing to show it (a miss, not a false positive)."""
    return stats.paired_equivalence(a, b, EQUIVALENCE_MARGIN)


def not_same(verdict: stats.Equivalence) -> bool:
    return not verdict.is_same


def _not_same_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return ~stats._paired_same(np.log(a / b), EQUIVALENCE_MARGIN)[0]


RULES: tuple[Rule, ...] = (
    Rule("paired", "A against B in the same runs, run by run", paired, wrong_in_rows=_paired_results),
    Rule("unpaired", "A in the earlier half of the runs against B in the later half", halves,
         wrong_in_rows=_halves_results),
    Rule("equivalence", f"A against B in the same runs, asked to show the same within "
                        f"{stats.margin_text(EQUIVALENCE_MARGIN)}", same, wrong=not_same,
         false_call=f'"could not show {stats.same_label(EQUIVALENCE_MARGIN)}" (a miss)',
         wrong_in_rows=_not_same_rows),
)


@dataclass(frozen=True)
class Pair:
    """One A/A pair: a table row's run medians of A and B over the runs both have, in run order."""

    label: str
    a: np.ndarray
    b: np.ndarray


def pairs(tab: Table) -> list[Pair]:
    """Every row of the table that has both A and B in at least one run."""
    out = []
    for row in tab.rows:
        if all(v in row.run_medians for v in PAIR):
            a, b = stats.paired_runs(row.run_medians[PAIR[0]], row.run_medians[PAIR[1]])
            if a.size:
                out.append(Pair(row.label, a, b))
    return out


@dataclass(frozen=True)
class Count:
    """One rule on the measured pairs."""

    rule: Rule
    pairs: int
    wrong: tuple[str, ...]  # the labels of the pairs the rule called wrongly

    @property
    def rate(self) -> float:
        return len(self.wrong) / self.pairs if self.pairs else float("nan")

    @property
    def interval(self) -> tuple[float, float]:
        return exact_interval(len(self.wrong), self.pairs)


def measured(found: list[Pair], rules: tuple[Rule, ...] | None = None) -> list[Count]:
    rules = RULES if rules is None else rules
    return [Count(rule, len(found), tuple(p.label for p in found if rule.wrong(rule.compare(p.a, p.b))))
            for rule in rules]


def runs_of(found: list[Pair]) -> int:
    """The run count the pairs were measured with (the most any pair has)."""
    return max((p.a.size for p in found), default=0)


# --- the noise these runs show, and the simulation --------------------------------------------

@dataclass(frozen=True)
class Noise:
    """The simulation's two noise terms (SDs of log run medians), as estimated from A/A pairs:
    each variant's own noise from the scatter of log(a_i / b_i), whose SD is sqrt(2) times it, and
    the drift a run shares from what is left of one variant's scatter. Medians over the pairs."""

    run_sd: float
    drift_sd: float


def noise(found: list[Pair]) -> Noise:
    own, shared = [], []
    for p in found:
        if p.a.size < 3:
            continue
        la, lb = np.log(p.a), np.log(p.b)
        own_sd = float(stats.robust_sd(la - lb)) / math.sqrt(2)
        total = float(np.median([stats.robust_sd(la), stats.robust_sd(lb)]))
        own.append(own_sd)
        shared.append(math.sqrt(max(total**2 - own_sd**2, 0.0)))
    if not own:
        return Noise(float("nan"), float("nan"))
    return Noise(float(np.median(own)), float(np.median(shared)))


@functools.cache
def simulated(rule: Rule, runs: int, run_sd: float = stats.SIM_RUN_SD, drift_sd: float = stats.SIM_DRIFT_SD,
              trials: int = SIM_TRIALS, seed: int = stats.SIM_SEED) -> float:
    """How often ``rule`` makes its wrong call on simulated A/A runs: ``runs`` runs whose A and B
    log medians share a drift ~ N(0, drift_sd) per run and have their own noise ~ N(0, run_sd),
    the model of ``stats.simulate_error_rates``, compared exactly as the measured pairs are."""
    if not (run_sd >= 0 and drift_sd >= 0):  # no noise could be estimated (NaN): nothing to simulate
        return float("nan")
    rng = np.random.default_rng(seed)
    drift = rng.normal(0.0, drift_sd, (trials, runs))
    a = np.exp(drift + rng.normal(0.0, run_sd, (trials, runs)))
    b = np.exp(drift + rng.normal(0.0, run_sd, (trials, runs)))
    if rule.wrong_in_rows is not None and np.all((a > 0) & (b > 0) & np.isfinite(a) & np.isfinite(b)):
        return int(np.count_nonzero(rule.wrong_in_rows(a, b))) / trials
    return sum(rule.wrong(rule.compare(x, y)) for x, y in zip(a, b)) / trials


def exact_interval(k: int, n: int, level: float = INTERVAL) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a rate seen k times in n independent trials."""
    if n == 0:
        return float("nan"), float("nan")
    tail = (1 - level) / 2

    def at_least(j0: int, p: float) -> float:  # P(X >= j0) for X ~ Binomial(n, p)
        return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(j0, n + 1))

    def solve(falls: Callable[[float], float]) -> float:  # the root of a function falling on [0, 1]
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if falls(mid) > 0 else (lo, mid)
        return (lo + hi) / 2

    low = 0.0 if k == 0 else solve(lambda p: tail - at_least(k, p))
    high = 1.0 if k == n else solve(lambda p: (1 - tail) - at_least(k + 1, p))
    return low, high
