"""The chart kit: what every hand-drawn SVG chart measures and ticks with.

Four engines draw SVG by hand (``chart.py``: every sample; ``roofline.py``: the roofline;
``history_chart.py``: a figure across sessions; ``timeline.py``: a traced step). They share:

* :func:`text_width`, the one rule for how wide a text is without a font: ``GLYPH`` of the
  font size a character, with the font size as an argument (and the glyph factor, for the two
  engines whose pages were laid out with another: see their call sites). A chart sizes its
  margins and spaces its labels from it without measuring a font it cannot know.
* :func:`nice_top` and :func:`linear_ticks`: a linear axis from zero to a round top, four or
  five ticks a step of 1, 2, 2.5 or 5 times a power of ten apart.
* :func:`decades`, :func:`log_ticks` and :func:`log_axis`: log axes, from decade ticks
  between whole decades (the roofline) to 1-2-5 ticks that always give a panel two (the
  sample charts).
* :func:`number` and :func:`time_tick`: tick labels, a time in one unit to four significant
  figures at most (``2.5 ms``), or in the three-figure form of ``fmt.time_one`` (``2.50 ms``).
* :func:`fractions`: ticks at equal fractions of a span (the timeline's five times).
* :func:`time_axis`: the sample charts' time axis (:class:`TimeAxis`), linear from zero or log,
  its ticks labelled with their unit, and where a time falls on it.

The axis lines, grid and tick texts are drawn by ``templates/axes.html``'s macros, which the
chart templates import. Plain functions, no mkdocs import, nothing here knows a figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from benchsite.views import fmt

GLYPH = 0.6  # a character's width as a fraction of the font size: an average sans-serif glyph
TOLERANCE = 1e-9  # relative: a tick that floating point puts a hair outside its range still counts
STEPS = (1, 2, 2.5, 5, 10)  # the round multiples of a power of ten a linear step may be


# --- how wide a text is ------------------------------------------------------------------

def text_width(text: str | int, font: float, glyph: float = GLYPH) -> float:
    """The width of ``text`` (or of that many characters) drawn at ``font`` units, in the same
    units, by the one rule: ``glyph`` of the font size a character."""
    n = text if isinstance(text, int) else len(text)
    return n * glyph * font


def chars_fit(width: float, font: float, glyph: float = GLYPH) -> int:
    """How many characters of ``font``-unit text fit in ``width`` units (the inverse rule)."""
    return int(width / (glyph * font))


# --- linear axes ---------------------------------------------------------------------------

def nice_top(high: float, steps: int = 4) -> tuple[float, float]:
    """(top, step) of a linear axis from zero: a round step (1, 2, 2.5 or 5 times a power of ten)
    of at least ``high / steps``, and the first multiple of it at or above ``high`` (so ``steps``
    or, the step being at most twice that, one fewer steps from zero to the top). ``high``
    must be positive: a caller whose values are all zero chooses what its empty axis spans."""
    if not high > 0 or not math.isfinite(high):
        raise ValueError(f"a linear axis from zero needs a positive finite top, got {high!r}")
    raw = high / steps
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in STEPS if m * mag >= raw * (1 - TOLERANCE))
    return math.ceil(high / step * (1 - TOLERANCE)) * step, step


def linear_ticks(top: float, step: float) -> list[float]:
    """Every multiple of ``step`` from zero to ``top``, each computed afresh (no drift)."""
    return [i * step for i in range(round(top / step) + 1)]


def fractions(n: int) -> list[float]:
    """``n + 1`` ticks at equal fractions of a span: 0, 1/n, ..., 1."""
    return [i / n for i in range(n + 1)]


# --- log axes ------------------------------------------------------------------------------

def decades(low: float, high: float) -> tuple[float, float]:
    """The whole decades around ``low`` and ``high``: 10^floor(log10 low), 10^ceil(log10 high)."""
    return 10.0 ** math.floor(math.log10(low)), 10.0 ** math.ceil(math.log10(high))


def _candidates(low: float, high: float, mantissas: tuple[float, ...], every: int) -> list[float]:
    first, last = math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1
    return [m * 10.0 ** e for e in range(first, last + 1) if (e - first) % every == 0 for m in mantissas]


def log_ticks(low: float, high: float, mantissas: tuple[float, ...] = (1.0,), every: int = 1) -> list[float]:
    """The ticks ``m * 10^e`` (``m`` in ``mantissas``, every ``every``-th decade) from ``low`` to
    ``high``, ends included (within ``TOLERANCE``); may be empty or one for a narrow range."""
    if not (0 < low <= high) or not math.isfinite(high):
        raise ValueError(f"a log axis needs 0 < low <= high, got {low!r}, {high!r}")
    return [t for t in _candidates(low, high, mantissas, every)
            if low * (1 - TOLERANCE) <= t <= high * (1 + TOLERANCE)]


def log_axis(low: float, high: float) -> tuple[float, float, list[float]]:
    """(low, high, ticks) of a log axis round ``low``..``high``: padded by a twentieth of its
    decades (at least a hundredth of a decade), 1-2-5 ticks over up to two and a half decades, one
    a decade beyond, every other past seven; a narrow range widens to the 1-2-5 ticks around it so
    it always has two."""
    if not (0 < low <= high) or not math.isfinite(high):
        raise ValueError(f"a log axis needs 0 < low <= high, got {low!r}, {high!r}")
    span = math.log10(high / low)
    pad = 10 ** (0.05 * max(span, 0.2))
    low, high = low / pad, high * pad
    mantissas, every = ((1.0, 2.0, 5.0), 1) if span <= 2.5 else ((1.0,), 2 if span > 7 else 1)
    ticks = log_ticks(low, high, mantissas, every)
    if len(ticks) < 2:
        fine = _candidates(low, high, (1.0, 2.0, 5.0), 1)
        low, high = max(t for t in fine if t <= low), min(t for t in fine if t >= high)
        ticks = [t for t in fine if low <= t <= high]
    return low, high, ticks


# --- tick labels ---------------------------------------------------------------------------

def number(value: float) -> str:
    """A tick's number: at most four significant figures, no trailing zeros (``2.5``, ``120``)."""
    return f"{round(value, 9):.4g}"


