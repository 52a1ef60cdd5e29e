"""Charts of every sample, drawn at build time as small inline SVG, one ``<svg>`` a panel.

Hand-built vector markup through ``templates/chart.html``: a few milliseconds and
tens of kilobytes a chart, the same bytes for the same data. Text and axes are in
``currentColor`` so one chart reads in the light and the dark scheme; each panel
has its own ``viewBox`` and scales to its box, so on a phone the panels stack one
a row with legible text. The dots of one run of one variant are one path of
zero-length segments with round caps (``M x y h0``, then relative moves), which
``docs/assets/bench-chart.js`` decodes for its hover tooltip.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from markupsafe import Markup, escape

from benchsite.model import stats
from benchsite.model.table import Table
from benchsite.views import axes
from benchsite.views.html import render

# Paul Tol's "muted" scheme (colour-blind safe) and a mid grey: ten run colours. Its three
# darkest (indigo, wine, green) are lightened for the dark scheme in bench.css, which selects
# them by these values.
PALETTE = ("#CC6677", "#332288", "#DDCC77", "#117733", "#88CCEE", "#882255", "#44AA99", "#999933",
           "#AA4499", "#888888")

WIDTH = 320  # user units; a panel is 300-440 CSS px wide (~360 on a phone): 11 units read as >= 10 px
FONT = 11  # ticks and variant names
TITLE_FONT = 12
PLOT_H = 180
RIGHT = 10
LOG_ABOVE = 10.0  # max/min across a figure's panels above which its time axis is logarithmic
ROTATE = 40  # degrees, when variant names do not fit their slot
FEW = 10  # samples per run at most: bigger dots, so one sample still shows round its median tick


# A panel's samples: a DataFrame, or its columns as arrays (``columns``), which every step below reads.
Samples = pd.DataFrame | Mapping[str, np.ndarray]


def columns(rows: Samples) -> Mapping[str, np.ndarray]:
    """A panel's samples as one array a column (those of :data:`COLUMNS` it has; ``time_s`` as
    floats), taken once: each step of a chart asks them again, and a DataFrame's column costs
    about as much as a small chart's arithmetic on it. Arrays are handed back as they are."""
    if not isinstance(rows, pd.DataFrame):
        return rows
    return {c: rows[c].to_numpy(dtype=float) if c == "time_s" else rows[c].to_numpy() for c in COLUMNS if c in rows}


def y_label(rows: Samples) -> str:
    """What the panel's y axis holds, from the rows' boundary: a wall time is not per call."""
    rows = columns(rows)
    kinds = set(rows["boundary"].tolist()) if "boundary" in rows else set()
    if kinds == {"wall"}:
        return "wall time"
    if kinds == {"loop"}:
        return "time per call (loop mean)"
    if kinds and kinds <= {"completed", "dispatch", "first-call", "clock"}:
        return "time per call"
    return "time"


def use_log(panels: list[tuple[str, Samples]]) -> bool:
    """One scale type per figure: log when its times span more than a decade, whatever the panel,
    so panels side by side read the same way."""
    times = np.concatenate([columns(rows)["time_s"] for _, rows in panels])
    low, high = _span(times)
    return bool(len(times)) and high > LOG_ABOVE * low


def _span(times: np.ndarray) -> tuple[float, float]:
    """``Series.min`` and ``Series.max`` of the times: NaN skipped (NaN when nothing is left)."""
    kept = times[~np.isnan(times)]
    return (float(kept.min()), float(kept.max())) if kept.size else (math.nan, math.nan)


def _tenths(n: int) -> str:
    """An integer count of tenths as the shortest decimal: 125 -> 12.5, 120 -> 12, -3 -> -0.3."""
    sign = "-" if n < 0 else ""
    whole, tenth = divmod(abs(n), 10)
    return f"{sign}{whole}.{tenth}" if tenth else f"{sign}{whole}"


REACH = 10 * 1000  # tenths: every coordinate and step inside a panel (a few hundred units) is within
_STEP = [_tenths(n) for n in range(-REACH, REACH + 1)]  # formatted once: most of a chart's time otherwise
_DY = [("" if t[0] == "-" else " ") + t for t in _STEP]  # "-" separates the numbers by itself


def dot_path(xs: np.ndarray, ys: np.ndarray) -> str:
    """Dots as zero-length segments: the first absolute, the rest relative moves, in tenths of a unit
    (integer deltas, so rounding never drifts). One run's path: :func:`marks` writes
    every run of a variant by it at once (``tests/test_chart.py`` holds each path to this)."""
    return _paths(xs, ys, [0], [len(xs)])[0]


