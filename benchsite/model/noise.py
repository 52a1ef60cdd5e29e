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
import functools
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchsite.model import calibration, stats
from benchsite.model.catalog import Catalog, Summary, Unavailable, results_dir
from benchsite.model.table import Table


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
    return noise_of(machine, cat.tables(machine))


def noise_of(machine: str, tables: list[Table]) -> Noise:
    """:func:`measured` of the tables of one machine."""
    cells: list[np.ndarray] = []
    pairs: list[tuple[np.ndarray, np.ndarray]] = []
    for tab in tables:
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
    """How many verdicts the site shows, counted from each pair's summary (``Catalog.site_facts``: kept
    under the build cache, made in the pairs' warming step and read by the build before any page),
    never from its table: a hundred machine folders make thousands of tables, and the count needs a
    few numbers of each."""
    facts = cat.site_facts()
    return shown_of(facts.refs, facts.summaries)


def shown_of(refs: dict[str, str | None], summaries: dict[tuple[str, str], Summary]) -> Shown:
    """:func:`shown` of the summaries of every (figure, machine) table that can be made and each
    figure's reference machine: a row's paired verdict on every machine's panel, and each cell a
    machine shares with its figure's reference machine on a /bench comparison."""
    paired = unpaired = 0
    for (fig_id, machine), found in summaries.items():
        paired += found.verdicts
        ref = summaries.get((fig_id, refs.get(fig_id)))
        if ref is not None and refs.get(fig_id) != machine:
            unpaired += len(found.cells & ref.cells)
    return Shown(paired, unpaired, len({machine for _, machine in summaries}))


# --- what the verdict markers show: plain data, rendered by views/verdict_rates.py -----------------

@dataclass(frozen=True)
class SimNoise:
    """The noise a simulation of the verdict rules runs at: the model's (``stats.SIM_*``), or the one
    :func:`measured` on ``machine`` (None for the model's), times a scale."""

    run_sd: float
    drift_sd: float
    spread: float  # stats.sim_spread of the two
    machine: str | None = None
    cells: int = 0
    pairs: int = 0


def sim_noise(cat: Catalog, kind: str = "model", scale: float = 1.0) -> SimNoise:
    """``kind`` "model" (stats.SIM_*) or "measured" (on :func:`noise_machine`, measured once per
    build), times ``scale``; ValueError for another kind, :class:`Unavailable` with no results."""
    if kind == "model":
        run_sd, drift_sd = stats.SIM_RUN_SD * scale, stats.SIM_DRIFT_SD * scale
        return SimNoise(run_sd, drift_sd, stats.sim_spread(run_sd, drift_sd))
    if kind != "measured":
        raise ValueError(f"noise= is model or measured, not {kind!r}")
    machine = noise_machine(cat)
    if machine is None:
        raise Unavailable(f"no results in {cat.results} to measure the noise from")
    found = cat.derived.get(("noise", machine))
    if found is None:  # once per build: the tables of the machine, then their noise
        found = cat.derived[("noise", machine)] = noise_of(machine, cat.tables(machine))
    run_sd, drift_sd = found.run_sd * scale, found.drift_sd * scale
    return SimNoise(run_sd, drift_sd, stats.sim_spread(run_sd, drift_sd), machine, found.cells, found.pairs)


@functools.lru_cache(maxsize=16)
def simulated(rule: str, run_sd: float, drift_sd: float) -> tuple:
    """The seeded simulation of a rule at this noise (``"differ"``: stats.simulate_error_rates,
    ``"same"``: stats.simulate_equivalence_rates), run once per process however many markers show it."""
    simulate = stats.simulate_equivalence_rates if rule == "same" else stats.simulate_error_rates
    return tuple(simulate(run_sd=run_sd, drift_sd=drift_sd))


@dataclass(frozen=True)
class Rates:
    """A simulation of one verdict rule (``differ`` or ``same``) at one noise: its rate records."""

    rule: str
    noise: SimNoise
    rates: tuple


def verdict_rates(cat: Catalog, rule: str = "differ", kind: str = "model", scale: float = 1.0) -> Rates:
    found = sim_noise(cat, kind, scale)
    return Rates(rule, found, simulated(rule, found.run_sd, found.drift_sd))


COUNTS = ("paired", "quoted", "unpaired", "machines", "paired-false", "unpaired-false")


@dataclass(frozen=True)
class Count:
    """One count of :data:`COUNTS`: how many (verdicts, or machines); for a ``-false`` count, how many
    verdicts the rule gave, its simulated false-positive rate at R = ``runs`` and the noise it ran at."""

    what: str
    count: int
    rate: float = float("nan")
    runs: int = 0
    noise: SimNoise | None = None


def verdict_count(cat: Catalog, what: str, quoted: int, runs: int) -> Count:
    """``what`` of :data:`COUNTS` (ValueError for another): the verdicts the figure panels (paired),
    the prose (``quoted``, counted by the caller in the pages) and the /bench comparisons with the
    reference (unpaired) show, on how many machines; or the false results that the simulated
    false-positive rate at the measured noise and ``runs`` implies if no difference were real
    (paired-false: over the panels' and the prose's verdicts together)."""
    if what not in COUNTS:
        raise ValueError("needs what=paired, quoted, unpaired, machines, paired-false or unpaired-false")
    rule = what.removesuffix("-false") if what.endswith("-false") else None
    counts = shown(cat)  # every pair's summary first: a pair that cannot be tabulated leaves the frames
    plain = {"paired": counts.paired, "quoted": quoted, "unpaired": counts.unpaired, "machines": counts.machines}
    if rule is None:
        return Count(what, plain[what])
    found = sim_noise(cat, "measured")  # after the summaries: the machine is chosen among the pairs left
    rate = next(r.rate for r in simulated("differ", found.run_sd, found.drift_sd)  # the table's
                if r.rule == rule and r.runs == runs and r.shift == 0)
    return Count(what, plain["paired"] + quoted if rule == "paired" else plain["unpaired"], rate, runs, found)


@dataclass(frozen=True)
class AARule:
    """One verdict rule on a figure's A/A pairs (``calibration``): its wrong calls and the rates."""

    name: str
    false_call: str
    pairs: int
    wrong: tuple[str, ...]  # the labels of the pairs it called wrongly
    rate: float
    interval: tuple[float, float]
    at_site: float  # simulated at the site's noise (stats.SIM_*)
    here: float  # simulated at the noise the pairs show


@dataclass(frozen=True)
class AARates:
    fig_id: str
    machine: str
    runs: int
    seen: calibration.Noise  # the noise the pairs show
    rules: tuple[AARule, ...]


def aa_rates(cat: Catalog, fig_id: str, machine: str | None = None) -> AARates:
    """Per rule of ``calibration.RULES``, how many of the figure's A/A pairs on ``machine`` (by
    default the one the prose quotes) it called wrongly, beside the simulated rate at the site's
    noise and at the noise the pairs show; ValueError when no row has both A and B."""
    machine = machine or cat.prose_machine(fig_id)
    tab = cat.table(fig_id, machine)
    found = calibration.pairs(tab)
    if not found:
        raise ValueError(f"no row of {fig_id} on {machine} has both {' and '.join(calibration.PAIR)}")
    runs, seen = calibration.runs_of(found), calibration.noise(found)
    rules = tuple(AARule(c.rule.name, c.rule.false_call, c.pairs, c.wrong, c.rate, c.interval,
                         calibration.simulated(c.rule, runs),
                         calibration.simulated(c.rule, runs, seen.run_sd, seen.drift_sd))
                  for c in calibration.measured(found))
    return AARates(fig_id, machine, runs, seen, rules)


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
