"""A figure's /bench page and one machine's page of it, rendered from a page model (:class:`BenchPage`)
that ``benchsite/pages/pages.py`` gathers in one pass, its links included (:class:`Links`): this module
reads nothing else.

Two steps. First the blocks of finished HTML (:func:`_blocks`): each machine's panel from its table
model (through the build's cache of finished panels, whose chart the chart kit draws) with the block to
cite its latest session (``session.cite_latest``), the tabs, the comparisons (``compare``), the caption.
Then the Markdown around them (headings for the table of contents, tables whose links mkdocs checks),
made here from plain values: the blocks go through Markdown as placeholders (``blocks``: the build's
cache of finished HTML, ``stash`` and ``html_block``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchsite.core.urls import machine_slug
from benchsite.model import comparisons
from benchsite.model.figures import Figure
from benchsite.model.pagefacts import Machine
from benchsite.model.sessions import Session
from benchsite.views import compare, fmt, history_chart, quantities, render, session
from benchsite.views.fmt import md
from benchsite.views.html import inline_code
from benchsite.views.html import render as template

# Up to this many machines a figure page shows them as tabs; past it, each machine's page carries
# its results and the figure page stays light (a chart inlines about half a megabyte of SVG).
MAX_TABS = 6
NO_CHAPTER = "not in a chapter yet"
CODE_HEAD = "## The code that produced it { #code }\n\n"


@dataclass(frozen=True)
class Shown:
    """One machine of a figure as its pages show it: the model's facts (``model/pagefacts.py``) and
    what the page made of them."""

    facts: Machine
    panel: str = ""  # its results panel, a block of the build's cache (placeholder), where its table was made
    download: str = ""  # the site's download of its results file, from this page

    name = property(lambda self: self.facts.name)
    role = property(lambda self: self.facts.role)  # Catalog.role: "reference", "measured here" or ""
    valid = property(lambda self: self.facts.valid)  # its results file was read
    problem = property(lambda self: self.facts.problem)  # why its results cannot be shown
    error = property(lambda self: self.facts.error)  # why its results file is invalid
    summary = property(lambda self: self.facts.summary)  # headline, runs, when, stale (the figure page)
    verdicts = property(lambda self: self.facts.verdicts)  # (row, equivalence verdict, runs) of a comparison
    cells = property(lambda self: self.facts.cells)  # its cells against the reference machine (model/cells.py)

    @property
    def session(self) -> Session | None:
        """Its latest session, where its sessions were read."""
        return self.facts.history.latest if self.facts.history is not None else None


@dataclass(frozen=True)
class Links:
    """Every link a figure's page or machine page makes to another source file, relative to the page
    (``urls.rel``: mkdocs turns each into a URL and checks it and its anchor), made once by
    ``pages/pages.py`` with the page model."""

    figure: str  # the figure's page
    verdicts: str  # docs/verdicts.md, how a verdict is decided
    machines: dict[str, str]  # machine -> its page of the figure
    csvs: dict[str, str]  # machine -> its results file on the site
    sides: dict[str, str]  # machine -> its comparison's recorded side file on the site, where it is there
    sessions: dict[str, str]  # machine -> its latest session's page, where it has one
    changes: dict[str, str]  # machine -> what changed on it


@dataclass(frozen=True)
class BenchPage:
    """Everything a figure page (``machine`` None) or a machine page shows."""

    fig: Figure
    machine: str | None
    shown: list[Shown]  # every machine of the figure (its page: that machine alone)
    ref: str | None  # the reference machine
    now: str  # today's sha256 of the figure's script (a cite block says whether it is the one that ran)
    links: Links  # the page's links to other source files
    blocks: Any  # the build's cache of finished HTML (stash, html_block, machine_panel)
    chapter: str | None  # ``[Chapter title](…#fig-id)``, or None when no chapter embeds the figure
    code: str  # the script's code section, Markdown ("" on a machine page, and for a comparison: see ``derived``)
    rule: str  # the URL of the verdict rule's page, from this page
    link: Any  # a site path -> its URL relative to this page (the cite blocks' links)
    site: str  # the site's public address ("" for none: urls.public_base of mkdocs' site_url)
    repo: str  # the repository's (of repo_url)
    derived: dict  # the build's memo (Catalog.derived): a comparison's recorded
    # source is highlighted once a build, for its figure page and its chapter's figure (markers._recorded)
    stale: list[tuple[str, str]]  # (machine, reason) of each machine the page says is stale (PageFacts.stale)


@dataclass(frozen=True)
class Made:
    """A page's blocks of finished HTML, each stashed as a placeholder (:func:`_blocks`)."""

    caption: str  # the caption, and the stale note before it where a machine the page shows is stale
    code: str  # the figure page's code section (Markdown around a stashed block for a comparison's recorded source)
    panels: dict[str, str]  # machine -> its panel with its cite block, as HTML ("" where none is shown)
    results: str  # the figure page's results: the tabs, or the reference's panel alone
    compared: dict[str, str]  # machine -> its comparison with the reference machine
    counts: dict[str, str]  # machine -> how many of its cells are results against the reference
    history: str  # the history block of the machine the page is about (the figure page's reference), "" for none


