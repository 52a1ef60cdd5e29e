"""Expand ``<!-- bench:KIND args -->`` markers in a page's Markdown.

One dispatcher; an unknown marker, figure or statistic raises
:class:`MarkerError` naming the page and line. Markers inside fenced code
blocks are left alone, so pages can show the syntax.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Protocol

import pandas as pd
from markupsafe import Markup

from benchkit import layout
from benchkit.runner import DEFAULT_RUNS
from benchsite.core import urls
from benchsite.model import calibration, metrics, noise, quotes, sessions, stats
from benchsite.model.catalog import Catalog, Unavailable
from benchsite.model.claim_syntax import ClaimError
from benchsite.model.figures import Figure
from benchsite.model.table import Table
from benchsite.pages import history, pages, yours
from benchsite.pages.docsread import Docs
from benchsite.views import carryover, claims, fmt, quantities, render, walltime
from benchsite.views import verdict_rates as verdict_views
from benchsite.views.html import render as template

MARKER = re.compile(r"<!--\s*bench:([a-z-]+)(.*?)-->")
FENCE = re.compile(r"^\s*(```|~~~)")


class MarkerError(ValueError):
    """A marker the build cannot expand; the message starts with ``page:line:``."""


class Blocks(Protocol):
    """What a page needs of the build's cache of finished HTML (the build hands in its
    ``build.buildcache.BuildCache``): each call returns a one-line placeholder that Markdown and the
    search indexer pass over, and the build fills in the finished page."""

    def stash(self, html: str) -> str:
        """A placeholder for ``html``."""

    def html_block(self, *parts: str) -> str:
        """A figure's div of ``parts``, stashed on a line of its own."""

    def block(self, kind: str, key: str, make: Callable[[], str]) -> str:
        """``make()``, kept by ``kind`` and ``key`` (all it depends on but the code)."""

    def machine_panel(self, tab: Table, csv_url: str, rule_url: str, source: str, ceiling: str = "") -> str:
        """``views.render.machine_panel`` of ``tab``, kept by its results file's digest ``source``."""


@dataclass(frozen=True)
class Context:
    catalog: Catalog
    page: str  # the page's source path, for messages
    link: Callable[[str], str]  # site path -> URL relative to this page
    on_problem: Callable[[str], None]  # report a bad results file (a warning in the build)
    src_uri: str = ""  # the page's path below docs/, for Markdown links that mkdocs checks
    docs_dir: InitVar[Path | None] = None  # docs/: read through ``docs``, made from it if not given
    site_url: str = ""  # for the URL in cite blocks ("" = a path from the site root)
    cache: Blocks = field(kw_only=True)  # this build's charts and panels
    markdown: Callable[[str], str] | None = None  # the site's Markdown set-up, for blocks rendered once
    repo_url: str = ""  # mkdocs repo_url: cite blocks link the code at the commit that ran
    # A false claim about the reference machine's results is a problem (a strict build fails); about
    # another machine's (a reader's own make bench), or with BENCH_CLAIMS=report, it is shown as not
    # holding there and listed by `make claims`, and the build goes on (benchsite/views/claims.py).
    claims_fatal: bool = True
    first_line: int = 1  # the source file's line number of the Markdown's first line (after front matter)
    # Every read under docs/ (a figure's chapter, the verdicts the chapters quote, their claims), recorded:
    # the build keeps the page's expansion by what it read (benchsite/pages/docsread.py).
    docs: Docs | None = field(default=None, kw_only=True)

    def __post_init__(self, docs_dir: Path | None) -> None:
        if self.docs is None and docs_dir is not None:
            object.__setattr__(self, "docs", Docs(docs_dir))


QUOTING = re.compile(r"<!--\s*bench:(?:figure|value|claim|ranked|detail|timeline|roofline|file|aa-rates|carryover)"
                     r"\s+(fig-[\w-]+)")
H1 = re.compile(r"^# \S")


def expand(markdown: str, ctx: Context) -> str:
    out, in_fence, banner = [], False, whose_numbers(markdown, ctx)
    for number, line in enumerate(markdown.split("\n"), ctx.first_line):
        if banner and not in_fence and H1.match(line):  # said under the page's title, once
            out.extend([line, "", banner])
            banner = ""
            continue
        if FENCE.match(line):
            in_fence = not in_fence
        if not in_fence and "bench:claim" in line:  # checked sentences first: their words may hold markers
            line = _claims(line, ctx, number)
        if not in_fence and "bench:" in line:
            alone = MARKER.fullmatch(line.strip()) is not None  # a block of its own, not inside a sentence
            line = MARKER.sub(lambda m, n=number, a=alone: _dispatch(m, ctx, n, a), line)
        out.append(line)
    return "\n".join(out)


