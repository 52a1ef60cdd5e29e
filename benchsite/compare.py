"""One figure on two machines, cell by cell: ratio of medians, and whether the
difference is larger than both machines' run-to-run spread.

The same cells feed the site (:func:`html_table`) and the terminal
(``python -m benchsite.compare A B``, behind ``make compare``), so the two can
never disagree.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import fmt, render, stats
from .catalog import Catalog, results_dir
from .figures import Figure
from .fmt import esc

ONE_RUN = "not a result yet (one run)"


@dataclass(frozen=True)
class Cell:
    """One table cell of a figure, measured on machine a and machine b."""

    group: str  # the table row, e.g. "n=1024" ("" for a one-row figure)
    quantity: str  # a variant, or "a / b" for the figure's ratio column
    a: stats.Summary
    b: stats.Summary
    is_ratio: bool = False

    @property
    def ratio(self) -> float:
        """Median on a over median on b."""
        return self.a.median / self.b.median

    @property
    def verdict(self) -> str:
        return cross_verdict(self.a, self.b)

    def shown(self, s: stats.Summary) -> str:
        return (fmt.ratio_range if self.is_ratio else fmt.time_range)(s.median, s.low, s.high)


def cross_verdict(a: stats.Summary, b: stats.Summary) -> str:
    """stats.verdict (run ranges do not overlap), except that a single run on
    either side has no spread to compare with, so it decides nothing."""
    return ONE_RUN if min(a.runs, b.runs) < 2 else stats.verdict(a, b)


def quantities(frame: pd.DataFrame, fig: Figure) -> dict[tuple[str, str], tuple[stats.Summary, bool]]:
    """Every (row, variant-or-ratio) of the figure's table with its summary: the same
    numbers as render.cell_summary / ratio_summary, from one groupby per row (a figure
    page summarises every machine)."""
    out: dict[tuple[str, str], tuple[stats.Summary, bool]] = {}
    for label, rows in render.groups(frame, fig):
        medians = rows.groupby(["variant", "run"])["time_s"].median()
        present = set(medians.index.get_level_values(0))
        per_run = {v: medians.loc[v] for v in fig.variants if v in present}
        out.update({(label, v): (stats.summarize(m), False) for v, m in per_run.items()})
        if fig.ratio and all(v in per_run for v in fig.ratio):
            a, b = per_run[fig.ratio[0]], per_run[fig.ratio[1]]
            common = a.index.intersection(b.index)
            if len(common):
                out[(label, f"{fig.ratio[0]} / {fig.ratio[1]}")] = (stats.summarize(a[common] / b[common]), True)
    return out


def cells(frame_a: pd.DataFrame, frame_b: pd.DataFrame, fig: Figure) -> list[Cell]:
    """The cells both machines measured, in a's table order (sizes may differ by platform)."""
    qa, qb = quantities(frame_a, fig), quantities(frame_b, fig)
    return [Cell(g, q, sa, qb[(g, q)][0], is_ratio) for (g, q), (sa, is_ratio) in qa.items() if (g, q) in qb]


def results_count(found: list[Cell], short: bool = False) -> str:
    hits = sum(c.verdict == "a result" for c in found)
    what = "beyond both spreads" if short else "differences exceed both machines' run-to-run spread"
    return f"{hits} of {len(found)} {what}"


def table_rows(found: list[Cell]) -> list[tuple[str, ...]]:
    """Plain-text cells, shared by the HTML and the terminal tables."""
    return [(c.group or "—", c.quantity, c.shown(c.a), c.shown(c.b), f"{fmt.sig(c.ratio)}×", c.verdict)
            for c in found]


def header(a: str, b: str) -> tuple[str, ...]:
    return ("row", "quantity", a, b, "ratio", "beyond both spreads?")


def ratio_note(a: str, b: str) -> str:
    return f"ratio = median on {a} / median on {b}"


def html_table(found: list[Cell], a: str, b: str) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header(a, b))
    body = "\n".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>" for row in table_rows(found))
    return (f"<table class=\"bench-compare\">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n"
            f"</table>\n<p class=\"bench-verdict\">{esc(ratio_note(a, b))}; {esc(results_count(found))}.</p>")


def text_table(found: list[Cell], a: str, b: str) -> str:
    rows = [header(a, b), *table_rows(found)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(["  " + line for line in lines] + [f"  {ratio_note(a, b)}; {results_count(found)}."])


# --- make compare A=<machine> B=<machine> ------------------------------------------------

def _describe(cat: Catalog, fig_id: str, machine: str) -> str:
    frame = cat.frames[(fig_id, machine)]
    first = frame.iloc[0]
    stale = " STALE (script changed since)" if (fig_id, machine) in cat.stale() else ""
    return (f"{machine}: {frame['run'].nunique()} runs, jax {first['jax_version']}, "
            f"{str(first['timestamp_utc'])[:10]}{stale}")


def report(cat: Catalog, a: str, b: str) -> tuple[str, list[str]]:
    """The comparison of every figure both machines have, and the problems met."""
    out, problems = [], []
    for fig_id, fig in sorted(cat.figures.items()):
        bad = [cat.errors[(fig_id, m)] for m in (a, b) if (fig_id, m) in cat.errors]
        problems.extend(bad)
        missing = [m for m in (a, b) if (fig_id, m) not in cat.frames and (fig_id, m) not in cat.errors]
        if bad or missing:
            why = "invalid results (see below)" if bad else f"no results on {', '.join(missing)}"
            out.append(f"{fig_id}: skipped, {why}\n")
            continue
        found = cells(cat.frames[(fig_id, a)], cat.frames[(fig_id, b)], fig)
        out.append(f"{fig_id}  ({fig.title})\n  A = {_describe(cat, fig_id, a)}\n"
                   f"  B = {_describe(cat, fig_id, b)}\n{text_table(found, a, b)}\n")
    return "\n".join(out), problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("a", help="machine folder A (results/<A>/)")
    parser.add_argument("b", help="machine folder B")
    parser.add_argument("--results", type=Path, default=None, help="results folder (default: results/)")
    args = parser.parse_args(argv)
    cat = Catalog.build(args.results.resolve() if args.results else results_dir())
    absent = [m for m in (args.a, args.b) if not (cat.results / m).is_dir()]
    if absent:
        known = ", ".join(sorted(p.name for p in cat.results.glob("*") if p.is_dir())) or "none"
        print(f"no results folder {', '.join(str(cat.results / m) for m in absent)} (machines: {known})",
              file=sys.stderr)
        return 2
    text, problems = report(cat, args.a, args.b)
    print(text, end="")
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
