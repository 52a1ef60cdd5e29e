"""Ceilings, roofline and crossovers: derived per run from figures' rows, never stored.

Plain functions, DataFrames in and HTML/SVG text out (no mkdocs import):

* :func:`ceilings` reads ``fig-machine-peak``'s probe rows (``probe=compute``: a
  large matmul per dtype; ``probe=memory``: streams beyond the last-level cache)
  and gives, per run, the compute ceiling of each dtype (FLOP/s of the probe
  matmul) and the memory ceiling (the fastest stream's bytes per second).
* :func:`placed` puts rows that carry ``flops`` and ``bytes_moved`` (any figure)
  on that roofline, run by run: arithmetic intensity, achieved FLOP/s, achieved
  bytes/s, the attainable rate ``min(compute ceiling, bandwidth x intensity)``,
  the percentage of it reached, which ceiling binds, and, where the vendor
  table (``peaks.csv``) knows the device kind and dtype, the percentage of the
  vendor's figure. Unknown hardware gets no vendor column: never a guess.
* :func:`crossover` finds, per run, where two variants' time curves over a size
  ladder cross (interpolated in log size and log ratio between ladder steps).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from markupsafe import Markup

from benchsite.model import stats
from benchsite.model.table import sort_key
from benchsite.views import axes, fmt
from benchsite.views.html import render
from benchsite.views.quantities import SI_PREFIXES, si_range

PEAKS_CSV = Path(__file__).with_name("peaks.csv")
PEAK_COLUMNS = ("device_kind", "dtype", "peak_flops", "peak_bytes_per_s", "source", "note")


# --- the vendor table --------------------------------------------------------------------

@dataclass(frozen=True)
class VendorPeak:
    device_kind: str
    dtype: str
    flops: float
    bytes_per_s: float
    source: str
    note: str


def vendor_peaks(path: Path = PEAKS_CSV) -> list[VendorPeak]:
    """Every row of the vendor table; a row without a source is an error, not a number."""
    rows = []
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != PEAK_COLUMNS:
            raise ValueError(f"{path}: columns must be {', '.join(PEAK_COLUMNS)}")
        for line, row in enumerate(reader, 2):
            if not row["source"].strip():
                raise ValueError(f"{path}:{line}: a vendor peak without a source")
            rows.append(VendorPeak(row["device_kind"], row["dtype"], float(row["peak_flops"]),
                                   float(row["peak_bytes_per_s"]), row["source"], row["note"]))
    return rows


def vendor_peak(device_kind: str, dtype: str, peaks: list[VendorPeak] | None = None) -> VendorPeak | None:
    """The vendor's figure for exactly this device kind and dtype, else ``None``."""
    for p in vendor_peaks() if peaks is None else peaks:
        if p.device_kind == device_kind and p.dtype == dtype:
            return p
    return None


# --- ceilings ----------------------------------------------------------------------------

def _p(frame: pd.DataFrame, key: str) -> pd.Series:
    col = f"p_{key}"
    return frame[col].astype(str) if col in frame else pd.Series("", index=frame.index)


def _per_run_rate(rows: pd.DataFrame, column: str) -> pd.Series:
    """``column`` (flops or bytes_moved) over each run's median time."""
    return _rates(rows, [column])[column]


def _rates(rows: pd.DataFrame, columns: list[str]) -> dict[str, pd.Series]:
    """:func:`_per_run_rate` of each column: each run's median of the column over that run's median
    time (:func:`_per_run_rates`), as a Series by run."""
    runs = rows["run"].to_numpy()
    _, times = stats.per_run_medians(runs, rows["time_s"].to_numpy(dtype=float))
    out = {}
    for col in columns:
        found, rate = _per_run_rates(runs, rows[col].to_numpy(dtype=float), times)
        out[col] = pd.Series(rate, index=pd.Index(found, name="run"))
    return out


@dataclass(frozen=True)
class Ceilings:
    compute: dict[str, pd.Series]  # dtype -> FLOP/s per run
    memory: pd.Series  # bytes/s per run
    device_kind: str


def ceilings(peak_frame: pd.DataFrame) -> Ceilings:
    """Per-run ceilings from fig-machine-peak's probe rows."""
    probe = _p(peak_frame, "probe")
    compute = {str(dtype): _per_run_rate(rows, "flops")
               for dtype, rows in peak_frame[probe == "compute"].groupby("variant")}
    streams = peak_frame[probe == "memory"]
    per_op = [_per_run_rate(rows, "bytes_moved") for _, rows in streams.groupby(_p(streams, "op"))]
    memory = pd.concat(per_op, axis=1).max(axis=1) if per_op else pd.Series(dtype=float)
    kind = str(peak_frame["device_kind"].iloc[0]) if not peak_frame.empty else ""
    return Ceilings(compute, memory, kind)