def _paths(xs: np.ndarray, ys: np.ndarray, starts: list[int], ends: list[int]) -> list[str]:
    """:func:`dot_path` of each slice ``starts[i]:ends[i]`` of the dots, from one rounding of them all."""
    x10, y10 = np.rint(xs * 10).astype(int), np.rint(ys * 10).astype(int)
    dx, dy = (np.diff(x10) + REACH).tolist(), (np.diff(y10) + REACH).tolist()
    x10, y10 = x10.tolist(), y10.tolist()
    return [f"M{_tenths(x10[a])} {_tenths(y10[a])}h0" + "".join(
        [f"m{_STEP[p]}{_DY[q]}h0" for p, q in zip(dx[a:b - 1], dy[a:b - 1])]) for a, b in zip(starts, ends)]


def _wrap(text: str, per_line: int) -> list[str]:
    """A panel title split at ", " into lines of at most ``per_line`` characters (where one part
    alone is not longer)."""
    lines: list[str] = []
    for part in text.split(", "):
        if lines and len(lines[-1]) + 2 + len(part) <= per_line:
            lines[-1] += ", " + part
        else:
            lines.append(part)
    return lines


def _jitter(n: int) -> np.ndarray:
    """A fixed low-discrepancy spread in [-0.5, 0.5): deterministic, and no clumps as random has."""
    return _jitter_at(np.arange(n))


def _jitter_at(k: np.ndarray) -> np.ndarray:
    """:func:`_jitter` of each dot's place ``k`` in its run."""
    return np.modf(k * 0.6180339887 + 0.5)[0] - 0.5


