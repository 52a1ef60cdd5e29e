"""One figure on one machine -> HTML: meta line, table, spread, chart, provenance.

Plain functions of DataFrames; every text taken from a results file is escaped.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator

import pandas as pd

from . import chart, fmt, metrics, stats
from .catalog import CodeHash, stale_reason
from .figures import Figure
from .fmt import esc

Link = Callable[[str], str]  # site path -> URL relative to the current page


def _sort_key(value: object) -> tuple:
    try:
        return (0, float(value), "")  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def groups(frame: pd.DataFrame, fig: Figure) -> Iterator[tuple[str, pd.DataFrame]]:
    """(label, rows) per table row, in numeric order of the group_by params."""
    cols = [f"p_{k}" for k in fig.group_by]
    if not cols:
        yield "", frame
        return
    missing = [c for c in cols if c not in frame]
    if missing:
        raise ValueError(f"{fig.id}: results have no params {', '.join(c[2:] for c in missing)}")
    keyed = sorted(frame.groupby(cols, sort=False), key=lambda kv: [_sort_key(v) for v in kv[0]])
    for values, rows in keyed:
        yield ", ".join(f"{k}={v}" for k, v in zip(fig.group_by, values)), rows


def cell_summary(rows: pd.DataFrame, variant: str) -> stats.Summary | None:
    picked = rows[rows["variant"] == variant]
    return stats.summarize(stats.run_medians(picked)) if not picked.empty else None


def ratio_summary(rows: pd.DataFrame, fig: Figure) -> stats.Summary | None:
    if not fig.ratio:
        return None
    a, b = (rows[rows["variant"] == v] for v in fig.ratio)
    per_run = stats.ratio_per_run(a, b)
    return stats.summarize(per_run) if not per_run.empty else None


def table(frame: pd.DataFrame, fig: Figure, metric: str = "time") -> str:
    """Median [min..max] of the per-run values of ``metric`` (the run medians of
    time by default), per group and variant, plus the ratio (time only)."""
    with_ratio = fig.ratio is not None and metric == "time"
    head = ([esc(", ".join(fig.group_by))] if fig.group_by else []) + [esc(v) for v in fig.variants]
    if with_ratio:
        head.append(f"{esc(fig.ratio[0])} / {esc(fig.ratio[1])}")
    body = []
    for label, rows in groups(frame, fig):
        cells = [esc(label)] if fig.group_by else []
        cells += [esc(metrics.shown(rows[rows["variant"] == v], metric)) for v in fig.variants]
        if with_ratio:
            r = ratio_summary(rows, fig)
            cells.append(fmt.ratio_range(r.median, r.low, r.high) if r else "—")
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return ("<table>\n<thead><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead>\n"
            "<tbody>\n" + "\n".join(body) + "\n</tbody>\n</table>")


def _ranked_lines(rows: pd.DataFrame, by: str, metric: metrics.Metric) -> list[tuple[float, str, str, str]]:
    """(median, key, detail, shown) per value of parameter ``by``, largest median first."""
    lines = []
    for key, part in rows.groupby(f"p_{by}"):
        s = stats.summarize(metric.per_run(part))
        detail = next((str(d) for d in part["detail"] if d), "")
        lines.append((s.median, str(key), detail, metric.show(s)))
    return sorted(lines, key=lambda line: -line[0])


def ranked_table(rows: pd.DataFrame, by: str, top: int, metric: metrics.Metric, source: str) -> str:
    """The first ``top`` lines of :func:`_ranked_lines`, each with its ``detail`` text and its
    share of the sum of all lines' medians."""
    lines = _ranked_lines(rows, by, metric)
    total = sum(line[0] for line in lines)
    share = (lambda v: fmt.percent(v / total)) if total else (lambda v: "n/a")
    body = "\n".join(f"<tr><td><code>{esc(key)}</code></td><td>{esc(detail)}</td><td>{esc(shown)}</td>"
                     f"<td>{esc(share(median))}</td></tr>" for median, key, detail, shown in lines[:top])
    note = (f"top {min(top, len(lines))} of {len(lines)} (one line per {esc(by)}), together "
            f"{esc(share(sum(line[0] for line in lines[:top])))} of the sum; median [min..max] over "
            f"{rows['run'].nunique()} runs ({esc(source)})")
    return ("<div class=\"bench-ranked\" markdown=\"0\">\n<table>\n<thead><tr>"
            f"<th>{esc(by)}</th><th>what it is</th><th>{esc(metric.name)}</th><th>share</th></tr></thead>\n"
            f"<tbody>\n{body}\n</tbody>\n</table>\n<p class=\"bench-meta\">{note}</p>\n</div>")


