"""How long `make bench` took on a machine, from what the results record (no clock is typed).

The results keep, per run, when its process started (``timestamp_utc``, to the second) and the
session it belonged to (``session_id``, whose first part is the session's start). A run's end is
not recorded, but the runner starts one process after another, so the next process start of the
same session bounds it: the *gap* from a run's start to the next start is the run's wall time plus
the runner's hand-off. A session's last run has no next start and no gap. A gap can also contain
a run whose results were later replaced by another session (``make bench ONLY=...``): the median
over a figure's runs is robust to that odd one out, which is why the table quotes it.

Results of schema 4 and later also record each run's whole wall time as the runner saw it
(``run_wall_s``: process start, imports, compiles and every sample). Where a figure has it, the
table quotes that instead of the gap, beside the figure's declared budget per run
(``FIGURE["budget_s"]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd

from benchsite.core import urls
from benchsite.views import fmt, render


@dataclass(frozen=True)
class FigureTime:
    fig_id: str
    session: str
    runs: int  # runs recorded
    gaps: tuple[float, ...]  # seconds, one per run that has a next start in its session
    walls: tuple[float, ...] = ()  # seconds, each run's own wall time (run_wall_s), where recorded

    @property
    def times(self) -> tuple[float, ...]:
        """The runs' wall times where recorded, else the gaps."""
        return self.walls or self.gaps

    @property
    def median(self) -> float | None:
        return float(pd.Series(self.times).median()) if self.times else None


