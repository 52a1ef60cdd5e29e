"""One figure on two machines (or in two sessions of one machine), cell by cell: the cells both
tables measured with the same parameters, each with its ratio of medians and whether the difference
is a result by the unpaired rule of docs/verdicts.md ("How a verdict is decided",
:func:`stats.unpaired_verdict`). Data only: ``views/compare.py`` writes them as a table (the site's and
the terminal's, so the two can never disagree).

Unless told that comparing machines is the point (``machines``; the /bench pages are), a difference
between tables whose provenance names different hardware, or cannot tell, is not a verdict.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pandas as pd

from benchsite.model import stats
from benchsite.model.catalog import Catalog
from benchsite.model.sessions import Session
from benchsite.model.table import Table

ONE_RUN = "not a result yet (one run)"
DIFFERENT_HARDWARE = "different hardware: not a verdict"
UNKNOWN_HARDWARE = "hardware not recorded: not a verdict"
# What "the same hardware" means: these provenance columns agree on both sides.
HARDWARE_COLUMNS = ("platform", "device_kind", "device_count", "cpu_vendor", "cpu_family",
                    "cpu_model_number", "cpu_count")
UNKNOWN = {"unknown", "", "nan", "None"}


def hardware_check(frame_a: pd.DataFrame, frame_b: pd.DataFrame) -> str | None:
    """None when both folders' provenance names the same hardware; else the refusal
    (DIFFERENT_HARDWARE, or UNKNOWN_HARDWARE when a column is missing or "unknown")."""
    unknown = False
    for col in HARDWARE_COLUMNS:
        if col not in frame_a or col not in frame_b:
            unknown = True
            continue
        va, vb = ({str(v) for v in f[col].unique()} for f in (frame_a, frame_b))
        if va & UNKNOWN or vb & UNKNOWN:
            unknown = True
        elif va != vb or len(va) > 1:
            return DIFFERENT_HARDWARE
    return UNKNOWN_HARDWARE if unknown else None


@dataclass(frozen=True)
class Cell:
    """One table cell of a figure, measured on machine a and machine b."""

    group: str  # the table row, e.g. "n=1024" ("" for a one-row figure)
    quantity: str  # a variant, or "a / b" for the figure's ratio column
    a: stats.Summary
    b: stats.Summary
    is_ratio: bool = False
    refused: str | None = None  # why no verdict may be given (different hardware), else None

    @property
    def ratio(self) -> float:
        """Median on a over median on b."""
        return self.a.median / self.b.median

    @functools.cached_property  # the count, the table and the page all ask for it
    def decision(self) -> stats.Verdict:
        if self.refused:
            return stats.Verdict(self.refused, "the two folders' provenance does not name the same hardware "
                                 f"({', '.join(HARDWARE_COLUMNS)}); pass --machines to compare machines")
        return cross_verdict(self.a, self.b)

    @property
    def verdict(self) -> str:
        return self.decision.text


def cross_verdict(a: stats.Summary, b: stats.Summary) -> stats.Verdict:
    """stats.unpaired_verdict on the two sides' run values, except that a single
    run on either side has no spread to compare with, so it decides nothing."""
    if min(a.runs, b.runs) < 2:
        return stats.Verdict(ONE_RUN, "one run has no run-to-run spread to compare with",
                             runs=min(a.runs, b.runs))
    return stats.unpaired_verdict(a, b)


def table_cells(a: Table, b: Table, machines: bool = False) -> list[Cell]:
    """The cells both tables measured with the same parameters (``Table.comparable``), in a's
    table order: a size picked per platform or per cache size makes the cell a different
    workload, left out rather than compared.

    Without ``machines``, a difference in hardware (:func:`hardware_check`) makes
    every cell's verdict a refusal: comparing machines must be asked for."""
    refused = None if machines else hardware_check(a.frame, b.frame)
    qa, qb = a.quantities, b.quantities
    same = [key for key in qa if (key, a.workloads[key]) in b.comparable]
    return [Cell(g, q, qa[(g, q)][0], qb[(g, q)][0], qa[(g, q)][1], refused) for g, q in same]


def of_machines(cat: Catalog, fig_id: str, machine: str, ref: str) -> list[Cell]:
    """Every cell of ``machine`` against the reference ``ref`` (its machine page's comparison, and the
    count of results in the figure's machines table), each decided, once per build and kept under the
    build cache by both results files' digests and today's code hashes (``Catalog.pair_key``)."""
    def made() -> list[Cell]:
        # machines=True: these pages compare machines on purpose, so different hardware is the point
        found = table_cells(cat.table(fig_id, machine), cat.table(fig_id, ref), machines=True)
        for cell in found:
            cell.decision  # noqa: B018 - decided here, once, and stored with the cell (a cached property)
        return found

    memo = ("cells", fig_id, machine, ref)
    found = cat.derived.get(memo)
    if found is None:
        key = cat.pair_key(fig_id, machine, ref)  # both results files by digest, today's code hashes
        found = cat.derived[memo] = cat.stored("cells", key, made)
    return found


def of_sessions(cat: Catalog, old: Session, new: Session) -> list[Cell]:
    """Every cell of session ``new`` against the earlier ``old`` of one figure on one machine (runs of
    two sessions are not paired: the unpaired rule), each decided, once per build and kept under the
    build cache by the two sessions' digests (what each was made from)."""
    def made() -> list[Cell]:
        found = table_cells(new.table, old.table, machines=True)
        for cell in found:
            cell.decision  # noqa: B018 - decided here, once, and stored with the cell (a cached property)
        return found

    memo = ("session-cells", old.fig_id, old.machine, old.id, new.id)
    found = cat.derived.get(memo)
    if found is None:
        found = cat.derived[memo] = cat.stored("session-cells", (old.digest, new.digest), made)
    return found
