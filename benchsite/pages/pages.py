"""The /bench section: one index of every figure on every machine, one page per
figure, one page per figure and machine. What a reviewer links.

The build generates every page (:func:`generated_pages`). The index and the figure
pages are mkdocs pages whose markers (``bench:index``, ``bench:page``, handled here)
are expanded like any other page's; the pages the build writes itself (a figure on
one machine, a session, what changed on a machine) are made from the model when
written, with no marker text in between.

URLs (stable; a new machine or figure adds pages, never moves one):
  /bench/                        every figure x machine, with its headline
  /bench/<fig-id>/               one figure: machines, results, comparison, code
  /bench/<fig-id>/#<fig-id>--<m> the same page with machine m's tab open
  /bench/<fig-id>/<m>/           one figure on one machine, with its cite block
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import yaml

from benchkit import layout
from benchsite.core import urls
from benchsite.core.urls import INDEX_SRC, WIDE, figure_src, machine_path, machine_slug, machine_src, site_link
from benchsite.model import comparisons
from benchsite.model.catalog import Catalog, Unavailable
from benchsite.model.figures import Figure
from benchsite.pages import history
from benchsite.views import compare, fmt, quantities, render
from benchsite.views.fmt import esc, md
from benchsite.views.html import inline_code
from benchsite.views.html import render as template

if TYPE_CHECKING:  # markers imports this module; the type is all we need from it
    from benchsite.model.sessions import Session
    from benchsite.pages.markers import Context

# Up to this many machines a figure page shows them as tabs; past it, each
# machine's page carries its results and the figure page stays light (a chart
# inlines about half a megabyte of SVG).
MAX_TABS = 6

RUN_LINK = "Measure it on your own machine: [Run it on your hardware](../../run-it-yourself.md).\n\n"
INDEX_PAGE = """---
hide: [navigation, toc]
---

# Bench: every figure on every machine

Every figure of this site, on every machine that has results for it. The headline is one cell of
the figure's table: the median of the per-run medians, with the lowest and highest run median in
brackets (each run in fresh processes). A ratio of two alternatives says beside it whether it is
a result by the [paired rule](../verdicts.md); a share of a whole (a gap's part of a step) does
not. A figure page has the whole table, the spread, a chart of
every sample, the provenance, a comparison across machines and the code; a machine page adds a
block to paste into a review. **Stale** means the figure's script or the harness has changed
since those results were recorded, or that they are in the first results format, which recorded
no harness hash; the page says which.

Compare two machines in a terminal with `make compare A=<machine> B=<machine>`. To add yours,
[run it on your hardware](../run-it-yourself.md).

<!-- bench:index -->
"""


# --- paths -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Generated:
    """A generated page: its Markdown as far as it is fixed (front matter, title), and, for a page the
    build writes itself (``urls`` machine, session and changes pages), what makes the rest of it from
    the model when the page is written (``make``), so that no marker text is written to be parsed back.
    The index and the figure pages are mkdocs' own pages: their text carries a marker that mkdocs'
    page event expands, as on every chapter."""

    text: str
    make: Callable[[Context], str] | None = None

    def markdown(self, ctx: Context) -> str:
        """The page's Markdown for ``ctx`` (``text`` alone where mkdocs expands the page's markers)."""
        return self.text if self.make is None else f"{self.text}{self.make(ctx)}\n"


def generated_pages(cat: Catalog) -> dict[str, Generated]:
    """Source path -> every /bench page."""
    machines = cat.all_machines()
    changes = " · ".join(f"[{md(m)}]({urls.rel(INDEX_SRC, urls.changes_src(m))})" for m in machines)
    pages = {INDEX_SRC: Generated(INDEX_PAGE + (f"\nWhat moved between the last two sessions, per machine: {changes}\n"
                                                if machines else ""))}
    pages.update({urls.changes_src(m): Generated(f"{WIDE}# What changed on {esc(m)} {{ #changes }}\n\n", functools.partial(
        history.changes_marker, [f"machine={machine_slug(m)}"])) for m in machines})
    for fig_id, fig in sorted(cat.figures.items()):
        pages[figure_src(fig_id)] = Generated(f"{WIDE}# {esc(fig.title)} {{ #{fig_id} }}\n\n"
                                              f"{RUN_LINK}<!-- bench:page {fig_id} -->\n")
        for machine in cat.machines(fig_id):
            slug = machine_slug(machine)
            pages[machine_src(fig_id, machine)] = Generated(
                f"{WIDE}# {esc(fig.title)} on {esc(machine)} {{ #{render.tab_id(fig_id, machine)} }}\n\n{RUN_LINK}",
                functools.partial(machine_body, fig_id, machine))
            for sid in history.session_ids(cat, fig, machine):
                pages[urls.session_src(fig_id, machine, sid)] = Generated(
                    f"{WIDE}# {esc(fig.title)} on {esc(machine)}, session {sid} {{ #session }}\n\n",
                    functools.partial(history.session_marker, [fig_id, f"machine={slug}", f"session={sid}"]))
    return pages


def machine_body(fig_id: str, machine: str, ctx: Context) -> str:
    """A machine page's body (:func:`machine_page`) of one figure on one machine."""
    return machine_page(ctx.catalog.figures[fig_id], machine, ctx)


