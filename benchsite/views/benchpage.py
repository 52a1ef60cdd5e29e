"""A figure's /bench page and one machine's page of it, rendered from a page model (:class:`BenchPage`)
that ``benchsite/pages/pages.py`` gathers in one pass: this module reads nothing else. Each machine's
panel is rendered here from its table model (through the build's cache of finished panels, whose
chart the chart kit draws), with the block to cite its latest session (``session.cite_latest``).

The page is Markdown (headings for the table of contents, tables whose links mkdocs checks) around
blocks of finished HTML, which go through Markdown as placeholders (``blocks``: the build's cache of
finished HTML, ``stash`` and ``html_block``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchkit import layout
from benchsite.core import urls
from benchsite.model import comparisons
from benchsite.model.figures import Figure
from benchsite.model.pagefacts import Machine
from benchsite.model.sessions import Session
from benchsite.views import compare, fmt, quantities, render, session
from benchsite.views.fmt import md
from benchsite.views.html import inline_code
from benchsite.views.html import render as template

# Up to this many machines a figure page shows them as tabs; past it, each machine's page carries
# its results and the figure page stays light (a chart inlines about half a megabyte of SVG).
MAX_TABS = 6
NO_CHAPTER = "not in a chapter yet"


@dataclass(frozen=True)
class Shown:
    """One machine of a figure as its pages show it: the model's facts (``model/pagefacts.py``) and
    what the page made of them."""

    facts: Machine
    cells: list | None = None  # its comparison cells with the reference machine (compare.Cell)
    csv: str = ""  # the site link (``urls.site_link``) of its results file: a panel is shared by pages
    ceiling: str = ""  # its panel's rows against the machine's ceilings (finished HTML or its placeholder)
    download: str = ""  # the site's download of its results file, from this page

    name = property(lambda self: self.facts.name)
    role = property(lambda self: self.facts.role)  # Catalog.role: "reference", "measured here" or ""
    valid = property(lambda self: self.facts.valid)  # its results file was read
    problem = property(lambda self: self.facts.problem)  # why its results cannot be shown
    error = property(lambda self: self.facts.error)  # why its results file is invalid
    summary = property(lambda self: self.facts.summary)  # headline, runs, when, stale (the figure page)
    verdicts = property(lambda self: self.facts.verdicts)  # (row, equivalence verdict, runs) of a comparison

    @property
    def session(self) -> Session | None:
        """Its latest session, where its sessions were read."""
        return self.facts.history.latest if self.facts.history is not None else None


@dataclass(frozen=True)
class BenchPage:
    """Everything a figure page (``machine`` None) or a machine page shows."""

    fig: Figure
    machine: str | None
    shown: list[Shown]  # every machine of the figure (its page: that machine alone)
    ref: str | None  # the reference machine
    now: str  # today's sha256 of the figure's script (a cite block says whether it is the one that ran)
    src_uri: str  # the page's source path: Markdown links are relative to it
    blocks: Any  # the build's cache of finished HTML (stash, html_block, machine_panel)
    chapter: str | None  # ``[Chapter title](…#fig-id)``, or None when no chapter embeds the figure
    history: str  # the history block (finished HTML), "" for none
    code: str  # the code section's Markdown
    rule: str  # the URL of the verdict rule's page, from this page
    rule_site: str  # the same as a site link (``urls.site_link``), for the panels several pages share
    link: Any  # a site path -> its URL relative to this page (the cite blocks' links)
    site: str  # the site's public address ("" for none: urls.public_base of mkdocs' site_url)
    repo: str  # the repository's (of repo_url)

    @property
    def sides(self) -> list[str]:
        """The machines whose recorded side file (a comparison's) is there."""
        return [s.name for s in self.shown if s.facts.side]

    @property
    def stale(self) -> list[tuple[str, str]]:
        """(machine, reason) of each stale machine the figure page summarises."""
        return [(s.name, s.summary.stale) for s in self.shown if s.summary is not None and s.summary.stale]


def page(p: BenchPage) -> str:
    """The page's Markdown."""
    fig = p.fig
    rel = _Rel(p.src_uri)
    caption = str(template("caption.html", caption=inline_code(fig.caption)))
    if p.machine is not None:
        return _machine_page(p, rel, caption)
    head = p.blocks.html_block(str(template("stale_note.html", stale=p.stale)) if p.stale else "", caption)
    head += _recorded_note(p, rel)
    if not p.shown:
        return (head + "\n" + _links(p, rel, back=False) + "\n" + p.blocks.html_block(render.error_box(
            fig.id, f"no results yet; run `make bench` (script {fig.script_rel})")) + p.code)
    good = [s for s in p.shown if s.valid]
    panels = {s.name: _panel(p, s) for s in p.shown}
    if len(p.shown) <= MAX_TABS:
        results = p.blocks.html_block(render.tabs(fig.id, panels, {s.name: s.role for s in p.shown}))
    else:
        shown = next(s for s in p.shown if panels[s.name])
        results = p.blocks.html_block(str(template("many_machines.html", count=len(p.shown))), panels[shown.name])
    return "\n".join([
        head, _links(p, rel, back=False),
        _verdicts(p, rel, good),
        "## Machines { #machines }\n", _machines_table(p, rel),
        "## Results { #results }\n", results,
        _across_machines(p, rel, good),
        _history(p, f"History on {md(p.ref)}") if p.ref else "",
        p.code,
    ])


def _machine_page(p: BenchPage, rel, caption: str) -> str:
    fig, (s,) = p.fig, p.shown
    parts = [p.blocks.html_block(caption),
             f"[Link to this result](#{render.tab_id(fig.id, s.name)}){{ .bench-permalink }} · "
             + _links(p, rel, back=True),
             _recorded_note(p, rel),
             _session_note(p, rel, s) if not s.problem else "",
             _verdicts(p, rel, [s]),
             p.blocks.html_block(_panel(p, s))]
    if s.cells is not None:
        parts.append(f"## Compared with {md(p.ref)} {{ #compared }}\n\n{compare_note(rel)}\n"
                     + _comparison(p, s))
    parts.append(_history(p, "History"))
    parts.append(_code_link(fig, rel))
    return "\n".join(parts)


def _panel(p: BenchPage, s: Shown) -> str:
    """One machine's results panel (the build's cache renders it, ``render.machine_panel``, and keeps it
    by its results file and links, for every page that shows it), then the block to cite its latest
    session; an error box where its table cannot be made; "" where the page shows no panel of it."""
    made = s.facts
    if not made.panel:
        return ""
    if made.table is None:
        return render.error_box(p.fig.id, made.failed or "")
    html = p.blocks.machine_panel(made.table, s.csv, p.rule_site, made.digest, s.ceiling)
    if made.history is not None:
        html += "\n" + str(template("cite.html", open=p.machine is not None, **cite(p, s)))
    return html


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
                 else f"current; only its FIGURE caption was edited since, sha256 now {p.now[:12]} "
                      "(benchsite/model/caption_edits.csv)")
    data_url = f"{p.repo}/blob/{made.committed[1]}/{made.committed[0]}" if made.committed and p.repo else ""
    return session.cite_latest(fig, s.name, s.session, session.Where(p.link, p.site, p.repo, s.role), state,
                               s.download, data_url)