def _claims(line: str, ctx: Context, number: int) -> str:
    """The claims on one line, checked; a claim the build cannot check (it names a row, variant
    or column the data lacks, or cannot be read) stops the build with its ``page:line:`` message,
    as a marker does, never with a traceback."""
    try:
        return claims.expand_line(line, ctx, number)
    except ClaimError as err:
        raise MarkerError(str(err)) from None


class SideFileDamaged(Exception):
    """A figure's side file that a marker draws cannot be read (its loader's message names the file)."""


def _dispatch(match: re.Match, ctx: Context, line: int, alone: bool = True) -> str:
    kind, args = match.group(1), match.group(2).split()
    handler = HANDLERS.get(kind)
    if handler is None:
        raise MarkerError(f"{ctx.page}:{line}: unknown marker bench:{kind} "
                          f"(known: {', '.join(sorted(HANDLERS))})")
    try:
        return handler(args, ctx)
    except Unavailable as err:
        # The data this marker needs is missing or invalid: say so where it would have been
        # (a strict build fails on the warning, which names the file and line).
        ctx.on_problem(str(err))
        fig_id = args[0] if args else kind
        return render.error_box(fig_id, str(err), inline=not alone)
    except (quotes.NoRows, SideFileDamaged) as err:
        # The machine's results have no rows the marker selects (another machine's may), or its side
        # file is damaged: the same, named by this page and line. A lenient build goes on; a strict
        # one fails on the warning.
        message = f"{ctx.page}:{line}: bench:{kind} {' '.join(args)}: {err}"
        ctx.on_problem(message)
        return render.error_box(args[0], message, inline=not alone)
    except (KeyError, ValueError) as err:
        raise MarkerError(f"{ctx.page}:{line}: bench:{kind} {' '.join(args)}: {err}") from None


def _figure_id(args: list[str], ctx: Context) -> str:
    if not args or not args[0].startswith("fig-"):
        raise ValueError("the first argument must be a figure id (fig-...)")
    if args[0] not in ctx.catalog.figures:
        raise ValueError(f"no figure script defines {args[0]}")
    return args[0]


def _options(args: list[str]) -> dict[str, str]:
    """``key=value`` words as a dict; a key (``a.n``, ``a``) is the text before the first ``=``, and
    one given twice is refused (the last would silently win)."""
    pairs = [a.split("=", 1) for a in args]
    if any(len(p) != 2 for p in pairs):
        raise ValueError("options must be key=value")
    twice = sorted({k for k, _ in pairs if [p[0] for p in pairs].count(k) > 1})
    if twice:
        raise ValueError(f"option {', '.join(twice)} given twice")
    return dict(pairs)


# --- whose numbers a page quotes -----------------------------------------------------------

def whose_numbers(markdown: str, ctx: Context) -> str:
    """A line for the top of a page that quotes figures: which machine's results its prose and
    first tabs show, which sessions, and whether that is the site's reference machine or one
    measured here by a local ``make bench`` ("" for a page that quotes none)."""
    cat = ctx.catalog
    by_machine: dict[str, list[str]] = {}
    for fig_id in sorted(set(QUOTING.findall(markdown)) & set(cat.figures)):
        machine = cat.quoted(fig_id)
        if machine is not None:
            by_machine.setdefault(machine, []).append(fig_id)
    if not by_machine:
        return ""
    groups = []
    for machine, figs in sorted(by_machine.items(), key=lambda item: (cat.role(item[0]) != "measured here", item[0])):
        found = [sessions.latest(cat, f, machine) for f in figs]  # the kept sessions unread
        held = sorted({(s.id, s.date) for s in found if s is not None})
        groups.append({"machine": machine, "role": cat.role(machine), "figures": figs, "all": len(figs) == sum(
            map(len, by_machine.values())), "sessions": [{"id": i, "date": d} for i, d in held]})
    return str(template("whose.html", groups=groups, reference=cat.declared,
                        yours=ctx.link("your-machine/"), run=ctx.link("run-it-yourself/")))