def run_starts(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per run (process): figure, session, run, start (UTC), gap to the next start."""
    parts = [f.groupby(["session_id", "run"], as_index=False)["timestamp_utc"].first().assign(figure_id=fig_id)
             for fig_id, f in frames.items()]
    starts = pd.concat(parts, ignore_index=True)
    starts["start"] = pd.to_datetime(starts["timestamp_utc"], utc=True)
    starts = starts.sort_values(["session_id", "start"], kind="stable")
    nxt = starts.groupby("session_id")["start"].shift(-1)
    starts["gap_s"] = (nxt - starts["start"]).dt.total_seconds()
    return starts


def run_walls(frame: pd.DataFrame) -> tuple[float, ...]:
    """Each run's recorded wall time (``run_wall_s``, schema 4); () where any run lacks it."""
    if "run_wall_s" not in frame:
        return ()
    walls = frame.groupby(["session_id", "run"])["run_wall_s"].first()
    return () if walls.isna().any() else tuple(float(w) for w in walls)


def figure_times(frames: dict[str, pd.DataFrame], starts: pd.DataFrame | None = None) -> list[FigureTime]:
    """Per figure: its sessions, runs, gaps and recorded wall times (``starts``: :func:`run_starts` of
    ``frames``, where the caller has them)."""
    starts = run_starts(frames) if starts is None else starts
    out = []
    for fig_id, part in starts.groupby("figure_id", sort=True):
        out.append(FigureTime(fig_id, ", ".join(sorted(part["session_id"].unique())), len(part),
                              tuple(part["gap_s"].dropna()), run_walls(frames[fig_id])))
    return out


def session_start(session_id: str) -> datetime | None:
    """``20261201T122010Z-4fa5`` -> its UTC start; None for an id of another shape."""
    try:
        return datetime.strptime(session_id.split("-")[0], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def session_spans(frames: dict[str, pd.DataFrame],
                  starts: pd.DataFrame | None = None) -> list[tuple[str, int, int, float | None]]:
    """Per session: (id, figures, runs, seconds from the session's start to its last run's start)
    (``starts``: :func:`run_starts` of ``frames``, where the caller has them)."""
    starts = run_starts(frames) if starts is None else starts
    out = []
    for sid, part in starts.groupby("session_id", sort=True):
        begun = session_start(sid)
        span = (part["start"].max() - begun).total_seconds() if begun else None
        out.append((sid, part["figure_id"].nunique(), len(part), span))
    return out


def seconds(value: float | None) -> str:
    """A wall time to the second the data resolves: ``7 s``, ``11 min 5 s``."""
    if value is None:
        return "—"
    whole = int(round(value))
    return f"{whole // 60} min {whole % 60} s" if whole >= 60 else f"{whole} s"


def seconds_fine(value: float) -> str:
    """A run's wall time where the runner recorded it to the millisecond: ``7.4 s``."""
    return f"{value:.1f} s" if value < 60 else seconds(value)


def table(frames: dict[str, pd.DataFrame], link, budgets: dict[str, float] | None = None) -> str:
    """The Markdown of the wall-time section: per figure (with its budget per run, where
    declared), then the estimated whole suite and each session's measured span.
    ``link(fig_id)`` gives the figure's /bench link target."""
    budgets = budgets or {}
    starts = run_starts(frames)  # once, for the figures and the sessions
    times = figure_times(frames, starts)
    rows = ["| figure | runs | one run: median [min..max] | measured as | budget per run | session |",
            "|---|---|---|---|---|---|"]
    for t in times:
        show = seconds_fine if t.walls else seconds
        lo, hi = (show(min(t.times)), show(max(t.times))) if t.times else ("", "")
        spread = f" [{lo}..{hi}]" if lo != hi else ""
        budget = budgets.get(t.fig_id)
        over = budget is not None and t.median is not None and t.median > budget
        budget_text = "—" if budget is None else f"{seconds_fine(budget)}" + (" (**over**)" if over else "")
        median = show(t.median) if t.median is not None else "—"
        if over and t.walls and median == seconds_fine(budget):  # 5.004 s over 5.0 s would read 5.0 s
            median = f"{t.median:.3f} s"  # the runner records it to the millisecond
        rows.append(f"| [{t.fig_id}]({link(t.fig_id)}) | {t.runs} | "
                    f"{median}{spread} | "
                    f"{'the run' if t.walls else 'gap to the next start'} | {budget_text} | "
                    f"`{fmt.esc(t.session)}` |")
    known = [t for t in times if t.median is not None]
    total = sum(t.median * t.runs for t in known)
    planned = [budgets[t.fig_id] * t.runs for t in times if t.fig_id in budgets]
    over = [t.fig_id for t in known if t.fig_id in budgets and t.median > budgets[t.fig_id]]
    budget_line = (f" The figures' budgets, times their runs, add up to **{seconds(sum(planned))}**; "
                   + (f"{fmt.count(len(over), 'figure')} took longer than the budget at the median "
                      f"({', '.join(over)})." if over else "every figure kept to its budget at the median.")
                   if planned else "")
    paragraphs = ["\n".join(rows),
                  f"Whole suite, estimated as each figure's median run times its runs, summed over "
                  f"{fmt.count(len(known), 'figure')}: **{seconds(total)}** "
                  "(executing the lesson and building the site come on top)." + budget_line +
                  " A median leaves out the slow runs, so on a busy machine this reads low: where a "
                  "session below holds every figure, its span is the time a whole session took."]
    for sid, n_figs, n_runs, span in session_spans(frames, starts):
        paragraphs.append(f"Session `{fmt.esc(sid)}`: {fmt.count(n_figs, 'figure')}, "
                          f"{fmt.count(n_runs, 'run')} kept, {seconds(span)} from its start to its "
                          "last run's start.")
    return "\n\n".join(paragraphs) + "\n"


def marker(args: list[str], ctx) -> str:
    """``<!-- bench:walltime [machine=...] -->``: the wall-time section for one machine (default:
    the machine the prose quotes), from every figure with valid results there."""
    opts = dict(a.split("=", 1) for a in args if "=" in a)
    cat = ctx.catalog
    with_results = [m for _, m in cat.frames]
    # the prose machine; a results folder without it (a reader's own run) quotes its first machine
    machine = opts.get("machine") or (cat.preferred if cat.preferred in with_results else None) \
        or (cat.all_machines() or [None])[0]
    frames = {f: cat.frames[(f, machine)] for f in sorted(cat.figures) if (f, machine) in cat.frames}
    if not frames:
        raise ValueError(f"no valid results on {machine}")
    head = (f"Measured on **{fmt.esc(machine)}**, from each run's recorded wall time, or where results "
            "lack it, from the process start times they record.\n\n")
    refused = [(fig_id, cat.errors[(fig_id, machine)]) for fig_id in sorted(cat.figures)
               if (fig_id, machine) in cat.errors]
    for _, problem in refused:  # left out of the sums below: said where the sums are
        ctx.on_problem(problem)
    boxes = "".join(f"{render.error_box(fig_id, problem)}\n\n" for fig_id, problem in refused)
    budgets = {f: float(cat.figures[f].extra["budget_s"]) for f in frames
               if "budget_s" in cat.figures[f].extra}
    return head + boxes + table(frames, lambda fig_id: urls.rel(ctx.src_uri, urls.figure_src(fig_id)), budgets)
