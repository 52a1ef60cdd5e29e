"""The numbers a sentence quotes (``<!-- bench:value fig-id stat=... -->``), from the table model.

A prose value names its samples more finely than a table row does: by any of ``variant``,
``dtype``, ``boundary`` and the figure's params (:func:`select`). It reads them from the table
model of its figure and machine (``Catalog.table``: the samples every view of the pair starts
from) and takes each statistic by the table model's own rules: one value per run
(``stats.run_medians`` and its kin, ``metrics`` for quantities other than time), two variants
paired by the runs both have (``stats.paired_runs``, through ``stats.ratio_per_run`` and
``diff_per_run``), median [min..max] over runs (``stats.summarize``), the paired verdict.
Every function returns numbers (a ``Summary``, a ``Verdict``, a fraction) or the texts a run
recorded; ``markers.value_marker`` only formats them. A statistic the rows cannot give raises
``ValueError`` with the reason; a selection that matches no rows, :class:`NoRows` (the page shows
it in an error box, and the build warns).

Two things compared, "the figure's ratio" and its verdicts, are selected and computed in one
place, :func:`pair` (a :class:`Pair`), for a sentence's value and for a claim alike
(``claims.py`` hands it a table row's samples, or for two rows the figure's): two variants of the
rows the filters select, or two rows (``a.KEY=VALUE``, ``b.KEY=VALUE``: one side's own filters,
such as the same variant at two sizes), paired run by run all the same, since every row of a
figure is measured in the same runs.
"""

from __future__ import annotations

import functools
import math
import weakref
from typing import NamedTuple

import numpy as np
import pandas as pd

from benchsite.model import metrics, stats
from benchsite.model.figures import Figure
from benchsite.model.table import sort_key

FILTER_COLUMNS = ("variant", "dtype", "boundary")  # filtered as they are; any other key is a param


class NoRows(ValueError):
    """A selection that matches no rows of a figure on a machine (one may lack a variant or a size
    another measured): the data's answer, not a marker the build cannot read."""


def select(frame: pd.DataFrame, filters: dict[str, str]) -> pd.DataFrame:
    """The rows whose columns (``variant``, ``dtype``, ``boundary``) or params hold each value;
    :class:`NoRows` when none does."""
    return _rows(frame, _matching(frame, filters), filters)


def _matching(frame: pd.DataFrame, filters: dict[str, str], side: str = "") -> np.ndarray | None:
    """Which rows hold every filter's value (None: no filter), every filter's rows at once: a
    column's values are compared as text (``astype(str)``), by :func:`_codes`. ``side`` ("a.",
    "b."): the filters are one side's of a pair, named so in a message."""
    keep = None
    for key, want in filters.items():
        col = key if key in FILTER_COLUMNS else f"p_{key}"
        if col not in frame:
            raise ValueError(_unknown(key, side))
        codes, numbers = _codes(frame, col)
        number = numbers.get(want)
        match = codes == number if number is not None else np.zeros(len(frame), dtype=bool)
        keep = match if keep is None else keep & match
    return keep


def _rows(frame: pd.DataFrame, keep: np.ndarray | None, filters: dict[str, str]) -> pd.DataFrame:
    """``frame[keep]`` (the frame itself for no filter; :class:`NoRows` for none), one frame per set
    of rows while ``frame`` lives: a page's values, claims and ratios ask the same rows again and
    again (a third of a chapter's selections are new). Like the frame itself when nothing filters,
    the rows are handed to every caller that asks for them: read, never changed."""
    if keep is None:
        rows = frame
    else:
        kept = _entry(frame)[2]
        key = np.packbits(keep).tobytes()
        rows = kept.get(key)
        if rows is None:
            rows = kept[key] = frame[keep]
    if rows.empty:
        raise _no_rows(frame, filters)
    return rows


