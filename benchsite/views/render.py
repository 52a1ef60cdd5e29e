"""One figure on one machine -> HTML, from its table model (``table.Table``).

Formatting only: every number was computed by the table model; the markup is in
``templates/`` and every text is escaped by Jinja2's autoescaping.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

import numpy as np
import pandas as pd
from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

from benchsite.core.urls import machine_slug
from benchsite.model import metrics, outliers, stats
from benchsite.model.figures import Figure, Recorded
from benchsite.model.table import Table
from benchsite.views import chart, fmt, quantities
from benchsite.views.html import render

Link = Callable[[str], str]  # site path -> URL relative to the current page


def _ratio(s: stats.Summary | None) -> str:
    return fmt.ratio_range(s.median, s.low, s.high) if s else "—"


def table(tab: Table, metric: str = "time") -> Markup:
    """Median [min..max] of the per-run values of ``metric`` (the run medians of
    time by default), per row and variant, plus the ratio (time only)."""
    fig = tab.fig
    with_ratio = fig.ratio is not None and metric == "time"
    head = ([", ".join(fig.group_by)] if fig.group_by else []) + list(tab.variants)
    if with_ratio:
        head.append(f"{fig.ratio[0]} / {fig.ratio[1]}")
    m = metrics.get(metric)
    body = []
    per_row = [row.cells for row in tab.rows] if metric == "time" else tab.metric(metric)
    for row, values in zip(tab.rows, per_row):
        if metric != "time" and not any(values.get(v) for v in tab.variants):
            continue  # a row the quantity does not apply to (no bytes moved, no FLOPs): not a row of dashes
        cells = ([row.label] if fig.group_by else []) + [quantities.metric(m, values[v]) if values.get(v) else "—"
                                                         for v in tab.variants]
        body.append(cells + ([_ratio(row.ratio)] if with_ratio else []))
    return render("table.html", head=head, body=body, title=bool(fig.group_by),
                  key=[len(head) - 1] if with_ratio else [])  # the ratio: a card puts it first


def ranked_table(rows: pd.DataFrame, by: str, top: int, metric: metrics.Metric, source: str) -> Markup:
    """The first ``top`` lines of :func:`metrics.ranked`, each with its ``detail`` text and its
    share of the sum of all lines' medians."""
    lines = metrics.ranked(rows, by, metric)
    total = sum(line.summary.median for line in lines)
    share = (lambda v: fmt.percent(v / total)) if total else (lambda v: "n/a")
    shown = [{"key": line.key, "detail": line.detail, "shown": quantities.metric(metric, line.summary),
              "share": share(line.summary.median)} for line in lines[:top]]
    note = (f"top {min(top, len(lines))} of {len(lines)} (one line per {by}), together "
            f"{share(sum(line.summary.median for line in lines[:top]))} of the sum; median [min..max] over "
            f"{rows['run'].nunique()} runs ({source})")
    return render("ranked.html", by=by, metric=metric.name, lines=shown, note=note)


RULE_TITLE = "How a verdict is decided"
RULE_PATH = "verdicts/"  # docs/verdicts.md, from the site root


def spread_text(tab: Table, rule: str | None = None) -> Markup:
    """Between-run and within-run spread per variant, what the ratio column is, and
    the paired verdict on the ratio pair per row (``rule``: URL of the verdict page)."""
    spreads = [{"variant": s.variant, "runs": s.runs, "between": fmt.percent_span(s.between),
                "within": fmt.percent_span(s.within), "noise": s.noise} for s in tab.spreads]
    verdicts = [{"label": row.label, "text": row.verdict.text, "reason": row.verdict.reason}
                for row in tab.rows if row.verdict]
    return render("spread.html", spreads=spreads, ratio=tab.fig.ratio, verdicts=verdicts, rule=rule,
                  rule_title=RULE_TITLE, where=f"{tab.fig.id} on {tab.machine}",
                  outliers=quantities.outlier_lines(tab), far=f"{outliers.FAR:g}")


def _warm_compiles(frame: pd.DataFrame) -> dict | None:
    """Warm samples that compiled inside the timed window: their time includes a compile."""
    # In numpy, not a filtered copy of the whole frame: only the count and the variants are shown.
    with np.errstate(invalid="ignore"):  # an empty count (NaN) is no compile, as pandas compares it
        compiled = frame["compiles"].to_numpy(dtype=float, na_value=np.nan) > 0
    warm = (frame["boundary"].to_numpy() != "first-call") & compiled
    count = int(np.count_nonzero(warm))
    if not count:
        return None
    return {"count": count, "text": fmt.count(count, "warm sample"),
            "variants": ", ".join(sorted({str(v) for v in frame["variant"].to_numpy()[warm]}))}


