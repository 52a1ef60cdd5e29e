"""Carry-over: does a sample depend on the cell measured just before it?

The harness samples a figure's cells (variant, params) in shuffled rounds (``benchkit/timing.py``),
so each sample starts right after whatever cell ran before it. Here every sample of a cell is
grouped by that predecessor, and in each run the median of the samples taken right after the cell
itself (what a block of consecutive samples would see) is set against the median of those taken
right after each other cell. The preceding cell that moves the cell most (its median per-run
log ratio furthest from 0, either way) is named, and the verdict is the plain paired rule
(``stats.paired_verdict``) on per-run ratios each taken from the preceding cell picked on the
*other* runs (leave one run out): a cell picked for being the most different is no longer judged
on the runs that picked it, so noise in one of many neighbours is not called carry-over. The
median after any other cell is shown too, as a description: when only some neighbours slow a
cell, a median over all of them jumps between the two from run to run.

The predecessor is the results' ``after`` column (``variant|boundary|params`` of the cell whose
sample, or warm-up and sizing, ran just before) where a run records one, and otherwise the previous sample
in ``seq`` order within (run, process_index); files with no ``seq`` (schema 1) give nothing.
``lead_in`` (untimed calls of the cell before its timed sample), where recorded, is reported.

``python -m benchsite.views.carryover results/<machine> [--figure fig-id]`` prints the tables.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from benchkit import layout
from benchkit.schema import figure_id_for
from benchsite.model import stats
from benchsite.model.load import ResultsError, load
from benchsite.views import fmt, render

MIN_GROUP = 2  # samples a run needs in a group (after itself, after others) for its median to count
SEP = "|"  # a cell's name: variant|boundary|params, as the ``after`` column writes it (benchkit.cell_key)


def cell_names(frame: pd.DataFrame) -> pd.Series:
    return (frame["variant"].astype(str) + SEP + frame["boundary"].astype(str) + SEP
            + frame["params"].fillna("").astype(str))


def predecessors(frame: pd.DataFrame, cells: pd.Series | None = None) -> pd.Series:
    """Per row, the cell measured just before it in its run and process (``variant|boundary|params``), or
    None: a run's first sample, or a run with no ``seq`` and no ``after``. A run that records
    ``after`` (any row of it non-empty) is read from it; any other run is derived from ``seq``.
    ``cells``: :func:`cell_names` of ``frame``, where the caller has them."""
    keys = ["run", "process_index"]
    if "after" not in frame:
        return _from_seq(frame, keys, cells)
    given = frame["after"].astype(object).where(frame["after"].notna(), "").astype(str)
    if (given.to_numpy(dtype=object) != "").all():  # every row records it (every file the harness writes now)
        return pd.Series(given.to_numpy(dtype=object), index=frame.index, dtype=object)
    recorded = given.ne("").groupby([frame[k] for k in keys]).transform("any")
    # where every run records ``after`` (as every file the harness writes now), no order to derive
    derived = None if recorded.all() else _from_seq(frame, keys, cells)
    return pd.Series(np.where(recorded, given.where(given.ne(""), None), derived), index=frame.index,
                     dtype=object)


def _from_seq(frame: pd.DataFrame, keys: list[str], cells: pd.Series | None) -> pd.Series:
    """:func:`predecessors` from ``seq``: the previous sample in its run and process (rows in
    (run, process, seq) order, stably, a NaN ``seq`` last and with no predecessor), in numpy."""
    cells = (cell_names(frame) if cells is None else cells).to_numpy(dtype=object)
    runs, procs = frame[keys[0]].to_numpy(), frame[keys[1]].to_numpy()
    seq = frame["seq"].to_numpy(dtype=float)
    order = np.lexsort((seq, procs, runs))
    runs, procs = runs[order], procs[order]
    same = np.zeros(len(frame), dtype=bool)  # no rows: no row before the first (np.r_[False, ...] is one)
    same[1:] = (runs[1:] == runs[:-1]) & (procs[1:] == procs[:-1])
    same &= ~np.isnan(seq[order])
    derived = np.full(len(frame), None, dtype=object)
    derived[order[same]] = cells[order[np.flatnonzero(same) - 1]]
    return pd.Series(derived, index=frame.index, dtype=object)


@dataclass(frozen=True)
class Carry:
    """One cell's samples grouped by their predecessor, run by run."""

    variant: str
    params: str
    boundary: str
    after_self: pd.Series  # per-run median of the samples right after the cell itself
    after_others: pd.Series  # per-run median of the samples right after any other cell
    examined: int = 0  # other preceding cells with PAIRED_MIN_RUNS runs to pair with after_self
    moved_by: str | None = None  # of those, the one whose samples differ most from after_self, over every run
    # per run: median after the predecessor picked from the other runs / median after itself
    ratios: np.ndarray = field(default_factory=lambda: np.array([]))
    same: int = 0  # runs whose pick from the other runs is moved_by
    verdict: stats.Verdict | None = None  # the paired rule on ``ratios``
    lead_in: tuple[int, int] | None = None  # fewest and most untimed lead-in calls, where recorded

    @property
    def name(self) -> str:
        return SEP.join((self.variant, self.boundary, self.params))

    @property
    def compared(self) -> bool:
        """A preceding cell with enough runs for the paired rule to decide anything."""
        return _decides(self.verdict)

    @property
    def above(self) -> int:
        return int((self.ratios > 1).sum())