class _Rel:
    """Markdown link targets from the page to other source files (``urls.rel``)."""

    def __init__(self, src_uri: str) -> None:
        self.src_uri = src_uri

    def __call__(self, target_src: str) -> str:
        return urls.rel(self.src_uri, target_src)


def table_div(css: str, table: str) -> str:
    """A Markdown table (so mkdocs checks its links) in a div the stylesheet can size."""
    return f"<div class=\"bench-table {css}\" markdown=\"1\">\n\n{table}\n\n</div>\n"


def verdict_link(verdict, rel) -> str:
    """A headline ratio's verdict, linked to the rule, its reason as the link's title."""
    title = verdict.reason.replace('"', "'")
    return f'[{md(verdict.text)}]({rel("verdicts.md")} "{md(title)}")'


def machine_cells(fig: Figure, found, rel) -> list[str]:
    """Headline, when and with what, and whether the script is still the one that ran, from the
    pair's summary (``Catalog.summary``)."""
    head = found.headline
    runs = f"{found.runs} runs"
    verdict = f" · {verdict_link(head.verdict, rel)}" if head and head.verdict else ""
    shown = (f"{md(quantities.headline(head))}<br><small>{md(head.what)} · {runs}{verdict}</small>" if head
             else f"— ({runs})")
    when = f"{md(found.days)}<br><small>jax {md(found.jax)}</small>"
    state = (f"recorded source ([{fig.compare.made_by}](" + rel(urls.figure_src(fig.id)) + "#code))"
             if fig.compare is not None else "**⚠ stale**" if found.stale else "current")
    return [shown, when, state]