def detail_list(frame: pd.DataFrame, source: str) -> Markup:
    """Each distinct ``detail`` text once, in first-seen order, with how many of
    the samples carried it; a plain statement when no sample carried any."""
    texts = frame["detail"].dropna()
    texts = texts[texts != ""]
    where = f"{len(frame)} samples, {frame['run'].nunique()} runs of {source}"
    blocks = [(fmt.unglue_urls(t), n) for t, n in texts.value_counts(sort=False).items()]  # shown, not stored
    return render("details.html", where=where, blocks=blocks)


def value(text: str, title: str, href: str | None = None) -> Markup:
    """One number (or verdict) in prose, with where it came from in its tooltip."""
    return render("value.html", text=text, title=title, href=href)


_TEMP_DIR = re.compile(r"(/tmp|/var/folders/[^\s,:]+)/[^\s,:/]+")  # a per-run scratch folder's random name


def _distinct(texts: dict[str, set[str]], col: str) -> str:
    # A scratch folder's random name (one per run) says nothing and would list every run: shown as <tmp>.
    values = sorted({_TEMP_DIR.sub("<tmp>", v) for v in texts[col]})
    return ", ".join(values) or "—"


def _meta(frame: pd.DataFrame, texts: dict[str, set[str]]) -> dict:
    """What a reader from a review link needs first: on what, when, how, how many (``texts``: the
    distinct texts of :data:`TEXT_COLUMNS`, ``Table.texts``)."""
    params = frame["params"].to_numpy()  # may be empty: every empty cell one group, as groupby(dropna=False)
    params = np.where(pd.isna(params), None, params).tolist() if pd.isna(params).any() else params.tolist()
    per_run = Counter(zip(frame["run"].tolist(), frame["variant"].tolist(), params)).values()  # samples a cell
    return {"machine": frame["machine"].iat[0], "platform": frame["platform"].iat[0],
            "device_kind": frame["device_kind"].iat[0],
            "jax": _distinct(texts, "jax_version"), "date": _distinct(texts, "timestamp_utc")[:10],
            "boundary": _distinct(texts, "boundary"), "runs": frame["run"].nunique(),
            "processes": int(frame["process_count"].max()) if "process_count" in frame else 1,
            "samples": fmt.count_span(int(min(per_run)), int(max(per_run)), "sample")}


# Recorded once per run and different in every run: shown in run order, not as a sorted set.
PER_RUN_FIELDS = frozenset({"load_avg_1m", "order_seed", "cpu_mhz"})


def _by_run(frame: pd.DataFrame, texts: dict[str, set[str]], col: str) -> str:
    values = _first_by_run(frame, col)
    if len({None if v is None or v != v else v for v in values}) <= 1:  # nunique(dropna=False)
        return _distinct(texts, col)
    return "by run: " + ", ".join("—" if v is None or v != v else str(v) for v in values)


def _first_by_run(frame: pd.DataFrame, col: str) -> list:
    """``frame.groupby("run")[col].first()`` as a list, in run order: each run's first value that is
    not empty (None where a run has none). A number column in numpy, without a grouping; any other
    through pandas."""
    values = frame[col].to_numpy()
    if values.dtype.kind not in "iuf":
        return frame.groupby("run")[col].first().tolist()
    order, inverse = np.unique(frame["run"].to_numpy(), return_inverse=True)
    present = np.flatnonzero(~np.isnan(values)) if values.dtype.kind == "f" else np.arange(len(values))
    groups, first = np.unique(inverse[present], return_index=True)
    found: list = [None] * len(order)
    for group, value in zip(groups.tolist(), values[present[first]].tolist()):
        found[group] = value
    return found


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


# A comparison's code is the source it recorded (benchsite/model/comparisons.py), not a script of this checkout.
def recorded_state(rec) -> str:
    """What a comparison's "code today" says: who made it, and that its code is what it recorded."""
    return f"made by {rec.made_by}: its code is the recorded source of each version, not checked against bench_scripts/"


# The columns whose distinct values a panel lists (its meta line, its provenance), asked of its table at once.
TEXT_COLUMNS = tuple(dict.fromkeys(["jax_version", "timestamp_utc", "boundary", *(c for c, _ in PROVENANCE_FIELDS)]))