_NO_RUNS = pd.Index([], name="run")
_NO_RATIOS = pd.Series(dtype=float)  # most_different of no candidates (read, never written)

Group = tuple[list, list]  # one group's runs (ascending) and its per-run medians, as plain lists


def _grouped_medians(keys: list[np.ndarray], times: np.ndarray) -> dict[object, dict[object, Group]]:
    """The per-run medians of ``times`` grouped by ``keys`` (the cell; the preceding cell, where
    given; the run last), for the groups with at least MIN_GROUP samples, as first key -> second
    key (None where not given) -> (runs, medians): ``groupby(keys, sort=True).median()``'s numbers
    (``stats.per_run_medians``, one sort) with no MultiIndex made, in the groupby's order."""
    out: dict[object, dict[object, Group]] = {}
    if not times.size:
        return out
    codes, uniques = zip(*(pd.factorize(k, sort=True) for k in keys))
    composite = np.zeros(times.size, dtype=np.int64)
    for code, unique in zip(codes, uniques):
        composite = composite * len(unique) + code
    groups, medians = stats.per_run_medians(composite, times)
    _, sizes = np.unique(composite, return_counts=True)
    kept = sizes >= MIN_GROUP
    groups, medians = groups[kept], medians[kept].tolist()
    if not medians:
        return out
    parts = []
    for unique in reversed(uniques):
        groups, part = np.divmod(groups, len(unique))
        parts.append(part)
    run_codes, head_codes = parts[0], parts[-1]
    sub_codes = parts[1] if len(keys) > 2 else np.zeros(len(medians), dtype=np.int64)
    runs = np.asarray(uniques[-1])[run_codes].tolist()
    heads, subs = np.asarray(uniques[0]).tolist(), np.asarray(uniques[1]).tolist() if len(keys) > 2 else [None]
    starts = np.flatnonzero(np.r_[True, (head_codes[1:] != head_codes[:-1]) | (sub_codes[1:] != sub_codes[:-1])])
    stops = np.r_[starts[1:], len(medians)]
    for start, stop in zip(starts.tolist(), stops.tolist()):
        out.setdefault(heads[head_codes[start]], {})[subs[sub_codes[start]]] = (runs[start:stop], medians[start:stop])
    return out


def _per_run(groups: dict[object, dict[object, Group]], key: tuple) -> pd.Series:
    """The per-run medians of one group (``key``: the levels before the run), indexed by run."""
    found = groups.get(key[0], {}).get(key[1])
    return pd.Series(dtype=float, index=_NO_RUNS) if found is None else _series(found)


def _series(group: Group) -> pd.Series:
    runs, medians = group
    return pd.Series(np.array(medians, dtype=float), index=pd.Index(np.array(runs), name="run"), copy=False)


def _ratios(a: pd.Series, b: pd.Series) -> np.ndarray:
    x, y = stats.paired_runs(a, b)
    return x / y