def _unknown(key: str, side: str) -> str:
    if side:
        return f"no column or parameter {key!r} in the results for {side}{key}= (one side's own filter)"
    if key in SIDES or key[:2] in SIDE_PREFIXES:  # left over: the statistic took no pair out of the options
        return f"{key}= names a side of two things compared (pair), and this selection compares nothing"
    return f"no column or parameter {key!r} in the results"


def _no_rows(frame: pd.DataFrame, filters: dict[str, str]) -> NoRows:
    where = f" in {frame['figure_id'].iloc[0]} on {frame['machine'].iloc[0]}" if len(frame) else ""
    return NoRows(f"no rows match {filters}{where}")


# A page asks hundreds of selections of the same few frames (a figure's samples on a machine, a
# table row's): each column a filter names is made text and numbered once per frame, and a value
# is then found by comparing numbers (comparing the text of every row each time was most of a
# chapter's prose values); each set of rows is taken once (``_rows``). Kept while the frame
# lives, by the frame itself (a frame is never changed once loaded); a frame made for one
# selection is numbered like any other.
_Coded = dict[str, tuple[np.ndarray, dict[str, int]]]
_CODED: dict[int, tuple[weakref.ref, _Coded, dict[bytes, pd.DataFrame]]] = {}


def _entry(frame: pd.DataFrame) -> tuple[weakref.ref, _Coded, dict[bytes, pd.DataFrame]]:
    entry = _CODED.get(id(frame))
    if entry is None or entry[0]() is not frame:
        entry = _CODED[id(frame)] = (weakref.ref(frame, functools.partial(_forget, id(frame))), {}, {})
    return entry


def _codes(frame: pd.DataFrame, col: str) -> tuple[np.ndarray, dict[str, int]]:
    """Each row's number for the text of its value in ``col`` (-1 for a missing value, which
    ``astype(str)`` leaves missing in a column of text), and the number of each text."""
    columns = _entry(frame)[1]
    if col not in columns:
        codes, texts = pd.factorize(frame[col].astype(str))
        columns[col] = (codes, {text: number for number, text in enumerate(texts.tolist())})
    return columns[col]


def _forget(key: int, ref: weakref.ref) -> None:
    if key in _CODED and _CODED[key][0] is ref:
        del _CODED[key]


class Pair(NamedTuple):
    """Two sides' rows within one selection (variant ``a``'s and ``b``'s, each narrowed by its own
    filters), paired run by run over the runs both have (``stats.paired_runs``): the figure's ratio
    a / b and its verdicts."""

    a: pd.DataFrame
    b: pd.DataFrame

    def run_medians(self) -> tuple[pd.Series, pd.Series]:
        return stats.run_medians(self.a), stats.run_medians(self.b)

    def ratio(self) -> stats.Summary:
        """Per-run ratio a / b over the runs both have."""
        return stats.summarize(stats.ratio_per_run(self.a, self.b))

    def verdict(self) -> stats.Verdict:
        """The paired rule (docs/verdicts.md) on the two variants' run medians, run by run."""
        return stats.paired_verdict(*self.run_medians())

    def equivalence(self, margin: float) -> stats.Equivalence:
        """The equivalence rule (docs/verdicts.md) at ``margin`` (a fraction), run by run."""
        return stats.paired_equivalence(*self.run_medians(), margin)

    def diff(self, per_window: bool = False) -> stats.Summary:
        """Per-run difference a - b per call (``per_window``: per timed window of a's calls)."""
        return stats.summarize(stats.diff_per_run(self.a, self.b, per_window=per_window))


def variants(opts: dict[str, str], fig: Figure) -> tuple[str, str]:
    """The two variants ``a=`` and ``b=`` name (taken out of ``opts``), else the figure's ratio."""
    a = opts.pop("a", fig.ratio[0] if fig.ratio else None)
    b = opts.pop("b", fig.ratio[1] if fig.ratio else None)
    if not (a and b):
        raise ValueError("needs a= and b= variants (the figure declares no ratio)")
    return a, b


SIDES = ("a", "b")
SIDE_PREFIXES = ("a.", "b.")


