"""What the verdict rules stand on, read from the results: the run-to-run noise the simulation of
docs/verdicts.md uses, and how many verdicts the site shows.

The model (:func:`stats.simulate_error_rates`) has two noise terms: a drift shared by every variant
of a run and each variant's own noise. Both are read from one machine's results
(:func:`stats.noise_from_runs`): the SD of each cell's log run medians and the SD of each ratio
pair's per-run log ratios, the median over cells and pairs. The verdicts page renders the error
rates with them at build time; ``python -m benchsite.model.noise [--results DIR] [--machine LABEL]``
prints them for any folder.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchsite.model import stats
from benchsite.model.catalog import Catalog, Unavailable, results_dir


@dataclass(frozen=True)
class Noise:
    machine: str
    run_sd: float  # each variant's own noise: SD of log run medians
    drift_sd: float  # the per-run drift every variant of a run shares
    cells: int  # cells (row x variant, at least PAIRED_MIN_RUNS runs) the total spread came from
    pairs: int  # ratio pairs (rows) the own noise came from

    @property
    def spread(self) -> float:
        return stats.sim_spread(self.run_sd, self.drift_sd)


def noise_machine(cat: Catalog) -> str | None:
    """Whose results set the noise: the machine the prose quotes (a local ``make bench``, else the
    declared reference), else the first machine with any results."""
    have = {m for _, m in cat.frames}
    for machine in (cat.preferred, cat.declared, *sorted(have)):
        if machine in have:
            return machine
    return None


def measured(cat: Catalog, machine: str) -> Noise:
    """The simulation's noise from every figure of ``machine`` (ValueError: too few runs)."""
    cells: list[np.ndarray] = []
    pairs: list[tuple[np.ndarray, np.ndarray]] = []
    for fig_id in sorted(cat.figures):
        if cat.problem(fig_id, machine):
            continue
        try:
            tab = cat.table(fig_id, machine)
        except Unavailable:
            continue
        for row in tab.rows:
            cells += [m.dropna().to_numpy() for m in row.run_medians.values()]
            if tab.fig.ratio and all(v in row.run_medians for v in tab.fig.ratio):
                a, b = stats.paired_runs(*(row.run_medians[v] for v in tab.fig.ratio))
                keep = (a > 0) & (b > 0)
                pairs.append((a[keep], b[keep]))
    cells = [c[c > 0] for c in cells]
    run_sd, drift_sd = stats.noise_from_runs(cells, pairs)
    return Noise(machine, run_sd, drift_sd, sum(len(c) >= stats.PAIRED_MIN_RUNS for c in cells),
                 sum(len(a) >= stats.PAIRED_MIN_RUNS for a, _ in pairs))


@dataclass(frozen=True)
class Shown:
    """How many verdicts the figure panels and /bench comparisons show (latest sessions)."""

    paired: int  # a paired verdict on a table row (every machine's panel, chapters and /bench)
    unpaired: int  # a cell compared with the reference machine on a /bench page
    machines: int


def shown(cat: Catalog) -> Shown:
    paired = unpaired = 0
    machines = set()
    for fig_id in sorted(cat.figures):
        ref = cat.reference(fig_id)
        for machine in cat.good_machines(fig_id):
            try:
                tab = cat.table(fig_id, machine)
            except Unavailable:
                continue
            machines.add(machine)
            paired += sum(r.verdict is not None for r in tab.rows)
            if ref and machine != ref:
                try:
                    unpaired += len(set(tab.quantities) & set(cat.table(fig_id, ref).quantities))
                except Unavailable:
                    continue
    return Shown(paired, unpaired, len(machines))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="The verdict simulation's noise, read from a results folder.")
    p.add_argument("--results", type=Path, default=None, help="results folder (default: the site's)")
    p.add_argument("--machine", default=None, help="machine label (default: the one the prose quotes)")
    args = p.parse_args(argv)
    cat = Catalog.build(results_dir(str(args.results) if args.results else None))
    machine = args.machine or noise_machine(cat)
    if machine is None:
        print("no results", file=sys.stderr)
        return 2
    noise = measured(cat, machine)
    print(f"{machine}: run_sd {noise.run_sd:.4f}, drift_sd {noise.drift_sd:.4f}, spread {noise.spread:.4f} "
          f"(SD of log run medians; {noise.cells} cells, {noise.pairs} ratio pairs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