def _f(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


@dataclass(frozen=True)
class Frame:
    """Where a panel's parts go, in user units: margins sized from its texts, no font needed."""
    title_lines: list[str]
    top: float
    left: float
    slot: float  # width per variant
    strip: float  # width per run within a variant
    rotate: bool  # variant names slanted
    name_w: float  # widest variant name

    @property
    def bottom(self) -> float:
        return self.top + PLOT_H

    @property
    def height(self) -> float:
        below = 10 + self.name_w * math.sin(math.radians(ROTATE)) + FONT if self.rotate else 12 + FONT
        return self.bottom + below


@dataclass(frozen=True)
class Measured:
    """What the chart kit measured of one chart's texts (``axes.text_width``, ``axes.chars_fit``):
    each variant name's width, a title line's characters, and each panel's widest tick label's width."""
    names: list[float]
    per_line: int
    ticks: list[float]


def frame(label: str, variants: list[str], tick_w: float, measured: Measured, runs: int) -> Frame:
    lines = _wrap(label, measured.per_line) if label else []
    top = 8 + len(lines) * (TITLE_FONT + 3) + (6 if lines else 2)
    left = max(30 + tick_w, 52)
    slot = (WIDTH - left - RIGHT) / max(len(variants), 1)
    name_w = measured.names
    rotate = max(name_w) > slot - 4
    if rotate:  # the first name, slanted leftwards, must stay inside the box
        left = max(left, name_w[0] * math.cos(math.radians(ROTATE)) - slot / 2 + 4)
        slot = (WIDTH - left - RIGHT) / len(variants)
    return Frame(lines, top, left, slot, slot * 0.84 / max(runs, 1), rotate, max(name_w))


def marks(rows: Samples, variants: list[str], runs: list, fr: Frame, y_of) -> tuple[list, list, list, int]:
    """Per variant: the band between the lowest and highest run median, and per run its dots (one
    path) and its median tick; and the most samples a run has."""
    rows = columns(rows)
    times = np.asarray(rows["time_s"], dtype=float)
    order = np.argsort(rows["sample"], kind="stable") if "sample" in rows else np.arange(len(times))
    times = times[order]  # in sample order
    ys = y_of(times)
    samples = rows["sample"][order] if "sample" in rows else np.arange(len(times))
    cells, cell_medians = _cells(rows["variant"][order], rows["run"][order], times)
    # Every (variant, run) drawn, variant by variant, its runs in legend order; then every number of
    # the panel at once: each dot placed and rounded (``_paths``: dot_path's rule, the same numbers as
    # each run's dots alone), each median tick and band placed (elementwise, as one at a time).
    drawn = [(i, variant, [(j, run, cells[(variant, run)]) for j, run in enumerate(runs) if (variant, run) in cells])
             for i, variant in enumerate(variants)]
    drawn = [(i, variant, here) for i, variant, here in drawn if here]
    most = max((len(at) for at in cells.values()), default=0)
    if not drawn:
        return [], [], [], most
    here_all = [cell for _, _, here in drawn for cell in here]
    x0s = [fr.left + fr.slot * i for i, _, _ in drawn]
    centres = [x0 + fr.slot * 0.08 + fr.strip * (j + 0.5) for x0, (_, _, here) in zip(x0s, drawn) for j, _, _ in here]
    counts = np.array([len(at) for _, _, at in here_all])
    ends = np.cumsum(counts)
    starts = ends - counts
    k = np.arange(int(ends[-1])) - np.repeat(starts, counts)  # each dot's place in its run
    xs = np.rint(np.repeat(np.array(centres), counts) + _jitter_at(k) * fr.strip * 0.8)  # whole units
    every = np.concatenate([at for _, _, at in here_all])
    runs_d = _paths(xs, ys[every], starts.tolist(), ends.tolist())
    # Which runs' samples are numbered 0, 1, 2, ... in order (no data-samples then).
    plain = np.logical_and.reduceat(samples[every] == k, starts).tolist()
    run_medians = [float(cell_medians[(variant, run)]) for _, variant, here in drawn for _, run, _ in here]
    median_ys = y_of(run_medians).tolist()
    per_variant = np.cumsum([0] + [len(here) for _, _, here in drawn]).tolist()
    spans = [run_medians[a:b] for a, b in zip(per_variant[:-1], per_variant[1:])]
    band_ys = y_of([v for span in spans for v in (max(span), min(span))]).tolist()
    tick_w, band_w = _f(fr.strip * 0.9), _f(fr.slot * 0.9)  # every median tick's width, every band's
    run_attr = {run: escape(str(run)) for run in runs}  # as the template would write them
    groups, bands, medians = [], [], []
    for n, ((_, variant, _), x0) in enumerate(zip(drawn, x0s)):
        y_lo, y_hi = band_ys[2 * n], band_ys[2 * n + 1]
        bands.append({"x": _f(x0 + fr.slot * 0.05), "y": _f(y_lo), "w": band_w, "h": _f(max(y_hi - y_lo, 1.0))})
        paths = []
        for c in range(per_variant[n], per_variant[n + 1]):
            j, run, at = here_all[c]
            # the path is digits, signs, dots, spaces and path letters (_paths): nothing to escape
            shown = "" if plain[c] else f' data-samples="{escape(" ".join(map(str, samples[at].tolist())))}"'
            paths.append(f'<path data-run="{run_attr[run]}"{shown} stroke="{_STROKE[j % len(PALETTE)]}" '
                         f'd="{runs_d[c]}"/>\n')
            medians.append(f"M{_f(centres[c] - fr.strip * 0.45)} {_f(median_ys[c])}h{tick_w}")
        # A run's dots as finished markup (escaped as the template would): a chart has hundreds of
        # paths, and Jinja's loop over them was most of its rendering.
        groups.append({"variant": variant, "paths": Markup("".join(paths))})
    return groups, bands, medians, most


_STROKE = [str(escape(colour)) for colour in PALETTE]  # as the template would write them


def _cells(variants: np.ndarray, runs: np.ndarray, times: np.ndarray) -> tuple[dict, dict]:
    """(variant, run) -> the positions of its samples (ascending), and -> their median time: what
    ``groupby(["variant", "run"], sort=False)`` gives as ``indices`` and ``["time_s"].median()``, in
    numpy (one stable sort of the cells), each median ``stats.median_of``'s, as pandas takes it (the
    times are validated: no NaN)."""
    if not len(variants):
        return {}, {}
    # Each sample's cell as one number: its variant's and its run's place among their distinct values.
    variant_codes, variant_values = pd.factorize(variants, use_na_sentinel=False)
    run_codes, run_values = pd.factorize(runs, use_na_sentinel=False)
    codes = variant_codes.astype(np.intp) * len(run_values) + run_codes
    by_code = np.argsort(codes, kind="stable")  # each cell's positions together, ascending
    sorted_codes = codes[by_code]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    stops = np.r_[starts[1:], len(codes)]
    variant_values, run_values = variant_values.tolist(), run_values.tolist()
    cells, medians = {}, {}
    for start, stop in zip(starts.tolist(), stops.tolist()):
        at = by_code[start:stop]
        first = int(at[0])
        key = (variant_values[variant_codes[first]], run_values[run_codes[first]])
        cells[key] = at
        medians[key] = stats.median_of(sorted(times[at].tolist()))
    return cells, medians


def panel(label: str, rows: Samples, variants: list[str], runs: list, log: bool, title: str,
          ax: axes.TimeAxis, tick_w: float, measured: Measured) -> dict:
    """Everything the template prints for one panel, every number already formatted."""
    fr = frame(label, variants, tick_w, measured, len(runs))

    def y_of(seconds) -> np.ndarray:
        return fr.bottom - ax.frac(np.asarray(seconds, dtype=float)) * PLOT_H

    groups, bands, medians, most = marks(rows, variants, runs, fr, y_of)
    what = f"{y_label(rows)}, {'log scale' if log else 'linear from 0'}"
    return {
        "height": _f(fr.height), "left": _f(fr.left), "right": _f(WIDTH - RIGHT), "top": _f(fr.top),
        "bottom": _f(fr.bottom), "mid": _f((fr.top + fr.bottom) / 2), "title_lines": fr.title_lines,
        "ticks": [{"y": _f(float(y_of([v])[0])), "text": t} for v, t in ax.ticks], "tick_x": _f(fr.left - 5),
        "groups": groups, "bands": bands, "medians": "".join(medians), "dot": "5" if most <= FEW else "3.4",
        "names": [{"x": _f(fr.left + fr.slot * (i + 0.5)), "text": v} for i, v in enumerate(variants)],
        "rotate": fr.rotate, "names_y": _f(fr.bottom + 8 + FONT), "y_title": what,
        "axis": f"{'log' if log else 'lin'} {ax.low!r} {ax.high!r} {_f(fr.top)} {_f(fr.bottom)}",
        "label": f"{title}{', ' + label if label else ''}: {what}, every sample by variant and run",
    }


def sample_chart(panels: list[tuple[str, Samples]], variants: list[str], title: str) -> str:
    """Every sample of one figure on one machine, one ``<svg>`` per (label, rows), as HTML text."""
    panels = [(label, columns(rows)) for label, rows in panels]
    runs = sorted({run for _, rows in panels for run in pd.unique(rows["run"])})
    log = use_log(panels) if panels else False
    # The chart kit, in one go: the texts' widths (the variant names, a title line), each panel's time
    # axis (``axes.time_axis``: its domain, ticks and labels) and its widest label's width.
    names = [axes.text_width(v, FONT) for v in variants] or [0.0]
    per_line = max(axes.chars_fit(WIDTH - 8, TITLE_FONT), 8)
    scales = [axes.time_axis(*_span(rows["time_s"]), log) for _, rows in panels]
    measured = Measured(names, per_line, [axes.text_width(max(len(t) for _, t in ax.ticks), FONT) for ax in scales])
    drawn = [panel(label, rows, variants, runs, log, title, ax, tick_w, measured)
             for (label, rows), ax, tick_w in zip(panels, scales, measured.ticks)]
    legend = [{"run": str(r), "colour": PALETTE[j % len(PALETTE)]} for j, r in enumerate(runs)]
    return str(render("chart.html", title=title, panels=drawn, legend=legend, width=WIDTH, font=FONT,
                      title_font=TITLE_FONT, rotate=ROTATE))


# --- the chart of a table model ------------------------------------------------------------

COLUMNS = ("variant", "run", "sample", "boundary", "time_s")  # what a chart reads of each row's samples


def table_input(tab: Table) -> tuple[list[tuple[str, Mapping[str, np.ndarray]]], list[str], str]:
    """What the chart of one table is drawn from: (label, samples) per row, each row's samples its
    values of :data:`COLUMNS` (:func:`columns`), the variants, the title. The columns are taken from
    the table's frame once and each row's cut from them by its samples' places there (a frame of
    each row's columns cost more than drawing it)."""
    frame = tab.frame
    whole = columns(frame)
    index = frame.index
    by_position = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1  # a loaded file's
    panels = []
    for row in tab.rows:
        labels = row.samples.index
        at = labels.to_numpy() if by_position else index.get_indexer(labels)
        panels.append((row.label, {c: values[at] for c, values in whole.items()}))
    return panels, list(tab.variants), table_title(tab)


def table_title(tab: Table) -> str:
    return f"{tab.fig.title} on {tab.machine}"


def table_chart(tab: Table) -> str:
    """The chart of every sample of one figure on one machine (a table model): inline SVG, one a panel."""
    return sample_chart(*table_input(tab))
