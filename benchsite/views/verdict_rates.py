"""The verdict rules' rates and counts as the pages show them: the seeded simulation's table
(``bench:verdict-rates``), the A/A calibration's table (``bench:aa-rates``) and one count in prose
(``bench:verdict-count``), each rendered from the plain data ``model/noise.py`` hands over."""

from __future__ import annotations

import math

from markupsafe import Markup

from benchsite.model import stats
from benchsite.model.noise import AARates, Count, Rates, SimNoise
from benchsite.views import fmt
from benchsite.views.html import render

# A column of the equivalence table: the true difference, under the heading its span shares.
SAID = {0.0: "none", 0.5: "half the margin", 1.0: "the margin"}
RULES = (("paired", "paired (two variants, same runs)"), ("unpaired", "unpaired (two sessions)"))


def source(noise: SimNoise) -> str:
    """Where a simulation's noise came from, in words."""
    if noise.machine is None:
        return "the model's noise"
    return (f"the noise measured on {noise.machine} (medians over {noise.cells} cells and {noise.pairs} ratio "
            "pairs; python -m benchsite.model.noise)")


def rates_table(found: Rates) -> str:
    """The simulation of one rule as a table: ``differ``, how often the paired and unpaired rules
    say "a result" with no true difference and with true shifts; ``same``, how often the equivalence
    rule says "the same" with true differences from none to beyond the margin. A group of rows per
    rule (paired, unpaired) under a row naming it, a row per R (and margin): its rows are compared
    down each column, so the rule is not a column repeated on every row, and the rates share one
    heading, so that the columns fit a desktop's page and a phone's."""
    noise = found.noise
    note = (f"{stats.SIM_TRIALS} simulated sets per line (seed {stats.SIM_SEED}); {source(noise)}: run noise "
            f"{fmt.percent(noise.run_sd)} per variant and a shared per-run drift of {fmt.percent(noise.drift_sd)} "
            f"(standard deviations of the log run medians); one spread = {fmt.percent(noise.spread)}.")
    if found.rule == "same":
        got = {(r.rule, r.runs, r.margin, r.shift): r.rate for r in found.rates}
        within = [s for s in stats.SIM_EQUIV_SHIFTS if s < 1]
        beyond = [s for s in stats.SIM_EQUIV_SHIFTS if s >= 1]  # the margin itself and past it
        lead = ["R", "margin"]
        spans = [(over, [SAID.get(s, f"{s:g} margins") for s in shifts])
                 for over, shifts in (("“the same” at a true difference of", within),
                                      ("false equivalence: “the same” at", beyond)) if shifts]
        groups = [(what, [[str(r), stats.margin_text(m)] + [fmt.percent(got[(rule, r, m, s)]) for s in within + beyond]
                          for r in stats.SIM_RUNS for m in stats.SIM_MARGINS]) for rule, what in RULES]
        note += (" A true difference of one margin is a ratio of exactly 1 + m: calling that \"the same\" is a "
                 "false equivalence, as is anything beyond it.")
    else:
        got = {(r.rule, r.runs, r.shift): r.rate for r in found.rates}
        shifts = [s for s in stats.SIM_SHIFTS if s]
        lead = ["R", "false positives (no difference)"]
        spans = [("power at a true shift of", [f"{s} spread{'s' if s != 1 else ''}" for s in shifts])]
        groups = [(what, [[str(r)] + [fmt.percent(got[(rule, r, s)]) for s in [0, *shifts]] for r in stats.SIM_RUNS])
                  for rule, what in RULES]
        note += " The false-negative rate is one minus the power."
    width = len(lead) + sum(len(cols) for _, cols in spans)
    return str(render("verdict_rates_by_rule.html", lead=lead, spans=spans, groups=groups, width=width, note=note))


def aa_table(found: AARates, trials: int) -> str:
    """The A/A calibration's table: per rule, the pairs it called wrongly, the measured rate with its
    interval, the simulated rate at the site's noise and at the noise the pairs show (``trials``
    simulated sets per rule); the pairs with a wrong call are listed under it."""
    # How each rule compares A and B is said in the list above the marker; which pairs got a wrong
    # call is listed under the table, so the table fits a chapter's width.
    head = ["rule", "wrong call on A/A data", "A/A pairs", "wrong calls", "measured rate (95 % interval)",
            "simulated rate", "simulated at the noise measured here"]
    body = [[r.name, r.false_call, str(r.pairs), str(len(r.wrong)),
             f"{fmt.percent(r.rate)} [{fmt.percent(r.interval[0])}..{fmt.percent(r.interval[1])}]",
             fmt.percent(r.at_site), fmt.percent(r.here)] for r in found.rules]
    called = [(r.name, "; ".join(r.wrong) or "none") for r in found.rules]
    against = [(r.name, against_simulated(r.interval, r.at_site, r.here)) for r in found.rules]
    seen = found.seen
    note = (f"{found.fig_id} on {found.machine}, {fmt.count(found.runs, 'run')}; one A/A pair per table row. The "
            "interval is exact for independent pairs; these pairs share their runs and their session, so it is "
            f"narrower than it should be. Simulated: {trials} sets of {found.runs} runs per rule, "
            f"compared as the pairs are, with the site's simulated noise (run {fmt.percent(stats.SIM_RUN_SD)}, "
            f"shared drift {fmt.percent(stats.SIM_DRIFT_SD)}) and with the noise these pairs show (run "
            f"{fmt.percent(seen.run_sd)}, shared drift {fmt.percent(seen.drift_sd)}; medians over the pairs).")
    return str(render("verdict_rates.html", head=head, body=body, called=called, against=against, note=note))


def against_simulated(interval: tuple[float, float], at_site: float, here: float) -> str:
    """Where a measured rate's interval lies against the two simulated rates, in words: the rule's
    line under the A/A table, so that no sentence of the prose has to say it of one run's counts.
    A rate that could not be simulated (NaN, shown "n/a") is left out and the line says so."""
    low, high = interval
    sims = [(name, rate) for name, rate in (("the simulated rate", at_site),
                                            ("the rate simulated at the noise measured here", here))
            if math.isfinite(rate)]
    if not (math.isfinite(low) and math.isfinite(high)) or not sims:
        return "nothing to compare (no interval, or no rate could be simulated)"
    placed = [("holds" if low <= rate <= high else "lies above" if rate < low else "lies below", name)
              for name, rate in sims]
    if len(placed) == 2 and placed[0][0] == placed[1][0]:
        return f"its interval {placed[0][0]} both simulated rates"
    placed.sort(key=lambda p: p[0] != "holds")  # what it holds first
    said = " and ".join(f"{where} {name}" for where, name in placed)
    return f"its interval {said}" + ("" if len(placed) == 2 else " (the other could not be simulated)")


def count_value(found: Count) -> Markup:
    """One count in a sentence, with how it was counted in its tooltip."""
    if found.noise is not None:  # the false results the simulated rate implies
        rule = found.what.removesuffix("-false")
        return render("value.html", text=f"{found.rate * found.count:.1f}", href=None, title=(
            f"{found.count} verdicts x {100 * found.rate:.4g} % simulated false positives ({rule} rule, "
            f"R = {found.runs}, {source(found.noise)})"))
    if found.what == "machines":
        return render("value.html", text=f"{found.count} machine{'s' if found.count != 1 else ''}", href=None,
                      title="counted at build time (benchsite/model/noise.py)")
    return render("value.html", text=str(found.count), href=None,
                  title="counted at build time (benchsite/model/noise.py, markers.py)")