def page(p: BenchPage) -> str:
    """The page's Markdown: its blocks of finished HTML, then the Markdown around them."""
    made = _blocks(p)
    return _machine_page(p, made) if p.machine is not None else _figure_page(p, made)


def _blocks(p: BenchPage) -> Made:
    """The blocks of finished HTML the page shows: each machine's panel (made by the build's cache,
    ``Shown.panel``) with the block to cite its latest session (:func:`cite`), or an error box where
    its table cannot be made; the tabs of the figure page; each comparison with the reference machine
    (``compare``); a comparison's recorded source (``render.recorded_code``); the caption; the history block
    (``history_chart``)."""
    fig, html = p.fig, p.blocks.html_block
    each = _each_compared(p)  # the comparisons the page shows (none on a figure page past MAX_TABS machines)
    cites = {s.name: cite(p, s) for s in p.shown if s.facts.panel and s.facts.table is not None
             and s.facts.history is not None}
    panels = {s.name: "" if not s.facts.panel
              else str(render.error_box(fig.id, s.facts.failed or "")) if s.facts.table is None
              else s.panel + ("\n" + str(template("cite.html", open=p.machine is not None, **cites[s.name]))
                              if s.name in cites else "")
              for s in p.shown}
    results = ""
    if p.machine is None and not p.shown:
        results = html(render.error_box(fig.id, f"no results yet; run `make bench` (script {fig.script_rel})"))
    elif p.machine is None and len(p.shown) <= MAX_TABS:
        results = html(render.tabs(fig.id, panels, {s.name: s.role for s in p.shown}))
    elif p.machine is None:
        shown = next(s for s in p.shown if panels[s.name])
        results = html(str(template("many_machines.html", count=len(p.shown))), panels[shown.name])
    code, key = p.code, ("code-html", fig.id)
    if p.machine is None and fig.compare is not None and fig.compare.versions:
        if key not in p.derived:
            p.derived[key] = str(render.recorded_code(fig.compare))
        code = (f"{CODE_HEAD}The command, and the source of each version as `{fig.compare.made_by}` recorded it "
                f"(the same for every machine):\n\n{p.blocks.stash(p.derived[key])}\n")
    elif p.machine is None and fig.compare is not None:
        code = (f"{CODE_HEAD}Its side file could not be read, so its recorded source cannot be shown "
                "(the error above names it).\n")
    caption = str(template("caption.html", caption=inline_code(fig.caption)))
    caption = html(str(template("stale_note.html", stale=p.stale, about=p.machine)) if p.stale else "", caption)
    stale = {machine for machine, _ in p.stale}  # what the stale note above says, in each cell it concerns
    compared = {s.name: html(compare.html_table(s.cells, s.name, p.ref, p.rule, stale=stale)) for s in p.shown
                if each and s.cells is not None}
    counts = {s.name: compare.results_count(s.cells, short=True) for s in p.shown if s.cells is not None}
    about = next((s for s in p.shown if s.name == (p.ref if p.machine is None else p.machine)
                  and s.facts.history is not None), None)
    history = "" if about is None else history_chart.history_block(
        fig, about.name, list(about.facts.history.sessions),
        [history_chart.step_shown(x.old, x.new, x.cells, x.env, p.link) for x in about.facts.steps],
        list(about.facts.history.errors.values()), p.link)
    return Made(caption, code, panels, results, compared, counts, history)


def _figure_page(p: BenchPage, made: Made) -> str:
    head = made.caption + _recorded_note(p)
    if not p.shown:
        return head + "\n" + _links(p, back=False) + "\n" + made.results + made.code
    good = [s for s in p.shown if s.valid]
    return "\n".join([
        head, _links(p, back=False),
        _verdicts(p, good),
        "## Machines { #machines }\n", _machines_table(p, made),
        "## Results { #results }\n", made.results,
        _across_machines(p, made, good),
        _history(p, made, f"History on {md(p.ref)}") if p.ref else "",
        made.code,
    ])


def _machine_page(p: BenchPage, made: Made) -> str:
    fig, (s,) = p.fig, p.shown
    parts = [made.caption,
             f"[Link to this result](#{render.tab_id(fig.id, s.name)}){{ .bench-permalink }} · "
             + _links(p, back=True),
             _recorded_note(p),
             _session_note(p, s) if not s.problem else "",
             _verdicts(p, [s]),
             p.blocks.html_block(made.panels[s.name])]
    if s.cells is not None:
        parts.append(f"## Compared with {md(p.ref)} {{ #compared }}\n\n{compare_note(p.links.verdicts)}\n"
                     + made.compared[s.name])
    parts.append(_history(p, made, "History"))
    parts.append(_code_link(p))
    return "\n".join(parts)