def _candidates(by_prev: dict[object, dict[object, Group]], cell: str) -> dict[str, pd.Series]:
    """Each other predecessor with PAIRED_MIN_RUNS runs to pair with the medians after the cell
    itself (``stats.common_runs``): its per-run ratio (median after it / median after the cell
    itself), indexed by run. A figure has thousands of predecessors and few have the runs: those
    with too few runs of their own are passed over before any is paired."""
    groups = by_prev.get(cell, {})
    own = groups.get(cell)
    if own is None:
        return {}
    after_self = _series(own)
    out = {}
    for prev, group in groups.items():
        if prev == cell or len(group[0]) < stats.PAIRED_MIN_RUNS:
            continue
        after_prev = _series(group)
        runs, a, b = stats.common_runs(after_prev, after_self)
        if runs.size >= stats.PAIRED_MIN_RUNS:
            out[prev] = pd.Series(after_prev.to_numpy()[a] / after_self.to_numpy()[b], index=runs)
    return out


def _pick(candidates: dict[str, pd.Series], leave_out: object = None) -> str:
    """The candidate furthest from 1 by its median log ratio over the runs other than ``leave_out``."""
    def distance(prev: str) -> float:
        r = candidates[prev].to_numpy()
        r = r[candidates[prev].index.to_numpy() != leave_out] if leave_out is not None else r
        return abs(float(np.median(np.log(r)))) if r.size else -math.inf
    return max(sorted(candidates), key=distance)


def most_different(candidates: dict[str, pd.Series]) -> tuple[str | None, pd.Series, int]:
    """(the predecessor furthest from 1 over every run; per run, the ratio of the predecessor
    picked from the *other* runs; in how many runs that pick is the overall one). Picking on the
    other runs leaves each run's ratio free of the pick, so the plain paired rule applies to
    them: under no carry-over each run's side of 1 is a coin toss whichever cell was picked."""
    if not candidates:
        return None, pd.Series(dtype=float), 0
    overall = _pick(candidates)
    runs = sorted(set().union(*(c.index for c in candidates.values())))
    picked, same = {}, 0
    for run in runs:
        prev = _pick(candidates, leave_out=run)
        if run in candidates[prev].index:
            picked[run], same = candidates[prev][run], same + (prev == overall)
    return overall, pd.Series(picked, dtype=float).rename_axis("run"), same


def _after_cells(frame: pd.DataFrame) -> tuple[pd.Series, tuple[np.ndarray, ...], dict[object, dict[object, Group]]]:
    """(each row's cell; the rows with a known predecessor: their cells, predecessors, runs and
    times; the per-run medians of those grouped by cell and predecessor)."""
    cells = cell_names(frame)
    before = predecessors(frame, cells)
    known = before.notna().to_numpy()
    times, runs = frame["time_s"].to_numpy(dtype=float)[known], frame["run"].to_numpy()[known]
    mine, prev = cells.to_numpy(dtype=object)[known], before.to_numpy(dtype=object)[known].astype(str)
    return cells, (mine, prev, runs, times), _grouped_medians([mine, prev, runs], times)


def _first(frame: pd.DataFrame) -> pd.DataFrame:
    """Each cell's first row (its variant, params and boundary), in the file's order."""
    return frame[["variant", "params", "boundary"]].drop_duplicates(["variant", "params"])


def _moved(candidates: dict[str, pd.Series]) -> tuple[str | None, pd.Series, int, stats.Verdict | None]:
    """:func:`most_different` of a cell's candidates, and the paired rule on its per-run ratios."""
    if not candidates:
        return None, _NO_RATIOS, 0, None
    moved_by, ratios, same = most_different(candidates)
    return moved_by, ratios, same, stats.paired_verdict(ratios.to_numpy(), np.ones(ratios.size))


def figure_carry(frame: pd.DataFrame) -> list[Carry]:
    """Every cell of one figure's results on one machine, in the order the file first has them."""
    cells, (mine, prev, runs, times), by_prev = _after_cells(frame)
    # after any other cell; after itself is by_prev's group of the cell itself (the same samples)
    other = prev != mine.astype(str)
    by_others = _grouped_medians([mine[other], runs[other]], times[other])
    first = _first(frame)
    lead = frame.groupby(cells)["lead_in"].agg(["min", "max"]) if "lead_in" in frame else None
    leads = dict(zip(lead.index, zip(lead["min"], lead["max"]))) if lead is not None else {}
    out = []
    for cell, variant, params, boundary in zip(cells[first.index], first["variant"], first["params"],
                                               first["boundary"]):
        candidates = _candidates(by_prev, cell)
        moved_by, ratios, same, verdict = _moved(candidates)
        span = None
        if lead is not None and pd.notna(leads[cell][0]):
            span = (int(leads[cell][0]), int(leads[cell][1]))
        out.append(Carry(str(variant), "" if pd.isna(params) else str(params), str(boundary),
                         _per_run(by_prev, (cell, cell)), _per_run(by_others, (cell, None)), len(candidates),
                         moved_by, ratios.to_numpy(), same, verdict, span))
    return out


