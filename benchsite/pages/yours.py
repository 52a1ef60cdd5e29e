"""The page for after ``make bench`` (``<!-- bench:yours -->`` on docs/your-machine.md): the machine
measured here against the site's reference machine, how healthy the session was, and which of
the site's claims did not hold here.

Everything is read from the table models (``Catalog.table``) and the comparison cells the /bench
machine pages use (``cells.of_machines``); the claims come from ``claimcheck``, the same
evaluation ``make claims`` prints. Health is what the results record per run: the other work on
the machine while the run measured (``other_load``, schema 4: other processes' CPU time over the
run's measuring, over ``cpu_count``; older results: the load average when the run's process
started less the session's own process, ``load_avg_1m``), the run-to-run range of
each cell, and the runs whose cells lie, at their median, far from the other runs' in several
figures at once (a session-wide disturbance: round r of every figure runs one after the other).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from benchsite.core import urls
from benchsite.model import cells, stats
from benchsite.model.catalog import Catalog, Unavailable
from benchsite.pages import claimcheck
from benchsite.views.html import render as template

OUTLYING_RUN = 1.5  # a run whose cells sit, at their median, this far (either way) from the other runs
# The session itself keeps about one process busy, so the load average at a run's start less one is
# the other work on the machine; spread over the cores, above half a core each, it shared the machine
# (the 2-core reference: 0.29 at the median).
NOISY_LOAD = 0.5
NOISY_RUNS = 0.25  # a run outlying in this share of the figures or more: a session-wide disturbance


@dataclass(frozen=True)
class Health:
    figures: int
    load_median: float  # other work at a run's start: the load average less the session's own process, per core
    load_max: float
    widest: tuple[str, float]  # the figure and cell range (max - min over the median) that is widest
    outlying: dict[int, list[str]]  # run index -> the figures where that run's medians lay far out
    during: bool = False  # the load was measured over the runs (other_load), not read at their start

    @property
    def noisy(self) -> bool:
        return self.load_median > NOISY_LOAD or bool(self.disturbed)

    @property
    def disturbed(self) -> dict[int, list[str]]:
        """The runs outlying in so many figures that the whole machine was disturbed then."""
        return {run: figs for run, figs in self.outlying.items() if len(figs) >= NOISY_RUNS * self.figures}


@dataclass(frozen=True)
class Measured:
    """What the page shows of one machine, gathered in one pass over its figures' table models."""
    machine: str
    ref: str | None  # the reference machine, where it has results
    health: Health | None  # None when it has no valid results, or one of them cannot be tabulated
    rows: list[dict]  # per figure both machines measured: its comparison with the reference


def health(cat: Catalog, machine: str) -> Health | None:
    """How quiet the machine was while it measured: None when it has no valid results."""
    return measured(cat, machine).health


def comparisons(cat: Catalog, machine: str, ref: str) -> list[dict]:
    """Per figure both machines measured: how many cells the unpaired rule calls a result, each way."""
    return measured(cat, machine, ref).rows


def local_run(cat: Catalog) -> Measured | None:
    """:func:`measured` of the machine a local ``make bench`` measured, against the reference machine
    where it has results; None when this build has no local run."""
    return measured(cat, cat.preferred, cat.declared, local=True)