# --- small pieces ------------------------------------------------------------------------

def _rel(ctx: Context, target_src: str) -> str:
    return urls.rel(ctx.src_uri, target_src)


def chapter_link(fig: Figure, ctx: Context) -> str | None:
    """``[Chapter title](…#fig-id)`` when the chapter embeds the figure, else None
    (a figure merged before its chapter is not an error, just not linkable yet)."""
    found, title, embedded = ctx.docs.view(fig.chapter, chapter_facts) if ctx.docs else (False, None, ())
    # A comparison is in no chapter: its chapter is the one that explains the command that made it.
    anchor = fig.id if fig.compare is None else comparisons.CHAPTER_ANCHOR
    if fig.compare is None and fig.id not in embedded:
        return None
    if not found:
        return None
    name = fig.chapter if title is None else title
    return f"[{md(name)}]({_rel(ctx, fig.chapter)}#{anchor})"


EMBEDS = re.compile(r"(?=<!--\s*bench:figure\s+(\S+)\s)")  # overlapping: each place a figure marker starts


def chapter_facts(text: str | None) -> tuple[bool, str | None, tuple[str, ...]]:
    """What a figure's page reads of its chapter (``chapter_link``): whether it has any text, its
    title, and the figures it embeds (the build records these, not the chapter's every byte)."""
    if not text:
        return False, None, ()
    return True, chapter_title(text), tuple(sorted(set(EMBEDS.findall(text))))


# A page's YAML front matter where mkdocs looks for it (mkdocs.utils.meta.YAML_RE), and its loader.
FRONT_MATTER = re.compile(r"^-{3}[ \t]*\n(.*?\n)(?:\.{3}|-{3})[ \t]*\n", re.DOTALL)
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def chapter_title(text: str) -> str | None:
    """A chapter's first ``# heading`` after its front matter, split as mkdocs splits it
    (``mkdocs.utils.meta.get_data``), so a comment in the front matter is never the title: a YAML
    block that loads as a mapping is front matter, any other is the page's. Without one, mkdocs
    reads MultiMarkdown ``key: value`` lines, never a heading, and makes every line end ``\\n``.
    ``tests/test_bench_pages.py`` holds it to get_data on every chapter and on odd front matter."""
    if found := FRONT_MATTER.match(text):
        try:
            data = yaml.load(found.group(1), YAML_LOADER)
        except Exception:  # as get_data: a block that does not load is the page's text
            data = None
        body = text[found.end():] if isinstance(data, dict) else text
    else:
        body = text.replace("\r\n", "\n").replace("\r", "\n")
    title = re.search(r"^#\s+(.+)$", body, flags=re.M)
    return title.group(1).strip() if title else None