def _provenance(tab: Table, texts: dict[str, set[str]]) -> list[tuple[str, str]]:
    frame = tab.frame
    rows = [(label, _by_run(frame, texts, col) if col in PER_RUN_FIELDS else _distinct(texts, col))
            for col, label in PROVENANCE_FIELDS]
    rows.append(("runs × samples", f"{frame['run'].nunique()} runs, {len(frame)} samples in all"))
    rows.append(("code today", recorded_state(tab.fig.compare) if tab.fig.compare is not None else
                 f"STALE: {tab.stale}" if tab.stale else "current"))
    return rows


def machine_panel(tab: Table, csv_url: str, rule_url: str, svg: str | None = None, ceiling: str = "") -> Markup:
    """Everything for one machine: meta, tables, spread, chart, the rows against the machine's
    ceilings (``ceiling``, finished HTML from ``roofline.panel_section``), provenance; the
    spread's verdicts link the rule at ``rule_url``.

    ``svg`` is the chart (or its placeholder) when the caller already has it (the build caches charts);
    else it is drawn (``chart.table_chart``) after the rest is written."""
    metric_tables = [{"label": metrics.get(m).label, "table": table(tab, m)} for m in tab.fig.extra.get("metrics", ())]
    texts = tab.texts(TEXT_COLUMNS)
    meta = _meta(tab.frame, texts) | {"unmeasured": tab.unmeasured}
    written = {"table": table(tab), "spread": spread_text(tab, rule_url), "warm": _warm_compiles(tab.frame),
               "provenance": _provenance(tab, texts)}
    svg = svg if svg is not None else chart.table_chart(tab)
    return render("panel.html", stale=tab.stale.replace(" changed since", ""), meta=meta, metric_tables=metric_tables,
                  chart=Markup(svg), csv_url=csv_url, ceiling=Markup(ceiling), **written)


def tab_id(fig_id: str, machine: str) -> str:
    """The stable anchor of one machine's tab: ``#fig-...--<machine>`` selects it."""
    return f"{fig_id}--{machine_slug(machine)}"


MAX_TAB_CSS = 8  # bench.css has a show-rule for up to this many tabs in one set


def tabs(fig_id: str, panels: dict[str, str], roles: dict[str, str] | None = None) -> str:
    """One tab per machine, in the project's own markup (``templates/tabs.html``); a machine's
    role (``Catalog.role``: "reference", "measured here") is said in its label.

    Each input's id is :func:`tab_id`, so a link ending in ``#fig-...--<machine>``
    opens that machine's tab (``docs/assets/bench-tabs.js``)."""
    roles = roles or {}
    if len(panels) > MAX_TAB_CSS:
        raise ValueError(f"{fig_id}: {len(panels)} tabs; bench.css styles at most {MAX_TAB_CSS}")
    entries = [{"id": tab_id(fig_id, m), "label": m, "role": roles.get(m, ""), "html": Markup(p)}
               for m, p in panels.items()]
    return str(render("tabs.html", tabs=entries, group=f"__bench_{fig_id}"))


def error_box(fig_id: str, message: str, inline: bool = False) -> Markup:
    """A visible error where data was needed (``inline`` inside a sentence)."""
    return render("error.html", fig_id=fig_id, message=message, inline=inline)


def code_block(fig: Figure, indent: str = "    ") -> str:
    """The script's named sections as a snippets include: the code shown is the code that ran."""
    lines = "\n".join(f'{indent}--8<-- "{fig.script_rel}:{s}"' for s in fig.code_sections)
    return f"{indent}```python\n{lines}\n{indent}```\n"


def recorded_code(rec: Recorded) -> Markup:
    """A comparison's code: each version's source as recorded when it ran, highlighted by Pygments
    (the highlighter the site's Markdown uses) into the markup ``pymdownx.highlight`` writes.
    Never through Markdown: a recorded line such as ``--8<--`` would include a file of this checkout."""
    versions = []
    for v in rec.versions:
        try:
            lexer = get_lexer_for_filename(v.path, stripnl=False)
        except ClassNotFound:
            lexer = TextLexer(stripnl=False)
        language = lexer.aliases[0] if lexer.aliases else "text"
        html = highlight(v.source, lexer, HtmlFormatter(cssclass=f"language-{language} highlight", wrapcode=True))
        versions.append({"variant": v.variant, "target": v.target, "revision": v.revision, "path": v.path,
                         "sha256": v.sha256, "html": Markup(html)})
    return render("recorded_code.html", command=rec.command, versions=versions)
