"""What a figure's /bench page, or one machine's page of it, shows of the model, gathered in one call
(:func:`gather`) as plain values: per machine its state (role, whether its results file was read,
why it cannot be shown), its summary, its table model, the comparison's verdicts, the results file's
digest and the commit that holds it, its sessions; and the figure's reference machine and today's
script hash. ``pages/pages.py`` adds what is made from these (the comparison cells, the history
block, the chapter, the code) and ``views/benchpage.py`` renders the page.

One way down: the catalog's own lookups first, then today's code hash, the results files' digests
and the table models (each once, through the catalog), the commits that hold the files, then the
sessions (``sessions.history``, through the catalog's session texts). Nothing here calls back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchsite.model import comparisons, sessions
from benchsite.model.catalog import Catalog, Summary, Unavailable
from benchsite.model.table import Table


@dataclass(frozen=True)
class Machine:
    """One machine of a figure, as its pages show it."""

    name: str
    role: str  # Catalog.role: "reference", "measured here" or ""
    valid: bool  # its results file was read
    problem: str | None = None  # why its results cannot be shown (Catalog.problem)
    error: str | None = None  # why its results file is invalid (Catalog.errors)
    summary: Summary | None = None  # on the figure page, of a valid machine with no error
    verdicts: list = field(default_factory=list)  # (row, equivalence verdict, runs) of a comparison's table
    panel: bool = False  # the page shows its results panel
    table: Table | None = None  # its table model, where its panel is shown and can be made
    failed: str | None = None  # why its panel's table cannot be made (the file's file:line message)
    digest: str = ""  # its results file's sha256, where its table was made
    committed: tuple[str, str] | None = None  # (path, commit) of its results file as committed
    side: bool = False  # a comparison's recorded side file is there
    history: sessions.History | None = None  # its sessions, where its panel is shown and has no problem


@dataclass(frozen=True)
class PageFacts:
    ref: str | None  # the reference machine (Catalog.reference)
    machines: list[Machine]  # every machine of the figure (a machine's page: that machine alone)
    now: str  # today's sha256 of the figure's script

    def get(self, name: str) -> Machine:
        return next(m for m in self.machines if m.name == name)


def gather(cat: Catalog, fig_id: str, machine: str | None, max_tabs: int) -> PageFacts:
    """The facts of ``fig_id``'s page (``machine`` None) or of its page on ``machine``. A page shows
    the panel of every machine it is about, or past ``max_tabs`` machines the reference's alone."""
    fig = cat.figures[fig_id]
    ref = cat.reference(fig_id)
    names = cat.machines(fig_id) if machine is None else [machine]
    valid = {m: (fig_id, m) in cat.frames for m in names}
    problems = {m: cat.problem(fig_id, m) for m in names}
    roles = {m: cat.role(m) for m in names}
    errors = {m: cat.errors.get((fig_id, m)) for m in names if valid[m]}
    panels = names if machine is not None or len(names) <= max_tabs else [ref or names[0]]
    now = cat.current_sha(fig_id).script
    summaries = {m: cat.summary(fig_id, m) for m in names if machine is None and valid[m] and errors[m] is None}
    verdicts: dict[str, list] = {m: [] for m in names}
    if fig.compare is not None and fig.ratio is not None:  # a comparison's answer per machine and row
        for m in (m for m in names if valid[m] and not problems[m]):
            tab = cat.table(fig_id, m)
            verdicts[m] = [(row, eq, tab.runs) for row, eq in zip(tab.rows, tab.same(fig.compare.margin))]
    tables, failed = {}, {}
    for m in panels:
        try:
            tables[m] = cat.table(fig_id, m)
        except Unavailable as err:
            failed[m] = str(err)
    digests = {m: cat.csv_digest(fig_id, m) for m in tables}
    committed = {m: cat.data_commit(fig_id, m) for m in tables}
    sides = ({m for m in names if comparisons.side_file(cat.results, m, fig.stem).is_file()}
             if fig.compare is not None else set())
    hists = {m: sessions.history(cat, fig_id, m) for m in panels if not problems[m]}
    return PageFacts(ref, [Machine(m, roles[m], valid[m], problems[m], errors.get(m), summaries.get(m), verdicts[m],
                                   m in panels, tables.get(m), failed.get(m), digests.get(m, ""),
                                   committed.get(m), m in sides, hists.get(m)) for m in names], now)
