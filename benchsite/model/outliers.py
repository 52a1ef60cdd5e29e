"""Outlying samples, shown rather than averaged away.

The table quotes medians, which a cluster of slow (or fast) samples inside one run does
not move: the chapter would never say that half of a run's samples took many times the
rest. This reads a table model's samples (nothing stored, no statistic recomputed) and
names each run whose samples hold such a cluster: the cell, the run, how many samples
and how far from the cell's median they lay (the words: ``views.quantities.outlier_lines``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchsite.model.table import Table

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

