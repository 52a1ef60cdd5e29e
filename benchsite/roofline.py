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
import io
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import fmt, stats
from .metrics import si_range

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
    return (rows.groupby("run")[column].median() / stats.run_medians(rows)).dropna()


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
    flop_rate: stats.Summary
    byte_rate: stats.Summary
    of_ceiling: stats.Summary | None  # fraction of the attainable rate on the measured roofline
    bound: str  # "compute" or "memory" (which measured ceiling binds at this intensity), or ""
    of_vendor: stats.Summary | None  # fraction of the vendor roofline, where the vendor is known
    vendor: VendorPeak | None


def _label(rows: pd.DataFrame, keys: list[str]) -> str:
    first = rows.iloc[0]
    return ", ".join(f"{k}={first[f'p_{k}']}" for k in keys if f"p_{k}" in rows)


def placed(frame: pd.DataFrame, c: Ceilings, keys: list[str],
           peaks: list[VendorPeak] | None = None, paired: bool = True) -> list[Placed]:
    """Every (variant, params) of ``frame`` with flops and bytes, on the roofline of ``c``.
    The percentages are per run, then median [min..max] across runs. ``paired``: the rows
    and the ceilings come from the same runs (fig-machine-peak's own rows), so each run is
    set against its own ceilings; otherwise (another figure, other processes) against the
    median ceilings."""
    out = []
    rows_with = frame.dropna(subset=["flops", "bytes_moved"])
    rows_with = rows_with[(rows_with["flops"] > 0) & (rows_with["bytes_moved"] > 0)]
    for (_variant, _params), rows in rows_with.groupby(["variant", "params"], sort=False):
        flops, nbytes = float(rows["flops"].median()), float(rows["bytes_moved"].median())
        intensity = flops / nbytes
        rate, brate = _per_run_rate(rows, "flops"), _per_run_rate(rows, "bytes_moved")
        dtype = str(rows["dtype"].iloc[0])
        peak = c.compute.get(dtype)
        of_ceiling, bound = None, ""
        if peak is not None and not peak.empty and not c.memory.empty:
            attain = pd.concat([peak, c.memory * intensity], axis=1).min(axis=1)
            if paired:
                per_run = (rate / attain.reindex(rate.index).fillna(float(attain.median()))).dropna()
            else:
                per_run = rate / min(float(peak.median()), float(c.memory.median()) * intensity)
            of_ceiling = stats.summarize(per_run) if not per_run.empty else None
            bound = "memory" if c.memory.median() * intensity < peak.median() else "compute"
        vendor = vendor_peak(str(rows["device_kind"].iloc[0]), dtype, peaks)
        of_vendor = None
        if vendor is not None:
            of_vendor = stats.summarize(rate / min(vendor.flops, vendor.bytes_per_s * intensity))
        out.append(Placed(_label(rows, keys) or str(_variant), dtype, intensity, stats.summarize(rate),
                          stats.summarize(brate), of_ceiling, bound, of_vendor, vendor))
    return sorted(out, key=lambda p: p.intensity)


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


def placed_table(points: list[Placed], source: str, paired: bool = True, sessions: str = "") -> str:
    """The workloads as an HTML table: intensity, achieved rates, % of ceilings; ``sessions`` is
    :func:`session_note` (the rows and the ceilings from different sessions)."""
    vendor = any(p.vendor for p in points)
    head = ["workload", "dtype", "FLOP per byte", "achieved FLOP/s", "achieved bytes/s",
            "bound by (measured roofline)", "% of measured ceiling"] + (["% of vendor peak"] if vendor else [])
    body = []
    for p in points:
        cells = [p.label, p.dtype, fmt.sig(p.intensity), si_range(p.flop_rate, "FLOP/s"),
                 si_range(p.byte_rate, "B/s"), p.bound or "—", _pct(p.of_ceiling)]
        if vendor:
            cells.append(_pct(p.of_vendor) if p.vendor else "no vendor figure")
        body.append("<tr>" + "".join(f"<td>{fmt.esc(x)}</td>" for x in cells) + "</tr>")
    sources = sorted({p.vendor.source for p in points if p.vendor})
    against = ("each run's rate is set against that run's ceilings" if paired else
               "each run's rate is set against the median measured ceilings (fig-machine-peak's runs "
               "are other processes)")
    note = (f"Median [min..max] over runs; {against}. "
            + ("Vendor figures: " + "; ".join(sources) + "." if sources else
               "No vendor figure is on record for this device kind: only the measured ceiling is shown.")
            + (f" {sessions}" if sessions else ""))
    return (f"<div class=\"bench-roofline-table\" markdown=\"0\">\n<table title=\"{fmt.esc(source)}\">\n"
            "<thead><tr>" + "".join(f"<th>{fmt.esc(h)}</th>" for h in head) + "</tr></thead>\n<tbody>\n"
            + "\n".join(body) + f"\n</tbody>\n</table>\n<p class=\"bench-meta\">{fmt.esc(note)}</p>\n</div>")


# --- the chart ---------------------------------------------------------------------------