def comparison_cells(cat: Catalog, fig: Figure, machine: str, ref: str) -> list[compare.Cell]:
    """Every cell of ``machine`` against the reference ``ref`` (its machine page's comparison, and
    the count of results in the figure's machines table), each decided, kept under the build cache."""
    def made() -> list[compare.Cell]:
        # machines=True: these pages compare machines on purpose, so different hardware is the point
        found = compare.table_cells(cat.table(fig.id, machine), cat.table(fig.id, ref), machines=True)
        for cell in found:
            cell.decision  # noqa: B018 - decided here, once, and stored with the cell (a cached property)
        return found

    key = (fig.id, machine, ref, cat.csv_digest(fig.id, machine), cat.csv_digest(fig.id, ref), repr(fig),
           repr(cat.current_sha(fig.id)))
    return cat.memo(("cells", fig.id, machine, ref), lambda: cat.stored("cells", key, made))


def _csv_link(ctx: Context, fig: Figure, machine: str) -> str:
    return f"[CSV]({_rel(ctx, layout.site_path(machine, fig.stem))})"


def machine_panel(fig_id: str, machine: str, ctx: Context) -> str:
    """One machine's panel from its table model, or an error box naming the bad file."""
    cat = ctx.catalog
    try:
        tab = cat.table(fig_id, machine)
    except Unavailable as err:
        ctx.on_problem(str(err))
        return render.error_box(fig_id, str(err))
    return ctx.cache.machine_panel(tab, site_link(layout.site_path(machine, tab.fig.stem)), site_link(render.RULE_PATH),
                                   cat.csv_digest(fig_id, machine), ceiling_section(tab, ctx))


def ceiling_section(tab, ctx: Context) -> str:
    """The panel's rows set against the same machine's measured ceilings (benchsite/views/roofline.py),
    where they record bytes moved; cached on both results files and the code."""
    from benchsite.views import roofline

    cat, fig, machine = ctx.catalog, tab.fig, tab.machine
    if not fig.extra.get("ceilings", True) or not roofline.applies(tab.frame):
        return ""  # FIGURE "ceilings": False: its bytes are not memory traffic (a collective's message)
    peak_id = roofline.CEILING_FIGURE
    has_peak = machine in cat.machines(peak_id) and not cat.problem(peak_id, machine)
    peak_link = site_link(machine_path(peak_id, machine))
    key = "\n".join([fig.id, machine, cat.csv_digest(fig.id, machine),
                     cat.csv_digest(peak_id, machine) if has_peak else "-", peak_link, repr(fig.group_by)])
    return ctx.cache.stash(ctx.cache.block("ceiling", key, lambda: roofline.panel_section(
        tab.frame, cat.frame(peak_id, machine) if has_peak else None, list(fig.group_by),
        f"{fig.id} on {machine}", peak_link, chart=fig.id == peak_id)))


# --- bench:index -------------------------------------------------------------------------

NO_CHAPTER = "not in a chapter yet"
INDEX_HEAD = ("| figure | machine | headline | measured (UTC), jax | script | chapter | data |\n"
              "|---|---|---|---|---|---|---|")


def _machine_cells(cat: Catalog, fig: Figure, machine: str, ctx: Context) -> list[str]:
    """Headline, when and with what, and whether the script is still the one that ran."""
    if (fig.id, machine) in cat.errors:
        ctx.on_problem(cat.errors[(fig.id, machine)])
        return [f"**invalid results**: {md(cat.errors[(fig.id, machine)])}", "—", "—"]
    found = cat.summary(fig.id, machine)  # not the table: these lists name every machine
    head = found.headline
    runs = f"{found.runs} runs"
    verdict = f" · {_verdict_link(head.verdict, ctx)}" if head and head.verdict else ""
    shown = (f"{md(quantities.headline(head))}<br><small>{md(head.what)} · {runs}{verdict}</small>" if head
             else f"— ({runs})")
    when = f"{md(found.days)}<br><small>jax {md(found.jax)}</small>"
    state = (f"recorded source ([{fig.compare.made_by}](" + _rel(ctx, figure_src(fig.id)) + "#code))"
             if fig.compare is not None else "**⚠ stale**" if found.stale else "current")
    return [shown, when, state]


def _verdict_link(verdict, ctx: Context) -> str:
    """A headline ratio's verdict, linked to the rule, its reason as the link's title."""
    title = verdict.reason.replace('"', "'")
    return f'[{md(verdict.text)}]({_rel(ctx, "verdicts.md")} "{md(title)}")'


