"""The one number a figure is quoted by in the /bench index and in a cite block.

Each figure names it: the cell that shows the effect the figure exists for
(``FIGURE["headline"] = {"stat": "ratio", "n": 1024}``; ``"a"`` and ``"b"`` name a ratio
of two other variants of one row, taken run by run as the ratio column is). Without
one it is the figure's ratio, else its first variant, in the last table row. It is
picked from the table model's rows (``Table.headline``); a ratio of two named
variants divides the row's run medians run by run, as the table's ratio column does.
A ratio carries its paired verdict (``stats.paired_verdict``), shown beside it wherever
the headline is quoted alone: a ratio without it reads as a finding when it may not be one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from benchsite.model import stats
from benchsite.model.figures import Figure

if TYPE_CHECKING:  # table.py builds the rows and imports this module
    from benchsite.model.table import Row


@dataclass(frozen=True)
class Headline:
    """The quoted cell and its median [min..max] over runs (as text: ``views.quantities.headline``)."""

    what: str  # e.g. "completed / dispatch at n=1024"
    summary: stats.Summary
    is_ratio: bool
    # A ratio's paired verdict, run by run: the table row's for the figure's ratio (None when that
    # ratio is a part of its whole, FIGURE["ratio_verdict"] False), or the paired rule on the two
    # variants a headline names (a comparison the figure chose to quote); None for a time
    verdict: stats.Verdict | None = None


def choose_headline(rows: Sequence[Row], fig: Figure) -> Headline | None:
    """The headline among a table's rows, or None when the data lacks that cell."""
    spec = dict(fig.headline)
    # Naming a variant asks for its time; otherwise a ratio figure is quoted by its ratio.
    stat = spec.pop("stat", "ratio" if fig.ratio and "variant" not in spec else "median")
    variant = spec.pop("variant", fig.variants[0])
    pair = (spec.pop("a"), spec.pop("b")) if "a" in spec else fig.ratio
    chosen = [row for row in rows if all(row.params.get(k) == v for k, v in spec.items())]
    if not chosen:
        return None
    row = chosen[-1]
    where = f" at {row.label}" if row.label else ""
    verdict = None
    if stat == "ratio" and pair and pair != fig.ratio:
        summary, what = _pair_ratio(row, pair), f"{pair[0]} / {pair[1]}{where}"
        if summary:
            verdict = stats.paired_verdict(row.run_medians[pair[0]], row.run_medians[pair[1]])
    elif stat == "ratio" and fig.ratio:
        summary, what, verdict = row.ratio, f"{fig.ratio[0]} / {fig.ratio[1]}{where}", row.verdict
    else:
        summary, what = row.cells.get(variant), f"{variant}{where}"
    return Headline(what, summary, stat == "ratio", verdict) if summary else None


def _pair_ratio(row: Row, pair: tuple[str, str]) -> stats.Summary | None:
    """Median [min..max] of the per-run ratios of two variants of one row."""
    if not all(v in row.run_medians for v in pair):
        return None
    a, b = stats.paired_runs(*(row.run_medians[v] for v in pair))
    return stats.summarize(a / b) if a.size else None