RULE_TITLE = "How a verdict is decided"
RULE_PATH = "verdicts/"  # docs/verdicts.md, from the site root


def rule_url(csv_url: str) -> str:
    """The verdict page, relative to the page that links the CSV ``csv_url``
    (``<prefix>results/<machine>/<file>.csv``): the same prefix reaches the site root."""
    parts = csv_url.rsplit("/", 3)
    return (parts[0] + "/" if len(parts) == 4 else "") + RULE_PATH


def spread_text(frame: pd.DataFrame, fig: Figure, rule: str | None = None) -> str:
    """Between-run and within-run spread per variant, what the ratio column is, and
    the verdict on the ratio pair (``rule``: URL of the verdict page)."""
    parts = []
    for variant in fig.variants:
        rows = frame[frame["variant"] == variant]
        if rows.empty:
            continue
        between = [cell_summary(g, variant).range_frac for _, g in groups(rows, fig)]
        within = rows.groupby([f"p_{k}" for k in fig.group_by] or ["variant"]).apply(stats.within_spread)
        parts.append(f"<li><strong>{esc(variant)}</strong>: the run medians of the "
                     f"{rows['run'].nunique()} runs span {_pct_range(between)} of their median "
                     f"(between processes); within one run, IQR / median is "
                     f"{_pct_range(list(within))} ({stats.noise_label(float(within.max()))}).</li>")
    if fig.ratio:
        a, b = (esc(v) for v in fig.ratio)
        parts.append(f"<li><strong>{a} / {b}</strong>: the median [min..max] of the per-run ratios (each "
                     f"run's median of {a} over its median of {b}, in the same process), not one column "
                     "divided by the other.</li>")
    return "<ul class=\"bench-spread\">" + "".join(parts) + "</ul>" + _verdicts(frame, fig, rule)