def cite(p: BenchPage, s: Shown) -> dict:
    """What to paste into a review (``session.cite_latest``: the block of the latest session, or of the
    machine page where the results file records none), with whether today's code is still the code
    that ran, and the site's and the repository's copy of the results file."""
    fig, made = p.fig, s.facts
    tab = made.table
    if fig.compare is not None:  # not checked against bench_scripts/ (benchsite/model/comparisons.py)
        state = render.recorded_state(fig.compare)
    else:
        state = (f"STALE: {tab.stale}" if tab.stale else "current" if p.now in set(tab.frame["script_sha256"])
                 else f"current; only its FIGURE caption or module docstring was edited since, sha256 now {p.now[:12]} "
                      "(benchsite/model/caption_edits.csv)")
    data_url = f"{p.repo}/blob/{made.committed[1]}/{made.committed[0]}" if made.committed and p.repo else ""
    return session.cite_latest(fig, s.name, s.session, session.Where(p.link, p.site, p.repo, s.role), state,
                               s.download, data_url)


def table_div(css: str, table: str) -> str:
    """A Markdown table (so mkdocs checks its links) in a div the stylesheet can size."""
    return f"<div class=\"bench-table {css}\" markdown=\"1\">\n\n{table}\n\n</div>\n"


def verdict_link(verdict, rule: str) -> str:
    """A headline ratio's verdict, linked to the rule (``rule``: the link to docs/verdicts.md), its
    reason as the link's title."""
    title = verdict.reason.replace('"', "'")
    return f'[{md(verdict.text)}]({rule} "{md(title)}")'


def machine_cells(fig: Figure, found, figure: str, rule: str) -> list[str]:
    """Headline, when and with what, and whether the script is still the one that ran, from the
    pair's summary (``Catalog.summary``); ``figure`` and ``rule`` link the figure's page and the
    verdict rule's."""
    head = found.headline
    runs = f"{found.runs} runs"
    verdict = f" · {verdict_link(head.verdict, rule)}" if head and head.verdict else ""
    shown = (f"{md(quantities.headline(head))}<br><small>{md(head.what)} · {runs}{verdict}</small>" if head
             else f"— ({runs})")
    when = f"{md(found.days)}<br><small>jax {md(found.jax)}</small>"
    state = (f"recorded source ([{fig.compare.made_by}](" + figure + "#code))"
             if fig.compare is not None else f"**{compare.STALE_MARK}**" if found.stale else "current")
    return [shown, when, state]


def _machines_table(p: BenchPage, made: Made) -> str:
    to = p.links
    rows = ["| machine | headline | measured (UTC), jax | script | vs the reference | data |",
            "|---|---|---|---|---|---|"]
    for s in p.shown:
        who = f"[{md(s.name)}]({to.machines[s.name]})"
        csv = f"[CSV]({to.csvs[s.name]})"
        if not s.valid:
            rows.append(f"| {who} | **invalid results** (its page says why) | — | — | — | {csv} |")
            continue
        cells = ([f"**invalid results**: {md(s.error)}", "—", "—"] if s.error is not None
                 else machine_cells(p.fig, s.summary, to.figure, to.verdicts))
        versus = "reference" if s.name == p.ref else md(made.counts[s.name])
        rows.append("| " + " | ".join([who, *cells, versus, csv]) + " |")
    return table_div("bench-machines", "\n".join(rows))


def compare_note(rule: str) -> str:
    """How the comparison's verdicts are decided, with a link to the rule's page (``rule``)."""
    return ("The cells are the median [min..max] of each machine's per-run medians (for a ratio row, of "
            "its per-run ratios); the ratio is the median on one machine over the median on the reference "
            "machine. Runs on two machines are not paired, so a difference is **a result** only by the "
            "unpaired rule: each side has enough runs, one machine's runs lie above the other's more "
            "often than chance allows (an exact rank-sum test), and the ratio of medians exceeds an effect "
            "floor tied to both machines' run-to-run spread; otherwise it is not a result yet. "
            f"[How a verdict is decided]({rule}) gives the constants and the "
            "simulated error rates. Only cells both machines measured with the same parameters are compared.\n")


def _each_compared(p: BenchPage) -> bool:
    """Whether the page shows each machine's comparison with the reference: a machine's page its own,
    a figure's page every one while its valid machines fit in tabs; past that each machine's page
    shows its own, and none is made for the figure's page (a hundred folders made a hundred there)."""
    return p.machine is not None or sum(s.valid for s in p.shown) <= MAX_TABS