def figure_counts(frame: pd.DataFrame) -> tuple[int, int, int, int]:
    """``counts(figure_carry(frame))``, made without what only the table shows (the medians after
    itself and after any other cell, the lead-in calls): what the count over every figure of a
    machine (:func:`count_marker`) asks of each."""
    cells, _, by_prev = _after_cells(frame)
    return _tally([_moved(_candidates(by_prev, cell))[3] for cell in cells[_first(frame).index]])


# --- text ------------------------------------------------------------------------------------

def _cell_label(name: str | None) -> str:
    """``variant|boundary|params`` as a reader names the cell: ``dispatch n=128``."""
    if name is None:
        return "—"
    parts = name.split(SEP, 2)
    variant, params = parts[0], parts[-1] if len(parts) > 1 else ""
    return f"{variant} {params.replace(',', ', ')}".strip()


def _times(per_run: pd.Series) -> str:
    if per_run.empty:
        return "—"
    s = stats.summarize(per_run)
    return fmt.time_range(s.median, s.low, s.high)


def _ratio_text(ratios: np.ndarray) -> str:
    if ratios.size == 0:
        return "—"
    s = stats.summarize(ratios)
    return f"{fmt.ratio_range(s.median, s.low, s.high)}, above 1 in {int((ratios > 1).sum())} of {ratios.size} runs"


def table(carries: Iterable[Carry], verdict=lambda v: v.text) -> str:
    """A Markdown table: one line per cell. ``verdict(Verdict)`` formats a verdict (a page links
    it to the rule; a terminal prints its text and reason)."""
    rows = ["| cell | after itself | after any other cell | the preceding cell that moves it most | "
            "after it / after itself, per run | verdict |", "|---|---|---|---|---|---|"]
    for c in carries:
        moved = (f"{fmt.md(_cell_label(c.moved_by))} (of {c.examined}; the pick of the other runs in "
                 f"{c.same} of {c.ratios.size})" if c.moved_by else "—")
        rows.append(f"| {fmt.md(_cell_label(c.name))} ({fmt.md(c.boundary)}) | {_times(c.after_self)} | "
                    f"{_times(c.after_others)} | {moved} | {_ratio_text(c.ratios)} | "
                    f"{verdict(c.verdict) if c.verdict is not None else '—'} |")
    return "\n".join(rows)


def counts(carries: Iterable[Carry]) -> tuple[int, int, int, int]:
    """(cells, cells compared, of those a result, of those a result with the cell slower after
    the preceding one than after itself)."""
    return _tally([c.verdict for c in carries])


def _decides(verdict: stats.Verdict | None) -> bool:
    """Whether a cell's verdict came from enough runs for the paired rule to decide anything."""
    return verdict is not None and verdict.runs >= stats.PAIRED_MIN_RUNS


def _tally(verdicts: list[stats.Verdict | None]) -> tuple[int, int, int, int]:
    """:func:`counts` of the cells' verdicts (None: a cell with no preceding cell to compare)."""
    compared = [v for v in verdicts if _decides(v)]
    results = [v for v in compared if v.is_result]
    return len(verdicts), len(compared), len(results), sum(v.ratio > 1 for v in results)


def count_sentence(cells: int, compared: int, results: int, slower: int) -> str:
    return (f"cells whose samples after some other cell differ from those after the cell itself by a "
            f"result: {results} of {compared} that could be compared ({slower} of them slower after "
            f"the other cell; the other {cells - compared} of {cells} cells had no preceding cell with "
            f"{stats.PAIRED_MIN_RUNS} runs of at least {MIN_GROUP} samples both after it and after "
            "the cell itself)")


