"""The lesson's diagram: which interval each timing measures, as a hand-built SVG.

Positions are illustrative units on a 0-100 time axis: they show the order of
events, never measured durations, so the picture carries no numbers at all.
Plain standard library, so the lesson can draw it with nothing installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape

WIDTH = 600  # px: fits the page's content column unscaled, so the text stays legible
LABEL_W = 160  # px reserved left of the time axis for row labels
RIGHT_PAD = 14  # px
ROW_H = 30  # px per lane or interval row

COLOURS = {
    "host": "#4c78a8",  # the Python thread is busy
    "device": "#f58518",  # the device computes or copies
    "wait": "#9d9d9d",  # the host waits for the device
    "free": "#ffffff",  # the host could do other work
    "stage": "#72b7b2",  # trace / lower / compile: host-side, once per specialisation
    "counts": "#2e7d32",  # an interval that contains the work it claims to time
    "misses": "#c62828",  # an interval that misses work, or holds work it should not
    "other": "#6a3d9a",  # a different, separately named question
}


@dataclass(frozen=True)
class Box:
    """A stretch of activity on a lane, from ``start`` to ``stop`` (axis units)."""

    start: float
    stop: float
    label: str
    kind: str


@dataclass(frozen=True)
class Interval:
    """What a timer measures: the clock starts at ``start`` and stops at ``stop``."""

    start: float
    stop: float
    label: str
    kind: str


@dataclass(frozen=True)
class Panel:
    title: str
    lanes: tuple[tuple[str, tuple[Box, ...]], ...]
    intervals: tuple[Interval, ...]


def _x(t: float) -> float:
    return LABEL_W + t / 100 * (WIDTH - LABEL_W - RIGHT_PAD)


def _text(x: float, y: float, text: str, *, size: int = 13, anchor: str = "start",
          weight: str = "normal", fill: str = "#222") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{fill}">{escape(text)}</text>')


def _box(y: float, box: Box) -> str:
    # The host's free time is drawn dashed: nothing runs there unless you schedule it.
    dash = ' stroke-dasharray="4 3"' if box.kind == "free" else ""
    ink = "#222" if box.kind in ("free", "wait") else "#fff"
    x0, x1 = _x(box.start), _x(box.stop)
    return (f'<rect x="{x0:.1f}" y="{y + 4:.1f}" width="{x1 - x0:.1f}" height="{ROW_H - 8}" '
            f'rx="3" fill="{COLOURS[box.kind]}" stroke="#555"{dash}/>'
            + _text((x0 + x1) / 2, y + ROW_H / 2 + 4, box.label, size=12, anchor="middle", fill=ink))


def _interval(y: float, iv: Interval) -> str:
    x0, x1, mid = _x(iv.start), _x(iv.stop), y + ROW_H / 2
    colour = COLOURS[iv.kind]
    return "".join([
        (f'<line x1="{x0:.1f}" y1="{mid:.1f}" x2="{x1:.1f}" y2="{mid:.1f}" stroke="{colour}" '
         'stroke-width="4"/>'),
        # A triangle where the clock starts, a bar where it stops.
        (f'<path d="M{x0 - 6:.1f},{mid - 7:.1f} L{x0 + 4:.1f},{mid:.1f} '
         f'L{x0 - 6:.1f},{mid + 7:.1f} Z" fill="{colour}"/>'),
        f'<rect x="{x1 - 2:.1f}" y="{mid - 8:.1f}" width="4" height="16" fill="{colour}"/>',
        _text(LABEL_W - 10, mid + 4, iv.label, anchor="end", fill=colour),
    ])


def _panel(top: float, panel: Panel) -> tuple[str, float]:
    """SVG for one panel and the y where the next one may start."""
    parts = [_text(10, top + 16, panel.title, size=15, weight="bold")]
    y = top + 26
    for name, boxes in panel.lanes:
        parts.append(_text(LABEL_W - 10, y + ROW_H / 2 + 4, name, anchor="end", weight="bold"))
        parts.extend(_box(y, b) for b in boxes)
        y += ROW_H
    y += 6
    parts.extend(_interval(y + i * ROW_H, iv) for i, iv in enumerate(panel.intervals))
    return "".join(parts), y + len(panel.intervals) * ROW_H + 14


WARM = Panel(
    "A. One call after warm-up: what does each timer hold?",
    lanes=(
        ("host (Python)", (Box(0, 20, "place inputs", "host"),
                           Box(23, 36, "dispatch", "host"),
                           Box(36, 52, "free", "free"),
                           Box(52, 99, "wait for ready", "wait"))),
        ("device", (Box(6, 20, "copy in", "device"),
                    Box(36, 99, "compute the result", "device"))),
    ),
    intervals=(
        Interval(23, 36, "dispatch only", "misses"),
        Interval(23, 99, "completed (warm)", "counts"),
        Interval(0, 36, "broken: setup, no wait", "misses"),
        Interval(0, 99, "end-to-end request", "other"),
    ),
)

FIRST = Panel(
    "B. The first call of a fresh function: T_first = T_compile + T_warm",
    lanes=(
        ("host (Python)", (Box(0, 9, "trace", "stage"), Box(9, 20, "lower", "stage"),
                           Box(20, 54, "compile", "stage"), Box(54, 67, "dispatch", "host"),
                           Box(67, 99, "wait for ready", "wait"))),
        ("device", (Box(67, 99, "first execute", "device"),)),
    ),
    intervals=(
        Interval(0, 54, "T_compile", "other"),
        Interval(54, 99, "first execute ≈ T_warm", "other"),
        Interval(0, 99, "first call (cold)", "counts"),
    ),
)

FOOTNOTE = ("Lengths show order only, not measured durations. "
            "Triangle: the clock starts. Bar: it stops.")


def interval_diagram() -> str:
    """The whole diagram as one standalone SVG document."""
    body_a, y = _panel(8, WARM)
    body_b, y = _panel(y, FIRST)
    height = y + 18
    return "".join([
        (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0f}" '
         f'viewBox="0 0 {WIDTH} {height:.0f}" role="img" font-family="sans-serif" '
         'aria-label="Timelines of host and device work with the interval each timer measures">'),
        "<title>The interval each timing measures</title>",
        # An opaque background keeps the figure legible on a dark page theme.
        f'<rect width="{WIDTH}" height="{height:.0f}" fill="#fff"/>',
        body_a, body_b,
        _text(10, height - 8, FOOTNOTE, size=12, fill="#555"),
        "</svg>",
    ])
