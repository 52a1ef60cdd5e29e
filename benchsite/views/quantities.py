"""How the model's quantities read: a metric's median [min..max] over runs, a headline, the
outlying clusters under a table. The model hands numbers (``stats.Summary``, ``Headline``,
``outliers.Cluster``); the words and units are made here, with :mod:`fmt`'s number formatting."""

from __future__ import annotations

import math

import pandas as pd

from benchsite.model import metrics, outliers, stats
from benchsite.model.headline import Headline
from benchsite.model.table import Table
from benchsite.views import fmt

SI_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def si_range(s: stats.Summary, unit: str) -> str:
    """``17.9 GB/s [14.8..18.1]``: one prefix for all three, chosen by the median."""
    scale, prefix = next(((v, p) for v, p in SI_PREFIXES if abs(s.median) >= v), SI_PREFIXES[-1])
    core = f"{fmt.sig(s.median / scale)} {prefix}{unit}"
    return core + _spread(fmt.sig(s.low / scale), fmt.sig(s.high / scale), s)


def _spread(low: str, high: str, s: stats.Summary) -> str:
    # A quantity that came out identical in every run says so instead of "[x..x]".
    return f" [same in all {s.runs} runs]" if low == high else f" [{low}..{high}]"


def sci(value: float) -> str:
    """``3.2e-03``; zero stays ``0``."""
    return "0" if value == 0 else f"{value:.1e}" if math.isfinite(value) else str(value)


def error_range(s: stats.Summary) -> str:
    return sci(s.median) + _spread(sci(s.low), sci(s.high), s)


def time_range(s: stats.Summary) -> str:
    return fmt.time_range(s.median, s.low, s.high)


def ratio_or_time(s: stats.Summary, is_ratio: bool) -> str:
    """A cell of the time table: a ratio (``12.3× [11.9..13.0]``) or a time in its unit."""
    return (fmt.ratio_range if is_ratio else fmt.time_range)(s.median, s.low, s.high)


# How each style of :class:`metrics.Metric` reads (``Metric.style``; ``Metric.unit`` for SI).
STYLES = {
    "time": lambda s, unit: time_range(s),
    "si": si_range,
    "sci": lambda s, unit: error_range(s),
}


def metric(m: metrics.Metric, s: stats.Summary) -> str:
    """The metric's median [min..max] over runs, as its table shows it."""
    return STYLES[m.style](s, m.unit)


def shown(rows: pd.DataFrame, name: str) -> str:
    """:func:`metrics.summary` of ``rows`` as its table shows it; a dash where the rows lack it."""
    s = metrics.summary(rows, name)
    return metric(metrics.get(name), s) if s else "—"


def headline(h: Headline) -> str:
    """The headline's median [min..max]: a ratio, or a time in its unit."""
    return ratio_or_time(h.summary, h.is_ratio)


def cluster(c: outliers.Cluster) -> str:
    """``run 2, 6 of 10 samples at 20.4× to 41.7×``."""
    span = f"{fmt.sig(c.low)}×" if fmt.sig(c.low) == fmt.sig(c.high) else \
        f"{fmt.sig(c.low)}× to {fmt.sig(c.high)}×"
    return f"run {c.run}, {c.count} of {c.samples} samples at {span}"


def outlier_lines(tab: Table) -> list[str]:
    """One line per cell with outlying clusters: ``naive at n=2048: run 2, 6 of 10 samples at 20.4× to
    41.7×``; what the spread text shows."""
    cells: dict[str, list[str]] = {}
    for c in outliers.clusters(tab):
        cells.setdefault(c.cell, []).append(cluster(c))
    return [f"{cell}: {'; '.join(runs)}" for cell, runs in cells.items()]