# --- bench:figure -----------------------------------------------------------------------

def figure_marker(args: list[str], ctx: Context) -> str:
    fig = ctx.catalog.figures[_figure_id(args, ctx)]
    machines = ctx.catalog.machines(fig.id)
    # A chapter shows at most a few machines (preferred first); /bench has them all.
    panels = {m: stash_unindexed(pages.machine_panel(fig.id, m, ctx), ctx.cache.stash)
              for m in machines[:pages.MAX_TABS]}
    roles = {m: ctx.catalog.role(m) for m in panels}
    body = render.tabs(fig.id, panels, roles) if panels else render.error_box(
        fig.id, f"no results yet; run `make bench` (script {fig.script_rel})")
    if not panels:
        ctx.on_problem(f"{ctx.page}: {fig.id} has no results in {ctx.catalog.results}")
    bench_page = urls.rel(ctx.src_uri, urls.figure_src(fig.id))
    _check_headline(fig, ctx)
    return str(template("figure.md", fig=fig, bench_page=bench_page, more=len(machines) - len(panels),
                        caption=claims.caption_html(fig, ctx),
                        body=Markup(body), code=Markup(_code(fig, ctx)), recorded=_recorded(fig, ctx))) + "\n"


# At a line's start; the attribute itself (Material skips an element whose attribute is named exactly
# data-search-exclude: one named data-search-exclude-x is indexed).
UNINDEXED = re.compile(r"^<([a-z]+)\b[^>]*\sdata-search-exclude(?=[\s=/>])[^>]*>", re.M)
# What keeps such an element in the page's text: an anchor mkdocs records (its link check reads the
# ids of the raw HTML Markdown is given), or a data-search-* value, which Material's search strips
# from the page text it indexed (a stashed block is put back after that, so it would keep it).
SEEN_IN_TEXT = re.compile(r"""\s(?:id|name)=|\sdata-search-[\w-]+=["'][^"']""")


def stash_unindexed(html: str, stash: Callable[[str], str]) -> str:
    """``html`` (a machine's panel in a chapter) with each element that starts a line and is left
    out of the search index (``data-search-exclude``: the tables, the spread, the chart and the
    provenance) stashed: three HTML parsers over each chapter (mkdocs' anchor collection, Markdown's
    raw HTML blocks, the search indexer) pass over a one-line comment instead of parsing what they
    would skip or pass on unchanged, and the build puts it back in the finished page. The text the
    search index reads (caption, verdicts, notes) stays."""
    out, done = [], 0
    for start in UNINDEXED.finditer(html):
        if start.start() < done:
            continue  # inside an element stashed already
        end = _element_end(html, start.group(1), start.start())
        if end is None or SEEN_IN_TEXT.search(html, start.start(), end):
            continue
        out += [html[done:start.start()], stash(html[start.start():end])]
        done = end
    return "".join(out) + html[done:] if out else html


def _element_end(html: str, tag: str, start: int) -> int | None:
    """Where the element of ``tag`` that opens at ``start`` ends (after its closing tag), counting
    elements of the same tag inside it; None if it does not close."""
    depth = 0
    for found in re.finditer(rf"<(/?){tag}\b[^>]*>", html[start:]):
        depth += -1 if found.group(1) else 1
        if depth == 0:
            return start + found.end()
    return None


def _code(fig: Figure, ctx: Context) -> str:
    """The script's code in the chapter's admonition: the HTML its /bench page shows, made once per
    figure and build by the site's Markdown (``pages.code_html``), stashed; without the site's
    Markdown (a test's context), and for a comparison (its recorded source is shown instead, or where
    its side file cannot be read, what the snippet lines make of it), the snippet lines for the page's own."""
    if ctx.markdown is None or fig.compare is not None:
        return render.code_block(fig)
    return f"    {ctx.cache.stash(pages.code_html(fig, ctx))}\n"


def _recorded(fig: Figure, ctx: Context) -> Markup:
    """A comparison's recorded source (``benchkit compare``), stashed; "" for a figure script."""
    if fig.compare is None or not fig.compare.versions:
        return Markup("")
    html = ctx.catalog.memo(("code-html", fig.id), lambda: str(render.recorded_code(fig.compare)))
    return Markup(ctx.cache.stash(html))


