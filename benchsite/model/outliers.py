"""Outlying samples, shown rather than averaged away.

The table quotes medians, which a cluster of slow (or fast) samples inside one run does
not move: the chapter would never say that half of a run's samples took many times the
rest. This reads a table model's samples (nothing stored, no statistic recomputed) and
names each run whose samples hold such a cluster: the cell, the run, how many samples
and how far from the cell's median they lay.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchsite.model.table import Table
from benchsite.views import fmt

FAR = 3.0  # a sample above 3x the cell's median, or under a third of it, is outlying
MIN_SHARE = 0.2  # a run is named when at least a fifth of its samples are outlying,
MIN_COUNT = 3  # and at least three: one stray sample per run is ordinary noise here


@dataclass(frozen=True)
class Cluster:
    """Outlying samples of one run in one cell of the table."""

    cell: str  # "naive at n=2048"
    run: int
    count: int
    samples: int  # the run's samples in that cell
    low: float  # the outlying samples' times over the cell's median: least and most extreme
    high: float

    @property
    def text(self) -> str:
        span = f"{fmt.sig(self.low)}×" if fmt.sig(self.low) == fmt.sig(self.high) else \
            f"{fmt.sig(self.low)}× to {fmt.sig(self.high)}×"
        return f"run {self.run}, {self.count} of {self.samples} samples at {span}"


def clusters(tab: Table) -> list[Cluster]:
    """Every (cell, run) whose samples hold an outlying cluster (FAR, MIN_SHARE, MIN_COUNT)."""
    out = []
    for row in tab.rows:
        variants = row.samples["variant"].to_numpy()
        times = row.samples["time_s"].to_numpy(dtype=float)
        runs = row.samples["run"].to_numpy()
        for variant, cell in row.cells.items():
            mine = variants == variant
            scaled, run_of = times[mine] / cell.median, runs[mine]
            far = (scaled > FAR) | (scaled < 1 / FAR)
            for run in np.unique(run_of[far]):  # in run order
                in_run = run_of == run
                picked = scaled[far & in_run]
                total = int(in_run.sum())
                if len(picked) >= MIN_COUNT and len(picked) >= MIN_SHARE * total:
                    where = f"{variant} at {row.label}" if row.label else variant
                    out.append(Cluster(where, int(run), len(picked), total, float(picked.min()), float(picked.max())))
    return out


def lines(tab: Table) -> list[str]:
    """One line per cell with outlying clusters: ``naive at n=2048: run 2, 6 of 10 samples at 20.4× to
    41.7×``; what the spread text shows."""
    cells: dict[str, list[str]] = {}
    for c in clusters(tab):
        cells.setdefault(c.cell, []).append(c.text)
    return [f"{cell}: {'; '.join(runs)}" for cell, runs in cells.items()]