def _pct_range(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    return fmt.percent(lo) if fmt.percent(lo) == fmt.percent(hi) else f"{fmt.percent(lo)} to {fmt.percent(hi)}"


def _verdicts(frame: pd.DataFrame, fig: Figure, rule: str | None = None) -> str:
    """The paired verdict (stats.paired_verdict) on the ratio pair, per table row, with its reason."""
    if not fig.ratio:
        return ""
    items = []
    for label, rows in groups(frame, fig):
        a, b = (stats.run_medians(rows[rows["variant"] == v]) for v in fig.ratio)
        if a.empty or b.empty:
            continue
        v = stats.paired_verdict(a, b)
        where = f" at {esc(label)}" if label else ""
        items.append(f"{esc(fig.ratio[0])} vs {esc(fig.ratio[1])}{where}: "
                     f"<strong>{esc(v.text)}</strong> <small>({esc(v.reason)})</small>")
    page = f"<a href=\"{esc(rule)}\">{RULE_TITLE}</a>" if rule else RULE_TITLE
    return ("<p class=\"bench-verdict\">Is the difference a result, run by run (paired rule of "
            f"{page})? " + "; ".join(items) + ".</p>") if items else ""


def warm_compiles(frame: pd.DataFrame) -> str:
    """A warning when a warm window compiled: its time includes a compile."""
    warm = frame[(frame["boundary"] != "first-call") & (frame["compiles"] > 0)]
    if warm.empty:
        return ""
    names = ", ".join(sorted({esc(v) for v in warm["variant"]}))
    return (f"<p class=\"bench-warning\">{len(warm)} warm sample(s) compiled inside the timed "
            f"window ({names}); those times include a compile.</p>")


def detail_list(frame: pd.DataFrame, source: str) -> str:
    """Each distinct ``detail`` text once, in first-seen order, with how many of
    the samples carried it; a plain statement when no sample carried any."""
    total, runs = len(frame), frame["run"].nunique()
    texts = frame["detail"].dropna()
    texts = texts[texts != ""]
    where = f"{total} samples, {runs} runs of {esc(source)}"
    if texts.empty:
        return f'<p class="bench-detail-none">Nothing logged in any of the {where}.</p>'
    blocks = [f'<p class="bench-detail-meta">In {n} of the {where}:</p>\n'
              f'<pre class="bench-detail"><code>{esc(text)}</code></pre>'
              for text, n in texts.value_counts(sort=False).items()]
    return '<div class="bench-details" markdown="0">\n' + "\n".join(blocks) + "\n</div>"


def _distinct(frame: pd.DataFrame, col: str) -> str:
    # unique() first: str() on every one of thousands of rows dominated a panel's time
    values = sorted({str(v) for v in frame[col].dropna().unique()})
    return ", ".join(esc(v) for v in values) or "—"


def meta_line(frame: pd.DataFrame) -> str:
    """What a reader from a review link needs first: on what, when, how, how many."""
    first = frame.iloc[0]
    per_run = frame.groupby(["run", "variant", "params"], dropna=False).size()  # params may be empty
    return (f"<p class=\"bench-meta\"><strong>{esc(first['machine'])}</strong> "
            f"({esc(first['platform'])}, {esc(first['device_kind'])}) · jax {_distinct(frame, 'jax_version')} · "
            f"{_distinct(frame, 'timestamp_utc')[:10]} · boundary {_distinct(frame, 'boundary')} · "
            f"{frame['run'].nunique()} runs (separate processes) × {per_run.min()}–{per_run.max()} samples · "
            "table: median [min..max] of the per-run medians</p>")


PROVENANCE_FIELDS = (
    ("machine", "machine"), ("platform", "platform"), ("device_kind", "device kind"),
    ("device_count", "devices"), ("platform_version", "platform version"),
    ("cpu_model", "CPU"), ("cpu_vendor", "CPU vendor"), ("cpu_family", "CPU family"),
    ("cpu_model_number", "CPU model"), ("cpu_stepping", "CPU stepping"), ("cpu_isa", "CPU extensions"),
    ("cpu_flags_sha256", "CPU flags sha256"), ("cpu_count", "CPU cores"), ("cpu_governor", "frequency governor"),
    ("cpu_mhz", "CPU MHz at start"), ("mem_total_bytes", "memory (bytes)"), ("load_avg_1m", "load average at start"),
    ("jax_version", "jax"),
    ("jaxlib_version", "jaxlib"), ("numpy_version", "numpy"), ("python_version", "Python"),
    ("jax_enable_x64", "x64"), ("jax_default_matmul_precision", "default matmul precision"),
    ("xla_flags", "XLA_FLAGS"), ("jax_env", "JAX_/XLA_ variables"),
    ("compilation_cache", "persistent compilation cache"), ("dtype", "dtype"), ("shape", "shapes"),
    ("boundary", "boundary"),
    ("timestamp_utc", "measured (UTC)"), ("session_id", "session"), ("order_seed", "order seeds"),
    ("git_commit", "git commit"), ("git_dirty", "uncommitted changes"),
    ("script_path", "script"), ("script_sha256", "script sha256"), ("harness_sha256", "harness sha256"),
)


def provenance(frame: pd.DataFrame, current_sha: CodeHash, csv_url: str) -> str:
    rows = [f"<tr><th>{label}</th><td>{_distinct(frame, col)}</td></tr>" for col, label in PROVENANCE_FIELDS]
    rows.append(f"<tr><th>runs × samples</th><td>{frame['run'].nunique()} runs, "
                f"{len(frame)} samples in all</td></tr>")
    reason = stale_reason(frame, current_sha)
    rows.append(f"<tr><th>code today</th><td>{f'STALE: {esc(reason)}' if reason else 'current'}</td></tr>")
    rows.append(f"<tr><th>data</th><td><a href=\"{esc(csv_url)}\" download>every sample (CSV)</a></td></tr>")
    return ("<details class=\"bench-provenance\"><summary>Provenance</summary>\n<table>\n"
            + "\n".join(rows) + "\n</table>\n</details>")


def is_stale(frame: pd.DataFrame, current_sha: CodeHash) -> bool:
    return bool(stale_reason(frame, current_sha))


def stale_banner(fig: Figure, reason: str = "") -> str:
    what = f"{esc(fig.script_rel)} or the harness" if not reason else esc(reason.replace(" changed since", ""))
    return (f"<p class=\"bench-stale\"><strong>Stale:</strong> {what} changed after "
            "these results were recorded; rerun <code>make bench</code> to refresh them.</p>")


def metric_tables(frame: pd.DataFrame, fig: Figure) -> str:
    """One more table per entry of the figure's ``metrics`` (bandwidth, error, ...)."""
    return "\n".join(f"<p class=\"bench-metric\">{esc(metrics.get(m).label)}; median [min..max] "
                     f"over runs</p>\n{table(frame, fig, m)}" for m in fig.extra.get("metrics", ()))


def panel_chart(frame: pd.DataFrame, fig: Figure) -> str:
    """The chart of every sample of one figure on one machine, as inline SVG."""
    timed = frame[frame["variant"].isin(fig.variants)]  # rows of other variants feed markers only
    return chart.sample_chart(list(groups(timed, fig)), list(fig.variants),
                              f"{fig.title} on {frame.iloc[0]['machine']}")


def machine_panel(frame: pd.DataFrame, fig: Figure, current_sha: CodeHash, csv_url: str,
                  svg: str | None = None) -> str:
    """Everything for one machine: meta, table, spread, chart, provenance.

    ``svg`` is the chart when the caller already has it (the build caches charts)."""
    timed = frame[frame["variant"].isin(fig.variants)]  # rows of other variants feed markers only
    svg = svg if svg is not None else panel_chart(frame, fig)
    return "\n".join([
        stale_banner(fig, stale_reason(frame, current_sha)) if is_stale(frame, current_sha) else "",
        meta_line(frame), table(frame, fig), metric_tables(frame, fig),
        spread_text(timed, fig, rule_url(csv_url)),
        warm_compiles(frame),
        f"<figure class=\"bench-chart\">{svg}<figcaption>Every sample, coloured by run (one "
        f"process each); a short bar marks each run's median, the shaded band spans the lowest to "
        f"the highest run median. <a href=\"{esc(csv_url)}\" download>CSV</a></figcaption></figure>",
        provenance(frame, current_sha, csv_url),
    ])


def machine_slug(machine: str) -> str:
    """A URL- and id-safe name for a machine folder. Labels the harness writes are
    already safe and stay as they are; anything else gets a short hash so that two
    odd names cannot collide."""
    safe = re.sub(r"[^a-z0-9._-]+", "-", machine.lower()).strip("-.") or "machine"
    return safe if safe == machine else f"{safe}-{hashlib.sha256(machine.encode()).hexdigest()[:6]}"


def tab_id(fig_id: str, machine: str) -> str:
    """The stable anchor of one machine's tab: ``#fig-...--<machine>`` selects it."""
    return f"{fig_id}--{machine_slug(machine)}"


def tabs(fig_id: str, panels: dict[str, str]) -> str:
    """Material's tab markup (as pymdownx.tabbed writes it), one tab per machine.

    Each input's id is :func:`tab_id`, so a link ending in ``#fig-...--<machine>``
    opens that machine's tab (Material selects a tab whose input the hash names)."""
    if len(panels) == 1:
        return next(iter(panels.values()))
    name = f"__bench_{fig_id}"
    inputs = "".join(f'<input id="{tab_id(fig_id, m)}" name="{name}" type="radio"{" checked" if i == 1 else ""}>'
                     for i, m in enumerate(panels, 1))
    labels = "".join(f'<label for="{tab_id(fig_id, m)}">{esc(m)}</label>' for m in panels)
    blocks = "".join(f'<div class="tabbed-block">\n{p}\n</div>' for p in panels.values())
    return (f'<div class="tabbed-set tabbed-alternate" data-tabs="1:{len(panels)}">{inputs}'
            f'<div class="tabbed-labels">{labels}</div>\n<div class="tabbed-content">\n{blocks}\n</div>\n</div>')


def error_box(fig_id: str, message: str) -> str:
    return (f"<div class=\"bench-error\" role=\"alert\"><strong>{esc(fig_id)} cannot be shown:</strong> "
            f"{esc(message)}</div>")


def code_block(fig: Figure, indent: str = "    ") -> str:
    """The script's named sections as a snippets include: the code shown is the code that ran."""
    lines = "\n".join(f'{indent}--8<-- "{fig.script_rel}:{s}"' for s in fig.code_sections)
    return f"{indent}```python\n{lines}\n{indent}```\n"