def _check_headline(fig, ctx: Context) -> None:
    """A declared headline that names no cell of the quoted machine's table is a build warning."""
    machine = ctx.catalog.quoted(fig.id)
    if fig.headline and machine and ctx.catalog.problem(fig.id, machine) is None:
        tab = ctx.catalog.table(fig.id, machine)
        if tab.headline is None:
            ctx.on_problem(f"{fig.script_rel}:{fig.line}: FIGURE headline {dict(fig.headline)} names no cell of "
                           f"{fig.id} on {machine} (rows: {', '.join(r.label or '(one row)' for r in tab.rows)})")


# --- bench:value ------------------------------------------------------------------------

def value_marker(args: list[str], ctx: Context) -> str:
    """``<!-- bench:value fig-id stat=... [machine=...] [filters] -->``: one number in a sentence,
    taken from the table model's samples by ``benchsite/model/quotes.py`` and formatted here."""
    fig_id = _figure_id(args, ctx)
    opts = _options(args[1:])
    stat = opts.pop("stat", "median")
    if stat not in STATS:
        raise ValueError(f"unknown stat {stat!r} (known: {', '.join(sorted(STATS))})")
    machine = opts.pop("machine", None) or ctx.catalog.prose_machine(fig_id)
    frame = ctx.catalog.table(fig_id, machine).frame
    fig = ctx.catalog.figures[fig_id]
    if stat not in PAIRED and (sided := [k for k in opts if k[:2] in quotes.SIDE_PREFIXES]):
        raise ValueError(f"{', '.join(sided)}: stat={stat} compares nothing; a side's own filters "
                         f"go with the statistics that pair ({', '.join(PAIRED)})")
    # each side's selection, when a side has filters of its own (two rows of the figure compared)
    title = f"{fig_id} on {machine}: {stat}, {frame['run'].nunique()} runs{quotes.compared(opts, fig)}"
    if stat == "verdict":  # the reason goes in the title, and the words link to the rule
        decided = quotes.verdict(frame, opts, fig)
        return render.value(decided.text, f"{title}; paired rule: {decided.reason}", ctx.link(render.RULE_PATH))
    if stat == "same":  # the equivalence rule, with its interval in the title
        same = quotes.equivalence(frame, opts, fig)
        return render.value(same.text, f"{title}; equivalence rule: {same.reason}",
                            ctx.link(render.RULE_PATH) + "#the-same-within-a-margin")
    return render.value(STATS[stat](frame, opts, fig), title)


def _times(s: stats.Summary) -> str:
    return fmt.time_range(s.median, s.low, s.high)


def _ratios(s: stats.Summary) -> str:
    return fmt.ratio_range(s.median, s.low, s.high)


def _rates(s: stats.Summary) -> str:
    return fmt.rate_range(s.median, s.low, s.high)


def _counts(s: stats.Summary) -> str:
    return fmt.count_range(s.median, s.low, s.high)


def _metric(name: str) -> Callable[[pd.DataFrame, dict[str, str], Figure], str]:
    return lambda frame, opts, fig: quantities.metric(metrics.get(name), quotes.metric(frame, opts, name))


# the statistics of two things compared (quotes.pair): they take a=, b= and each side's a.KEY=, b.KEY=
PAIRED = ("ratio", "verdict", "same", "diff", "lost", "error-ratio")
# stat= -> the quote (benchsite/model/quotes.py), formatted
STATS: dict[str, Callable[[pd.DataFrame, dict[str, str], Figure], str]] = {
    "median": lambda frame, opts, fig: _times(quotes.median(frame, opts)),
    "min": lambda frame, opts, fig: _times(quotes.minimum(frame, opts)),
    "mean": lambda frame, opts, fig: _times(quotes.mean(frame, opts)),
    "rate": lambda frame, opts, fig: _rates(quotes.rate(frame, opts)),
    "compiles": lambda frame, opts, fig: _counts(quotes.compiles(frame, opts)),
    "ratio": lambda frame, opts, fig: _ratios(quotes.ratio(frame, opts, fig)),
    "diff": lambda frame, opts, fig: _times(quotes.diff(frame, opts, fig)),
    "lost": lambda frame, opts, fig: _times(quotes.diff(frame, opts, fig, per_window=True)),
    "verdict": lambda frame, opts, fig: quotes.verdict(frame, opts, fig).text,
    "same": lambda frame, opts, fig: quotes.equivalence(frame, opts, fig).text,
    "range": lambda frame, opts, fig: fmt.percent(quotes.range_frac(frame, opts)),
    "within": lambda frame, opts, fig: fmt.percent(quotes.within(frame, opts)),
    "runs": lambda frame, opts, fig: str(quotes.runs(frame, opts)),
    "field": lambda frame, opts, fig: ", ".join(quotes.field(frame, opts)),
    "detail": lambda frame, opts, fig: "; ".join(quotes.details(frame, opts)),  # escaped when shown
    "bandwidth": _metric("bandwidth"), "flop-rate": _metric("flop_rate"), "error": _metric("error"),
    "size": _metric("size"),
    "error-ratio": lambda frame, opts, fig: _ratios(quotes.error_ratio(frame, opts, fig)),
}