def _index_rows(fig: Figure, ctx: Context) -> list[str]:
    cat = ctx.catalog
    name = f"[{md(fig.title)}]({_rel(ctx, figure_src(fig.id))})<br><code>{fig.id}</code>"
    chapter = chapter_link(fig, ctx) or NO_CHAPTER
    machines = cat.machines(fig.id)
    if not machines:
        return [f"| {name} | — | no results yet (`make bench`) | — | — | {chapter} | — |"]
    rows = []
    for i, machine in enumerate(machines):
        who = f"[{md(machine)}]({_rel(ctx, machine_src(fig.id, machine))})"
        csv = _csv_link(ctx, fig, machine)
        cells = [name if i == 0 else "", who, *_machine_cells(cat, fig, machine, ctx), chapter if i == 0 else "", csv]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def index_marker(args: list[str], ctx: Context) -> str:
    if args:
        raise ValueError("bench:index takes no arguments")
    figures = sorted(ctx.catalog.figures.values(), key=lambda f: f.id)
    rows = [row for fig in figures for row in _index_rows(fig, ctx)]
    return _table_div("bench-index", "\n".join([INDEX_HEAD, *rows]))


# --- bench:page --------------------------------------------------------------------------

def latest_session(fig: Figure, machine: str, ctx: Context) -> Session | None:
    """The session the results file holds (:mod:`sessions`), or None (a format-1 file has none)."""
    hist = history.history(ctx.catalog, fig.id, machine)
    return next((s for s in reversed(hist.sessions) if s.latest), None)


def cite_fields(fig: Figure, machine: str, ctx: Context) -> dict:
    """What to paste into a review: the latest session's cite block (its permalink, commit,
    how to reproduce it, Markdown), with whether today's code still matches it, and the site's
    download of the results file."""
    tab = ctx.catalog.table(fig.id, machine)
    now = ctx.catalog.current_sha(fig.id).script
    state = (f"STALE: {tab.stale}" if tab.stale else "current" if now in set(tab.frame["script_sha256"])
             else f"current; only its FIGURE caption was edited since, sha256 now {now[:12]} "
                  "(benchsite/model/caption_edits.csv)")
    if fig.compare is not None:  # not checked against bench_scripts/ (benchsite/model/comparisons.py)
        state = render.recorded_state(fig.compare)
    download = ctx.link(layout.site_path(machine, fig.stem))
    committed, repo = ctx.catalog.data_commit(fig.id, machine), urls.public_base(ctx.repo_url)
    data_url = f"{repo}/blob/{committed[1]}/{committed[0]}" if committed and repo else ""
    session = latest_session(fig, machine, ctx)
    if session is not None:
        return history.cite(fig, session, ctx, state, download=download, data_url=data_url)
    href, url = history.address(ctx, machine_path(fig.id, machine))
    text = f"{fig.id}: {fig.title}\nmachine   {machine}\nscript    {fig.script_rel} ({state})\nurl       {url}"
    return {"text": text, "url": url, "href": href, "public": url == href, "commits": [],
            "repo": urls.public_base(ctx.repo_url), "download": download, "data_url": data_url,
            "reproduce": f"make bench ONLY={fig.stem} MACHINE={machine}",
            "markdown": f"[{fig.id} on {machine}]({url})"}


def cite_text(fig: Figure, machine: str, ctx: Context) -> str:
    """The plain-text part of :func:`cite_fields`."""
    return cite_fields(fig, machine, ctx)["text"]


def bench_panel(fig: Figure, machine: str, ctx: Context, cite_open: bool) -> str:
    """One machine's full result (:func:`machine_panel`) plus its cite block."""
    panel = machine_panel(fig.id, machine, ctx)
    if ctx.catalog.problem(fig.id, machine):
        return panel
    return f"{panel}\n{template('cite.html', open=cite_open, **cite_fields(fig, machine, ctx))}"


def session_note(fig: Figure, machine: str, ctx: Context) -> str:
    """Which session the latest page shows, with a link to that session's own page."""
    session = latest_session(fig, machine, ctx)
    if session is None:
        return ""
    link = _rel(ctx, urls.session_src(fig.id, machine, session.id))
    return (f"Latest session: **{session.id}** ({session.date}, jax {md(session.values('jax_version'))}); "
            f"[its permanent page]({link}) keeps these samples when later sessions arrive. "
            f"[What changed on this machine]({_rel(ctx, urls.changes_src(machine))}).\n")