def _machines_table(p: BenchPage, rel) -> str:
    fig = p.fig
    rows = ["| machine | headline | measured (UTC), jax | script | vs the reference | data |",
            "|---|---|---|---|---|---|"]
    for s in p.shown:
        who = f"[{md(s.name)}]({rel(urls.machine_src(fig.id, s.name))})"
        csv = f"[CSV]({rel(layout.site_path(s.name, fig.stem))})"
        if not s.valid:
            rows.append(f"| {who} | **invalid results** (its page says why) | — | — | — | {csv} |")
            continue
        cells = ([f"**invalid results**: {md(s.error)}", "—", "—"] if s.error is not None
                 else machine_cells(fig, s.summary, rel))
        versus = "reference" if s.name == p.ref else md(compare.results_count(s.cells, short=True))
        rows.append("| " + " | ".join([who, *cells, versus, csv]) + " |")
    return table_div("bench-machines", "\n".join(rows))


def _comparison(p: BenchPage, s: Shown) -> str:
    return p.blocks.html_block(compare.html_table(s.cells, s.name, p.ref, p.rule))


def compare_note(rel) -> str:
    """How the comparison's verdicts are decided, with a link to the rule's page."""
    return ("The cells are the median [min..max] of each machine's per-run medians (for a ratio row, of "
            "its per-run ratios); the ratio is the median on one machine over the median on the reference "
            "machine. Runs on two machines are not paired, so a difference is **a result** only by the "
            "unpaired rule: each side has enough runs, one machine's runs lie above the other's more "
            "often than chance allows (an exact rank-sum test), and the ratio of medians exceeds an effect "
            "floor tied to both machines' run-to-run spread; otherwise it is not a result yet. "
            f"[How a verdict is decided]({rel('verdicts.md')}) gives the constants and the "
            "simulated error rates. Only cells both machines measured with the same parameters are compared.\n")


def _across_machines(p: BenchPage, rel, good: list[Shown]) -> str:
    others = [s for s in good if s.name != p.ref]
    if not p.ref or not others:
        return ""
    out = [f"## Across machines {{ #across-machines }}\n\n{compare_note(rel)}\nReference: **{md(p.ref)}**.\n"]
    if len(good) > MAX_TABS:
        out.append("Each machine's page (linked in the table above) shows its comparison cell by cell.\n")
        return "\n".join(out)
    for s in others:
        out.append(f"### {md(s.name)} vs {md(p.ref)} {{ #vs-{urls.machine_slug(s.name)} }}\n\n" + _comparison(p, s))
    return "\n".join(out)


def _links(p: BenchPage, rel, back: bool) -> str:
    fig = p.fig
    code = (f"Code: [the recorded source of each version]({'' if not back else rel(urls.figure_src(fig.id))}#code)"
            if fig.compare is not None else f"Script: `{fig.script_rel}`")
    parts = [f"[Link to this figure](#{fig.id}){{ .bench-permalink }}" if not back
             else f"[All machines for this figure]({rel(urls.figure_src(fig.id))})",
             f"In its chapter: {p.chapter or NO_CHAPTER}", code]
    return " · ".join(parts) + "\n"


