"""Statistics derived from samples; nothing here is ever stored back.

Two kinds of spread, kept apart:
* within a process: IQR / median of one run's samples;
* between processes: (max - min) / median of the R run medians.
A difference is "a result" only when the two [min..max] ranges of run medians
do not overlap.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

NOISY_WITHIN = 0.10  # IQR/median above 10 % is noisy,
VERY_NOISY_WITHIN = 0.25  # above 25 % very noisy (thresholds as in torch.utils.benchmark)


@dataclass(frozen=True)
class Summary:
    """One quantity across R runs: median, min and max of the per-run values."""

    median: float
    low: float
    high: float
    runs: int

    @property
    def range_frac(self) -> float:
        return (self.high - self.low) / self.median if self.median else float("nan")

    def overlaps(self, other: Summary) -> bool:
        return self.low <= other.high and other.low <= self.high


def summarize(values: pd.Series) -> Summary:
    return Summary(float(values.median()), float(values.min()), float(values.max()), int(values.size))


def run_medians(frame: pd.DataFrame, column: str = "time_s") -> pd.Series:
    """Median of ``column`` (``time_s`` unless told) per run, indexed by run."""
    return frame.groupby("run")[column].median()


def run_minima(frame: pd.DataFrame) -> pd.Series:
    """Fastest sample per run: the least-disturbed call each process managed."""
    return frame.groupby("run")["time_s"].min()


def run_means(frame: pd.DataFrame) -> pd.Series:
    """Mean seconds per call per run. A sample that averaged ``calls`` calls
    counts ``calls`` times, so loops of different lengths combine correctly."""
    weighted = (frame["time_s"] * frame["calls"]).groupby(frame["run"]).sum()
    return weighted / frame.groupby("run")["calls"].sum()


def within_spread(frame: pd.DataFrame) -> float:
    """Median over runs of each run's IQR / median."""
    def iqr_frac(times: pd.Series) -> float:
        q1, q2, q3 = times.quantile([0.25, 0.5, 0.75])
        return float((q3 - q1) / q2) if q2 else float("nan")

    return float(frame.groupby("run")["time_s"].apply(iqr_frac).median())


def ratio_per_run(a: pd.DataFrame, b: pd.DataFrame) -> pd.Series:
    """Per-run ratio of run medians a / b, over the runs both have."""
    ra, rb = run_medians(a), run_medians(b)
    common = ra.index.intersection(rb.index)
    return ra[common] / rb[common]


def diff_per_run(a: pd.DataFrame, b: pd.DataFrame, per_window: bool = False) -> pd.Series:
    """Per-run difference of run medians a - b, in seconds per call; with
    ``per_window``, times a's calls per sample: what a whole timed window of a
    (a loop of ``calls`` calls) lost against b."""
    ra, rb = run_medians(a), run_medians(b)
    common = ra.index.intersection(rb.index)
    lost = ra[common] - rb[common]
    return lost * run_medians(a, "calls")[common] if per_window else lost


def verdict(a: Summary, b: Summary) -> str:
    """'a result' when the run ranges do not overlap, else 'not a result yet'."""
    return "not a result yet" if a.overlaps(b) else "a result"


def noise_label(within: float) -> str:
    if within > VERY_NOISY_WITHIN:
        return "very noisy"
    return "noisy" if within > NOISY_WITHIN else "steady"