def history_section(fig: Figure, machine: str, ctx: Context, heading: str = "History") -> str:
    if ctx.catalog.problem(fig.id, machine):
        return ""
    return f"## {heading} {{ #history }}\n\n" + _html(ctx, history.history_html(fig, machine, ctx))


def _table_div(css: str, table: str) -> str:
    """A Markdown table (so mkdocs checks its links) in a div the stylesheet can size."""
    return f"<div class=\"bench-table {css}\" markdown=\"1\">\n\n{table}\n\n</div>\n"


def _html(ctx: Context, *parts: str) -> str:
    return ctx.cache.html_block(*parts)


def _stale_note(fig: Figure, ctx: Context, machines: list[str]) -> str:
    cat = ctx.catalog
    stale = [(m, cat.summary(fig.id, m).stale) for m in machines
             if (fig.id, m) in cat.frames and cat.summary(fig.id, m).stale]
    if not stale:
        return ""
    return template("stale_note.html", stale=stale)


def _machines_table(fig: Figure, ctx: Context, ref: str | None) -> str:
    cat = ctx.catalog
    rows = ["| machine | headline | measured (UTC), jax | script | vs the reference | data |",
            "|---|---|---|---|---|---|"]
    for machine in cat.machines(fig.id):
        who = f"[{md(machine)}]({_rel(ctx, machine_src(fig.id, machine))})"
        csv = _csv_link(ctx, fig, machine)
        if (fig.id, machine) not in cat.frames:
            rows.append(f"| {who} | **invalid results** (its page says why) | — | — | — | {csv} |")
            continue
        cells = _machine_cells(cat, fig, machine, ctx)
        versus = "reference" if machine == ref else md(compare.results_count(comparison_cells(cat, fig, machine, ref),
                                                                             short=True))
        rows.append("| " + " | ".join([who, *cells, versus, csv]) + " |")
    return _table_div("bench-machines", "\n".join(rows))


def _comparison(fig: Figure, machine: str, ref: str, ctx: Context) -> str:
    found = comparison_cells(ctx.catalog, fig, machine, ref)
    return _html(ctx, compare.html_table(found, machine, ref, ctx.link(render.RULE_PATH)))


def compare_note(ctx: Context) -> str:
    """How the comparison's verdicts are decided, with a link to the rule's page."""
    return ("The cells are the median [min..max] of each machine's per-run medians (for a ratio row, of "
            "its per-run ratios); the ratio is the median on one machine over the median on the reference "
            "machine. Runs on two machines are not paired, so a difference is **a result** only by the "
            "unpaired rule: each side has enough runs, one machine's runs lie above the other's more "
            "often than chance allows (an exact rank-sum test), and the ratio of medians exceeds an effect "
            "floor tied to both machines' run-to-run spread; otherwise it is not a result yet. "
            f"[How a verdict is decided]({_rel(ctx, 'verdicts.md')}) gives the constants and the "
            "simulated error rates. Only cells both machines measured with the same parameters are compared.\n")


def _across_machines(fig: Figure, ctx: Context, ref: str | None, good: list[str]) -> str:
    others = [m for m in good if m != ref]
    if not ref or not others:
        return ""
    out = [f"## Across machines {{ #across-machines }}\n\n{compare_note(ctx)}\nReference: **{md(ref)}**.\n"]
    if len(good) > MAX_TABS:
        out.append("Each machine's page (linked in the table above) shows its comparison cell by cell.\n")
        return "\n".join(out)
    for machine in others:
        out.append(f"### {md(machine)} vs {md(ref)} {{ #vs-{machine_slug(machine)} }}\n\n"
                   + _comparison(fig, machine, ref, ctx))
    return "\n".join(out)