def measured(cat: Catalog, machine: str | None, ref: str | None = None, local: bool = False) -> Measured | None:
    """The machine's health (how quiet it was while it measured) and, with ``ref``, per figure both
    machines measured how many cells the unpaired rule calls a result each way, read from the table
    models and comparison cells the /bench machine pages use, once per figure. With ``local``, None
    unless ``machine`` was measured here and has results."""
    if local and (cat.role(machine or "") != "measured here" or machine not in cat.all_machines()):
        return None
    ref = ref if ref in cat.all_machines() else None
    loads, widest, outlying, figures, during, rows, tabulated = [], ("", 0.0), {}, 0, [], [], True
    for fig_id in sorted(cat.figures):
        if (fig_id, machine) not in cat.frames:
            continue
        compared = ref is not None and (fig_id, ref) in cat.frames
        try:
            tab = cat.table(fig_id, machine)
        except Unavailable:
            if compared:
                raise  # a comparison needs it
            tabulated = False  # no health then, as when its table is asked for on its own
            continue
        if compared:
            # Time cells only: a ratio row (first call / steady, completed / dispatch) going down is not
            # this machine being faster, and its verdicts stay on the figure's own comparison.
            found = [c for c in cells.of_machines(cat, fig_id, machine, ref) if not c.is_ratio]
            decided = [c for c in found if c.verdict == stats.RESULT]
            rows.append({"fig": fig_id, "cells": len(found), "faster": sum(c.ratio < 1 for c in decided),
                         "slower": sum(c.ratio > 1 for c in decided), "open": len(found) - len(decided),
                         "page": urls.machine_src(fig_id, machine)})
        figures += 1
        per_run = tab.frame.groupby("run").first()
        cores = per_run["cpu_count"].astype(float).replace(0, np.nan)
        measured_load = per_run["other_load"].astype(float) if "other_load" in per_run else None
        if measured_load is not None and measured_load.notna().all():  # schema 4: measured over the run
            if not (per_run["process_count"] > 1).any():  # a run's own peer processes count as other work
                loads.extend((measured_load / cores).dropna().tolist())
            during.append(True)
        else:
            loads.extend(((per_run["load_avg_1m"].astype(float) - 1).clip(lower=0) / cores).dropna().tolist())
            during.append(False)
        off: dict[int, list[float]] = {}  # run -> its median over each cell's median of runs, per cell
        for row in tab.rows:
            for variant, summary in row.cells.items():
                if summary.range_frac > widest[1]:
                    widest = (f"{fig_id} {variant}{' at ' + row.label if row.label else ''}", summary.range_frac)
                runs = row.run_medians[variant].dropna()
                centre = float(runs.median())
                for run, value in runs.items():
                    if centre > 0 and value > 0:
                        off.setdefault(int(run), []).append(value / centre)
        for run, ratios in off.items():  # the run as a whole, not one noisy cell of it
            typical = float(np.median(ratios))
            if max(typical, 1 / typical) > OUTLYING_RUN:
                outlying.setdefault(run, []).append(fig_id)
    well = (Health(figures, float(np.median(loads)) if loads else float("nan"), max(loads, default=float("nan")),
                   widest, outlying, during=all(during)) if figures and tabulated else None)
    return Measured(machine, ref, well, rows)


HEADING = re.compile(r"^@@HEADING (\S+) (.+)@@$", re.M)


def section(ctx) -> str:
    """The page's body: what a local run measured, against the reference, or how to get one; its
    section headings are Markdown (so the page's table of contents lists them), the rest HTML."""
    html = _section(ctx)
    return HEADING.sub(lambda m: f"\n## {m.group(2)} {{ #{m.group(1)} }}\n", html)


def _section(ctx) -> str:
    cat: Catalog = ctx.catalog
    found = local_run(cat)
    if found is None:
        return str(template("yours.html", here=None, ref=cat.declared, run=ctx.link("run-it-yourself/")))
    written = list(claimcheck.found_claims(ctx.docs, claimcheck.scripts(cat)))
    checked = claimcheck.check(cat, found.machine, written)
    bad = [c for c in checked if c.state in ("false", "unavailable")]
    rows = [dict(row, link=ctx.link(urls.machine_path(row["fig"], found.machine)) + "#compared") for row in found.rows]
    return str(template("yours.html", here=found.machine, ref=cat.declared, rows=rows, health=found.health,
                        claims=bad, checked=len(checked), run=ctx.link("run-it-yourself/"),
                        noisy_load=NOISY_LOAD, noisy_runs=NOISY_RUNS, outlying=OUTLYING_RUN))
