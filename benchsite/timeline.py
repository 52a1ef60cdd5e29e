"""A small timeline of one traced step per mode, drawn from a trace's own events.

The input is the side file a figure script wrote (``<stem>.timeline.json``):
``{"steps": [{"mode", "window_us", "step_us", "busy_us", "gap_us", "gap_at_us":
[start, end], "lanes": [...], "events": [[lane, start_us, dur_us, kind, name], ...]}]}``,
times relative to the window's start. The output is inline SVG (text in
``currentColor``, so it reads in light and dark mode), one panel per step.
Plain functions, no mkdocs import; every text from the file is escaped.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import fmt
from .fmt import esc

COLOURS = {  # kind -> fill; host parts in greys and blue, compiled-op scopes in colour
    "step": "#d0d0d0", "prepare": "#8c8c8c", "read-loss": "#c44e52", "dispatch": "#4c72b0",
    "forward": "#55a868", "backward": "#dd8452", "loss": "#8172b3", "update": "#937860",
    "other": "#b0b0b0",
}
WIDTH, LEFT, RIGHT = 720, 92, 12  # px: drawing width, lane-label column, right margin
LANE_H, TOP = 16, 22  # px per lane, header height of a panel


class TimelineError(ValueError):
    """The side file is not a timeline this module can draw."""


def load(path: Path) -> list[dict]:
    try:
        steps = json.loads(path.read_text(encoding="utf-8"))["steps"]
        for s in steps:
            float(s["window_us"]), list(s["lanes"]), list(s["events"]), list(s["gap_at_us"])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise TimelineError(f"{path}: not a timeline side file ({err})") from err
    return steps


def _panel(step: dict, y0: float) -> tuple[list[str], float]:
    span = float(step["window_us"]) or 1.0
    scale = (WIDTH - LEFT - RIGHT) / span
    x = lambda t: LEFT + max(0.0, min(span, float(t))) * scale  # noqa: E731
    lanes = [str(name) for name in step["lanes"]]
    height = TOP + LANE_H * len(lanes) + 18
    gap = (f"gap {fmt.time_one(float(step['gap_us']) * 1e-6)} of a "
           f"{fmt.time_one(float(step['step_us']) * 1e-6)} step")
    out = [f'<text x="0" y="{y0 + 14}" font-weight="bold">{esc(step["mode"])}</text>',
           f'<text x="{LEFT}" y="{y0 + 14}">{esc(gap)}</text>']
    g0, g1 = (x(t) for t in step["gap_at_us"])
    if len(lanes) > 1:  # the gap, shaded across the compute lanes
        out.append(f'<rect x="{g0:.1f}" y="{y0 + TOP + LANE_H}" width="{max(g1 - g0, 0.5):.1f}" '
                   f'height="{LANE_H * (len(lanes) - 1)}" fill="#c44e52" fill-opacity="0.18">'
                   f'<title>{esc(gap)}</title></rect>')
    for i, name in enumerate(lanes):
        y = y0 + TOP + LANE_H * i
        out.append(f'<text x="0" y="{y + 12}">{esc(name)}</text>')
        out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y + LANE_H - 0.5}" y2="{y + LANE_H - 0.5}" '
                   'stroke="currentColor" stroke-opacity="0.15"/>')
    for lane, start, dur, kind, name in step["events"]:
        if not 0 <= int(lane) < len(lanes):
            raise TimelineError(f"event {name!r} on lane {lane}, but there are {len(lanes)} lanes")
        x0, x1 = x(start), x(float(start) + float(dur))
        y = y0 + TOP + LANE_H * int(lane) + (5 if int(lane) == 0 and kind != "step" else 1)
        h = 3 if kind == "step" else LANE_H - 7 if int(lane) == 0 else LANE_H - 3  # host: step bar above its parts
        tip = f"{name} ({kind}): {fmt.time_one(float(dur) * 1e-6)}"
        out.append(f'<rect x="{x0:.1f}" y="{y}" width="{max(x1 - x0, 0.6):.1f}" height="{h}" '
                   f'fill="{COLOURS.get(str(kind), COLOURS["other"])}"><title>{esc(tip)}</title></rect>')
    axis_y = y0 + TOP + LANE_H * len(lanes) + 12
    for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<text x="{LEFT + frac * (WIDTH - LEFT - RIGHT):.1f}" y="{axis_y}" font-size="10.5" '
                   f'text-anchor="{"start" if frac == 0 else "end" if frac == 1 else "middle"}">'
                   f'{esc(fmt.time_one(frac * span * 1e-6) if frac else "0")}</text>')
    return out, height


def svg(steps: list[dict], title: str = "") -> str:
    """One panel per step; a legend of the kinds that appear."""
    body, y = [], 0.0
    for step in steps:
        part, height = _panel(step, y)
        body += part
        y += height + 8
    order = list(COLOURS)
    kinds = sorted({str(e[3]) for s in steps for e in s["events"]},
                   key=lambda k: (order.index(k) if k in order else len(order), k))
    lx = 0.0
    for kind in kinds:
        body.append(f'<rect x="{lx}" y="{y + 2}" width="10" height="10" '
                    f'fill="{COLOURS.get(kind, COLOURS["other"])}"/>')
        body.append(f'<text x="{lx + 14}" y="{y + 11}">{esc(kind)}</text>')
        lx += 18 + 7 * len(kind) + 12
    height = y + 18
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height:.0f}" '
            f'width="{WIDTH}" height="{height:.0f}" font-size="11" fill="currentColor" role="img" '
            f'aria-label="{esc(title)}"><title>{esc(title)}</title>' + "".join(body) + "</svg>")


def html(path: Path, title: str = "", link: str = "") -> str:
    """The figure block a page embeds: the SVG and a caption naming its source file."""
    steps = load(path)
    source = f'<a href="{esc(link)}" download><code>{esc(path.name)}</code></a>' if link else \
        f"<code>{esc(path.name)}</code>"
    return (f'<figure class="bench-chart bench-timeline" markdown="0">{svg(steps, title)}'
            f"<figcaption>One step of each mode, drawn from the trace's own events (lanes: the host "
            f"thread's annotations, then each compute thread's compiled operations, coloured by the "
            f"named scope they came from); the shaded band is the gap before the next step's first "
            f"operation. Source: {source}.</figcaption></figure>")