def _results(fig: Figure, ctx: Context, machines: list[str], ref: str | None) -> str:
    if len(machines) <= MAX_TABS:
        panels = {m: bench_panel(fig, m, ctx, cite_open=False) for m in machines}
        return _html(ctx, render.tabs(fig.id, panels, {m: ctx.catalog.role(m) for m in panels}))
    shown = ref or machines[0]
    return _html(ctx, str(template("many_machines.html", count=len(machines))),
                 bench_panel(fig, shown, ctx, cite_open=False))


def _links(fig: Figure, ctx: Context, back: bool) -> str:
    code = (f"Code: [the recorded source of each version]({'' if not back else _rel(ctx, figure_src(fig.id))}#code)"
            if fig.compare is not None else f"Script: `{fig.script_rel}`")
    parts = [f"[Link to this figure](#{fig.id}){{ .bench-permalink }}" if not back
             else f"[All machines for this figure]({_rel(ctx, figure_src(fig.id))})",
             f"In its chapter: {chapter_link(fig, ctx) or NO_CHAPTER}", code]
    return " · ".join(parts) + "\n"


# --- a comparison benchkit compare made (benchsite/model/comparisons.py) ------------------------

def recorded_note(fig: Figure, ctx: Context, machines: list[str]) -> str:
    """What a comparison's page says instead of a script's staleness: who made it and whose code it shows."""
    if fig.compare is None:
        return ""
    sides = ", ".join(f"[{md(m)}]({_rel(ctx, layout.site_path(m, fig.stem, comparisons.SIDE))})" for m in machines
                      if comparisons.side_file(ctx.catalog.results, m, fig.stem).is_file())
    return (f"Made by `{fig.compare.made_by}`, not by a figure script: the code that produced it is the source of each "
            "version as recorded when it ran, so these results are neither stale nor current against this "
            f"site's `bench_scripts/`. What it recorded: `{fig.stem}.{comparisons.SIDE}`"
            + (f" ({sides})" if sides else "") + ".\n")


def verdicts_section(fig: Figure, ctx: Context, machines: list[str]) -> str:
    """A comparison's answer per machine and row: the ratio, the paired verdict and the equivalence
    verdict at the margin its side file gives (the table model decides both, stats.py's rules)."""
    rec, cat = fig.compare, ctx.catalog
    if rec is None or fig.ratio is None:
        return ""
    same = f"the same within ±{comparisons.percent(rec.margin)}?"
    rows = [f"| machine | {md(fig.ratio[0])} / {md(fig.ratio[1])} | a result? | {same} | runs |",
            "|---|---|---|---|---|"]
    for machine in machines:
        if cat.problem(fig.id, machine):
            continue
        tab = cat.table(fig.id, machine)
        for row, eq in zip(tab.rows, tab.same(rec.margin)):
            who = md(machine) + (f" ({md(row.label)})" if row.label else "")
            ratio = fmt.ratio_range(row.ratio.median, row.ratio.low, row.ratio.high) if row.ratio else "—"
            paired = _verdict_link(row.verdict, ctx) if row.verdict else "—"
            reason = eq.reason.replace('"', "'") if eq else ""
            equal = (f'[{md(eq.text)}]({_rel(ctx, "verdicts.md")}#the-same-within-a-margin "{md(reason)}")'
                     if eq else "—")
            rows.append(f"| {who} | {ratio} | {paired} | {equal} | {tab.runs} |")
    if len(rows) == 2:
        return ""
    return ("## The verdict { #verdict }\n\nThe ratio is the median [min..max] of the per-run ratios; "
            f"[how a verdict is decided]({_rel(ctx, 'verdicts.md')}). \"Not a result yet\" is not \"the same\": "
            "that is the equivalence rule's call, at the margin the command was given.\n\n"
            + _table_div("bench-verdicts", "\n".join(rows)))


def _recorded_code(fig: Figure, ctx: Context) -> str:
    """A comparison's code section: each version's recorded source (render.recorded_code), stashed."""
    if fig.compare is None or not fig.compare.versions:
        return ("## The code that produced it { #code }\n\nIts side file could not be read, so its recorded "
                "source cannot be shown (the error above names it).\n")
    html = ctx.catalog.memo(("code-html", fig.id), lambda: str(render.recorded_code(fig.compare)))
    return ("## The code that produced it { #code }\n\nThe command, and the source of each version as "
            f"`{fig.compare.made_by}` recorded it (the same for every machine):\n\n{ctx.cache.stash(html)}\n")


