"""A small timeline of one traced step per mode, drawn from a trace's own events.

The input is the side file a figure script wrote (``<stem>.timeline.json``):
``{"steps": [{"mode", "window_us", "step_us", "busy_us", "gap_us", "gap_at_us":
[start, end], "lanes": [...], "events": [[lane, start_us, dur_us, kind, name], ...]}]}``,
times relative to the window's start. The output is inline SVG (text in
``currentColor``, so it reads in light and dark mode), one panel per step.
Plain functions, no mkdocs import; the SVG is templates/timeline.html, which escapes every text.
"""

from __future__ import annotations

import json
from pathlib import Path

from markupsafe import Markup

from benchsite.views import axes, fmt
from benchsite.views.html import render

COLOURS = {  # kind -> fill; host parts in greys and blue, compiled-op scopes in colour
    "step": "#d0d0d0", "prepare": "#8c8c8c", "read-loss": "#c44e52", "dispatch": "#4c72b0",
    "forward": "#55a868", "backward": "#dd8452", "loss": "#8172b3", "update": "#937860",
    "other": "#b0b0b0",
}
WIDTH, LEFT, RIGHT = 720, 92, 12  # px: drawing width, lane-label column, right margin
LANE_H, TOP = 16, 22  # px per lane, header height of a panel
FONT = 11  # templates/timeline_svg.html's font-size
# The legend's kinds are spaced by the kit's text width at 7 units a character of 11-unit text (a
# glyph of 7/11 of the size, not the kit's default 0.6): the legend was laid out so, and keeps its place.
LEGEND_GLYPH = 7 / 11


# The mode whose every step reads its loss back before the next step is dispatched
# (bench_scripts/trace_gaps.py, host_bound): the device has finished the step before, so the first
# operation after the step's dispatch begins is the step's own.
HOST_BOUND = "host-bound"


class TimelineError(ValueError):
    """The side file is not a timeline this module can draw."""