def roofline_svg(points: list[Placed], c: Ceilings, title: str) -> str:
    """Intensity against achieved FLOP/s, log-log, under the measured roofline of each
    dtype (solid) and the vendor's (dashed) where it is known."""
    from . import chart  # matplotlib, only when a chart is drawn
    plt, ticker = chart.plt, chart.matplotlib.ticker
    if c.memory.empty or not c.compute:
        raise ValueError("no ceilings measured")
    bw = float(c.memory.median())
    xs = [p.intensity for p in points] or [1.0]
    lo, hi = min(xs + [0.05]) / 3, max(xs + [max(c.compute[d].median() for d in c.compute) / bw]) * 5
    grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    with plt.rc_context(chart.STYLE):
        fig, ax = plt.subplots(figsize=(7.5, 4.4))
        for i, (dtype, peak) in enumerate(sorted(c.compute.items())):
            colour = chart.PALETTE[i % len(chart.PALETTE)]
            ax.plot(grid, [min(float(peak.median()), bw * x) for x in grid], color=colour, lw=1.4,
                    label=f"measured roofline, {dtype}")
            vendor = vendor_peak(c.device_kind, dtype)
            if vendor:
                ax.plot(grid, [min(vendor.flops, vendor.bytes_per_s * x) for x in grid], color=colour,
                        lw=1, ls="--", label=f"vendor roofline, {dtype}")
        for i, p in enumerate(points):
            colour = chart.PALETTE[sorted(c.compute).index(p.dtype) % len(chart.PALETTE)] \
                if p.dtype in c.compute else chart.INK
            s = p.flop_rate
            ax.errorbar([p.intensity], [s.median], yerr=[[s.median - s.low], [s.high - s.median]],
                        fmt="o", ms=4, color=colour, capsize=2)
            text = p.label.replace("op=", "").replace(", n=", " n=")
            text = text if p.dtype == "float32" else f"{text} ({p.dtype})"
            ax.annotate(text, (p.intensity, s.median), textcoords="offset points",
                        xytext=(5, -10 if i % 2 else 4), fontsize=8.5)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (FLOP per byte moved)")
        ax.set_ylabel("achieved FLOP/s")
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(
            lambda v, _: si_range(stats.Summary(v, v, v, 1), "FLOP/s").split(" [")[0] if v > 0 else "0"))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.legend(fontsize=8, frameon=False, loc="lower right")
        fig.subplots_adjust(left=0.18, right=0.97, top=0.95, bottom=0.13)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", dpi=160, metadata={"Date": None, "Creator": None})
        plt.close(fig)
    return chart._inline(buf.getvalue(), title)


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

def _value(title_html: str, text: str) -> str:
    return f'<span class="bench-value" title="{title_html}">{fmt.esc(text)}</span>'


SHOWS = ("chart", "table", "ceiling", "percent", "bound", "intensity", "crossover")


def marker(opts: dict[str, str], frame: pd.DataFrame, peak_frame: pd.DataFrame | None,
           keys: list[str], source: str, select) -> str:
    """What ``<!-- bench:roofline fig-id show=... -->`` renders; ``select(frame, filters)``
    filters rows the way ``bench:value`` does (every leftover ``key=value``)."""
    show = opts.pop("show", "chart")
    if show not in SHOWS:
        raise ValueError(f"unknown show={show} (known: {', '.join(SHOWS)})")
    title = fmt.esc(source)
    if show == "crossover":
        a, b, by = opts.pop("a", None), opts.pop("b", None), opts.pop("by", "n")
        if not (a and b):
            raise ValueError("show=crossover needs a= and b= variants")
        text = crossover(select(frame, opts) if opts else frame, a, b, by).text()
        return _value(f"{title}: where {fmt.esc(a)} stops being slower than {fmt.esc(b)}", text)
    if peak_frame is None:
        raise ValueError("no fig-machine-peak results on this machine to take the ceilings from")
    c = ceilings(peak_frame)
    if show == "ceiling":
        kind, dtype = opts.pop("kind", "compute"), opts.pop("dtype", "float32")
        if opts:
            raise ValueError(f"unknown options {', '.join(opts)}")
        return _value(f"{title}: {kind} ceiling", ceiling_text(c, kind, dtype))
    of = opts.pop("of", "measured")
    # The same figure's rows: each run is set against its own ceilings (same processes).
    paired = frame is peak_frame or (not frame.empty and not peak_frame.empty and "figure_id" in frame
                                      and frame["figure_id"].iloc[0] == peak_frame["figure_id"].iloc[0])
    rows = select(frame, opts) if opts else frame
    points = placed(rows, c, keys, paired=paired)
    if show == "chart":
        return f'<figure class="bench-chart bench-roofline">{roofline_svg(points, c, source)}' \
               f"<figcaption>Roofline of {title}: " \
               "each dot is a workload at its arithmetic intensity, at the median of its runs' achieved " \
               "FLOP/s (bars: lowest to highest run); solid lines are the measured ceilings, dashed " \
               "lines the vendor's where the device kind is on record.</figcaption></figure>"
    if show == "table":
        return placed_table(points, source, paired, session_note(rows, peak_frame))
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
            return _value(f"{title}: {show}. {fmt.esc(session_note(rows, peak_frame))}", text + " (across sessions)")
    return _value(f"{title}: {show}", text)