def figure_page(fig: Figure, ctx: Context) -> str:
    cat = ctx.catalog
    machines = cat.machines(fig.id)
    good = [m for m in machines if (fig.id, m) in cat.frames]
    ref = cat.reference(fig.id)
    head = _html(ctx, _stale_note(fig, ctx, machines), str(template("caption.html", caption=inline_code(fig.caption))))
    head += recorded_note(fig, ctx, machines)
    if not machines:
        return head + "\n" + _links(fig, ctx, back=False) + "\n" + _html(ctx, render.error_box(
            fig.id, f"no results yet; run `make bench` (script {fig.script_rel})")) + _code(fig, ctx)
    return "\n".join([
        head, _links(fig, ctx, back=False),
        verdicts_section(fig, ctx, good),
        "## Machines { #machines }\n", _machines_table(fig, ctx, ref),
        "## Results { #results }\n", _results(fig, ctx, machines, ref),
        _across_machines(fig, ctx, ref, good),
        history_section(fig, ref, ctx, f"History on {md(ref)}") if ref else "",
        _code(fig, ctx),
    ])


def machine_page(fig: Figure, machine: str, ctx: Context) -> str:
    cat = ctx.catalog
    ref = cat.reference(fig.id)
    parts = [_html(ctx, str(template("caption.html", caption=inline_code(fig.caption)))),
             f"[Link to this result](#{render.tab_id(fig.id, machine)}){{ .bench-permalink }} · "
             + _links(fig, ctx, back=True),
             recorded_note(fig, ctx, [machine]),
             session_note(fig, machine, ctx) if not cat.problem(fig.id, machine) else "",
             verdicts_section(fig, ctx, [machine]),
             _html(ctx, bench_panel(fig, machine, ctx, cite_open=True))]
    if ref and machine != ref and (fig.id, machine) in cat.frames:
        parts.append(f"## Compared with {md(ref)} {{ #compared }}\n\n{compare_note(ctx)}\n"
                     + _comparison(fig, machine, ref, ctx))
    parts.append(history_section(fig, machine, ctx))
    parts.append(_code_link(fig, ctx))
    return "\n".join(parts)


def _code_link(fig: Figure, ctx: Context) -> str:
    """A machine page's code section: a link to the figure page, which shows the script once for
    all its machines (the same code on each of a hundred pages would be most of the site's size)."""
    if fig.compare is not None:
        return ("## The code that produced it { #code }\n\nThe source of each version as "
                f"`{fig.compare.made_by}` recorded it: [shown on the figure's page]"
                f"({_rel(ctx, figure_src(fig.id))}#code).\n")
    return (f"## The code that produced it {{ #code }}\n\n`{fig.script_rel}`, the same for every machine: "
            f"[shown on the figure's page]({_rel(ctx, figure_src(fig.id))}#code). The script's sha256 "
            "when it ran is in the provenance above.\n")


def _code(fig: Figure, ctx: Context) -> str:
    """The script's code: Markdown once per figure and build (``ctx.markdown``, the site's own
    Markdown set-up), then a placeholder on each of its pages, which can number a hundred."""
    if fig.compare is not None:
        return _recorded_code(fig, ctx)
    block = render.code_block(fig, indent="")
    if ctx.markdown is not None:
        html = ctx.catalog.memo(("code-html", fig.id), lambda: ctx.markdown(block))
        block = f"\n{ctx.cache.stash(html)}\n"
    return f"## The code that produced it {{ #code }}\n\n{block}"


def page_marker(args: list[str], ctx: Context) -> str:
    if not args or args[0] not in ctx.catalog.figures:
        raise ValueError("the first argument must be the id of a figure script")
    fig = ctx.catalog.figures[args[0]]
    opts = dict(a.split("=", 1) for a in args[1:] if "=" in a)
    if "machine" not in opts:
        return figure_page(fig, ctx)
    by_slug = ctx.catalog.by_slug(fig.id)
    if opts["machine"] not in by_slug:
        raise ValueError(f"no results for {fig.id} on {opts['machine']}")
    return machine_page(fig, by_slug[opts["machine"]], ctx)