def ceiling_text(c: Ceilings, kind: str, dtype: str = "float32") -> str:
    values = c.memory if kind == "memory" else c.compute.get(dtype)
    if values is None or values.empty:
        raise ValueError(f"no {kind} ceiling measured" + (f" for {dtype}" if kind == "compute" else ""))
    return si_range(stats.summarize(values), "B/s" if kind == "memory" else "FLOP/s")


# --- placing workloads -------------------------------------------------------------------

@dataclass(frozen=True)
class Placed:
    label: str
    dtype: str
    intensity: float  # FLOP per byte
    flop_rate: stats.Summary | None  # None: a row that moves bytes and computes nothing
    byte_rate: stats.Summary
    of_ceiling: stats.Summary | None  # fraction of the attainable rate on the measured roofline
    bound: str  # "compute" or "memory" (which measured ceiling binds at this intensity), or ""
    of_vendor: stats.Summary | None  # fraction of the vendor roofline, where the vendor is known
    vendor: VendorPeak | None


def _label(first: dict[str, object], keys: list[str]) -> str:
    """A workload's label from its first row's ``p_<key>`` values (the keys the frame has)."""
    return ", ".join(f"{k}={first[k]}" for k in keys if k in first)


def _workloads(frame: pd.DataFrame) -> list[tuple[object, np.ndarray]]:
    """(variant, positions of its rows) per workload with bytes moved: what
    ``frame[bytes_moved > 0].groupby(["variant", "params"], sort=False)`` gives (each workload's
    rows in the frame's order, workloads as first seen, a row with either key missing in none),
    from one factorization of each key instead of a sub-frame a workload."""
    moved = frame["bytes_moved"].to_numpy(dtype=float)
    keep = np.flatnonzero(moved > 0)  # NaN is not > 0
    variant_codes, variants = pd.factorize(frame["variant"].to_numpy()[keep], use_na_sentinel=True)
    params_codes, params = pd.factorize(frame["params"].to_numpy()[keep], use_na_sentinel=True)
    both = (variant_codes >= 0) & (params_codes >= 0)
    keep, variant_codes = keep[both], variant_codes[both]
    if not keep.size:
        return []
    group, _ = pd.factorize(variant_codes.astype(np.int64) * len(params) + params_codes[both])
    order = np.argsort(group, kind="stable")  # workload by workload, each one's rows in the frame's order
    bounds = np.flatnonzero(np.r_[True, group[order][1:] != group[order][:-1], True]).tolist()
    return [(variants[variant_codes[order[a]]], keep[order[a:b]]) for a, b in zip(bounds[:-1], bounds[1:])]


class _PerRun:
    """A per-run quantity (a ceiling, a rate) as plain values: run -> value, and the median of the
    values that are not NaN (``Series.median``'s number): what :func:`placed` asks of each of a
    figure's workloads, without a pandas Series for each."""

    def __init__(self, runs, values) -> None:
        self.at = dict(zip(np.asarray(runs).tolist(), np.asarray(values, dtype=float).tolist()))
        self.median = _median(np.array(list(self.at.values()), dtype=float))

    @classmethod
    def of(cls, series: pd.Series) -> _PerRun:
        return cls(series.index.to_numpy(), series.to_numpy(dtype=float))