def _across_machines(p: BenchPage, made: Made, good: list[Shown]) -> str:
    others = [s for s in good if s.name != p.ref]
    if not p.ref or not others:
        return ""
    out = [f"## Across machines {{ #across-machines }}\n\n{compare_note(p.links.verdicts)}\n"
           f"Reference: **{md(p.ref)}**.\n"]
    if not _each_compared(p):
        out.append("Each machine's page (linked in the table above) shows its comparison cell by cell.\n")
        return "\n".join(out)
    for s in others:
        out.append(f"### {md(s.name)} vs {md(p.ref)} {{ #vs-{machine_slug(s.name)} }}\n\n" + made.compared[s.name])
    return "\n".join(out)


def _links(p: BenchPage, back: bool) -> str:
    fig = p.fig
    code = (f"Code: [the recorded source of each version]({'' if not back else p.links.figure}#code)"
            if fig.compare is not None else f"Script: `{fig.script_rel}`")
    parts = [f"[Link to this figure](#{fig.id}){{ .bench-permalink }}" if not back
             else f"[All machines for this figure]({p.links.figure})",
             f"In its chapter: {p.chapter or NO_CHAPTER}", code]
    return " · ".join(parts) + "\n"


def _recorded_note(p: BenchPage) -> str:
    """What a comparison's page says instead of a script's staleness: who made it and whose code it shows."""
    fig = p.fig
    if fig.compare is None:
        return ""
    sides = ", ".join(f"[{md(m)}]({link})" for m, link in p.links.sides.items())
    return (f"Made by `{fig.compare.made_by}`, not by a figure script: the code that produced it is the source of each "
            "version as recorded when it ran, so these results are neither stale nor current against this "
            f"site's `bench_scripts/`. What it recorded: `{fig.stem}.{comparisons.SIDE}`"
            + (f" ({sides})" if sides else "") + ".\n")


def _session_note(p: BenchPage, s: Shown) -> str:
    """Which session the latest page shows, with a link to that session's own page."""
    latest = s.session
    if latest is None:
        return ""
    return (f"Latest session: **{latest.id}** ({latest.date}, jax {md(latest.values('jax_version'))}); "
            f"[its permanent page]({p.links.sessions[s.name]}) keeps these samples when later sessions arrive. "
            f"[What changed on this machine]({p.links.changes[s.name]}).\n")


def _verdicts(p: BenchPage, shown: list[Shown]) -> str:
    """A comparison's answer per machine and row: the ratio, the paired verdict and the equivalence
    verdict at the margin its side file gives (the table model decides both, stats.py's rules)."""
    fig, rec, rule = p.fig, p.fig.compare, p.links.verdicts
    if rec is None or fig.ratio is None:
        return ""
    same = f"the same within ±{comparisons.percent(rec.margin)}?"
    rows = [f"| machine | {md(fig.ratio[0])} / {md(fig.ratio[1])} | a result? | {same} | runs |",
            "|---|---|---|---|---|"]
    for s in shown:
        for row, eq, runs in s.verdicts:
            who = md(s.name) + (f" ({md(row.label)})" if row.label else "")
            ratio = fmt.ratio_range(row.ratio.median, row.ratio.low, row.ratio.high) if row.ratio else "—"
            paired = verdict_link(row.verdict, rule) if row.verdict else "—"
            reason = eq.reason.replace('"', "'") if eq else ""
            equal = (f'[{md(eq.text)}]({rule}#the-same-within-a-margin "{md(reason)}")'
                     if eq else "—")
            rows.append(f"| {who} | {ratio} | {paired} | {equal} | {runs} |")
    if len(rows) == 2:
        return ""
    return ("## The verdict { #verdict }\n\nThe ratio is the median [min..max] of the per-run ratios; "
            f"[how a verdict is decided]({rule}). \"Not a result yet\" is not \"the same\": "
            "that is the equivalence rule's call, at the margin the command was given.\n\n"
            + table_div("bench-verdicts", "\n".join(rows)))


def _history(p: BenchPage, made: Made, heading: str) -> str:
    if not made.history:
        return ""
    return f"## {heading} {{ #history }}\n\n" + p.blocks.html_block(made.history)


def _code_link(p: BenchPage) -> str:
    """A machine page's code section: a link to the figure page, which shows the script once for
    all its machines (the same code on each of a hundred pages would be most of the site's size)."""
    fig = p.fig
    if fig.compare is not None:
        return ("## The code that produced it { #code }\n\nThe source of each version as "
                f"`{fig.compare.made_by}` recorded it: [shown on the figure's page]"
                f"({p.links.figure}#code).\n")
    return (f"## The code that produced it {{ #code }}\n\n`{fig.script_rel}`, the same for every machine: "
            f"[shown on the figure's page]({p.links.figure}#code). The script's sha256 "
            "when it ran is in the provenance above.\n")
