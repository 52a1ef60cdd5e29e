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
from benchsite.model import comparisons, pagefacts
from benchsite.model.catalog import Catalog, Unavailable
from benchsite.model.figures import Figure
from benchsite.pages import history
from benchsite.views import benchpage, render
from benchsite.views.benchpage import MAX_TABS, NO_CHAPTER
from benchsite.views.fmt import esc, md

if TYPE_CHECKING:  # types only: markers imports this module, and roofline is imported where it is used
    from benchsite.pages.markers import Context
    from benchsite.views.roofline import Ceilings


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
    for m in machines:
        made = functools.partial(history.changes_marker, [f"machine={machine_slug(m)}"])
        pages[urls.changes_src(m)] = Generated(f"{WIDE}# What changed on {esc(m)} {{ #changes }}\n\n", made)
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
    """A machine page's body: one figure on one machine (:func:`page_model`, rendered by
    :func:`benchsite.views.benchpage.page`)."""
    model = page_model(ctx.catalog.figures[fig_id], machine, ctx)
    return benchpage.page(model)


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
        f"{fig.id} on {machine}", peak_link, chart=fig.id == peak_id,
        of_peak=functools.partial(roofline_ceilings, cat, peak_id, machine))))


def roofline_ceilings(cat: Catalog, peak_id: str, machine: str) -> Ceilings:
    """``roofline.ceilings`` of ``cat.frame(peak_id, machine)``, made once per build: every figure on
    the machine that moves bytes, and every ``bench:roofline`` marker, is set against them. It reads
    the frame itself, so no caller can hand it another frame than the one its memo is keyed by."""
    from benchsite.views import roofline

    return cat.memo(("ceilings", peak_id, machine), lambda: roofline.ceilings(cat.frame(peak_id, machine)))


# --- bench:index -------------------------------------------------------------------------

INDEX_HEAD = ("| figure | machine | headline | measured (UTC), jax | script | chapter | data |\n"
              "|---|---|---|---|---|---|---|")


def _machine_cells(cat: Catalog, fig: Figure, machine: str, ctx: Context) -> list[str]:
    """Headline, when and with what, and whether the script is still the one that ran."""
    if (fig.id, machine) in cat.errors:
        ctx.on_problem(cat.errors[(fig.id, machine)])
        return [f"**invalid results**: {md(cat.errors[(fig.id, machine)])}", "—", "—"]
    figure, rule = _rel(ctx, figure_src(fig.id)), _rel(ctx, "verdicts.md")
    found = cat.summary(fig.id, machine)  # not the table: these lists name every machine
    return benchpage.machine_cells(fig, found, figure, rule)


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
    return benchpage.table_div("bench-index", "\n".join([INDEX_HEAD, *rows]))


# --- bench:page --------------------------------------------------------------------------

def cite_text(fig: Figure, machine: str, ctx: Context) -> str:
    """The plain text of a machine page's cite block (of its latest session)."""
    model = page_model(fig, machine, ctx)
    return benchpage.cite(model, model.shown[0])["text"]


def page_model(fig: Figure, machine: str | None, ctx: Context) -> benchpage.BenchPage:
    """Everything a figure's page (``machine`` None) or one machine's page of it shows, as plain data
    gathered in one pass, one way: the model's facts in one call (``model/pagefacts.py``: the
    machines, their state, summaries and table models, the results files' digests and commits, the
    sessions, the cells against the reference machine and the steps of the history), then what the
    build's cache keeps of them (a panel's rows against the machine's ceilings, the code, each panel),
    the figure's chapter and the page's links. :func:`benchsite.views.benchpage.page` renders the rest
    (the cite blocks, the tabs, the comparisons, the history block, the Markdown around them)."""
    facts = pagefacts.gather(ctx.catalog, fig.id, machine, MAX_TABS)
    ref, shown = facts.ref, facts.machines
    for m in shown:
        if m.error is not None and machine is None:  # said in the machines table
            ctx.on_problem(m.error)
        if m.failed is not None:  # its panel is an error box
            ctx.on_problem(m.failed)
        if m.history is not None and m.name == (ref if machine is None else machine):  # in its history block
            for message in m.history.errors.values():
                ctx.on_problem(message)
    # What the build's cache keeps, made here: the rows against the machine's ceilings, the script's
    # code, and each panel, kept by its results file and links for every page that shows it (the
    # chapter's figure too: machine_panel). Then the page's links to other source files.
    ceilings = {m.name: ceiling_section(m.table, ctx) for m in shown if m.table is not None}
    chapter = chapter_link(fig, ctx)
    code = _code(fig, ctx) if machine is None and fig.compare is None else ""
    panels = {m.name: ctx.cache.machine_panel(m.table, site_link(layout.site_path(m.name, fig.stem)),
                                              site_link(render.RULE_PATH), m.digest, ceilings[m.name])
              for m in shown if m.table is not None}
    src = ctx.src_uri
    links = benchpage.Links(
        urls.rel(src, figure_src(fig.id)), urls.rel(src, "verdicts.md"),
        {m.name: urls.rel(src, machine_src(fig.id, m.name)) for m in shown},
        {m.name: urls.rel(src, layout.site_path(m.name, fig.stem)) for m in shown},
        {m.name: urls.rel(src, layout.site_path(m.name, fig.stem, comparisons.SIDE)) for m in shown if m.side},
        {m.name: urls.rel(src, urls.session_src(fig.id, m.name, m.history.latest.id)) for m in shown
         if m.history is not None and m.history.latest is not None},
        {m.name: urls.rel(src, urls.changes_src(m.name)) for m in shown})
    return benchpage.BenchPage(
        fig, machine, [benchpage.Shown(m, panels.get(m.name, ""), ctx.link(layout.site_path(m.name, fig.stem)))
                       for m in shown],
        ref, facts.now, links, ctx.cache, chapter, code, ctx.link(render.RULE_PATH),
        ctx.link, urls.public_base(ctx.site_url), urls.public_base(ctx.repo_url), ctx.catalog.derived, facts.stale)


def _code(fig: Figure, ctx: Context) -> str:
    """The script's code: Markdown once per figure and build (``ctx.markdown``, the site's own
    Markdown set-up), then a placeholder on each of its pages, which can number a hundred. (A
    comparison's recorded source is no Markdown: the view highlights it, ``benchpage._blocks``.)"""
    if ctx.markdown is None:
        return f"## The code that produced it {{ #code }}\n\n{render.code_block(fig, indent='')}"
    block = f"\n{ctx.cache.stash(code_html(fig, ctx))}\n"
    return f"## The code that produced it {{ #code }}\n\n{block}"


def code_html(fig: Figure, ctx: Context) -> str:
    """A figure script's code as the site's Markdown (``ctx.markdown``) renders it, once per figure and
    build: its /bench page and its chapter show the same."""
    html = ctx.catalog.derived.get(("code-html", fig.id))
    if html is None:
        html = ctx.catalog.derived[("code-html", fig.id)] = ctx.markdown(render.code_block(fig, indent=""))
    return html


def page_marker(args: list[str], ctx: Context) -> str:
    """``<!-- bench:page fig-id -->``: a figure's page (its machines' pages are written by the build,
    from :func:`machine_body`)."""
    if not args or args[0] not in ctx.catalog.figures:
        raise ValueError("the first argument must be the id of a figure script")
    if args[1:]:
        raise ValueError("a figure's page takes no options (each machine's page is made by the build)")
    model = page_model(ctx.catalog.figures[args[0]], None, ctx)
    return benchpage.page(model)