def load(path: Path) -> list[dict]:
    """The steps of a timeline side file, each checked against the format above; anything else is a
    :class:`TimelineError` naming the file and the step and field that are wrong (the bench:timeline
    marker adds the page and line), never another exception from drawing it."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:  # nested past Python's limit
        raise TimelineError(f"{path}: not a timeline side file ({type(err).__name__}: {err})") from None
    steps = doc.get("steps") if isinstance(doc, dict) else None
    if not isinstance(steps, list) or not steps:
        raise TimelineError(f"{path}: not a timeline side file (no steps: 'steps' is no list of at least one)")
    for i, step in enumerate(steps, 1):
        if (why := _step_problem(step)) is not None:
            raise TimelineError(f"{path}: step {i}: {why}")
    return steps


# The largest time a side file may hold, in µs (about eleven days): a drawing's positions and a
# header's times stay ordinary numbers; past it, or a window shorter than a nanosecond, the SVG
# would hold inf and nan.
LONGEST_US = 1e12
SHORTEST_WINDOW_US = 1e-3


def _number(value: object) -> bool:
    """A JSON number a side file may hold as a time (not a flag: JSON's true is Python's True, an
    int; an integer too large for a float is no time either)."""
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and -LONGEST_US <= value <= LONGEST_US)  # NaN compares false: refused too


def _step_problem(step: object) -> str | None:
    """What is wrong with one step of a side file, or None."""
    if not isinstance(step, dict):
        return "not an object"
    if not isinstance(step.get("mode"), str) or not step["mode"]:
        return "'mode' is not a name"
    for key in ("window_us", "step_us", "busy_us", "gap_us"):
        if not _number(step.get(key)) or step[key] < 0:
            return f"{key!r} is not a time (a number from 0 to {LONGEST_US:g} µs): {step.get(key)!r:.40}"
    if step["window_us"] < SHORTEST_WINDOW_US:
        return f"'window_us' is {step['window_us']!r:.40}: a window to draw is at least {SHORTEST_WINDOW_US:g} µs"
    gap = step.get("gap_at_us")
    if not isinstance(gap, list) or len(gap) != 2 or not all(map(_number, gap)):
        return f"'gap_at_us' is not two times: {gap!r:.60}"
    lanes = step.get("lanes")
    if not isinstance(lanes, list) or not lanes or not all(isinstance(name, str) for name in lanes):
        return f"'lanes' is not a list of lane names: {lanes!r:.60}"
    events = step.get("events")
    if not isinstance(events, list):
        return f"'events' is not a list: {events!r:.60}"
    for n, event in enumerate(events, 1):
        if not (isinstance(event, list) and len(event) == 5):
            return f"event {n} is not [lane, start_us, dur_us, kind, name]: {event!r:.60}"
        lane, start, dur, kind, name = event
        if not (isinstance(lane, int) and not isinstance(lane, bool) and 0 <= lane < len(lanes)):
            return f"event {n} ({name!r:.40}) is on lane {lane!r:.20}, but there are {len(lanes)} lanes"
        if not (_number(start) and _number(dur) and dur >= 0):
            return f"event {n} ({name!r:.40}) has no start and length in µs: {start!r:.30}, {dur!r:.30}"
        if not (isinstance(kind, str) and isinstance(name, str)):
            return f"event {n}'s kind and name are not text: {kind!r:.30}, {name!r:.30}"
    return None


def dispatch_reading(step: dict) -> str | None:
    """For a host-bound step: when the drawn step's first operation began against its own
    ``dispatch`` slice, which the gaps chapter's hypothesis about dispatch asks. The step's first
    operation is where its period starts (``gap_at_us``'s end, the next step's first operation, less
    ``step_us``); its dispatch is the last that began by then, even before the window opened (the
    window opens a little before that operation, and the next step's dispatch is in it too). None for
    another mode (a run-ahead step's operations queue behind earlier dispatches), and where the
    window holds no such dispatch or no operation there, or the device was busy when it began."""
    if str(step["mode"]) != HOST_BOUND:
        return None
    events = [(int(lane), float(start), float(dur), str(kind)) for lane, start, dur, kind, _ in step["events"]]
    ops = [(start, start + dur) for lane, start, dur, _ in events if lane > 0]
    begins = float(step["gap_at_us"][1]) - float(step["step_us"])  # the drawn step's first operation
    first = min((start for start, _ in ops if abs(start - begins) < 0.05), default=None)  # both rounded to 0.01
    calls = [(start, start + dur) for lane, start, dur, kind in events
             if lane == 0 and kind == "dispatch" and start <= begins]
    if first is None or not calls:
        return None
    begun, returned = max(calls)
    if any(start < begun < end for start, end in ops):  # the device was busy: not a host-bound start
        return None
    if first >= returned:
        return f"first operation began {fmt.time_one((first - returned) * 1e-6)} after dispatch returned"
    before = fmt.time_one((returned - first) * 1e-6)
    return f"first operation began while dispatch was open, {before} before it returned"


def _panel(step: dict, y0: float) -> tuple[dict, float]:
    """One step's panel, every position as the text the SVG shows (templates/timeline.html)."""
    span = float(step["window_us"]) or 1.0
    scale = (WIDTH - LEFT - RIGHT) / span
    x = lambda t: LEFT + max(0.0, min(span, float(t))) * scale  # noqa: E731
    lanes = [str(name) for name in step["lanes"]]
    height = TOP + LANE_H * len(lanes) + 18
    gap = (f"gap {fmt.time_one(float(step['gap_us']) * 1e-6)} of a "
           f"{fmt.time_one(float(step['step_us']) * 1e-6)} step")
    g0, g1 = (x(t) for t in step["gap_at_us"])
    shade = None
    if len(lanes) > 1:  # the gap, shaded across the compute lanes
        shade = {"x": f"{g0:.1f}", "y": f"{y0 + TOP + LANE_H}", "w": f"{max(g1 - g0, 0.5):.1f}",
                 "h": f"{LANE_H * (len(lanes) - 1)}"}
    rows = [{"name": name, "text_y": f"{y0 + TOP + LANE_H * i + 12}",
             "line_y": f"{y0 + TOP + LANE_H * i + LANE_H - 0.5}"} for i, name in enumerate(lanes)]
    events = []
    for lane, start, dur, kind, name in step["events"]:  # each checked by load()
        x0, x1 = x(start), x(float(start) + float(dur))
        y = y0 + TOP + LANE_H * int(lane) + (5 if int(lane) == 0 and kind != "step" else 1)
        h = 3 if kind == "step" else LANE_H - 7 if int(lane) == 0 else LANE_H - 3  # host: step bar above its parts
        events.append({"x": f"{x0:.1f}", "y": f"{y}", "w": f"{max(x1 - x0, 0.6):.1f}", "h": f"{h}",
                       "fill": COLOURS.get(str(kind), COLOURS["other"]),
                       "tip": f"{name} ({kind}): {fmt.time_one(float(dur) * 1e-6)}"})
    axis_y = y0 + TOP + LANE_H * len(lanes) + 12
    ticks = [{"x": f"{LEFT + frac * (WIDTH - LEFT - RIGHT):.1f}", "y": f"{axis_y}",
              "anchor": "start" if frac == 0 else "end" if frac == 1 else "middle",
              "text": axes.time_tick(frac * span * 1e-6, figures=3) if frac else "0"} for frac in axes.fractions(4)]
    return {"mode": str(step["mode"]), "head_y": f"{y0 + 14}", "gap": gap, "reading": dispatch_reading(step),
            "shade": shade, "lanes": rows,
            "events": events, "ticks": ticks}, height


def svg(steps: list[dict], title: str = "") -> str:
    """One panel per step; a legend of the kinds that appear (templates/timeline_svg.html)."""
    panels, y = [], 0.0
    for step in steps:
        panel, height = _panel(step, y)
        panels.append(panel)
        y += height + 8
    order = list(COLOURS)
    kinds = sorted({str(e[3]) for s in steps for e in s["events"]},
                   key=lambda k: (order.index(k) if k in order else len(order), k))
    legend, lx = [], 0.0
    for kind in kinds:
        legend.append({"x": f"{round(lx, 1)}", "text_x": f"{round(lx + 14, 1)}",
                       "fill": COLOURS.get(kind, COLOURS["other"]), "kind": kind})
        lx += 18 + axes.text_width(kind, FONT, LEGEND_GLYPH) + 12
    return str(render("timeline_svg.html", width=WIDTH, font=FONT, height=f"{y + 18:.0f}", title=title, left=LEFT,
                      right=WIDTH - RIGHT, panels=panels, legend=legend, legend_y=f"{y + 2}",
                      legend_text_y=f"{y + 11}"))


def html(path: Path, title: str = "", link: str = "") -> str:
    """The figure block a page embeds: the SVG and a caption naming its source file."""
    return str(render("timeline.html", svg=Markup(svg(load(path), title)), url=link, file=path.name))