# --- bench:ranked -----------------------------------------------------------------------

def ranked_marker(args: list[str], ctx: Context) -> str:
    """``<!-- bench:ranked fig-id variant=op by=op top=8 [metric=time] -->``: the rows of
    one variant, one line per value of the ``by`` parameter, largest median first."""
    fig_id = _figure_id(args, ctx)
    opts = _options(args[1:])
    by, top = opts.pop("by", None), int(opts.pop("top", "10"))
    metric = metrics.get(opts.pop("metric", "time"))
    if not by or "variant" not in opts:
        raise ValueError("needs variant= and by= (the parameter that names each line)")
    machine = ctx.catalog.prose_machine(fig_id)
    rows = quotes.select(ctx.catalog.frame(fig_id, machine), opts)
    if f"p_{by}" not in rows:
        raise ValueError(f"no parameter {by!r} in the selected rows")
    return render.ranked_table(rows, by, top, metric, f"{fig_id} on {machine}")


# --- bench:file -------------------------------------------------------------------------

def _side_file(args: list[str], ctx: Context) -> tuple[str, str, str, Path]:
    """(figure id, machine, name, path) of the side file a marker names with ``name=``, on the
    machine the prose quotes; an error when it is missing."""
    fig_id = _figure_id(args, ctx)
    name = _options(args[1:]).get("name")
    if not name:
        raise ValueError("needs name= (the side file's name after the figure's stem)")
    machine = ctx.catalog.prose_machine(fig_id)
    path = layout.side_file(ctx.catalog.results, machine, ctx.catalog.figures[fig_id].stem, name)
    if not path.is_file():
        raise ValueError(f"no side file {path.name} in {ctx.catalog.results / machine}")
    return fig_id, machine, name, path


def file_marker(args: list[str], ctx: Context) -> str:
    """``<!-- bench:file fig-id name=trace.json.gz -->``: a download link to a side file
    of the figure (``results/<machine>/<stem>.<name>``) from the machine the prose quotes."""
    fig_id, machine, name, path = _side_file(args, ctx)
    url = ctx.link(layout.site_path(machine, ctx.catalog.figures[fig_id].stem, name))
    return str(template("file_link.html", url=url, file=path.name))


# --- bench:timeline ---------------------------------------------------------------------

def timeline_marker(args: list[str], ctx: Context) -> str:
    """``<!-- bench:timeline fig-id name=timeline.json -->``: a side file of traced steps
    (``benchsite/views/timeline.py`` says its format) drawn as a small timeline, from the machine
    the prose quotes."""
    from benchsite.views import timeline  # only pages that draw a timeline need it

    fig_id, machine, name, path = _side_file(args, ctx)
    url = ctx.link(layout.site_path(machine, ctx.catalog.figures[fig_id].stem, name))
    try:
        return timeline.html(path, f"{fig_id} on {machine}", url)
    except timeline.TimelineError as err:  # damaged data, as a bad results file is: a box, and a warning
        raise SideFileDamaged(str(err)) from None


# --- bench:detail -----------------------------------------------------------------------

def detail_marker(args: list[str], ctx: Context) -> str:
    """The distinct ``detail`` texts of the selected rows (e.g. what JAX's compile
    log said), each with how many samples carried it; escaped, never interpreted."""
    fig_id = _figure_id(args, ctx)
    opts = _options(args[1:])
    machine = opts.pop("machine", None) or ctx.catalog.prose_machine(fig_id)
    frame = ctx.catalog.frame(fig_id, machine)
    return render.detail_list(quotes.select(frame, opts) if opts else frame, f"{fig_id} on {machine}")


# --- bench:verdict-rates, bench:verdict-count, bench:aa-rates, bench:verdict-rule ------------
# Each asks model/noise.py once for plain data, and views/verdict_rates.py renders it.