def _per_run_rates(runs: np.ndarray, values: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(runs, each run's median of ``values`` over its median time), runs with no rate left out:
    :func:`_rates`' numbers as arrays."""
    found, medians = stats.per_run_medians(runs, values)
    rate = medians / times
    keep = ~np.isnan(rate)
    return found[keep], rate[keep]


def _against(runs: np.ndarray, rate: np.ndarray, ceiling: _PerRun, paired: bool) -> np.ndarray:
    """Per run: ``rate`` over the ceiling of the same run (``paired``; the median ceiling where that run
    has none), else over the median ceiling; runs with no ratio left out."""
    if paired:
        at = [ceiling.at.get(r, math.nan) for r in runs.tolist()]
        under = np.array([v if v == v else ceiling.median for v in at], dtype=float)
    else:
        under = np.full(rate.size, ceiling.median, dtype=float)
    out = rate / under
    return out[~np.isnan(out)]


def _attainable(peak: _PerRun, memory: _PerRun, intensity: float) -> _PerRun:
    """Per run, the lower of the compute ceiling and the memory ceiling times ``intensity`` (either
    alone where a run has one only): the measured roofline at that intensity."""
    runs = sorted(peak.at.keys() | memory.at.keys())
    lowest = []
    for run in runs:
        both = [v for v in (peak.at.get(run, math.nan), memory.at.get(run, math.nan) * intensity) if v == v]
        lowest.append(min(both) if both else math.nan)
    return _PerRun(runs, lowest)


def _median(values: np.ndarray) -> float:
    """``Series.median`` of ``values``: NaN skipped (NaN when nothing is left)."""
    kept = sorted(v for v in values.tolist() if v == v)
    return stats.median_of(kept) if kept else math.nan


def placed(frame: pd.DataFrame, c: Ceilings, keys: list[str],
           peaks: list[VendorPeak] | None = None, paired: bool = True) -> list[Placed]:
    """Every (variant, params) of ``frame`` with bytes moved, on the roofline of ``c``.
    Rows with FLOPs too sit at their arithmetic intensity; rows that only move bytes (a copy)
    are set against the memory ceiling alone (``intensity`` 0, no FLOP rate). The
    percentages are per run, then median [min..max] across runs. ``paired``: the rows
    and the ceilings come from the same runs (fig-machine-peak's own rows), so each run is
    set against its own ceilings; otherwise (another figure, other processes) against the
    median ceilings. Each workload's numbers in plain values (a hundred machine folders place
    thousands of workloads), as pandas would give them: each run's median, NaN skipped."""
    out = []  # (sort key, Placed): by intensity, then variant, then each parameter in number order
    peaks = vendor_peaks() if peaks is None else peaks  # the vendor table read once, not once a workload
    memory = _PerRun.of(c.memory)
    compute = {dtype: _PerRun.of(series) for dtype, series in c.compute.items() if not series.empty}
    columns = {col: frame[col].to_numpy() for col in ("run", "dtype", "device_kind", "boundary") if col in frame}
    times_all, flops_every, moved_all = (frame[col].to_numpy(dtype=float) for col in ("time_s", "flops", "bytes_moved"))
    by_key = {k: frame[f"p_{k}"].to_numpy() for k in keys if f"p_{k}" in frame}
    for _variant, at in _workloads(frame):
        runs, times = columns["run"][at], times_all[at]
        flops_all, moved = flops_every[at], moved_all[at]
        flops = _median(flops_all)
        computes = flops == flops and flops > 0
        nbytes = _median(moved)
        intensity = flops / nbytes if computes else 0.0
        _, run_times = stats.per_run_medians(runs, times)
        brate_runs, brate = _per_run_rates(runs, moved, run_times)
        rate_runs, rate = _per_run_rates(runs, flops_all, run_times) if computes else (None, np.array([]))
        dtype = str(columns["dtype"][at[0]])
        peak = compute.get(dtype)
        of_ceiling, bound = None, ""
        if not computes and not c.memory.empty:
            per_run = _against(brate_runs, brate, memory, paired)
            of_ceiling, bound = (stats.summarize(per_run) if per_run.size else None), "memory"
        elif peak is not None and not c.memory.empty:
            per_run = _against(rate_runs, rate, _attainable(peak, memory, intensity), paired)
            of_ceiling = stats.summarize(per_run) if per_run.size else None
            bound = "memory" if memory.median * intensity < peak.median else "compute"
        vendor = vendor_peak(str(columns["device_kind"][at[0]]), dtype, peaks)
        of_vendor = None
        if vendor is not None:
            of_vendor = stats.summarize(rate / min(vendor.flops, vendor.bytes_per_s * intensity)) if computes \
                else stats.summarize(brate / vendor.bytes_per_s)
        first = {k: values[at[0]] for k, values in by_key.items()}
        label = _label(first, keys) or str(_variant)
        if str(_variant) != dtype and label != str(_variant):  # variants that are not dtypes tell rows apart
            label = f"{_variant}: {label}"
        if "boundary" in columns and set(columns["boundary"][at].tolist()) == {"dispatch"}:
            label += " (a dispatch time: the work had not finished, so this rate was never reached)"
            of_ceiling = of_vendor = None  # no share of a roof for a rate that never happened
        key = (intensity, str(_variant), *(sort_key(by_key[k][at[0]]) for k in keys if k in by_key))
        out.append((key, Placed(label, dtype, intensity, stats.summarize(rate) if computes else None,
                                stats.summarize(brate), of_ceiling, bound, of_vendor, vendor)))
    return [p for _, p in sorted(out, key=lambda item: item[0])]


def same_runs(frame: pd.DataFrame, peak_frame: pd.DataFrame) -> bool:
    """Whether the rows are the ceiling figure's own (the same processes): then each run is set
    against its own ceilings, else against the median ceilings."""
    return frame is peak_frame or (not frame.empty and not peak_frame.empty and "figure_id" in frame
                                   and frame["figure_id"].iloc[0] == peak_frame["figure_id"].iloc[0])


def _pct(s: stats.Summary | None) -> str:
    if s is None:
        return "—"
    return f"{fmt.percent(s.median)} [{fmt.sig(100 * s.low, 2)}..{fmt.sig(100 * s.high, 2)}]"


def session_note(frame: pd.DataFrame, peak_frame: pd.DataFrame) -> str:
    """Which sessions the rows and the ceilings come from, when they differ (else "")."""
    rows, ceilings = (sorted(map(str, f["session_id"].dropna().unique())) for f in (frame, peak_frame))
    if rows == ceilings:
        return ""
    return (f"The rows come from session {', '.join(rows)} and the ceilings from session {', '.join(ceilings)}: "
            "a share above 100 % says the machine ran faster in one session than in the other, not that a "
            "ceiling was beaten.")


def placed_table(points: list[Placed], source: str, paired: bool = True, sessions: str = "") -> Markup:
    """The workloads as an HTML table: intensity, achieved rates, % of ceilings; ``sessions`` is
    :func:`session_note` (the rows and the ceilings from different sessions)."""
    vendor = any(p.vendor for p in points)
    head = ["workload", "dtype", "FLOP per byte", "achieved FLOP/s", "achieved bytes/s",
            "bound by (measured roofline)", "% of measured ceiling"] + (["% of vendor peak"] if vendor else [])
    body = []
    for p in points:
        cells = [p.label, p.dtype, fmt.sig(p.intensity) if p.flop_rate else "— (moves bytes only)",
                 si_range(p.flop_rate, "FLOP/s") if p.flop_rate else "—",
                 si_range(p.byte_rate, "B/s"), p.bound or "—", _pct(p.of_ceiling)]
        if vendor:
            cells.append(_pct(p.of_vendor) if p.vendor else "no vendor figure")
        body.append(cells)
    sources = sorted({p.vendor.source for p in points if p.vendor})
    against = ("each run's rate is set against that run's ceilings" if paired else
               "each run's rate is set against the median measured ceilings (fig-machine-peak's runs "
               "are other processes)")
    note = (f"Median [min..max] over runs; {against}. "
            + ("Vendor figures: " + "; ".join(sources) + "." if sources else
               "No vendor figure is on record for this device kind: only the measured ceiling is shown.")
            + (f" {sessions}" if sessions else "")
            + (" A share above 100 % of the memory roof beats no ceiling: that roof is measured over arrays "
               "larger than the last-level cache, and data that fits in a cache can be served faster." if any(
                   p.bound == "memory" and p.of_ceiling and p.of_ceiling.median > 1 for p in points) else "")
            + (" A share above 100 % of the compute roof beats no ceiling either: these runs went faster than the "
               "probe's median ceiling, measured in other processes." if not paired and any(
                   p.bound == "compute" and p.of_ceiling and p.of_ceiling.median > 1 for p in points) else ""))
    return render("roofline_table.html", source=source, head=head, body=body, note=note, title=True,
                  key=[5, 6, 7])  # bound by, % of measured ceiling, % of vendor peak


# --- the chart ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Layout:
    """One drawing of the roofline: its viewBox, the plot's box in it (below it the x ticks and the
    x title, left of it the y ticks and the y title), and whether the y ticks name only the SI
    prefix (``100 G``; the y title says FLOP/s) to leave the plot more width."""
    name: str
    w: float
    h: float
    left: float
    right: float  # the plot's right edge's distance from the viewBox's
    top: float
    bottom: float
    font: float
    y_title_x: float = 16
    short_ticks: bool = False


# A desktop column (680 px and wider) draws the wide layout at its size; a narrower one (a phone,
# 390 px: a 358 px column) the narrow one, scaled to the column: 12-unit text in 400 units reads
# 10.7 px there (bench.css picks one by the figure's width, a container query).
WIDE = Layout("wide", 680, 400, 112, 16, 14, 336, 12)
NARROW = Layout("narrow", 400, 440, 66, 18, 14, 372, 12, y_title_x=14, short_ticks=True)
LAYOUTS = (WIDE, NARROW)
FONT = WIDE.font  # both layouts: the leader rule reads it


def _flops_label(value: float, short: bool = False) -> str:
    """A decade tick: ``10 GFLOP/s``, ``1 TFLOP/s``, ``100 MFLOP/s`` (``short``: ``10 G``)."""
    scale, prefix = next(((v, p) for v, p in SI_PREFIXES if value >= v), SI_PREFIXES[-1])
    return f"{value / scale:g} {prefix}" + ("" if short else "FLOP/s")


Box = tuple[float, float, float, float]  # left, top, right, bottom in the plot's units
NEAR = 8  # a label this close to another workload's dot reads as that dot's
LEADER_FROM = 12  # a label whose text ends farther from its dot than this gets a line to it


def _leader_end(x: float, y: float, dx: float, box: Box) -> tuple[float, float] | None:
    """Where a leader from the dot meets its label (the nearer end of its text), or None when the
    text ends within ``LEADER_FROM`` of the dot."""
    end = (box[0] if dx > 0 else box[2], min(max(y, box[1] + 2), box[3] - 2))
    return end if math.hypot(end[0] - x, end[1] - y) > LEADER_FROM else None


def _segment_boxes(x0: float, y0: float, x1: float, y1: float, every: float = 3) -> list[Box]:
    """A line as small boxes about ``every`` units apart, for the overlap counts."""
    steps = max(int(math.hypot(x1 - x0, y1 - y0) / every), 1)
    return [(x0 + (x1 - x0) * k / steps - 1, y0 + (y1 - y0) * k / steps - 1,
             x0 + (x1 - x0) * k / steps + 1, y0 + (y1 - y0) * k / steps + 1) for k in range(steps + 1)]


# Where a label may go, nearest its dot first (right before left at equal distance): (dx, dy) of
# where its text starts (dx > 0) or ends (dx < 0), and its baseline.
SPOTS = [(8, 4), (-8, 4)] + sorted(((dx, dy) for dx in (7, -7, 30, -30, 60, -60)
                                    for dy in (16, -8, 30, -22, 44, -36, 58, -50, 72, -64)),
                                   key=lambda d: (math.hypot(d[0], d[1] - 4), d[0] < 0))


def _hits(box: Box, boxes: list[Box], pad: float = 0) -> int:
    """How many of ``boxes`` ``box`` overlaps or comes within ``pad`` of."""
    return sum(not (box[2] + pad < b[0] or b[2] < box[0] - pad or box[3] + pad < b[1] or b[3] < box[1] - pad)
               for b in boxes)


def _counts(boxes: np.ndarray, fixed: np.ndarray | list[Box], pad: float = 0) -> np.ndarray:
    """:func:`_hits` of each of ``boxes`` (rows: left, top, right, bottom) against ``fixed``, all at
    once: the same comparisons on the same numbers."""
    f = np.asarray(fixed, dtype=float).reshape(-1, 4)
    apart = ((boxes[:, 2:3] + pad < f[:, 0]) | (f[:, 2] < boxes[:, 0:1] - pad)
             | (boxes[:, 3:4] + pad < f[:, 1]) | (f[:, 3] < boxes[:, 1:2] - pad))
    return (~apart).sum(axis=1)


def _place_label(x: float, y: float, width: float, taken: list[Box] | np.ndarray, labels: list[Box],
                 dots: list[Box] | np.ndarray, leaders: list[Box] | None = None, lay: Layout = WIDE
                 ) -> tuple[float, float, str, tuple[float, float] | None, int]:
    """Where a dot's label goes: of a few spots around the dot (``SPOTS``), inside the plot, the one
    that overlaps least (another label counts most, then lying within ``NEAR`` of another workload's
    dot, then the samples of lines it crosses, all of them less than one such dot; its leader line
    through a label, or the label over an earlier leader, counts as a label); of equals the
    nearest. With it, where a leader line from the dot meets the
    label when the label's text ends more than ``LEADER_FROM`` from the dot, or None (in a crowd,
    which label is whose is then drawn, not guessed), and the spot's score. What does not change
    while labels are placed (``taken``: a roofline's sampled roofs are hundreds of boxes; ``dots``)
    is counted for every spot at once, and may come as arrays, made once for all the labels."""
    dots = np.asarray(dots, dtype=float).reshape(-1, 4)
    others = dots[(dots != (x - 5, y - 5, x + 5, y + 5)).any(axis=1)]  # every dot's box but this one's
    inside = []
    for dx, dy in SPOTS:
        left = x + dx if dx > 0 else x + dx - width
        box = (left, y + dy - lay.font, left + width, y + dy + 3)
        if lay.left < box[0] and box[2] < lay.w - lay.right and lay.top < box[1] and box[3] < lay.bottom:
            inside.append((dx, dy, box))
    boxes = np.array([box for _, _, box in inside], dtype=float).reshape(-1, 4)
    best = None
    for (dx, dy, box), near, over in zip(inside, _counts(boxes, others, NEAR).tolist(), _counts(boxes, taken).tolist()):
        end = _leader_end(x, y, dx, box)
        line = _segment_boxes(x, y, *end) if end else []
        crossed = sum(_hits(b, labels) for b in line) + _hits(box, leaders or [])  # a leader through a label
        score = 1000 * (_hits(box, labels) + crossed) + 100 * near + min(over, 99)
        if best is None or score < best[0]:
            best = (score, dx, dy, box)
        if score == 0:
            break
    if best is None:  # nowhere inside the plot: beside the dot, whatever it covers
        best = (0, 8, 4, (x + 8, y + 4 - lay.font, x + 8 + width, y + 7))
    score, dx, dy, box = best
    labels.append(box)
    leader = _leader_end(x, y, dx, box)
    if leader and leaders is not None:
        leaders += _segment_boxes(x, y, *leader)
    return x + dx, y + dy, "start" if dx > 0 else "end", leader, score


CAPTION = ("Roofline of {title}: each dot is a workload at its arithmetic intensity, at the median of its runs' "
           "achieved FLOP/s (bar: lowest to highest run); solid lines are the measured roofs (the memory roof is "
           "the same for every dtype), dashed lines the vendor's where the device kind is on record. Workloads "
           "that move bytes and compute nothing are in the table only.")


def roofline_svg(points: list[Placed], c: Ceilings, title: str) -> Markup:
    """Intensity against achieved FLOP/s, log-log, under the measured roofline of each
    dtype (solid) and the vendor's (dashed) where it is known. Hand-built SVG
    (``templates/roofline.html``), text in ``currentColor``: the same bytes for the same data."""
    from benchsite.views.chart import PALETTE

    if c.memory.empty or not c.compute:
        raise ValueError("no ceilings measured")
    bw = float(c.memory.median())
    dots = [p for p in points if p.flop_rate]
    dtypes = sorted(c.compute)
    vendors = {d: vendor_peak(c.device_kind, d) for d in dtypes}
    peaks = {d: float(c.compute[d].median()) for d in dtypes}
    xs = [p.intensity for p in dots] + [peaks[d] / bw for d in dtypes]
    ys = [p.flop_rate.low for p in dots] + [p.flop_rate.high for p in dots] + list(peaks.values())
    ys += [v.flops for v in vendors.values() if v]
    x_lo, x_hi = axes.decades(min(xs) / 2, max(xs) * 2)
    y_lo, y_hi = axes.decades(min(ys) / 1.5, max(ys) * 1.5)

    # The measured bandwidth is one for every dtype: its slanted roof is drawn once, in the ink
    # colour, and each dtype's compute roof is a flat line from its ridge point.
    colour = {d: PALETTE[i % len(PALETTE)] for i, d in enumerate(dtypes)}
    top_peak = max(peaks.values())
    legend = [{"colour": "currentColor", "dash": False, "text": "measured memory roof (bandwidth × intensity)"}]
    for d in dtypes:
        legend.append({"colour": colour[d], "dash": False, "text": f"measured compute roof, {d}"})
        if vendors[d]:
            legend.append({"colour": colour[d], "dash": True, "text": f"vendor roofline, {d}"})
    texts = [p.label.replace("op=", "").replace(", n=", " n=") for p in dots]
    texts = [t if p.dtype == "float32" else f"{t} ({p.dtype})" for t, p in zip(texts, dots)]
    svgs = [_drawing(lay, dots, texts, dtypes, vendors, peaks, bw, colour, top_peak, (x_lo, x_hi), (y_lo, y_hi))
            for lay in LAYOUTS]
    return render("roofline.html", title=title, font=FONT, svgs=svgs, legend=legend,
                  caption=CAPTION.format(title=title))


def _drawing(lay: Layout, dots: list[Placed], texts: list[str], dtypes: list[str], vendors: dict,
             peaks: dict[str, float], bw: float, colour: dict[str, str], top_peak: float,
             x_range: tuple[float, float], y_range: tuple[float, float]) -> dict:
    """One layout's coordinates and texts for ``templates/roofline.html``: ticks, roofs, dots and
    their labels placed in that layout's plot."""
    (x_lo, x_hi), (y_lo, y_hi) = x_range, y_range
    left, top, bottom = lay.left, lay.top, lay.bottom
    right = lay.w - lay.right  # the plot's right edge

    def x_of(v: float) -> float:
        return left + (math.log10(v) - math.log10(x_lo)) / (math.log10(x_hi) - math.log10(x_lo)) * (right - left)

    def y_of(v: float) -> float:
        v = min(max(v, y_lo), y_hi)
        return bottom - (math.log10(v) - math.log10(y_lo)) / (math.log10(y_hi) - math.log10(y_lo)) * (bottom - top)

    def segments(peak: float, bandwidth: float, flat_only: bool) -> list[tuple[float, float, float, float]]:
        """The roof as plot-space segments: the slanted memory part (unless ``flat_only``) and the flat."""
        ridge = min(max(peak / bandwidth, x_lo), x_hi)
        start = max(x_lo, y_lo / bandwidth)  # where the slanted roof enters the plot
        flat = [(x_of(ridge), y_of(min(peak, bandwidth * ridge)), x_of(x_hi), y_of(peak))]
        slant = [(x_of(start), y_of(bandwidth * start), x_of(ridge), y_of(min(peak, bandwidth * ridge)))]
        return flat if flat_only else slant + flat

    def path(segs: list[tuple[float, float, float, float]]) -> str:
        return "".join(f"M{a:.1f} {b:.1f}L{c:.1f} {d:.1f}" for a, b, c, d in segs)

    drawn = [(segments(top_peak, bw, False)[:1], "currentColor", "")]
    for d in dtypes:
        drawn.append((segments(peaks[d], bw, True), colour[d], ""))
        if vendors[d]:
            drawn.append((segments(vendors[d].flops, vendors[d].bytes_per_s, False), colour[d], "6 4"))
    lines = [{"d": path(segs), "colour": col, "dash": dash} for segs, col, dash in drawn]
    # taken: boxes to keep labels off: every dot, the roof lines (sampled), each label as it is placed
    taken = [(x_of(p.intensity) - 5, y_of(p.flop_rate.median) - 5, x_of(p.intensity) + 5,
              y_of(p.flop_rate.median) + 5) for p in dots]
    for segs, _, _ in drawn:
        for a, b, c2, d2 in segs:
            taken += _segment_boxes(a, b, c2, d2, every=6)
    taken, dot_boxes = np.array(taken, dtype=float), np.array(taken[:len(dots)], dtype=float)  # once, for every label

    def place(order: list[int]) -> tuple[int, dict[int, tuple]]:
        """Every label placed, one dot after another in ``order``: their total score and places."""
        placed_labels: list[Box] = []
        leaders: list[Box] = []
        found = {i: _place_label(x_of(dots[i].intensity), y_of(dots[i].flop_rate.median),
                                 axes.text_width(texts[i], lay.font), taken, placed_labels, dot_boxes, leaders, lay)
                 for i in order}
        return sum(f[-1] for f in found.values()), found

    # A label placed early takes the free spots a crowded dot needed: of a few orders (as given,
    # right to left, left to right, top down, bottom up), the one that leaves the least overlap.
    at = [(x_of(p.intensity), y_of(p.flop_rate.median)) for p in dots]
    orders = [list(range(len(dots)))] + [sorted(range(len(dots)), key=key) for key in (
        lambda i: -at[i][0], lambda i: at[i][0], lambda i: at[i][1], lambda i: -at[i][1])]
    # (The first order with the least wins: one that leaves no overlap ends the search.)
    tried = []
    for order in orders:
        tried.append(place(order))
        if tried[-1][0] == 0:
            break
    _, places = min(tried, key=lambda found: found[0])
    marks = []
    for i, p in enumerate(dots):
        x, y, s = *at[i], p.flop_rate
        text = texts[i]
        tx, ty, anchor, leader, _ = places[i]
        marks.append({"x": f"{x:.1f}", "y": f"{y:.1f}", "lo": f"{y_of(s.low):.1f}", "hi": f"{y_of(s.high):.1f}",
                      "colour": colour.get(p.dtype, "currentColor"), "text": text, "tx": f"{tx:.1f}",
                      "ty": f"{ty:.1f}", "anchor": anchor,
                      "leader": leader and f"M{x:.1f} {y:.1f}L{leader[0]:.1f} {leader[1]:.1f}",
                      "tip": f"{p.label} ({p.dtype}): {fmt.sig(p.intensity)} FLOP per byte, "
                             f"{si_range(s, 'FLOP/s')}"})
    x_ticks, y_ticks = axes.log_ticks(x_lo, x_hi), axes.log_ticks(y_lo, y_hi)  # every decade
    return {"name": lay.name, "width": lay.w, "height": lay.h, "left": left, "right": right, "top": top,
            "bottom": bottom, "lines": lines, "marks": marks,
            "x_ticks": [{"x": f"{x_of(t):.1f}", "text": f"{t:g}"} for t in x_ticks],
            "y_ticks": [{"y": f"{y_of(t):.1f}", "text": _flops_label(t, lay.short_ticks)} for t in y_ticks],
            "x_title_y": bottom + 44, "y_title_x": lay.y_title_x, "mid": (top + bottom) / 2}


# --- crossovers --------------------------------------------------------------------------

def crossing(sizes: list[float], ratios: list[float]) -> float | None:
    """The first size where ``ratios`` (a/b, one per size, in size order) goes from
    above 1 to at most 1, interpolated linearly in log size and log ratio; ``None``
    if it never does (``0.0`` if it is already at most 1 at the first size)."""
    if not sizes:
        return None
    if ratios[0] <= 1:
        return 0.0
    for (n1, r1), (n2, r2) in zip(zip(sizes, ratios), zip(sizes[1:], ratios[1:])):
        if r2 <= 1 < r1:
            l1, l2 = math.log(r1), math.log(r2)
            frac = l1 / (l1 - l2) if l1 != l2 else 0.0
            return math.exp(math.log(n1) + frac * (math.log(n2) - math.log(n1)))
    return None


@dataclass(frozen=True)
class Crossover:
    per_run: dict[int, float | None]

    @property
    def crossed(self) -> list[float]:
        return [v for v in self.per_run.values() if v]

    def text(self, unit: str = "") -> str:
        runs, found = len(self.per_run), self.crossed
        before = sum(1 for v in self.per_run.values() if v == 0.0)
        if not found:
            return ("faster at every size measured" if before == runs else
                    "no crossover within the sizes measured" if before == 0 else
                    f"no crossover within the sizes measured in {runs - before} of {runs} runs")
        s = stats.summarize(pd.Series(found))
        core = f"n ≈ {_two(s.median)} [{_two(s.low)}..{_two(s.high)}]{unit}"
        return core + ("" if len(found) == runs else f" ({len(found)} of {runs} runs crossed)")


def _two(value: float) -> str:
    """Two significant figures, no false precision in large sizes: ``790000``, ``170``, ``4.5``."""
    return f"{float(f'{value:.2g}'):g}"


def crossover(frame: pd.DataFrame, a: str, b: str, by: str = "n") -> Crossover:
    """Per run: the size (params key ``by``) where variant ``a`` stops being slower than ``b``."""
    col = f"p_{by}"
    if col not in frame:
        raise ValueError(f"no parameter {by!r} in the rows")
    medians = frame.groupby(["run", "variant", col])["time_s"].median()
    out: dict[int, float | None] = {}
    for run in sorted(frame["run"].unique()):
        try:
            ta, tb = medians.loc[(run, a)], medians.loc[(run, b)]
        except KeyError:
            raise ValueError(f"run {run} lacks variant {a!r} or {b!r}") from None
        common = sorted(set(ta.index) & set(tb.index), key=float)
        out[int(run)] = crossing([float(n) for n in common], [float(ta[n] / tb[n]) for n in common])
    return Crossover(out)


# --- the bench:roofline marker -----------------------------------------------------------

def _value(title: str, text: str) -> str:
    from benchsite.views.render import value  # render draws panels; this module only needs its value span
    return str(value(text, title))


SHOWS = ("chart", "table", "ceiling", "percent", "bound", "intensity", "crossover")


def marker(opts: dict[str, str], frame: pd.DataFrame, peak_frame: pd.DataFrame | None,
           keys: list[str], source: str, select,
           of_peak: Callable[[], Ceilings] | None = None) -> str:
    """What ``<!-- bench:roofline fig-id show=... -->`` renders; ``select(frame, filters)``
    filters rows the way ``bench:value`` does (every leftover ``key=value``); ``of_peak`` gives the
    ceilings of ``peak_frame`` (:func:`ceilings`; the build's, once per machine)."""
    show = opts.pop("show", "chart")
    if show not in SHOWS:
        raise ValueError(f"unknown show={show} (known: {', '.join(SHOWS)})")
    title = source
    if show == "crossover":
        a, b, by = opts.pop("a", None), opts.pop("b", None), opts.pop("by", "n")
        if not (a and b):
            raise ValueError("show=crossover needs a= and b= variants")
        text = crossover(select(frame, opts) if opts else frame, a, b, by).text()
        return _value(f"{title}: where {a} stops being slower than {b}", text)
    if peak_frame is None:
        raise ValueError("no fig-machine-peak results on this machine to take the ceilings from")
    c = of_peak() if of_peak is not None else ceilings(peak_frame)
    if show == "ceiling":
        kind, dtype = opts.pop("kind", "compute"), opts.pop("dtype", "float32")
        if opts:
            raise ValueError(f"unknown options {', '.join(opts)}")
        return _value(f"{title}: {kind} ceiling", ceiling_text(c, kind, dtype))
    of = opts.pop("of", "measured")
    paired = same_runs(frame, peak_frame)
    rows = select(frame, opts) if opts else frame
    points = placed(rows, c, keys, paired=paired)
    if show == "chart":
        return str(roofline_svg(points, c, source))
    if show == "table":
        return str(placed_table(points, source, paired, session_note(rows, peak_frame)))
    if len(points) != 1:
        raise ValueError(f"show={show} needs filters that select one workload, got {len(points)}")
    (p,) = points
    if show == "bound":
        text = p.bound or "unknown (no ceiling for this dtype)"
    elif show == "intensity":
        text = f"{fmt.sig(p.intensity)} FLOP per byte"
    elif of == "vendor":
        text = _pct(p.of_vendor) if p.vendor else f"no vendor figure on record for {c.device_kind}"
    else:
        if p.of_ceiling is None:
            raise ValueError("no measured ceiling for this workload's dtype")
        text = _pct(p.of_ceiling)
        if session_note(rows, peak_frame):
            return _value(f"{title}: {show}. {session_note(rows, peak_frame)}", text + " (across sessions)")
    return _value(f"{title}: {show}", text)


# --- a figure's panel: its rows against the same machine's ceilings ---------------------------

CEILING_FIGURE = "fig-machine-peak"


def applies(frame: pd.DataFrame) -> bool:
    """Whether a figure's rows record bytes moved (and so can be set against a ceiling)."""
    return "bytes_moved" in frame and bool((frame["bytes_moved"].fillna(0) > 0).any())


def panel_section(frame: pd.DataFrame, peak_frame: pd.DataFrame | None, keys: list[str], source: str,
                  peak_link: str, chart: bool = False,
                  of_peak: Callable[[], Ceilings] | None = None) -> str:
    """The part of a figure's machine panel that sets its rows against the same machine's measured
    ceilings: the placed table (and, for the ceiling figure itself, the roofline chart); a note
    where the machine has no ceilings measured; "" where the rows move no bytes. ``of_peak`` gives
    the ceilings of ``peak_frame`` (:func:`ceilings`; the build's, once per machine)."""
    if not applies(frame):
        return ""
    if peak_frame is None or peak_frame.empty:
        return str(render("roofline_section.html", missing=True, peak_link=peak_link, chart="", table=""))
    c = of_peak() if of_peak is not None else ceilings(peak_frame)
    paired = same_runs(frame, peak_frame)
    points = placed(frame, c, keys, paired=paired)
    drawn = roofline_svg(points, c, source) if chart and any(p.flop_rate for p in points) else ""
    table = placed_table(points, source, paired, session_note(frame, peak_frame))
    return str(render("roofline_section.html", missing=False, peak_link=peak_link, chart=drawn, table=table))
