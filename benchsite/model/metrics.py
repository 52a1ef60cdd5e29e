"""Quantities other than time, derived per run from a figure's rows; never stored.

A table cell is the median [min..max] over runs of one value per run. For time
that value is the run's median ``time_s``; the others are read beside it or
derived from it:

* ``bandwidth``  ``bytes_moved`` / the run's median time (bytes per second)
* ``flop_rate``  ``flops`` / the run's median time (FLOP per second)
* ``error``      the run's ``max_rel_error`` (one reference check per run)
* ``size``       the run's ``size_bytes`` (a memory total, a file's size)

A figure asks for extra tables with ``"metrics": [...]`` in its FIGURE literal. A metric says how
it reads (``style``, ``unit``); the view makes the text (``views/quantities.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from benchsite.model import stats


@dataclass(frozen=True)
class Metric:
    name: str
    label: str  # shown above its table
    column: str  # what it reads of each run: the median of this column
    rate: bool  # ... over the run's median time (an amount per second)
    # How a view shows it: a time in its unit, an SI prefix on ``unit``, or a number in
    # scientific notation (views/quantities.py)
    style: Literal["time", "si", "sci"]
    unit: str = ""

    @property
    def columns(self) -> list[str]:
        return list(dict.fromkeys(("time_s", self.column)))

    def from_medians(self, medians: pd.DataFrame) -> pd.Series:
        """The per-run values, from the runs' medians of :attr:`columns` (indexed by run)."""
        if self.column == "time_s":
            return medians["time_s"]
        values = medians[self.column].dropna()
        return (values / medians["time_s"]).dropna() if self.rate else values

    def per_run(self, frame: pd.DataFrame) -> pd.Series:
        return self.from_medians(frame.groupby("run")[self.columns].median())


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("time", "Time per call", "time_s", False, "time"),
    Metric("bandwidth", "Achieved bandwidth: bytes moved / time", "bytes_moved", True, "si", "B/s"),
    Metric("flop_rate", "Achieved FLOP/s: floating-point operations / time", "flops", True, "si", "FLOP/s"),
    Metric("error", "Error against the float64 NumPy reference (max abs error / max abs value)",
           "max_rel_error", False, "sci"),
    Metric("size", "Size in bytes", "size_bytes", False, "si", "B"),
)}


def get(name: str) -> Metric:
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r} (known: {', '.join(METRICS)})")
    return METRICS[name]


def summary(rows: pd.DataFrame, name: str) -> stats.Summary | None:
    """Median [min..max] over runs of the metric; ``None`` where the rows lack it."""
    return _summary(get(name).per_run(rows))


def _summary(values: pd.Series) -> stats.Summary | None:
    return stats.summarize(values) if not values.empty else None


def by_variant(rows: pd.DataFrame, name: str) -> dict[str, stats.Summary | None]:
    """:func:`summary` of each variant's rows (one row of a table: :func:`by_row_and_variant`)."""
    return by_row_and_variant([rows], name)[0]


def by_row_and_variant(parts: list[pd.DataFrame], name: str) -> list[dict[str, stats.Summary | None]]:
    """:func:`summary` of each variant's rows (variants in sorted order), for each frame of ``parts``
    (a table's rows; ``Table.metric``; a claim asks one row through ``by_variant``). The numbers of a
    ``groupby(["variant", "run"]).median()`` and :meth:`Metric.from_medians`, in numpy
    (``stats.per_run_median``): a session's page asks it of every table, and pandas' set-up was
    most of its time."""
    metric = get(name)
    out: list[dict[str, stats.Summary | None]] = []
    for part in parts:
        found: dict[str, stats.Summary | None] = {}
        variants, runs = part["variant"].to_numpy(), part["run"].to_numpy()
        times = part["time_s"].to_numpy(dtype=float)
        column = times if metric.column == "time_s" else part[metric.column].to_numpy(dtype=float)
        for variant in sorted(set(variants.tolist())):
            chosen = variants == variant
            values = stats.per_run_medians(runs[chosen], column[chosen])[1]
            if metric.column != "time_s":
                kept = ~np.isnan(values)
                values = values[kept]
                if metric.rate:
                    values = values / stats.per_run_medians(runs[chosen], times[chosen])[1][kept]
                    values = values[~np.isnan(values)]
            found[variant] = stats.summarize(values) if values.size else None
        out.append(found)
    return out


@dataclass(frozen=True)
class RankedLine:
    key: str  # the value of the ranking parameter
    detail: str  # the first detail text its rows carry ("" if none)
    summary: stats.Summary  # median [min..max] over runs of the metric


def ranked(rows: pd.DataFrame, by: str, metric: Metric) -> list[RankedLine]:
    """One line per value of parameter ``by``: the metric over runs, largest median first."""
    lines = [RankedLine(str(key), next((str(d) for d in part["detail"] if d), ""),
                        stats.summarize(metric.per_run(part)))
             for key, part in rows.groupby(f"p_{by}")]
    return sorted(lines, key=lambda line: -line.summary.median)