def _recorded_note(p: BenchPage, rel) -> str:
    """What a comparison's page says instead of a script's staleness: who made it and whose code it shows."""
    fig = p.fig
    if fig.compare is None:
        return ""
    sides = ", ".join(f"[{md(m)}]({rel(layout.site_path(m, fig.stem, comparisons.SIDE))})" for m in p.sides)
    return (f"Made by `{fig.compare.made_by}`, not by a figure script: the code that produced it is the source of each "
            "version as recorded when it ran, so these results are neither stale nor current against this "
            f"site's `bench_scripts/`. What it recorded: `{fig.stem}.{comparisons.SIDE}`"
            + (f" ({sides})" if sides else "") + ".\n")


def _session_note(p: BenchPage, rel, s: Shown) -> str:
    """Which session the latest page shows, with a link to that session's own page."""
    latest = s.session
    if latest is None:
        return ""
    link = rel(urls.session_src(p.fig.id, s.name, latest.id))
    return (f"Latest session: **{latest.id}** ({latest.date}, jax {md(latest.values('jax_version'))}); "
            f"[its permanent page]({link}) keeps these samples when later sessions arrive. "
            f"[What changed on this machine]({rel(urls.changes_src(s.name))}).\n")


def _verdicts(p: BenchPage, rel, shown: list[Shown]) -> str:
    """A comparison's answer per machine and row: the ratio, the paired verdict and the equivalence
    verdict at the margin its side file gives (the table model decides both, stats.py's rules)."""
    fig, rec = p.fig, p.fig.compare
    if rec is None or fig.ratio is None:
        return ""
    same = f"the same within ±{comparisons.percent(rec.margin)}?"
    rows = [f"| machine | {md(fig.ratio[0])} / {md(fig.ratio[1])} | a result? | {same} | runs |",
            "|---|---|---|---|---|"]
    for s in shown:
        for row, eq, runs in s.verdicts:
            who = md(s.name) + (f" ({md(row.label)})" if row.label else "")
            ratio = fmt.ratio_range(row.ratio.median, row.ratio.low, row.ratio.high) if row.ratio else "—"
            paired = verdict_link(row.verdict, rel) if row.verdict else "—"
            reason = eq.reason.replace('"', "'") if eq else ""
            equal = (f'[{md(eq.text)}]({rel("verdicts.md")}#the-same-within-a-margin "{md(reason)}")'
                     if eq else "—")
            rows.append(f"| {who} | {ratio} | {paired} | {equal} | {runs} |")
    if len(rows) == 2:
        return ""
    return ("## The verdict { #verdict }\n\nThe ratio is the median [min..max] of the per-run ratios; "
            f"[how a verdict is decided]({rel('verdicts.md')}). \"Not a result yet\" is not \"the same\": "
            "that is the equivalence rule's call, at the margin the command was given.\n\n"
            + table_div("bench-verdicts", "\n".join(rows)))


def _history(p: BenchPage, heading: str) -> str:
    if not p.history:
        return ""
    return f"## {heading} {{ #history }}\n\n" + p.blocks.html_block(p.history)


def _code_link(fig: Figure, rel) -> str:
    """A machine page's code section: a link to the figure page, which shows the script once for
    all its machines (the same code on each of a hundred pages would be most of the site's size)."""
    if fig.compare is not None:
        return ("## The code that produced it { #code }\n\nThe source of each version as "
                f"`{fig.compare.made_by}` recorded it: [shown on the figure's page]"
                f"({rel(urls.figure_src(fig.id))}#code).\n")
    return (f"## The code that produced it {{ #code }}\n\n`{fig.script_rel}`, the same for every machine: "
            f"[shown on the figure's page]({rel(urls.figure_src(fig.id))}#code). The script's sha256 "
            "when it ran is in the provenance above.\n")
