"""The table model: one figure on one machine, computed once, read by every view.

Everything the site says about a (figure, machine) pair is derived here from its
validated samples, once per build (``Catalog.table`` caches it): the table's rows
in order, each cell's per-run values and median [min..max], the ratio column,
the paired verdict per row, the spread per variant, the stale reason and the
headline. The chapter panel, the /bench pages, the comparison, ``make compare``
and the claims only select from it and format. A sentence's value
(``benchsite/model/quotes.py``) may name a finer selection of the table's samples than a
row (a dtype, a boundary, any param) and takes it by the same rules (``stats``).

(One results file holds one session today; a file with several sessions is one
table, and the provenance lists every session.)
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from benchsite.model import metrics, stats
from benchsite.model.figures import Figure
from benchsite.model.headline import Headline, choose_headline
from benchsite.model.staleness import CodeHash, stale_reason


def sort_key(value: object) -> tuple:
    """Numbers in numeric order, then text: ``n=8`` before ``n=16``."""
    try:
        return (0, float(value), "")  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def distinct_texts(column: pd.Series) -> set[str]:
    """The distinct values of a column as text, empty cells left out: what a provenance line lists.
    (A set of the column's values: several times quicker than ``unique()`` on a column of text.)"""
    return {str(v) for v in set(column.tolist()) if not pd.isna(v)}


def run_days(frame: pd.DataFrame) -> str:
    """The days its runs started (UTC): ``2026-12-01``, or ``2026-12-01 … 2026-12-02``."""
    days = sorted({str(t)[:10] for t in set(frame["timestamp_utc"].tolist())})
    return days[0] if len(days) == 1 else f"{days[0]} … {days[-1]}"


def groups(frame: pd.DataFrame, fig: Figure) -> Iterator[tuple[str, pd.DataFrame]]:
    """(label, rows) per table row, in numeric order of the group_by params."""
    labels, _, rows, bounds = split(frame, fig)
    if not fig.group_by:
        yield "", rows
        return
    for label, start, end in zip(labels, bounds[:-1].tolist(), bounds[1:].tolist()):
        yield label, rows.iloc[start:end]


def split(frame: pd.DataFrame, fig: Figure) -> tuple[list[str], list[dict[str, str]], pd.DataFrame, np.ndarray]:
    """The table's rows at once: their labels and params, the frame's samples row after row (those
    with every group_by param; each row's in the frame's order) and where each row starts (and the
    last ends). A row is one value of the group_by params, as pandas' groupby makes them (a missing
    value is no row's), in numeric order of the params (:func:`sort_key`), else as first seen."""
    cols = [f"p_{k}" for k in fig.group_by]
    if not cols:
        return [""], [{}], frame, np.array([0, len(frame)])
    missing = [c for c in cols if c not in frame]
    if missing:
        raise ValueError(f"{fig.id}: results have no params {', '.join(c[2:] for c in missing)}")
    coded = [pd.factorize(frame[col], sort=False, use_na_sentinel=True) for col in cols]
    at = np.flatnonzero(np.logical_and.reduce([codes >= 0 for codes, _ in coded]))  # no param missing
    group = coded[0][0][at]  # each sample's combination of params, numbered as first seen
    for codes, found in coded[1:]:
        group = pd.factorize(group.astype(np.int64) * len(found) + codes[at], sort=False)[0]
    first = np.unique(group, return_index=True)[1]  # each combination's first sample
    keys = [tuple(found[codes[at[i]]] for codes, found in coded) for i in first.tolist()]
    order = sorted(range(len(keys)), key=lambda g: [sort_key(v) for v in keys[g]])
    rank = np.empty(len(keys), dtype=np.intp)
    rank[order] = np.arange(len(keys))
    row = rank[group]
    bounds = np.r_[0, np.cumsum(np.bincount(row, minlength=len(keys)))]
    labels = [", ".join(f"{k}={v}" for k, v in zip(fig.group_by, keys[g])) for g in order]
    params = [{k: str(v) for k, v in zip(fig.group_by, keys[g])} for g in order]
    in_order = at.size == len(frame) and bool((row[1:] >= row[:-1]).all())  # a session's frame often is
    return labels, params, frame if in_order else frame.take(at[np.argsort(row, kind="stable")]), bounds


@dataclass(frozen=True)
class Row:
    """One row of a figure's table: one value of the group_by params."""

    label: str  # "n=1024"; "" for a one-row figure
    params: dict[str, str]  # the group_by values of this row
    samples: pd.DataFrame  # every sample of the row, all variants
    run_medians: dict[str, pd.Series]  # variant -> median time per run (variants present only)
    cells: dict[str, stats.Summary]  # variant -> median [min..max] of the run medians
    ratio: stats.Summary | None  # the figure's ratio a / b: of the per-run ratios
    verdict: stats.Verdict | None  # the paired rule on the ratio pair, run by run

    def metric(self, name: str) -> dict[str, stats.Summary | None]:
        """variant -> median [min..max] over runs of another quantity (metrics.py)."""
        return metrics.by_variant(self.samples, name)

    # A row is pickled into the build cache with every table model and session (``Catalog.table``,
    # ``sessions.history``) and read back by every page job that shows it. Its run medians go as
    # their arrays and names and are made Series again on reading, as ``stats.per_run_median``
    # makes them: pandas' own unpickling of a Series and its index took about twice as long.
    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["run_medians"] = {v: (s.to_numpy(), s.index.to_numpy(), s.index.name, s.name)
                                for v, s in self.run_medians.items()}
        return state

    def __setstate__(self, state: dict) -> None:
        state["run_medians"] = {v: pd.Series(values, index=pd.Index(runs, name=index_name), name=name)
                                for v, (values, runs, index_name, name) in state["run_medians"].items()}
        self.__dict__.update(state)


@dataclass(frozen=True)
class Spread:
    """Run-to-run and within-run spread of one variant across the table's rows."""

    variant: str
    runs: int
    between: tuple[float, ...]  # per row: (max - min) / median of the run medians
    within: tuple[float, ...]  # per row: median over runs of IQR / median
    noise: str  # stats.noise_label of the noisiest row


def _rows(timed: pd.DataFrame, fig: Figure) -> tuple[tuple[Row, ...], list[dict[str, float]]]:
    """The table's rows and, per row, each variant's within-run spread (``stats.within_spreads``):
    every (row, variant, run)'s median and spread in one pass over the table (``stats.cell_runs``)."""
    labels, params, samples, bounds = split(timed, fig)
    position: dict[str, int] = {}  # each variant's column, in the figure's order
    for v in fig.variants:
        position.setdefault(v, len(position))
    variants = list(position)
    codes, found = pd.factorize(samples["variant"].to_numpy())
    column = np.array([position[v] for v in found.tolist()], dtype=np.intp)[codes]
    row_of = np.repeat(np.arange(len(labels)), np.diff(bounds))
    cells, runs, medians, fracs = stats.cell_runs(row_of * len(variants) + column, samples["run"].to_numpy(),
                                                  samples["time_s"].to_numpy(dtype=float))
    every = pd.Series(medians, index=pd.Index(runs, name="run"), name="time_s")  # each cell's a slice of it
    per_run: list[dict[str, pd.Series]] = [{} for _ in labels]
    cells_of: list[dict[str, stats.Summary]] = [{} for _ in labels]
    within: list[dict[str, float]] = [{} for _ in labels]
    starts = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]]) if cells.size else cells
    for cell, start, end in zip(cells[starts].tolist(), starts.tolist(), [*starts[1:].tolist(), cells.size]):
        row, variant = divmod(cell, len(variants))
        per_run[row][variants[variant]] = every.iloc[start:end]
        cells_of[row][variants[variant]] = stats.summarize(medians[start:end])
        within[row][variants[variant]] = stats.median_over_runs(fracs[start:end].tolist())
    parts = [samples] if not fig.group_by else [samples.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    return tuple(_row(*made, fig) for made in zip(labels, params, parts, per_run, cells_of)), within


def _row(label: str, params: dict[str, str], samples: pd.DataFrame, per_run: dict[str, pd.Series],
         cells: dict[str, stats.Summary], fig: Figure) -> Row:
    ratio, verdict = None, None
    if fig.ratio and all(v in per_run for v in fig.ratio):
        paired_a, paired_b = stats.paired_runs(per_run[fig.ratio[0]], per_run[fig.ratio[1]])
        if paired_a.size:
            ratio = stats.summarize(paired_a / paired_b)
        verdict = stats.paired_verdict(paired_a, paired_b) if fig.ratio_verdict else None
    return Row(label, params, samples, per_run, cells, ratio, verdict)


def _spreads(rows: tuple[Row, ...], within_by_row: list[dict[str, float]], fig: Figure) -> tuple[Spread, ...]:
    out = []
    for variant in fig.variants:
        having = [(r, w) for r, w in zip(rows, within_by_row) if variant in r.cells]
        if not having:
            continue
        within = tuple(w[variant] for _, w in having)
        runs = len(set().union(*(r.run_medians[variant].index for r, _ in having)))
        out.append(Spread(variant, runs, tuple(r.cells[variant].range_frac for r, _ in having), within,
                          stats.noise_label(max((w for w in within if w == w), default=math.nan))))
    return tuple(out)


@dataclass(frozen=True)
class Table:
    """One figure on one machine: see the module docstring."""

    fig: Figure
    machine: str
    frame: pd.DataFrame  # every validated sample, params parsed into p_<key> columns
    rows: tuple[Row, ...]  # the figure's variants only, in table order
    spreads: tuple[Spread, ...]
    stale: str  # why the results no longer describe today's code ("" when they do)
    headline: Headline | None

    @classmethod
    def of(cls, frame: pd.DataFrame, fig: Figure, current: CodeHash | None = None) -> Table:
        """The table of ``frame``; ``current`` (today's code hashes) decides staleness."""
        timed = frame["variant"].isin(fig.variants)  # rows of other variants feed markers only
        timed = frame if timed.all() else frame[timed]
        rows, within = _rows(timed, fig)
        machine = str(frame["machine"].iloc[0])
        return cls(fig, machine, frame, rows, _spreads(rows, within, fig),
                   stale_reason(frame, current) if current else "", choose_headline(rows, fig))

    def detached(self) -> Table:
        """This table without its samples (each row keeps its rows' index): what the build cache
        stores, since the catalog has the frame already; :meth:`attached` puts them back."""
        return dataclasses.replace(self, frame=None, rows=tuple(
            dataclasses.replace(r, samples=r.samples.index.to_numpy()) for r in self.rows))

    def attached(self, frame: pd.DataFrame) -> Table:
        """The table with its samples put back from ``frame``, each row's by its index: taken by
        position where the frame's index is its positions (a loaded file's), else looked up."""
        index = frame.index
        by_position = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
        select = frame.take if by_position else frame.loc.__getitem__
        return dataclasses.replace(self, frame=frame, rows=tuple(
            dataclasses.replace(r, samples=select(r.samples)) for r in self.rows))

    def metric(self, name: str) -> tuple[dict[str, stats.Summary | None], ...]:
        """Per row, in order: ``Row.metric(name)`` of every row, from one groupby (a table of
        another quantity asks it of each row), made once per table."""
        made = self.__dict__.setdefault("_metric", {})  # not a field: replace() and detached() drop it
        if name not in made:
            made[name] = tuple(metrics.by_row_and_variant([r.samples for r in self.rows], name))
        return made[name]

    def texts(self, columns: Iterable[str]) -> dict[str, set[str]]:
        """The distinct values of each of ``columns`` as text (:func:`distinct_texts`), asked at once:
        what a panel's meta line and provenance list."""
        return {col: distinct_texts(self.frame[col]) for col in columns}

    def same(self, margin: float) -> tuple[stats.Equivalence | None, ...]:
        """Per row, in order: the equivalence rule on the ratio pair's run medians, run by run, at
        ``margin`` (None where the row lacks one of the pair): "the same within ±margin" or not."""
        pair = self.fig.ratio
        return tuple(stats.paired_equivalence(r.run_medians[pair[0]], r.run_medians[pair[1]], margin)
                     if pair and all(v in r.run_medians for v in pair) else None for r in self.rows)

    @functools.cached_property
    def variants(self) -> tuple[str, ...]:
        """The figure's variants measured on this machine, in the figure's order: what its table
        and chart show (a script may measure some only on some platforms, as fig-machine-peak
        measures 16-bit types only on accelerators); all of them when none was."""
        measured = tuple(v for v in self.fig.variants if any(v in r.cells for r in self.rows))
        return measured or tuple(self.fig.variants)

    @property
    def unmeasured(self) -> tuple[str, ...]:
        """The figure's variants this machine has no sample of."""
        return tuple(v for v in self.fig.variants if v not in self.variants)

    @property
    def runs(self) -> int:
        return int(self.frame["run"].nunique())

    @functools.cached_property
    def quantities(self) -> dict[tuple[str, str], tuple[stats.Summary, bool]]:
        """(row label, variant or "a / b") -> (summary, is_ratio): every cell, for comparisons."""
        out: dict[tuple[str, str], tuple[stats.Summary, bool]] = {}
        for row in self.rows:
            out.update({(row.label, v): (s, False) for v, s in row.cells.items()})
            if row.ratio and self.fig.ratio:
                out[(row.label, f"{self.fig.ratio[0]} / {self.fig.ratio[1]}")] = (row.ratio, True)
        return out

    @functools.cached_property
    def comparable(self) -> frozenset[tuple[tuple[str, str], frozenset[str]]]:
        """Each cell as another machine's table must match it to be compared with it: its key in
        :attr:`quantities` with its workload (:attr:`workloads`), since the same row may hold another
        size there (``cells.table_cells``; what the site counts of the comparisons, ``Summary.cells``)."""
        return frozenset((key, self.workloads[key]) for key in self.quantities)

    @functools.cached_property
    def workloads(self) -> dict[tuple[str, str], frozenset[str]]:
        """(row label, variant or "a / b") -> every full ``params`` text behind that cell. Two
        machines' cells are the same workload only when these agree: a row is keyed by the
        figure's group_by params alone, and the other params (a size picked per platform or
        per cache size) may differ."""
        out: dict[tuple[str, str], frozenset[str]] = {}
        for row in self.rows:
            by_variant: dict[str, set[str]] = {}  # one pass over the row's distinct (variant, params)
            for variant, params in set(zip(row.samples["variant"].tolist(), row.samples["params"].tolist())):
                by_variant.setdefault(variant, set()).add("" if pd.isna(params) else str(params))
            out.update({(row.label, v): frozenset(by_variant.get(v, ())) for v in row.cells})
            if row.ratio and self.fig.ratio:
                out[(row.label, f"{self.fig.ratio[0]} / {self.fig.ratio[1]}")] = frozenset().union(
                    *(by_variant.get(v, frozenset()) for v in self.fig.ratio))
        return out
