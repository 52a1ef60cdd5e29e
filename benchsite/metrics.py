"""Quantities other than time, derived per run from a figure's rows; never stored.

A table cell is the median [min..max] over runs of one value per run. For time
that value is the run's median ``time_s``; the others are read beside it or
derived from it:

* ``bandwidth``  ``bytes_moved`` / the run's median time (bytes per second)
* ``flop_rate``  ``flops`` / the run's median time (FLOP per second)
* ``error``      the run's ``max_rel_error`` (one reference check per run)
* ``size``       the run's ``size_bytes`` (a memory total, a file's size)

A figure asks for extra tables with ``"metrics": [...]`` in its FIGURE literal.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from . import fmt, stats


@dataclass(frozen=True)
class Metric:
    name: str
    label: str  # shown above its table
    per_run: Callable[[pd.DataFrame], pd.Series]
    show: Callable[[stats.Summary], str]


def _per_run_column(frame: pd.DataFrame, column: str) -> pd.Series:
    return frame.groupby("run")[column].median().dropna()


def _rate(column: str) -> Callable[[pd.DataFrame], pd.Series]:
    def per_run(frame: pd.DataFrame) -> pd.Series:
        amount = _per_run_column(frame, column)
        return (amount / stats.run_medians(frame)).dropna()
    return per_run


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


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("time", "Time per call", stats.run_medians, time_range),
    Metric("bandwidth", "Achieved bandwidth: bytes moved / time", _rate("bytes_moved"),
           lambda s: si_range(s, "B/s")),
    Metric("flop_rate", "Achieved FLOP/s: floating-point operations / time", _rate("flops"),
           lambda s: si_range(s, "FLOP/s")),
    Metric("error", "Error against the float64 NumPy reference (max abs error / max abs value)",
           lambda f: _per_run_column(f, "max_rel_error"), error_range),
    Metric("size", "Size in bytes", lambda f: _per_run_column(f, "size_bytes"),
           lambda s: si_range(s, "B")),
)}


def get(name: str) -> Metric:
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r} (known: {', '.join(METRICS)})")
    return METRICS[name]


def summary(rows: pd.DataFrame, name: str) -> stats.Summary | None:
    """Median [min..max] over runs of the metric; ``None`` where the rows lack it."""
    values = get(name).per_run(rows)
    return stats.summarize(values) if not values.empty else None


def shown(rows: pd.DataFrame, name: str) -> str:
    s = summary(rows, name)
    return get(name).show(s) if s else "—"
