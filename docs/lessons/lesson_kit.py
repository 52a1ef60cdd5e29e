"""Helpers the lesson notebooks share: folds, the report's rows and its chart.

Nothing here measures: the notebooks time with ``bench_scripts/benchkit`` and
hand their samples (seconds) to these functions, which only summarise and draw.
Units stay seconds until the moment they are shown.
"""

from __future__ import annotations

import html
import inspect
import io
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

COMPILE_STAGES = ("trace", "lower", "compile")  # host-side, paid once per specialisation
MS = 1e3  # seconds -> milliseconds, for display only


def highlight(source: str) -> str:
    """Python source as HTML with inline colours (no stylesheet needed)."""
    from pygments import highlight as _highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    # Scroll long lines instead of wrapping them mid-word (notebook CSS wraps <pre>).
    formatter = HtmlFormatter(noclasses=True, nobackground=True,
                              prestyles="white-space: pre; overflow-x: auto; font-size: 0.85em")
    return _highlight(source, PythonLexer(), formatter)


def reveal(obj: Callable | str, summary: str) -> str:
    """A collapsed ``<details>`` fold holding ``obj``'s source (or the text given).

    Showing ``inspect.getsource`` of the function the notebook then runs keeps
    the code on the page identical to the code that produced the output.
    """
    source = obj if isinstance(obj, str) else inspect.getsource(obj)
    return (f'<details class="lesson-fold"><summary>{html.escape(summary)}</summary>'
            f"{highlight(source)}</details>")


def first_call_total(stages: Mapping[str, float]) -> float:
    return sum(stages.values())


def compile_part(stages: Mapping[str, float]) -> float:
    return sum(stages[s] for s in COMPILE_STAGES)


def quartiles(samples: Sequence[float]) -> tuple[float, float]:
    if len(samples) < 2:
        return samples[0], samples[0]
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return q1, q3


@dataclass(frozen=True)
class ReportRow:
    """One line of the timing report; times in seconds."""

    quantity: str
    interval: str
    median_s: float
    low_s: float
    high_s: float
    samples: int


def _row(quantity: str, interval: str, values: Sequence[float]) -> ReportRow:
    return ReportRow(quantity, interval, statistics.median(values), min(values), max(values),
                     len(values))


def report_rows(first_calls: Sequence[Mapping[str, float]], warm_s: Sequence[float]) -> list[ReportRow]:
    """The report: first-call samples and the warm distribution, never pooled."""
    if not first_calls or not warm_s:
        raise ValueError("the report needs at least one first-call sample and one warm sample")
    t_warm = statistics.median(warm_s)
    compile_s = [compile_part(s) for s in first_calls]
    return [
        _row("first call", "trace to ready", [first_call_total(s) for s in first_calls]),
        _row("T_compile", "trace + lower + compile", compile_s),
        _row("first execute", "dispatch to ready", [s["first-execute"] for s in first_calls]),
        _row("T_warm", "warm: start to ready", warm_s),
        _row("T_first (model)", "T_compile + T_warm", [c + t_warm for c in compile_s]),
    ]


def report_table(rows: Sequence[ReportRow]) -> list[dict[str, object]]:
    """Rows as display records: milliseconds, rounded only here."""
    return [{"quantity": r.quantity, "interval": r.interval, "samples": r.samples,
             "median (ms)": round(r.median_s * MS, 3), "min (ms)": round(r.low_s * MS, 3),
             "max (ms)": round(r.high_s * MS, 3)} for r in rows]


def _headroom(ax, top: float) -> None:
    """Room above the data for the legend, so it never hides a sample."""
    ax.set_ylim(0, top * 1.45)


def _first_call_panel(ax, first_calls: Sequence[Mapping[str, float]]) -> None:
    bottoms = [0.0] * len(first_calls)
    xs = range(1, len(first_calls) + 1)
    for stage in (*COMPILE_STAGES, "first-execute"):
        heights = [s[stage] * MS for s in first_calls]
        ax.bar(xs, heights, bottom=bottoms, label=stage, width=0.6)
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    ax.set_xticks(list(xs))
    _headroom(ax, max(bottoms))
    ax.set_xlabel("fresh function (one first call each)")
    ax.set_ylabel("ms")
    ax.set_title("first call, by stage")
    ax.legend(fontsize=8, loc="upper left", ncol=2)


def _warm_panel(ax, warm_s: Sequence[float]) -> None:
    ms = [t * MS for t in warm_s]
    q1, q3 = quartiles(ms)
    ax.axhspan(q1, q3, color="tab:green", alpha=0.15, label="interquartile range")
    ax.axhline(statistics.median(ms), color="tab:green", label="median = T_warm")
    ax.plot(range(1, len(ms) + 1), ms, "o", ms=3, color="tab:blue", label="one sample")
    _headroom(ax, max(ms))
    ax.set_xlabel("warm sample, in the order taken")
    ax.set_ylabel("ms")
    ax.set_title("warm calls, ready minus start")
    ax.legend(fontsize=8, loc="upper left", ncol=3)


def report_chart(first_calls: Sequence[Mapping[str, float]], warm_s: Sequence[float]) -> str:
    """Two panels with their own axes (the intervals differ): an SVG document."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "lesson"  # stable element ids between executions
    plt.rcParams["svg.fonttype"] = "none"  # text stays text: smaller, selectable, searchable
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), width_ratios=(1, 1.6))
    _first_call_panel(left, first_calls)
    _warm_panel(right, warm_s)
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buf.getvalue()


def judge(label: str, a_rounds: Sequence[float], b_rounds: Sequence[float]) -> str:
    """The site's paired verdict on a / b over rounds that paired them (``benchsite.model.stats``'s
    ``paired_verdict``, the rule of the page "How a verdict is decided"; its runs are the rounds),
    with the ratio and its spread: three lines to print."""
    import numpy as np

    from benchsite.model.stats import paired_verdict

    verdict = paired_verdict(np.asarray(a_rounds, float), np.asarray(b_rounds, float))
    ratios = [a / b for a, b in zip(a_rounds, b_rounds, strict=True)]
    return (f"{label}: {verdict.text}\n"
            f"  ratio {verdict.ratio:.3f}x (median of {len(ratios)} rounds), "
            f"rounds ranged {min(ratios):.3f}x .. {max(ratios):.3f}x\n"
            f"  the rule (its runs are these rounds): {verdict.reason}")


def ranges_overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether two closed ranges ``(low, high)`` share any point."""
    return a[0] <= b[1] and b[0] <= a[1]