class Side(NamedTuple):
    """What picks one side of a pair within the common selection: its variant and its own filters
    (``a.devices=8`` -> ``{"devices": "8"}``)."""

    name: str  # "a" or "b"
    variant: str
    filters: dict[str, str]

    def __str__(self) -> str:
        return ", ".join([self.variant, *(f"{k}={v}" for k, v in self.filters.items())])


def sides(opts: dict[str, str], fig: Figure) -> tuple[Side, Side]:
    """Each side's variant (:func:`variants`) and own filters (``a.KEY=VALUE``, ``b.KEY=VALUE``),
    taken out of ``opts``: what is left filters both sides."""
    a, b = variants(opts, fig)
    own: dict[str, dict[str, str]] = {"a": {}, "b": {}}
    for key in [k for k in opts if k[:2] in SIDE_PREFIXES]:
        name = key[2:]
        if not name or name == "variant":
            raise ValueError(f"{key}= is not a side's filter (a side's variant is {key[0]}=; "
                             f"{key[0]}.KEY=VALUE filters its rows by dtype, boundary or a params key)")
        own[key[0]][name] = opts.pop(key)
    return Side("a", a, own["a"]), Side("b", b, own["b"])


def compared(opts: dict[str, str], fig: Figure) -> str:
    """What a pair with a side's own filters compared, for a value's tooltip ("" when neither side
    has any: two variants of one selection, as the statistic's name says): each side's selection."""
    if not any(k[:2] in SIDE_PREFIXES for k in opts):
        return ""
    rest = dict(opts)
    a, b = sides(rest, fig)
    rest.pop("margin", None)  # stat=same's, not a filter
    both = f" (both {', '.join(f'{k}={v}' for k, v in rest.items())})" if rest else ""
    return f"; a = {a} against b = {b}{both}"


def pair(frame: pd.DataFrame, opts: dict[str, str], fig: Figure) -> Pair:
    """Side ``a``'s rows and ``b``'s (:func:`sides`: a variant each, the figure's ratio unless named,
    narrowed by the side's own filters), within the selection the other options make
    (:func:`select`): the one place two things are picked to compare."""
    a, b = sides(opts, fig)
    keep = _matching(frame, opts)  # select(select(frame, opts), {"variant": a}), from one numbering
    if keep is not None and not keep.any():
        raise _no_rows(frame, opts)
    return Pair(_side_rows(frame, keep, a), _side_rows(frame, keep, b))


def _side_rows(frame: pd.DataFrame, keep: np.ndarray | None, side: Side) -> pd.DataFrame:
    """One side's rows: the common selection ``keep``, its variant, its own filters."""
    own = _matching(frame, side.filters, f"{side.name}.")
    wanted = {"variant": side.variant, **{f"{side.name}.{k}": v for k, v in side.filters.items()}}
    return _rows(frame, _both(_both(keep, _matching(frame, {"variant": side.variant})), own), wanted)


def _both(keep: np.ndarray | None, also: np.ndarray | None) -> np.ndarray | None:
    return keep if also is None else also if keep is None else keep & also


def median(frame: pd.DataFrame, opts: dict[str, str]) -> stats.Summary:
    return stats.summarize(stats.run_medians(select(frame, opts)))


def minimum(frame: pd.DataFrame, opts: dict[str, str]) -> stats.Summary:
    """Each run's fastest sample, over runs."""
    return stats.summarize(stats.run_minima(select(frame, opts)))


def mean(frame: pd.DataFrame, opts: dict[str, str]) -> stats.Summary:
    """Each run's mean time per call (a sample weighted by its calls), over runs."""
    return stats.summarize(stats.run_means(select(frame, opts)))


def rate(frame: pd.DataFrame, opts: dict[str, str]) -> stats.Summary:
    """Calls per second (the inverse of the time per call) of each run, over runs."""
    return stats.summarize(1.0 / stats.run_medians(select(frame, opts)))


def compiles(frame: pd.DataFrame, opts: dict[str, str]) -> stats.Summary:
    return stats.summarize(stats.run_medians(select(frame, opts), "compiles"))


