"""One figure on two machines (or two sessions of one machine), cell by cell (the cells:
``model/cells.py``): ratio of medians, and whether the difference is a result by the unpaired rule
of docs/verdicts.md ("How a verdict is decided", :func:`stats.unpaired_verdict`).

The same cells feed the site (:func:`html_table`) and the terminal
(``python -m benchsite.views.compare A B``, behind ``make compare``), so the two can
never disagree. Unless told that comparing machines is the point (``--machines``;
the /bench pages do), a difference between folders whose provenance names
different hardware, or cannot tell, is not a verdict.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection, Sequence
from pathlib import Path

import pandas as pd

from benchkit import layout
from benchsite.model import stats
from benchsite.model.catalog import Catalog, results_dir
from benchsite.model.cells import Cell, table_cells
from benchsite.model.figures import Figure
from benchsite.model.table import Table
from benchsite.views import fmt, quantities
from benchsite.views.html import render

RULE_PAGE = "docs/verdicts.md"  # "How a verdict is decided"
STALE_MARK = "⚠\u00a0stale"  # what a machine's stale results are marked with in a table (bold; one word on a phone)


def side_text(c: Cell, s: stats.Summary) -> str:
    """One side of a cell as text."""
    return quantities.ratio_or_time(s, c.is_ratio)


def cells(frame_a: pd.DataFrame, frame_b: pd.DataFrame, fig: Figure, machines: bool = False) -> list[Cell]:
    """:func:`table_cells` of two frames that have no catalog (tests, one-off scripts)."""
    return table_cells(Table.of(frame_a, fig), Table.of(frame_b, fig), machines)


def results_count(found: list[Cell], short: bool = False) -> str:
    hits = sum(c.verdict == stats.RESULT for c in found)
    refused = next((c.refused for c in found if c.refused), None)
    if refused:
        return refused if short else f"{refused} (no cell is judged; --machines compares machines)"
    what = "results" if short else "differences are results (unpaired rule)"
    return f"{hits} of {len(found)} {what}"


def table_rows(found: list[Cell]) -> list[tuple[str, ...]]:
    """Plain-text cells, shared by the HTML and the terminal tables."""
    return [(c.group or "—", c.quantity, side_text(c, c.a), side_text(c, c.b), f"{fmt.sig(c.ratio)}×", c.verdict)
            for c in found]


def header(a: str, b: str) -> tuple[str, ...]:
    return ("row", "quantity", a, b, "ratio", "verdict")


def ratio_note(a: str, b: str) -> str:
    """What each number in the table is, named once."""
    return (f"cells: median [min..max] of the per-run medians (a / b rows: of the per-run ratios); "
            f"ratio = median on {a} / median on {b}")


RULE_TITLE = "How a verdict is decided"


def rule_note() -> str:
    """Where the verdict rule is explained (terminal)."""
    return f"verdict: the unpaired rule of {RULE_TITLE} ({RULE_PAGE})"


def html_table(found: list[Cell], a: str, b: str, rule_url: str | None = None, stale: Collection[str] = ()) -> str:
    """The cells as a table; each cell of a machine named in ``stale`` (its results were measured with
    another script or harness than today's: ``Catalog.summary``'s ``stale``) is marked as the machines
    table marks it, so a phone's card of one row says so too, and the note under it says why."""
    return str(render("compare.html", head=header(a, b), body=table_rows(found), note=ratio_note(a, b),
                      count=results_count(found), rule=rule_url, rule_title=RULE_TITLE, rule_page=RULE_PAGE,
                      stale=stale, stale_mark=STALE_MARK))


def text_table(found: list[Cell], a: str, b: str) -> str:
    rows = [header(a, b), *table_rows(found)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(["  " + line for line in lines]
                     + [f"  {ratio_note(a, b)}; {results_count(found)}.", f"  {rule_note()}."])


# --- make compare A=<machine> B=<machine> ------------------------------------------------

def _sessions(frame: pd.DataFrame) -> str:
    """Which sessions a figure's results came from: id and first/last timestamp (UTC)."""
    ids = frame["session_id"].astype(str) if "session_id" in frame else pd.Series("unknown", frame.index)
    parts = []
    for sid, rows in frame.groupby(ids, sort=True):
        times = sorted(str(t) for t in rows["timestamp_utc"].unique())
        when = times[0] if len(times) == 1 else f"{times[0]} … {times[-1]}"
        parts.append(f"{sid} ({when})")
    return ", ".join(parts)


def _describe(cat: Catalog, fig_id: str, machine: str) -> str:
    tab = cat.table(fig_id, machine)
    frame = tab.frame
    first = frame.iloc[0]
    stale = f" STALE ({tab.stale})" if tab.stale else ""
    return (f"{machine}: {frame['run'].nunique()} runs, jax {first['jax_version']}, "
            f"session {_sessions(frame)}{stale}")


def report(cat: Catalog, a: str, b: str, machines: bool = False) -> tuple[str, list[str]]:
    """The comparison of every figure both machines have, and the problems met."""
    out, problems = [], []
    for fig_id, fig in sorted(cat.figures.items()):
        bad = [cat.errors[(fig_id, m)] for m in dict.fromkeys((a, b)) if (fig_id, m) in cat.errors]  # A may be B
        problems.extend(bad)
        missing = [m for m in (a, b) if (fig_id, m) not in cat.frames and (fig_id, m) not in cat.errors]
        if bad or missing:
            why = "invalid results (see below)" if bad else f"no results on {', '.join(missing)}"
            out.append(f"{fig_id}: skipped, {why}\n")
            continue
        found = table_cells(cat.table(fig_id, a), cat.table(fig_id, b), machines=machines)
        out.append(f"{fig_id}  ({fig.title})\n  A = {_describe(cat, fig_id, a)}\n"
                   f"  B = {_describe(cat, fig_id, b)}\n{text_table(found, a, b)}\n")
    return "\n".join(out), problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("a", help="machine folder A (results/<A>/)")
    parser.add_argument("b", help="machine folder B")
    parser.add_argument("--results", type=Path, default=None, help="results folder (default: results/)")
    parser.add_argument("--machines", action="store_true",
                        help="compare different hardware on purpose (else a hardware difference is not a verdict)")
    args = parser.parse_args(argv)
    cat = Catalog.build(args.results.resolve() if args.results else results_dir())
    machines = layout.machines(cat.results)
    absent = [m for m in (args.a, args.b) if m not in machines]
    if absent:
        known = ", ".join(machines) or "none"
        print(f"no results folder {', '.join(str(cat.results / m) for m in absent)} (machines: {known})",
              file=sys.stderr)
        return 2
    text, problems = report(cat, args.a, args.b, machines=args.machines)
    print(text, end="")
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
