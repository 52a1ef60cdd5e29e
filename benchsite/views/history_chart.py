"""The history of a figure on a machine: the block a machine's page (and the figure's page, of the
reference machine) shows, with its chart of the headline cell across the sessions, drawn from the
sessions (``model/sessions.py``) with the chart kit (``axes.py``, ``templates/axes.html``), each point
a link to that session's page; then each step between consecutive sessions (:func:`step_shown`, which the
changes page shows too), from the cells the model compared (``model/cells.py``).
"""

from __future__ import annotations

import math

from markupsafe import Markup

from benchsite.core.urls import session_path
from benchsite.model import stats
from benchsite.model.cells import Cell
from benchsite.model.figures import Figure
from benchsite.model.sessions import Session
from benchsite.views import axes, compare, fmt, quantities, render
from benchsite.views.html import render as template

WIDTH, HEIGHT = 440, 220  # the history chart's user units: legible when a phone shrinks it
LEFT, RIGHT, TOP, BOTTOM = 62, 12, 12, 40
MAX_LABELS = 4  # session labels under the chart; past this, every k-th
FONT = 13  # templates/history_chart.html's font-size
# The labels under the chart (a date and time, a jax version: digits mostly) are measured with the
# kit's rule at a glyph of 0.55 of the size, not its default 0.6: DejaVu Sans, among the widest,
# draws "2026-12-01 21:17" 103 units wide at 13 (0.49 a character), and the pages were laid out
# with 0.55 (the default would space the labels of a three-session history every other one).
LABEL_GLYPH, LABEL_GAP = 0.55, 6


def _tick(value: float, is_ratio: bool) -> str:
    if value == 0:
        return "0"
    return f"{value:g}×" if is_ratio else axes.time_tick(value, figures=3)


def _when(s: Session) -> str:
    """The label under a session: its UTC start from the id (``2026-12-01 14:21``), else its date."""
    sid = s.id
    if len(sid) >= 13 and sid[:8].isdigit() and sid[8] == "T" and sid[9:13].isdigit():
        return f"{sid[:4]}-{sid[4:6]}-{sid[6:8]} {sid[9:11]}:{sid[11:13]}"
    return s.date


def chart(points: list[Session], link) -> Markup | None:
    """The headline cell across sessions: median and [min..max] of the run medians per session,
    each a link to that session's page; ``None`` when no session has the headline."""
    shown = [(s, s.table.headline) for s in points if s.table.headline]
    if not shown:
        return None
    is_ratio = shown[-1][1].is_ratio
    high = max(h.summary.high for _, h in shown)
    top, step = axes.nice_top(high if high > 0 else 1.0)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    y = lambda v: round(TOP + plot_h * (1 - v / top), 1)  # noqa: E731
    # Labels every k-th session, k such that neighbours do not run into each other, each kept
    # inside the chart (moved in from the edge by what it would lose there).
    label_w = axes.text_width(max(max(len(_when(s)), len(f"jax {s.values('jax_version')}")) for s, _ in shown),
                              FONT, LABEL_GLYPH)
    every = max(math.ceil(len(shown) / MAX_LABELS), math.ceil((label_w + LABEL_GAP) * len(shown) / plot_w))
    out = []
    for i, (s, h) in enumerate(shown):
        x = round(LEFT + plot_w * (i + 0.5) / len(shown), 1)
        out.append({"x": x, "y": y(h.summary.median), "low": y(h.summary.low), "high": y(h.summary.high),
                    "href": link(session_path(s.fig_id, s.machine, s.id)), "label": i % every == 0,
                    "label_x": round(min(max(x, label_w / 2), WIDTH - label_w / 2), 1),
                    "date": _when(s), "jax": s.values("jax_version"),
                    "title": f"session {s.id}: {quantities.headline(h)} "
                             f"({h.summary.runs} runs, jax {s.values('jax_version')})"})
    ticks = [{"y": y(t), "text": _tick(t, is_ratio)} for t in axes.linear_ticks(top, step)]
    what = shown[-1][1].what
    return template("history_chart.html", width=WIDTH, height=HEIGHT, font=FONT, left=LEFT, right=WIDTH - RIGHT,
                    top=TOP, bottom=HEIGHT - BOTTOM, points=out, ticks=ticks, what=what,
                    line=" ".join(f"{'M' if i == 0 else 'L'}{p['x']} {p['y']}" for i, p in enumerate(out)))


def step_shown(old: Session, new: Session, found: list[Cell], env: list[tuple[str, str, str]], link) -> dict:
    """One step between two sessions, as ``templates/history.html`` and ``templates/changes.html``
    show it: the verdict on every cell (``found``, new against old) and what changed around it
    (``env``: ``sessions.env_diff``); ``link`` makes a site path a URL from the page."""
    moved = [c for c in found if c.verdict == stats.RESULT]
    return {"old": old.id, "new": new.id, "old_href": link(session_path(old.fig_id, old.machine, old.id)),
            "new_href": link(session_path(new.fig_id, new.machine, new.id)),
            "count": compare.results_count(found), "moved": [_moved(c) for c in moved],
            "env": env, "table": Markup(compare.html_table(found, new.id, old.id, link(render.RULE_PATH)))}


def _moved(c: Cell) -> dict:
    return {"cell": f"{c.quantity} at {c.group}" if c.group else c.quantity,
            "before": compare.side_text(c, c.b), "after": compare.side_text(c, c.a), "ratio": f"{fmt.sig(c.ratio)}×"}


def history_block(fig: Figure, machine: str, sessions: list[Session], steps: list[dict], errors: list[str],
                  link) -> str:
    """The history block of a figure on a machine: the sessions that could not be read (``errors``,
    file:line), the chart, then each step (:func:`step_shown`), newest first."""
    heads = [s.table.headline for s in sessions if s.table.headline]
    return str(template("history.html", where=f"{fig.id} on {machine}", chart=chart(sessions, link),
                        what=heads[-1].what if heads else "", sessions=len(sessions), steps=steps,
                        compared=fig.compare is not None,
                        made_by=fig.compare.made_by if fig.compare is not None else "",
                        errors=[render.error_box(fig.id, m) for m in errors]))