def time_tick(seconds: float, unit_of: float | None = None, figures: int | None = None) -> str:
    """A time tick with its unit: the unit that reads ``unit_of`` (default: ``seconds`` itself)
    as at least 1, so every tick of an axis can share its top tick's unit; the number as
    :func:`number` gives it, or to ``figures`` significant figures (``fmt.sig``: ``2.50 ms``)."""
    scale, unit = fmt.time_unit(seconds if unit_of is None else unit_of)
    value = seconds / scale
    return f"{number(value) if figures is None else fmt.sig(value, figures)} {unit}"


# --- the sample charts' time axis -----------------------------------------------------------

@dataclass(frozen=True)
class TimeAxis:
    """A chart's time axis: the domain in seconds and its ticks with their labels."""
    log: bool
    low: float
    high: float
    ticks: tuple[tuple[float, str], ...]

    def frac(self, seconds: np.ndarray) -> np.ndarray:
        """0 at the bottom of the plot, 1 at the top."""
        if self.log:
            lo = math.log10(self.low)
            return (np.log10(seconds) - lo) / (math.log10(self.high) - lo)
        return (seconds - self.low) / (self.high - self.low)


def time_axis(low: float, high: float, log: bool) -> TimeAxis:
    """The axis of times from ``low`` to ``high`` seconds: log, :func:`log_axis`'s domain and 1-2-5
    ticks, each tick in its own unit; else from zero to a round top (:func:`nice_top`), every tick
    in the top tick's unit."""
    if log:
        low, high, ticks = log_axis(low, high)
        return TimeAxis(True, low, high, tuple((t, time_tick(t)) for t in ticks))
    top, step = nice_top(high if high > 0 else 1e-9)
    return TimeAxis(False, 0.0, top, tuple((t, time_tick(t, unit_of=top)) for t in linear_ticks(top, step)))