def verdict_rates_marker(args: list[str], ctx: Context) -> str:
    """``<!-- bench:verdict-rates [rule=differ|same] [noise=model|measured] [scale=10] -->``: the
    seeded simulation of the verdict rules as a table. ``rule=differ`` (the default): how often the
    paired and unpaired rules say "a result" with no true difference (false positives) and with true
    shifts (stats.simulate_error_rates); ``rule=same``: how often the equivalence rule says "the
    same" with true differences from none to beyond the margin (stats.simulate_equivalence_rates).
    ``noise`` picks the simulated noise: ``model`` (stats.SIM_*, the default) or ``measured`` (read
    from the results of the machine the prose quotes, benchsite/model/noise.py); ``scale`` multiplies it."""
    opts = _options(args)
    rule, scale, kind = opts.pop("rule", "differ"), float(opts.pop("scale", "1")), opts.pop("noise", "model")
    if kind not in ("model", "measured"):
        raise ValueError(f"noise= is model or measured, not {kind!r}")
    if opts or rule not in ("differ", "same"):
        raise ValueError(f"unknown options {', '.join(opts) or 'rule=' + rule} (known: rule=differ|same, "
                         "noise=model|measured, scale)")
    found = noise.verdict_rates(ctx.catalog, rule, kind, scale)
    return verdict_views.rates_table(found)


QUOTED_VERDICT = re.compile(r"<!--\s*bench:value\s+fig-[\w-]+[^>]*\bstat=verdict\b")


def _quoted_verdicts(ctx: Context) -> int:
    """How many verdicts the pages quote in their prose (``bench:value ... stat=verdict``)."""
    if ctx.docs is None:
        return 0
    return sum(ctx.docs.view(name, quoted_verdicts_in) for name in ctx.docs.names("*.md"))


def quoted_verdicts_in(text: str | None) -> int:
    """How many verdicts one page quotes (the build records this count, not the page's text)."""
    return len(QUOTED_VERDICT.findall(text or ""))


def verdict_count_marker(args: list[str], ctx: Context) -> str:
    """``<!-- bench:verdict-count what=paired|quoted|unpaired|machines|paired-false|unpaired-false -->``:
    how many verdicts the site's figure panels (paired), its prose (quoted) and its /bench comparisons
    with the reference (unpaired) show, on how many machines, and how many false results the
    simulated false-positive rate at the measured noise (R = a default session's runs, one of
    stats.SIM_RUNS) implies if no difference were real (paired-false: over the panels' and the
    prose's verdicts together)."""
    what = _options(args).get("what", "")
    found = noise.verdict_count(ctx.catalog, what, _quoted_verdicts(ctx), DEFAULT_RUNS)
    return verdict_views.count_value(found)


def aa_rates_marker(args: list[str], ctx: Context) -> str:
    """``<!-- bench:aa-rates fig-aa-calibration [machine=...] -->``: per verdict rule
    (``calibration.RULES``), how many of the figure's A/A pairs the rule called wrongly, measured
    on the machine the prose quotes, beside the rate the simulation gives for the same comparison
    at the site's simulated noise and at the noise these pairs show."""
    fig_id = _figure_id(args, ctx)
    opts = _options(args[1:])
    machine = opts.pop("machine", None)
    if opts:
        raise ValueError(f"unknown options {', '.join(opts)} (known: machine)")
    found = noise.aa_rates(ctx.catalog, fig_id, machine)
    return verdict_views.aa_table(found, calibration.SIM_TRIALS)


def _agree_needed() -> str:
    return ", ".join(f"{stats.sign_agree_needed(n)} of {n}" for n in range(stats.PAIRED_MIN_RUNS, 12))


def _together_needed() -> str:
    return ", ".join(f"{stats.rank_sum_needed(n, n)} of {n * n} pairs for {n} runs a side"
                     for n in range(stats.UNPAIRED_MIN_RUNS, 10) if stats.rank_sum_needed(n, n) is not None)


def _sign_interval() -> str:
    def nth(k: int) -> str:
        return {1: "smallest", 2: "second smallest", 3: "third smallest"}.get(k, f"{k}th smallest")
    return ", ".join(f"{nth(k)} to {nth(k).replace('smallest', 'largest')} of {n}" for n in range(5, 12)
                     if (k := stats.sign_interval_rank(n)) is not None)


