"""What a figure's /bench page, or one machine's page of it, shows of the model, gathered in one call
(:func:`gather`) as plain values: per machine its state (role, whether its results file was read,
why it cannot be shown), its summary, its table model, the comparison's verdicts, the results file's
digest and the commit that holds it, its sessions, its cells against the reference machine, and the
steps of the history the page shows; and the figure's reference machine, today's script hash and
which machines the page says are stale.
``pages/pages.py`` adds what the build's cache keeps of it (the panels, the ceilings, the code) and
the chapter, and ``views/benchpage.py`` renders the page.

One way down: the catalog's facts in one call (:meth:`Catalog.page_facts`: its own lookups, then
today's code hash, the results files' digests, the table models, the commits that hold the files and
the kept sessions' texts), then the sessions made from those (``sessions.of_texts``: it calls no
method of the catalog, but it is handed two of the catalog's own objects, its memo, ``Catalog.derived``,
which it writes the history into, and its frames, ``Catalog.frames``, whose lazy ``Frames`` reads a
results file back where the build cache lacks its latest session), then the cells (``model/cells.py``:
the machines against the reference, the consecutive sessions). Nothing here calls back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchsite.model import comparisons, sessions
from benchsite.model.catalog import Catalog, Summary
from benchsite.model.cells import Cell, of_machines, of_sessions
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
    cells: list[Cell] | None = None  # its cells against the reference machine, where it is compared
    steps: list[Step] = field(default_factory=list)  # between its consecutive sessions, newest first, where
    # the page shows its history (the machine page's machine, the figure page's reference)


@dataclass(frozen=True)
class Step:
    """One step of a machine's history: two consecutive sessions, every cell of the newer against the
    older (unpaired rule) and what changed in the provenance around it (``sessions.env_diff``)."""

    old: sessions.Session
    new: sessions.Session
    cells: list[Cell]
    env: list[tuple[str, str, str]]


@dataclass(frozen=True)
class PageFacts:
    ref: str | None  # the reference machine (Catalog.reference)
    machines: list[Machine]  # every machine of the figure (a machine's page: that machine alone)
    now: str  # today's sha256 of the figure's script
    stale: list[tuple[str, str]] = field(default_factory=list)  # (machine, why) of each machine the page says
    # is stale (PairFacts.stale)

    def get(self, name: str) -> Machine:
        return next(m for m in self.machines if m.name == name)


def gather(cat: Catalog, fig_id: str, machine: str | None, max_tabs: int) -> PageFacts:
    """The facts of ``fig_id``'s page (``machine`` None) or of its page on ``machine``: the catalog's in
    one call (:meth:`Catalog.page_facts`: a page shows the panel of every machine it is about, or past
    ``max_tabs`` machines the reference's alone), a comparison's verdicts from its tables, and the
    sessions of each machine whose panel is shown."""
    fig = cat.figures[fig_id]
    found = cat.page_facts(fig_id, machine, max_tabs)
    verdicts: dict[str, list] = {m: [] for m in found.names}
    if fig.compare is not None and fig.ratio is not None:  # a comparison's answer per machine and row
        for m in (m for m in found.names if found.valid[m] and not found.problems[m]):
            tab = found.tables[m]
            verdicts[m] = [(row, eq, tab.runs) for row, eq in zip(tab.rows, tab.same(fig.compare.margin))]
    sides = ({m for m in found.names if comparisons.side_file(cat.results, m, fig.stem).is_file()}
             if fig.compare is not None else set())
    # The sessions of each machine whose panel is shown (and has no problem), from what the catalog read:
    # the latest from its results file (by the digest its table was kept by: the latest's build cache key, so
    # it must be the file's own), the kept ones from their texts.
    hists = {m: sessions.of_texts(cat.derived, cat.frames, fig, m, found.digests.get(m, ""), texts)
             for m, texts in found.texts.items()}
    ref = found.ref
    # The cells a page compares: each valid machine against the reference (a machine page: its own,
    # when the figure has a reference), and the steps of the history the page shows.
    compared = [m for m in found.names if found.valid[m] and m != ref and (machine is None or ref is not None)]
    versus = {m: of_machines(cat, fig_id, m, ref) for m in compared}
    about = ref if machine is None else machine
    hist = hists.get(about)
    steps = ([Step(a, b, of_sessions(cat, a, b), sessions.env_diff(a, b))
              for a, b in zip(hist.sessions, hist.sessions[1:])][::-1] if hist is not None else [])
    return PageFacts(ref, [
        Machine(m, found.roles[m], found.valid[m], found.problems[m], found.errors.get(m), found.summaries.get(m),
                verdicts[m], m in found.panels, found.tables.get(m) if m in found.panels else None,
                found.failed.get(m), found.digests.get(m, ""), found.committed.get(m), m in sides, hists.get(m),
                versus.get(m), steps if m == about else [])
        for m in found.names], found.now, list(found.stale.items()))