def ratio(frame: pd.DataFrame, opts: dict[str, str], fig: Figure) -> stats.Summary:
    return pair(frame, opts, fig).ratio()


def diff(frame: pd.DataFrame, opts: dict[str, str], fig: Figure, per_window: bool = False) -> stats.Summary:
    return pair(frame, opts, fig).diff(per_window)


def verdict(frame: pd.DataFrame, opts: dict[str, str], fig: Figure) -> stats.Verdict:
    return pair(frame, opts, fig).verdict()


def equivalence(frame: pd.DataFrame, opts: dict[str, str], fig: Figure) -> stats.Equivalence:
    """The equivalence rule (docs/verdicts.md) on two variants' run medians, run by run; ``margin=``
    (a fraction) is required."""
    if "margin" not in opts:
        raise ValueError("stat=same needs margin= (a fraction: 0.05 for ±5 %)")
    try:
        margin = float(opts.pop("margin"))
    except ValueError:
        raise ValueError("margin= must be a number (a fraction: 0.05 for ±5 %)") from None
    return pair(frame, opts, fig).equivalence(margin)


def range_frac(frame: pd.DataFrame, opts: dict[str, str]) -> float:
    """(largest - smallest) / median of the run medians."""
    return median(frame, opts).range_frac


def within(frame: pd.DataFrame, opts: dict[str, str]) -> float:
    """The median over runs of each run's IQR / median."""
    found = stats.within_spread(select(frame, opts))
    if math.isnan(found):
        raise ValueError(f"stat=within needs at least {stats.MIN_WITHIN_SAMPLES} samples a run")
    return found


def metric(frame: pd.DataFrame, opts: dict[str, str], name: str) -> stats.Summary:
    """A quantity other than time (``metrics``) over runs. Rows of one variant (as a sentence's
    value mostly names them) take it by the table's own numbers (``metrics.by_variant``: numpy,
    where ``metrics.summary`` groups with pandas, several times slower a call): the same numbers to the
    bit, but for the sign of a zero median where a run's values mix 0.0 and -0.0 (then the table's)."""
    rows = select(frame, opts)
    variants = set(rows["variant"].tolist())
    found = (metrics.by_variant(rows, name)[variants.pop()] if len(variants) == 1
             else metrics.summary(rows, name))
    if found is None:
        raise ValueError(f"the selected rows carry no {name} data")
    return found


def error_ratio(frame: pd.DataFrame, opts: dict[str, str], fig: Figure) -> stats.Summary:
    """Per-run ratio of the two variants' errors, a / b, over the runs both have."""
    a, b = stats.paired_runs(*(metrics.get("error").per_run(x) for x in pair(frame, opts, fig)))
    if not a.size or (b == 0).any():
        raise ValueError("no runs where both variants have a non-zero error to divide by")
    return stats.summarize(a / b)


def runs(frame: pd.DataFrame, opts: dict[str, str]) -> int:
    return int((select(frame, opts) if opts else frame)["run"].nunique())


def field(frame: pd.DataFrame, opts: dict[str, str]) -> list[str]:
    """What a run was configured with, not what it measured: the distinct values of a params key
    (``key=n``) or of a results column (``key=platform``), in numeric order."""
    key = opts.pop("key", None)
    if not key:
        raise ValueError("stat=field needs key=<params key or column>")
    rows = select(frame, opts) if opts else frame
    col = f"p_{key}" if f"p_{key}" in rows else key
    if col not in rows:
        raise ValueError(f"no column or parameter {key!r} in the results")
    return sorted({str(v) for v in rows[col].dropna()}, key=sort_key)


def details(frame: pd.DataFrame, opts: dict[str, str]) -> list[str]:
    """The distinct ``detail`` texts of the selected rows, sorted."""
    texts = sorted({str(d) for d in select(frame, opts)["detail"] if d})
    if not texts:
        raise ValueError("the selected rows carry no detail text")
    return texts