RULE_VALUES: dict[str, Callable[[], str]] = {
    "min-effect": lambda: fmt.percent(stats.MIN_EFFECT),
    "paired-min-runs": lambda: str(stats.PAIRED_MIN_RUNS),
    "paired-alpha": lambda: fmt.percent(stats.PAIRED_ALPHA),
    "paired-k": lambda: f"{stats.PAIRED_K:g}",
    "paired-agree": _agree_needed,
    "unpaired-min-runs": lambda: str(stats.UNPAIRED_MIN_RUNS),
    "unpaired-alpha": lambda: fmt.percent(stats.UNPAIRED_ALPHA),
    "unpaired-k": lambda: f"{stats.UNPAIRED_K:g}",
    "unpaired-pairs": _together_needed,
    "mad-to-sd": lambda: f"{stats.MAD_TO_SD:g}",
    "equiv-alpha": lambda: fmt.percent(stats.EQUIV_ALPHA),
    "equiv-level": lambda: fmt.percent(1 - 2 * stats.EQUIV_ALPHA),
    "equiv-interval": _sign_interval,
    "equiv-min-runs": lambda: str(next(n for n in range(1, 50) if stats.sign_interval_rank(n) is not None)),
}


def verdict_rule_marker(args: list[str], ctx: Context) -> str:
    """``<!-- bench:verdict-rule min-effect -->``: one constant of the verdict rule, from the code."""
    if len(args) != 1 or args[0] not in RULE_VALUES:
        raise ValueError(f"needs one of {', '.join(RULE_VALUES)}")
    return render.value(RULE_VALUES[args[0]](), "benchsite/model/stats.py")


# --- bench:roofline ---------------------------------------------------------------------

def roofline_marker(args: list[str], ctx: Context) -> str:
    """``<!-- bench:roofline fig-id [show=chart|table|ceiling|percent|bound|intensity|crossover]
    [ceiling=fig-machine-peak] [machine=...] [filters] -->``: the figure's rows on the measured
    roofline of the same machine (benchsite/views/roofline.py), or a crossover of two variants."""
    from benchsite.views import roofline

    fig_id = _figure_id(args, ctx)
    opts = _options(args[1:])
    machine = opts.pop("machine", None) or ctx.catalog.prose_machine(fig_id)
    ceiling_id = opts.pop("ceiling", "fig-machine-peak")
    frame = ctx.catalog.frame(fig_id, machine)
    # The ceilings come from another figure on the same machine; without them, an error box.
    peak = ctx.catalog.frame(ceiling_id, machine) if opts.get("show", "chart") != "crossover" else None
    return roofline.marker(opts, frame, peak, list(ctx.catalog.figures[fig_id].group_by), f"{fig_id} on {machine}",
                           quotes.select, of_peak=functools.partial(pages.roofline_ceilings, ctx.catalog, ceiling_id,
                                                                    machine))


def _unclosed_claim(args: list[str], ctx: Context) -> str:
    raise ValueError("a claim's words end with <!-- /bench:claim --> on the same line (benchsite/views/claims.py)")


HANDLERS: dict[str, Callable[[list[str], Context], str]] = {
    "claim": _unclosed_claim,  # a closed claim was expanded before the other markers
    "roofline": roofline_marker,
    "figure": figure_marker,
    "value": value_marker,
    "ranked": ranked_marker,
    "file": file_marker,
    "timeline": timeline_marker,
    "detail": detail_marker,
    "verdict-rates": verdict_rates_marker,
    "verdict-rule": verdict_rule_marker,
    "aa-rates": aa_rates_marker,  # the A/A calibration (docs/verdicts.md)
    "verdict-count": verdict_count_marker,
    "index": pages.index_marker,  # /bench/
    "page": pages.page_marker,  # /bench/<fig-id>/ and /bench/<fig-id>/<machine>/
    "session": history.session_marker,  # /bench/<fig-id>/<machine>/<session>/
    "changes": history.changes_marker,  # /bench/changes/<machine>/
    "carryover": carryover.marker,  # what ran before each sample (docs/diagnosing/harness.md)
    "carryover-count": carryover.count_marker,  # the same over every figure of a machine
    "walltime": walltime.marker,  # how long make bench took (docs/run-it-yourself.md)
    "yours": lambda args, ctx: "\n" + yours.section(ctx) + "\n",  # after make bench (docs/your-machine.md)
}
