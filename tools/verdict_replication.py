"""Do the verdicts replicate? Two results folders of the same machine, two sessions.

    .venv/bin/python tools/verdict_replication.py results/<label> /tmp/rerun/<label-rerun>

For every figure both folders have:

* within-figure verdicts (the figure's ratio pair, row by row, the paired rule):
  how many were "a result" in the first session, how many of those kept their
  direction in the second, and how many are a result there too;
* the same cells under the old rule (run [min..max] ranges do not overlap), for
  contrast;
* across the two sessions, every table cell judged with the unpaired rule (what
  ``make compare`` prints): on one machine with unchanged code, each "a result"
  is a false alarm or a real change of the machine's state between the sessions.

Prints a plain-text report; exits 2 when a folder cannot be read.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

from benchsite import REPO
from benchsite.model import quotes, stats
from benchsite.model.figures import all_figures
from benchsite.model.load import ResultFile, ResultsError, load
from benchsite.model.table import groups
from benchsite.views import compare


def _frames(folder: Path) -> dict[str, object]:
    out = {}
    for path in sorted(folder.glob("*.csv")):
        out[path.stem] = load(ResultFile(folder.name, path.stem, path))
    return out


def _old_rule(a, b) -> bool:
    sa, sb = stats.summarize(a), stats.summarize(b)
    return not (sa.low <= sb.high and sb.low <= sa.high)


def within(frames_a: dict, frames_b: dict) -> list[tuple]:
    """(figure, row, ratio A, verdict A, ratio B, verdict B, old A, old B) per ratio cell."""
    lines = []
    for fig in all_figures().values():
        if not fig.ratio or fig.stem not in frames_a or fig.stem not in frames_b:
            continue
        rows_b = dict(groups(frames_b[fig.stem], fig))
        for label, rows_a in groups(frames_a[fig.stem], fig):
            if label not in rows_b:
                continue
            got = []
            for rows in (rows_a, rows_b[label]):
                a, b = (stats.run_medians(rows[rows["variant"] == v]) for v in fig.ratio)
                if a.empty or b.empty:
                    break
                common = a.index.intersection(b.index)
                got.append((stats.paired_verdict(a, b), _old_rule(a[common], b[common])))
            if len(got) == 2:
                (va, oa), (vb, ob) = got
                lines.append((fig.id, label or "-", va.ratio, va.is_result, vb.ratio, vb.is_result, oa, ob))
    return lines


VERDICT_MARKER = re.compile(r"<!--\s*bench:value\s+(fig-[a-z0-9-]+)\s+([^>]*?stat=verdict[^>]*?)\s*-->")


def prose(frames_a: dict, frames_b: dict) -> list[tuple]:
    """Every verdict quoted in the prose (``bench:value … stat=verdict``), in both sessions."""
    figures = all_figures()
    lines = []
    for page in sorted((REPO / "docs").rglob("*.md")):
        for fig_id, args in VERDICT_MARKER.findall(page.read_text()):
            fig = figures[fig_id]
            if fig.stem not in frames_a or fig.stem not in frames_b:
                continue
            opts = dict(a.split("=", 1) for a in args.split() if a != "stat=verdict")
            got = []
            for frame in (frames_a[fig.stem], frames_b[fig.stem]):
                a, b = (stats.run_medians(x) for x in quotes.pair(frame, dict(opts), fig))
                common = a.index.intersection(b.index)
                got.append((stats.paired_verdict(a, b), _old_rule(a[common], b[common])))
            (va, oa), (vb, ob) = got
            where = " ".join(f"{k}={v}" for k, v in opts.items())
            lines.append((fig_id, where, va.ratio, va.is_result, vb.ratio, vb.is_result, oa, ob))
    return lines


def across(frames_a: dict, frames_b: dict) -> tuple[int, int, list[str]]:
    """Every table cell both sessions have, judged with the unpaired rule."""
    total, hits, which = 0, 0, []
    for fig in all_figures().values():
        if fig.stem not in frames_a or fig.stem not in frames_b:
            continue
        for cell in compare.cells(frames_a[fig.stem], frames_b[fig.stem], fig, machines=True):
            total += 1
            if cell.verdict == stats.RESULT:
                hits += 1
                which.append(f"{fig.id} {cell.group or '-'} {cell.quantity}: {cell.ratio:.3g}x")
    return total, hits, which


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("first", type=Path, help="results/<machine> of the first session")
    p.add_argument("second", type=Path, help="results folder of the second session")
    args = p.parse_args(argv)
    try:
        fa, fb = _frames(args.first), _frames(args.second)
    except ResultsError as err:
        print(err, file=sys.stderr)
        return 2
    lines, seen = [], set()
    for line in within(fa, fb) + prose(fa, fb):  # a verdict quoted in prose may be a table's too
        key = (line[0], round(line[2], 12), round(line[4], 12))
        if key not in seen:
            seen.add(key)
            lines.append(line)
    print(f"{'figure':<30} {'row':<28} {'A ratio':>8} {'A':>6} {'B ratio':>8} {'B':>6}  old A/B")
    for fig, row, ra, va, rb, vb, oa, ob in lines:
        print(f"{fig:<30} {row[:28]:<28} {ra:8.3g} {'RESULT' if va else '-':>6} {rb:8.3g} "
              f"{'RESULT' if vb else '-':>6}  {'R' if oa else '-'}/{'R' if ob else '-'}")
    new_a = [x for x in lines if x[3]]
    held = [x for x in new_a if np.sign(np.log(x[2])) == np.sign(np.log(x[4]))]
    both = [x for x in new_a if x[5]]
    old_a = [x for x in lines if x[6]]
    old_held = [x for x in old_a if np.sign(np.log(x[2])) == np.sign(np.log(x[4]))]
    old_both = [x for x in old_a if x[7]]
    print(f"\nwithin figures, {len(lines)} verdicts (ratio cells and verdicts quoted in the prose):")
    print(f"  paired rule: {len(new_a)} results in A; {len(held)} kept their direction in B, "
          f"{len(both)} are results in B too; {sum(x[5] for x in lines)} results in B")
    print(f"  old overlap rule: {len(old_a)} results in A; {len(old_held)} kept their direction in B, "
          f"{len(old_both)} are results in B too")
    total, hits, which = across(fa, fb)
    print(f"\nacross the two sessions (unpaired rule, every table cell): {hits} of {total} cells 'a result'")
    for line in which:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
