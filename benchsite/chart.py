"""Charts of every sample, drawn at build time into inline SVG.

Inline SVG with ``currentColor`` for text and axes follows the page's colour
scheme, so one chart reads in light and dark mode.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from . import fmt  # noqa: E402

INK = "#010203"  # a colour no palette uses; swapped for currentColor afterwards
PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c",
           "#ccb974", "#64b5cd")  # ten: R = 9 runs each get their own colour
STYLE = {
    "svg.fonttype": "none", "text.parse_math": False, "font.size": 10,
    "text.color": INK, "axes.labelcolor": INK, "axes.edgecolor": INK,
    "xtick.color": INK, "ytick.color": INK, "axes.facecolor": "none", "figure.facecolor": "none",
    "savefig.transparent": True, "svg.hashsalt": "bench",  # stable ids: same data, same SVG
}


def _panel(ax: plt.Axes, panel: pd.DataFrame, variants: list[str], runs: list[int]) -> None:
    """One group: for each variant, every sample as a dot per run, and the band
    from the lowest to the highest run median."""
    width = 0.8 / max(len(runs), 1)
    for i, variant in enumerate(variants):
        cell = panel[panel["variant"] == variant]
        if cell.empty:
            continue
        medians = cell.groupby("run")["time_s"].median()
        ax.fill_between([i - 0.45, i + 0.45], medians.min(), medians.max(), color=PALETTE[0],
                        alpha=0.15, linewidth=0)
        for j, run in enumerate(runs):
            times = cell.loc[cell["run"] == run, "time_s"]
            x = i - 0.4 + width * (j + 0.5)
            # Dots as one embedded bitmap per panel: thousands of vector markers made
            # each chart half a megabyte of SVG and slowed every page that shows it.
            ax.plot([x] * len(times), times, "o", ms=2.2, alpha=0.55, rasterized=True,
                    color=PALETTE[j % len(PALETTE)], label=f"run {run}" if i == 0 else None)
            ax.plot([x - width / 2, x + width / 2], [medians.get(run)] * 2, color=INK, lw=0.8)
    rotate = len(variants) > 3
    ax.set_xticks(range(len(variants)), variants, rotation=20 if rotate else 0,
                  ha="right" if rotate else "center", rotation_mode="anchor")
    ax.set_xlim(-0.6, len(variants) - 0.4)


def _seconds_axis(ax: plt.Axes, low: float, high: float) -> None:
    if high / max(low, 1e-30) > 20:
        ax.set_yscale("log")
        # 1-2-5 steps: a decade with a single labelled tick is unreadable; over three decades
        # they crowd, and one tick a decade reads better
        subs = (1.0,) if high / max(low, 1e-30) > 1e3 else (1.0, 2.0, 5.0)
        ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=subs))
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: fmt.time_one(v) if v > 0 else "0"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # log axes label minor ticks in TeX


MAX_COLUMNS = 3  # more panels wrap onto further rows: six in one row left each unreadable


def _layout(fig: plt.Figure, columns: int, rows: int, rotated: bool) -> None:
    """Fixed margins in inches: ``tight_layout`` cost a third of each chart's time."""
    width, height = fig.get_size_inches()
    left, right, gap = 0.95, 0.15, 1.15  # the gap holds the next panel's tick and axis labels
    axes_width = (width - left - right - gap * (columns - 1)) / columns
    bottom = 0.85 if rotated else 0.5
    axes_height = (height - 0.7 - bottom - (rows - 1) * (bottom + 0.45)) / rows
    fig.subplots_adjust(left=left / width, right=1 - right / width, top=1 - 0.7 / height,
                        bottom=bottom / height, wspace=gap / axes_width,
                        hspace=(bottom + 0.45) / axes_height)


def y_label(rows: pd.DataFrame) -> str:
    """What the panel's y axis holds, from the rows' boundary: a wall time is not per call."""
    kinds = set(rows["boundary"]) if "boundary" in rows else set()
    if kinds == {"wall"}:
        return "wall time of the procedure"
    if kinds == {"loop"}:
        return "time per call (loop)"
    return "time per call" if "wall" not in kinds else "time"


def sample_chart(panels: list[tuple[str, pd.DataFrame]], variants: list[str], title: str) -> str:
    """Every sample of one figure on one machine, one panel per (label, rows), as SVG text;
    at most ``MAX_COLUMNS`` panels a row."""
    runs = sorted({run for _, rows in panels for run in rows["run"].unique()})
    columns = min(len(panels), MAX_COLUMNS)
    n_rows = -(-len(panels) // columns)
    rotated = len(variants) > 3
    row_height = 3.4 + (0.35 if rotated else 0.0)
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(n_rows, columns, figsize=(min(2.6 + 2.4 * columns, 10), row_height * n_rows),
                                 squeeze=False, sharey=False)
        flat = [ax for row in axes for ax in row]
        for i, (ax, (label, rows)) in enumerate(zip(flat, panels)):
            _panel(ax, rows, variants, runs)
            _seconds_axis(ax, rows["time_s"].min(), rows["time_s"].max())
            ax.set_title(label, fontsize=9)
            first_in_row = i % columns == 0
            if first_in_row or y_label(rows) != y_label(panels[i - 1][1]):
                ax.set_ylabel(y_label(rows))
        for ax in flat[len(panels):]:
            ax.set_visible(False)
        handles, labels = flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 1.0), ncol=len(runs), fontsize=9,
                   frameon=False)
        _layout(fig, columns, n_rows, rotated=rotated)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", dpi=160, metadata={"Date": None, "Creator": None})
        plt.close(fig)
    return _inline(buf.getvalue(), title)


def _inline(svg: str, title: str) -> str:
    svg = svg[svg.index("<svg"):]
    svg = svg.replace(INK, "currentColor")
    return svg.replace("<svg ", f'<svg role="img" aria-label="{fmt.esc(title)}" class="bench-svg" ', 1)