def lead_in_note(carries: Iterable[Carry]) -> str:
    spans = [c.lead_in for c in carries if c.lead_in is not None]
    if not spans:
        return ("These results record no lead-in calls (no `lead_in` column): the harness that wrote them "
                "took each sample right after the one before.")
    lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
    return f"Untimed lead-in calls of the cell before each timed sample: {fmt.count_span(lo, hi)}."


# --- the markers ----------------------------------------------------------------------------

def _verdict_link(ctx):
    return lambda v: str(render.value(v.text, f"paired rule: {v.reason}", ctx.link(render.RULE_PATH)))


def _sessions(frame: pd.DataFrame) -> str:
    return ", ".join(f"`{fmt.esc(s)}`" for s in sorted(frame["session_id"].astype(str).unique()))


def marker(args: list[str], ctx) -> str:
    """``<!-- bench:carryover fig-id [machine=...] -->``: the figure's cells grouped by the cell
    measured just before each sample, on the machine the prose quotes (or ``machine=``)."""
    if not args or args[0] not in ctx.catalog.figures:
        raise ValueError("the first argument must be a figure id (fig-...) some script defines")
    fig_id, opts = args[0], dict(a.split("=", 1) for a in args[1:] if "=" in a)
    machine = opts.get("machine") or ctx.catalog.prose_machine(fig_id)
    frame = ctx.catalog.frame(fig_id, machine)
    carries = figure_carry(frame)
    head = (f"**{fmt.esc(fig_id)}** on **{fmt.esc(machine)}** (session {_sessions(frame)}, "
            f"{fmt.count(frame['run'].nunique(), 'run')}; a run counts in a group with at least "
            f"{fmt.count(MIN_GROUP, 'sample')} in it; each run's ratio is taken after the preceding cell "
            f"picked on the other runs). {lead_in_note(carries)}")
    return f"\n{head}\n\n{table(carries, _verdict_link(ctx))}\n"


def count_marker(args: list[str], ctx) -> str:
    """``<!-- bench:carryover-count [machine=...] -->``: the count over every figure with valid
    results on one machine (default: the machine the prose quotes), as a sentence's clause."""
    cat = ctx.catalog
    opts = dict(a.split("=", 1) for a in args if "=" in a)
    with_results = [m for _, m in cat.frames]
    machine = opts.get("machine") or (cat.preferred if cat.preferred in with_results else None) \
        or (cat.all_machines() or [None])[0]
    frames = [cat.frames[(f, machine)] for f in sorted(cat.figures) if (f, machine) in cat.frames]
    if not frames:
        raise ValueError(f"no valid results on {machine}")
    total = [0, 0, 0, 0]
    for frame in frames:
        total = [t + n for t, n in zip(total, figure_counts(frame))]
    return str(render.value(count_sentence(*total),
                            f"benchsite/views/carryover.py over {len(frames)} figures on {machine}"))


# --- the command line ------------------------------------------------------------------------

def machine_frames(folder: Path) -> dict[str, pd.DataFrame]:
    """Figure id -> validated samples, for every results CSV in ``folder`` (results/<machine>)."""
    found = {}
    for file in layout.discover(folder.parent):
        if file.machine == folder.name:
            found[figure_id_for(file.stem)] = load(file)
    return dict(sorted(found.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchsite.views.carryover", description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="a machine's results folder, e.g. results/cpu-...")
    parser.add_argument("--figure", action="append", help="only this figure id (repeatable)")
    args = parser.parse_args(argv)
    try:
        frames = machine_frames(args.folder)
    except ResultsError as err:
        print(err, file=sys.stderr)
        return 1
    if not frames:
        print(f"no results files in {args.folder}", file=sys.stderr)
        return 1
    total = [0, 0, 0, 0]
    for fig_id, frame in frames.items():
        carries = figure_carry(frame)
        total = [t + n for t, n in zip(total, counts(carries))]
        if args.figure and fig_id not in args.figure:
            continue
        sessions = ", ".join(sorted(frame["session_id"].astype(str).unique()))
        print(f"## {fig_id} on {args.folder.name} (session {sessions}, {frame['run'].nunique()} runs)\n")
        print(table(carries, lambda v: f"{v.text} ({v.reason})"))
        print(f"\n{lead_in_note(carries)}\n")
    print(f"Every figure on {args.folder.name}: {count_sentence(*total)}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
