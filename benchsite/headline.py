"""The one number a figure is quoted by in the /bench index and in a cite block.

A figure may name it (``FIGURE["headline"] = {"stat": "ratio", "n": 1024}``);
otherwise it is the figure's ratio, else its first variant, in the last table row
(the largest size, where the effect is usually clearest).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from . import fmt, render, stats
from .figures import Figure


@dataclass(frozen=True)
class Headline:
    what: str  # e.g. "completed / dispatch at n=1024"
    summary: stats.Summary
    is_ratio: bool

    @property
    def text(self) -> str:
        s = self.summary
        return (fmt.ratio_range if self.is_ratio else fmt.time_range)(s.median, s.low, s.high)


def _matches(rows: pd.DataFrame, wanted: dict[str, str]) -> bool:
    # Within one table row every group_by param has a single value.
    return all(str(rows[f"p_{k}"].iloc[0]) == v for k, v in wanted.items())


def headline(frame: pd.DataFrame, fig: Figure) -> Headline | None:
    """The headline of one figure on one machine, or None when its data lacks that cell."""
    spec = dict(fig.headline)
    # Naming a variant asks for its time; otherwise a ratio figure is quoted by its ratio.
    stat = spec.pop("stat", "ratio" if fig.ratio and "variant" not in spec else "median")
    variant = spec.pop("variant", fig.variants[0])
    chosen = [(label, rows) for label, rows in render.groups(frame, fig) if _matches(rows, spec)]
    if not chosen:
        return None
    label, rows = chosen[-1]
    where = f" at {label}" if label else ""
    if stat == "ratio" and fig.ratio:
        summary = render.ratio_summary(rows, fig)
        what = f"{fig.ratio[0]} / {fig.ratio[1]}{where}"
    else:
        summary = render.cell_summary(rows, variant)
        what = f"{variant}{where}"
    return Headline(what, summary, stat == "ratio") if summary else None
