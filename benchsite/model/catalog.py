"""Every figure's results on every machine, loaded once per site build, and the
table model of each (figure, machine), computed once on first use.

The catalog is the build's only state: the bench plugin makes a new one per build (so
``mkdocs serve`` never sees an old one) and everything derived from it, tables
and comparisons, is cached on it.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pandas as pd

from benchkit import archive, layout
from benchkit.provenance import harness_sha256
from benchkit.schema import figure_id_for
from benchsite import BENCH_DIR, REPO
from benchsite.core import cachefile
from benchsite.core.cachefile import cached, file_digest
from benchsite.core.urls import machine_slug
from benchsite.model import comparisons
from benchsite.model.figures import Figure, all_figures
from benchsite.model.headline import Headline
from benchsite.model.load import ResultFile, ResultsError, known, load
from benchsite.model.staleness import CodeHash, code_hash, stale_reason
from benchsite.model.table import Table, distinct_texts, run_days

__all__ = ["Catalog", "CodeHash", "PairFacts", "SiteFacts", "Summary", "Unavailable", "local_machine",
           "preferred_machine", "results_dir", "stale_reason"]

T = TypeVar("T")


class Unavailable(ResultsError):
    """Data a page needs is missing or invalid. A lenient build shows the message in an
    error box where the data would have been; a strict build fails with it."""


class Frames(MutableMapping):
    """(figure, machine) -> validated samples. A file an earlier build validated, byte for byte,
    is listed without being read, and read back from the build cache when a page first needs
    it: a warm build whose pages are all cached reads no results at all."""

    def __init__(self) -> None:
        self._loaded: dict[tuple[str, str], pd.DataFrame] = {}
        self._later: dict[tuple[str, str], tuple[ResultFile, Path]] = {}
        self._source: dict[tuple[str, str], tuple[ResultFile, Path]] = {}

    def later(self, key: tuple[str, str], file: ResultFile, cache: Path) -> None:
        self._later[key] = self._source[key] = (file, cache)

    def unload(self) -> None:
        """Forget the frames read back from the cache (they are read again when asked for)."""
        for key in [k for k in self._loaded if k in self._source]:
            del self._loaded[key]
            self._later[key] = self._source[key]

    def __getitem__(self, key: tuple[str, str]) -> pd.DataFrame:
        if key not in self._loaded:
            file, cache = self._later[key]  # KeyError for a pair with no results, as a dict
            self._loaded[key] = load(file, cache)
            del self._later[key]
        return self._loaded[key]

    def __setitem__(self, key: tuple[str, str], frame: pd.DataFrame) -> None:
        self._later.pop(key, None)
        self._source.pop(key, None)
        self._loaded[key] = frame

    def __delitem__(self, key: tuple[str, str]) -> None:
        if key not in self._loaded and key not in self._later:
            raise KeyError(key)
        self._loaded.pop(key, None)
        self._later.pop(key, None)
        self._source.pop(key, None)

    def pop(self, key: tuple[str, str], default: object = None) -> object:
        """Remove a pair without reading its frame (MutableMapping.pop would read it first)."""
        if key not in self:
            return default
        value = self._loaded.get(key)
        del self[key]
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._loaded or key in self._later

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter([*self._loaded, *self._later])

    def __len__(self) -> int:
        return len(self._loaded) + len(self._later)


_EVERY_FIGURE = "\0every figure"  # the key of every machine in Catalog._by_figure (no figure id is this)


@dataclass
class Catalog:
    results: Path
    figures: dict[str, Figure]
    frames: Frames = field(default_factory=Frames)
    errors: dict[tuple[str, str], str] = field(default_factory=dict)
    orphans: list[ResultFile] = field(default_factory=list)
    preferred: str | None = None  # whose numbers the prose quotes (a local make bench, else the declared)
    declared: str | None = None  # the site's reference machine (mkdocs.yml extra.bench.machine): fixed
    bench_dir: Path = BENCH_DIR  # the figure scripts and benchkit/ whose hashes decide staleness
    _sha: dict = field(default_factory=dict)
    _memo: dict = field(default_factory=dict)  # tables and comparisons of this build
    _machines: tuple | None = None  # (counts and preferred, figure -> machines, and all), for machines()
    disk: bool = False  # keep table models and comparisons under the build cache between builds
    cache: Path | None = None  # where validated files (and file digests) are kept

    @classmethod
    def build(cls, results: Path, figures: dict[str, Figure] | None = None,
              preferred: str | None = None, bench_dir: Path = BENCH_DIR,
              cache: Path | None = None, declared: str | None = None) -> Catalog:
        """Every results file in ``results`` loaded (or its error kept); figures from ``bench_dir``
        unless given (the site build passes the checkout it builds, which need not be this package's).
        ``cache``: where validated files are kept between builds (see :func:`load.load`)."""
        figures = figures if figures is not None else all_figures(bench_dir)
        cat = cls(results, dict(figures), preferred=preferred, declared=declared, bench_dir=bench_dir,
                  disk=cache is not None, cache=cache)
        damaged: dict[str, Figure] = {}  # comparisons whose side file could not be read, by id
        for file in layout.discover(results):
            fig_id = figure_id_for(file.stem)
            side = comparisons.side_file(results, file.machine, file.stem)
            if fig_id in figures or not side.is_file():
                if side.is_file():  # a figure script's stem: the file holds which results?
                    cat.errors[(fig_id, file.machine)] = (
                        f"{side}:1: a comparison's side file beside the results of the figure script "
                        f"{file.stem}.py; run benchkit compare again with another --name")
                    continue
                if fig_id not in figures:
                    cat.orphans.append(file)
                    continue
            else:
                why = cat._comparison(fig_id, side, file.stem, damaged)
                if why:
                    cat.errors[(fig_id, file.machine)] = why
                    continue
            seen = known(file, cache) if cache is not None else None
            if seen == "":
                cat.frames.later((fig_id, file.machine), file, cache)
            elif seen:
                cat.errors[(fig_id, file.machine)] = seen
            else:
                try:
                    cat.frames[(fig_id, file.machine)] = load(file, cache)
                except ResultsError as err:
                    cat.errors[(fig_id, file.machine)] = str(err)
        for fig_id, stand_in in damaged.items():
            cat.figures.setdefault(fig_id, stand_in)
        return cat

    def _comparison(self, fig_id: str, side: Path, stem: str, damaged: dict[str, Figure]) -> str:
        """Read a comparison's side file (``comparisons.read``) into :attr:`figures`: "" when it is
        the figure (the first machine's) or describes the same measurement, else why not."""
        try:
            fig = comparisons.read(side, stem)
        except ResultsError as err:
            damaged.setdefault(fig_id, comparisons.unreadable(side, stem))
            return str(err)
        first = self.figures.setdefault(fig_id, fig)
        if first.compare is not None and first.compare.measured() != fig.compare.measured():
            return (f"{side}:1: describes another comparison than {first.compare.file} (the versions, "
                    "arguments, boundary or margin differ) under the same name; give one another --name")
        return ""

    def machines(self, fig_id: str) -> list[str]:
        """Machines with results (good or bad) for a figure; the preferred one first."""
        return list(self._by_figure().get(fig_id, ()))

    def _by_figure(self) -> dict[str, list[str]]:
        # Every page asks this, and a hundred folders make thousands of pages: sorted once, again
        # when a pair is added, removed or moved between frames and errors (the catalog only moves
        # pairs; one swapped for another at equal counts would not be seen) or the preferred changes.
        seen = (len(self.frames), len(self.errors), self.preferred, self.declared)
        if self._machines is None or self._machines[0] != seen:
            found: dict[str, set[str]] = {_EVERY_FIGURE: set()}
            for fig_id, machine in (*self.frames, *self.errors):
                found.setdefault(fig_id, set()).add(machine)
                found[_EVERY_FIGURE].add(machine)
            order = lambda m: (m != self.preferred, m != self.declared, m)  # noqa: E731
            self._machines = (seen, {f: sorted(ms, key=order) for f, ms in found.items()})
        return self._machines[1]

    def all_machines(self) -> list[str]:
        """Every machine with results (good or bad) for any figure; the preferred one first."""
        return list(self._by_figure()[_EVERY_FIGURE])

    def good_machines(self, fig_id: str) -> list[str]:
        return [m for m in self.machines(fig_id) if (fig_id, m) in self.frames]

    def reference(self, fig_id: str) -> str | None:
        """The machine the others are compared with on /bench: the declared reference machine if
        it has valid results for this figure (whichever machine was measured last), else the
        machine the prose quotes (:meth:`quoted`). A site with no declared machine uses the latter."""
        good = self.good_machines(fig_id)
        if self.declared in good:
            return self.declared
        return good[0] if good else None

    def quoted(self, fig_id: str) -> str | None:
        """Whose numbers the prose quotes: the preferred machine (a local ``make bench``, else the
        declared one) if it has valid results for this figure, else the first that does."""
        good = self.good_machines(fig_id)
        return good[0] if good else None

    def is_reference(self, machine: str) -> bool:
        """Whether ``machine`` is the site's declared reference (its committed results). With no
        machine declared, every machine counts as one (a site of its own results only)."""
        return self.declared is None or machine == self.declared

    def data_commit(self, fig_id: str, machine: str) -> tuple[str, str] | None:
        """(path in the repository, commit) of the results file as committed, or None when it is
        not committed as it is (``gitdata``: a local run, a folder outside the checkout, no git)."""
        from benchsite.core import gitdata

        commits = self.memo(("data-commits",), lambda: gitdata.data_commits(self.bench_dir.parent, self.results))
        try:
            rel = self.csv_path(fig_id, machine).resolve().relative_to(self.bench_dir.parent.resolve()).as_posix()
        except ValueError:
            return None
        return (rel, commits[rel]) if rel in commits else None

    def session_data_commit(self, fig_id: str, machine: str, sid: str) -> tuple[str, str] | None:
        """(path in the repository, commit) of one session's data as committed, to link instead of
        copying it into the site (issue 38's size decision): the results file at the last commit
        that held the session (every sample), else a kept session's summaries at their commit, else
        None (not committed as it is: a local run, no git). The latest session's link stays the
        same after it is kept (the commit that held it then), so its page does not change."""
        csv = self._repo_path(self.csv_path(fig_id, machine))
        if csv is None:
            return None
        kept = self.kept(machine, self.figures[fig_id].stem).get(sid)
        if kept is None:  # the latest (a page is made only for a kept session or the latest)
            return self.data_commit(fig_id, machine)
        summary = self._repo_path(kept[0])
        if summary is None:
            return None
        held = self.memo(("kept-data",), self._kept_data)
        if (csv, sid) in held:
            return csv, held[(csv, sid)]
        last = self._data_history()[0]
        return (summary, last[summary]) if summary in last else None

    def _repo_path(self, path: Path) -> str | None:
        try:
            return path.resolve().relative_to(self.bench_dir.parent.resolve()).as_posix()
        except ValueError:
            return None

    def _data_history(self) -> tuple:
        from benchsite.core import gitdata

        return self.memo(("data-history",), lambda: gitdata.data_history(self.bench_dir.parent, self.results))

    def _kept_data(self) -> dict[tuple[str, str], str]:
        """(results file, kept session) -> the newest commit of the file from before the session's
        summaries were kept that holds the session (kept and replaced in one commit, or the commit
        before; further back for a session kept later from git's history): every kept session at
        once, one ``git cat-file`` a step back for those not yet found that no earlier build checked
        (what a commit holds never changes: each answer is kept on disk)."""
        _, history, commits = self._data_history()
        candidates: list[list[tuple[str, str, str]]] = []
        for (machine, stem), kept in sorted(self.kept_files().items()):
            csv = self._repo_path(layout.results_file(self.results, machine, stem))
            for sid, (summary, _) in sorted(kept.items()):
                rel = self._repo_path(summary)
                if csv is not None and rel in history:
                    added = history[rel][-1]  # the oldest commit that changed the summaries: when they were kept
                    candidates.append([(commits[i], csv, sid) for i in history.get(csv, ()) if i >= added])
        out: dict[tuple[str, str], str] = {}
        for turn in range(max(map(len, candidates), default=0)):  # the newest candidate, then one older each turn
            asked = [c[turn] for c in candidates if len(c) > turn and c[turn][1:] not in out]
            for commit, csv, sid in self._held(asked):
                out[(csv, sid)] = commit
        return out

    def _held(self, asked: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
        """Those of ``asked`` (commit, path, session) that hold the session (``gitdata.holding``),
        each answer kept on disk: what a commit holds never changes."""
        from benchsite.core import gitdata

        found: dict[tuple[str, str, str], bool] = {}
        stored = {item: cachefile.entry("session-data", repr(item)) for item in asked} if self.disk else {}
        for item, path in stored.items():
            value = cachefile.read(path)
            if isinstance(value, bool):
                found[item] = value
        missing = [item for item in asked if item not in found]
        held = gitdata.holding(self.bench_dir.parent, missing)
        for item in missing:
            found[item] = item in held
            if item in stored:
                cachefile.write(stored[item], found[item])
        return [item for item in asked if found[item]]

    def role(self, machine: str) -> str:
        """What a machine is to this build: "reference" (the declared machine), "measured here" (the
        machine a local run asked the prose to quote), or "" (a contributed folder)."""
        if self.declared is None:
            return ""
        if machine == self.declared:
            return "reference"
        return "measured here" if machine == self.preferred else ""

    def prose_machine(self, fig_id: str) -> str:
        """:meth:`quoted`, or :class:`Unavailable` saying why there is none."""
        machine = self.quoted(fig_id)
        if machine is None:
            bad = [self.errors[(fig_id, m)] for m in self.machines(fig_id)]
            raise Unavailable(bad[0] if bad else f"{fig_id}: no results in {self.results} on any machine "
                              f"(run make bench; script {self.figures[fig_id].script_rel})")
        return machine

    def problem(self, fig_id: str, machine: str) -> str | None:
        """Why a machine's results for a figure cannot be used (None when they can)."""
        if (fig_id, machine) in self.errors:
            return self.errors[(fig_id, machine)]
        if (fig_id, machine) not in self.frames:
            return f"{fig_id}: no results on {machine} in {self.results}"
        return None

    def frame(self, fig_id: str, machine: str) -> pd.DataFrame:
        """The validated samples, or :class:`Unavailable` with the file's own error."""
        why = self.problem(fig_id, machine)
        if why:
            raise Unavailable(why)
        return self.frames[(fig_id, machine)]

    def table(self, fig_id: str, machine: str) -> Table:
        """The table model of one figure on one machine, computed once per build (:meth:`_made`), or
        :class:`Unavailable` with its file's error."""
        return self._made_one("table", fig_id, machine)

    def reference_table(self, fig_id: str, machine: str) -> Table | None:
        """The declared reference machine's table of a figure, when ``machine`` is another and the
        reference's can be made (None otherwise): what tells a claim written wrong from one that
        ``machine``'s results cannot check (``views/claims.readable``)."""
        if self.is_reference(machine) or self.declared not in self.machines(fig_id):
            return None
        try:
            return self.table(fig_id, self.declared)
        except Unavailable:
            return None

    def _keys(self, fig_id: str, machine: str) -> tuple[Figure, Path, CodeHash, str]:
        """(figure, results file, today's code hashes, the file's digest, as :meth:`csv_digest`):
        what a pair's table and summary are made from and kept by."""
        fig, path, sha = self.figures[fig_id], self.csv_path(fig_id, machine), self.current_sha(fig_id)
        digest = self._memo.get(("sha", fig_id, machine)) or self._memo.setdefault(
            ("sha", fig_id, machine), file_digest(path, self.cache))
        return fig, path, sha, digest

    def pair_key(self, fig_id: str, machine: str, ref: str) -> tuple:
        """What a comparison of two machines' tables of one figure is made from and kept by (with a
        build cache): the figure, both results files by their digest and today's code hashes, from
        each machine's :meth:`_keys` (as its table and summary are)."""
        fig, _, sha, digest = self._keys(fig_id, machine)
        return (fig_id, machine, ref, digest, self._keys(fig_id, ref)[3], repr(fig), repr(sha))

    def _made(self, summaries: list[tuple[str, str]] = (), tables: list[tuple[str, str]] = ()) -> dict:
        """The summaries (:class:`Summary`) of the pairs ``summaries`` and the table models of the
        pairs ``tables`` that this build has not made yet, kept in its memo; a pair that cannot be
        tabulated gets its error in :attr:`errors` (its frame dropped) instead. Returns
        :meth:`_keys` of each pair asked for that has results. One way down, every pair at once: the
        catalog's own lookups (``_keys``: today's code hashes from ``staleness``, the digests), the
        build cache read (``cachefile``: each summary, then the table model of each pair whose
        summary it lacks, kept without its samples), the table models made or put together again
        (``table``; a comparison's frame checked against its side file first) and the summaries,
        then what was made written to the build cache. Nothing below calls the catalog back."""
        keys, places = {}, {}
        for fig_id, machine in [*summaries, *tables]:
            if (fig_id, machine) in self.frames and (fig_id, machine) not in self.errors:
                keys[(fig_id, machine)] = self._keys(fig_id, machine)
        asked = [p for p in dict.fromkeys(summaries) if p in keys and ("summary", *p) not in self._memo]
        tabled = [p for p in dict.fromkeys(tables) if p in keys and ("table", *p) not in self._memo]
        for p in dict.fromkeys([*asked, *tabled]) if self.disk else ():  # where the build cache keeps each
            fig, path, sha, digest = keys[p]
            # A summary by the file's path too: a pair that cannot be tabulated is kept as its error, which names it.
            places[("summary", p)] = cachefile.entry("summary", repr((digest, str(path), p[1], repr(fig), repr(sha))))
            places[("table", p)] = cachefile.entry("table", repr((digest, p[1], repr(fig), repr(
                sha if fig.compare is None else None))))
        held = {p: cachefile.read(places[("summary", p)]) if self.disk else None for p in asked}
        refused = {p: found[0] for p, found in held.items() if found is not None and found[0]}
        need = [p for p in dict.fromkeys([*tabled, *(p for p in asked if held[p] is None)])
                if p not in refused and ("table", *p) not in self._memo]
        stored = {p: cachefile.read(places[("table", p)]) if self.disk else None for p in need}
        made: dict[tuple[str, tuple[str, str]], object] = {}
        for p in need:
            fig, path, sha, _ = keys[p]
            frame = self.frames[p]
            why = None
            if fig.compare is not None:  # its code is the recorded source: never stale against bench_scripts/
                sha = None
                why = comparisons.problem(frame, fig, comparisons.side_file(self.results, p[1], fig.stem))
            try:
                tab = None if why else (stored[p].attached(frame) if stored[p] is not None
                                        else Table.of(frame, fig, sha))
            except ValueError as err:  # rows the figure cannot tabulate, e.g. a group_by param missing
                why = f"{path}:1: {err}"
            if why:
                refused[p] = why
                continue
            self._memo[("table", *p)] = tab
            if stored[p] is None:
                made[("table", p)] = tab.detached()
        for p in asked:
            found = held[p]
            if found is None and p in refused and self.disk:
                found = made[("summary", p)] = (refused[p], None)
            elif found is None and p not in refused:
                found = made[("summary", p)] = ("", Summary.of(self._memo[("table", *p)]))
            if found is not None:  # without a build cache, a pair that cannot be tabulated keeps no summary
                self._memo[("summary", *p)] = found
        for p, why in refused.items():  # its error kept, its frame dropped (without reading it)
            self.errors[p] = why
            if p in self.frames:
                del self.frames[p]
        for place, value in made.items() if self.disk else ():
            cachefile.write(places[place], value)
        return keys

    def tables(self, machine: str | None = None) -> list[Table]:
        """Every (figure, machine) table that can be made (of one machine, if given), in order."""
        pairs = [key for key in sorted(self.frames) if machine is None or key[1] == machine]
        self._made(tables=pairs)
        return [self._memo[("table", *key)] for key in pairs if key not in self.errors]

    def site_facts(self) -> SiteFacts:
        """What a count over the whole site (``noise.verdict_count``) needs of this catalog, in one
        call and as plain values: each figure's reference machine and every pair's summary that can
        be made (as :meth:`summary`; a pair that cannot is left out, its error kept). The catalog's
        own lookups first, then one way down for every pair at once (:meth:`_made`)."""
        refs = {fig_id: self.reference(fig_id) for fig_id in sorted(self.figures)}
        pairs = sorted(self.frames)
        self._made(pairs)
        return SiteFacts(refs, {key: self._memo[("summary", *key)][1] for key in pairs if key not in self.errors})

    @property
    def derived(self) -> dict:
        """Values the layers above derive from this catalog, by key, for this build (what
        :meth:`memo` keeps): read and kept by the caller, so the catalog calls no code of theirs."""
        return self._memo

    def trim(self, most: int = 48) -> None:
        """Once more than ``most`` frames were read back, forget them and everything derived from
        them (tables, histories, comparisons): a warming worker that goes through a hundred
        machines holds a few of them at a time, not all (each is read back again if asked)."""
        if len(self.frames._loaded) > most:
            self.frames.unload()
            self._memo.clear()

    def kept(self, machine: str, stem: str) -> dict[str, tuple[Path, Path]]:
        """The sessions kept under ``results/<machine>/sessions/`` for one figure: session id ->
        (summary file, runs file)."""
        return self.kept_files().get((machine, stem), {})

    def kept_files(self) -> dict[tuple[str, str], dict[str, tuple[Path, Path]]]:
        """Every kept session, by (machine, stem), listed once per build (``archive.kept_files``)."""
        found = self._memo.get(("kept-files",))
        if found is None:
            found = self._memo[("kept-files",)] = archive.kept_files(self.results)
        return found

    def session_texts(self, fig_id: str, machine: str) -> SessionTexts:
        """The kept sessions of a figure on a machine as text, for ``sessions.py`` to judge
        (:func:`read_kept`), read once per build (again after :meth:`trim`, which forgets them); the
        latest, the results file's, ``sessions.py`` makes from its frame."""
        found = self._memo.get(("session-texts", fig_id, machine))
        if found is None:
            found = self._memo[("session-texts", fig_id, machine)] = self._read_texts(fig_id, machine)
        return found

    def _read_texts(self, fig_id: str, machine: str) -> SessionTexts:
        fig = self.figures[fig_id]
        kept, errors = [], {}
        for sid, (summary, runs) in sorted(self.kept_files().get((machine, fig.stem), {}).items()):
            try:
                kept.append((sid, *read_kept(summary, runs), (str(summary), str(runs))))
            except ResultsError as err:
                errors[sid] = str(err)
        return SessionTexts(tuple(kept), errors)

    def by_slug(self, fig_id: str | None = None) -> dict[str, str]:
        """Machine slug (the URL part, ``urls.machine_slug``) -> machine, for one figure's
        machines or (no figure) every machine: each generated page resolves its slug here."""
        return self.memo(("by-slug", fig_id), lambda: {machine_slug(m): m for m in (
            self.machines(fig_id) if fig_id is not None else self.all_machines())})

    def memo(self, key: tuple, compute: Callable[[], T]) -> T:
        """A value derived from this catalog, computed once (e.g. a comparison two pages show)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def stored(self, kind: str, key: tuple, compute: Callable[[], T]) -> T:
        """``compute()``, kept on disk between builds (when the catalog was built with a cache) by
        ``key`` (everything it is made from: results files by their digest) and the code
        (``cachefile.cached``: the one code version): a warm build reads a table model back
        instead of computing it."""
        if not self.disk:
            return compute()
        return cached(kind, repr(key), compute)

    def csv_path(self, fig_id: str, machine: str) -> Path:
        return layout.results_file(self.results, machine, self.figures[fig_id].stem)

    def csv_digest(self, fig_id: str, machine: str) -> str:
        """sha256 of the results file as loaded: what a cached panel was made from."""
        found = self._memo.get(("sha", fig_id, machine))
        if found is None:
            found = self._memo[("sha", fig_id, machine)] = file_digest(self.csv_path(fig_id, machine), self.cache)
        return found

    def current_sha(self, fig_id: str) -> CodeHash:
        """Today's hashes of what a figure's numbers depend on: its script and the harness."""
        if fig_id not in self._sha:
            fig, harness = self.figures[fig_id], self.harness_sha
            self._sha[fig_id] = code_hash(fig.script, fig.script_rel, harness, fig.compare is None)
        return self._sha[fig_id]

    @property
    def harness_sha(self) -> str:
        if "" not in self._sha:
            self._sha[""] = harness_sha256(self.bench_dir / "benchkit")
        return self._sha[""]

    def stale(self) -> list[tuple[str, str]]:
        """(figure, machine) pairs measured with another script or harness than today's. Asks
        every pair, so a pair whose rows cannot be tabulated is among the errors from here on."""
        out = []
        for fig_id, machine in sorted(self.frames):
            try:
                if self.stale_reason(fig_id, machine):
                    out.append((fig_id, machine))
            except Unavailable:
                continue
        return out

    def stale_reason(self, fig_id: str, machine: str) -> str:
        """:attr:`Table.stale` of a pair, or :class:`Unavailable` (:meth:`summary`)."""
        return self.summary(fig_id, machine).stale

    def summary(self, fig_id: str, machine: str) -> Summary:
        """What the /bench index and a figure's machines table show of a pair (:class:`Summary`),
        or :class:`Unavailable`; kept under the build cache by the file's digest and today's code
        hashes (what the table is kept by), so a page that lists every machine reads no samples and
        no table: only when the cache has no summary is the table made (:meth:`_made`)."""
        return self._made_one("summary", fig_id, machine)[1]

    def _made_one(self, kind: str, fig_id: str, machine: str):
        """The ``kind`` ("table" or "summary") of one pair, made once per build (:meth:`_made`), or
        :class:`Unavailable` with its file's error."""
        why = self.problem(fig_id, machine)
        if why:
            raise Unavailable(why)
        if (kind, fig_id, machine) not in self._memo:
            pair = [(fig_id, machine)]
            self._made(*((pair, ()) if kind == "summary" else ((), pair)))
            if (fig_id, machine) in self.errors:
                raise Unavailable(self.errors[(fig_id, machine)])
        return self._memo[(kind, fig_id, machine)]

    def page_facts(self, fig_id: str, machine: str | None, max_tabs: int) -> PairFacts:
        """What a figure's page (``machine`` None) or its page on ``machine`` shows of this catalog, in
        one call and as plain values (``model/pagefacts.py`` makes the sessions and cells from them): the
        reference machine, today's script hash, and per machine its state, its summary (the figure
        page), its table model where its panel is shown (past ``max_tabs`` machines the reference's
        alone) or where a comparison's verdicts are read, its results file's digest and the commit that
        holds it, and the texts of its kept sessions where its panel is shown and it has no problem; and
        why each machine the page says is stale is so (the figure page: the summarised machines; a
        machine page: it and the reference it is compared with).
        The catalog's own lookups first; then the summaries and table models (each made once per build
        and kept under the build cache by its results file's digest and today's code hashes:
        ``staleness``, ``cachefile``, ``table``), the digests, the commits that hold the files
        (``gitdata``) and the kept sessions' texts. It calls no code of its caller's."""
        fig = self.figures[fig_id]
        ref = self.reference(fig_id)
        names = self.machines(fig_id) if machine is None else [machine]
        valid = {m: (fig_id, m) in self.frames for m in names}
        problems = {m: self.problem(fig_id, m) for m in names}
        roles = {m: self.role(m) for m in names}
        errors = {m: self.errors.get((fig_id, m)) for m in names if valid[m]}
        panels = names if machine is not None or len(names) <= max_tabs else [ref or names[0]]
        judged = ([m for m in names if valid[m] and not problems[m]]
                  if fig.compare is not None and fig.ratio is not None else [])  # a comparison's verdicts
        listed = [m for m in names if machine is None and valid[m] and errors[m] is None]
        tabled = list(dict.fromkeys([*judged, *panels]))
        committed = {m: self.data_commit(fig_id, m) for m in tabled if not problems[m]}
        keys = self._made([(fig_id, m) for m in listed], [(fig_id, m) for m in tabled if not problems[m]])
        summaries = {}
        for m in listed:  # as summary(): a pair whose table cannot be made stops the page
            if (fig_id, m) in self.errors:
                raise Unavailable(self.errors[(fig_id, m)])
            summaries[m] = self._memo[("summary", fig_id, m)][1]
        tables, failed = {}, {}
        for m in tabled:
            why = problems[m] or self.errors.get((fig_id, m))
            if why and m in judged:  # a comparison's verdicts need every valid machine's table
                raise Unavailable(why)
            if why:
                failed[m] = why
            else:
                tables[m] = self._memo[("table", fig_id, m)]
        # Which machines the page says are stale, at its top and in its comparisons' cells: the figure
        # page's summarised machines, a machine page's machine and the reference it is compared with
        # (Summary.stale either way, kept by the build cache).
        said = (listed if machine is None else
                [m for m in dict.fromkeys([machine, ref]) if m is not None] if machine in tables else [])
        reasons = {m: summaries[m].stale if m in summaries else self.stale_reason(fig_id, m) for m in said}
        stale = {m: why for m, why in reasons.items() if why}
        shown = [m for m in panels if m in tables]
        digests = {m: keys[(fig_id, m)][3] for m in shown}
        committed = {m: committed[m] for m in shown}
        texts = {m: self.session_texts(fig_id, m) for m in panels if not problems[m]}
        now = self.current_sha(fig_id).script
        return PairFacts(ref, now, names, roles, valid, problems, errors, summaries, panels,
                         tables, failed, digests, committed, texts, stale)


@dataclass(frozen=True)
class Summary:
    """A pair's table reduced to what a list of pairs shows: its headline, how many runs, the
    days they started and the jax versions, why it is stale ("" when current), and what the site's
    count of its verdicts needs (``noise.verdict_count``): how many rows carry a paired verdict, and
    which cells a comparison with another machine could match (:attr:`Table.comparable`)."""

    headline: Headline | None
    runs: int
    days: str
    jax: str
    stale: str
    verdicts: int
    cells: frozenset[tuple[tuple[str, str], frozenset[str]]]

    @classmethod
    def of(cls, tab: Table) -> Summary:
        frame = tab.frame
        return cls(tab.headline, tab.runs, run_days(frame),
                   ", ".join(sorted(distinct_texts(frame["jax_version"]))), tab.stale,
                   sum(r.verdict is not None for r in tab.rows), tab.comparable)


@dataclass(frozen=True)
class PairFacts:
    """One figure's machines as :meth:`Catalog.page_facts` finds them, for its pages: plain values."""

    ref: str | None  # the reference machine (Catalog.reference)
    now: str  # today's sha256 of the figure's script
    names: list[str]  # every machine of the figure (a machine's page: that machine alone)
    roles: dict[str, str]  # Catalog.role: "reference", "measured here" or ""
    valid: dict[str, bool]  # its results file was read
    problems: dict[str, str | None]  # why its results cannot be shown (Catalog.problem)
    errors: dict[str, str | None]  # why its results file is invalid (Catalog.errors), of a valid machine
    summaries: dict[str, Summary]  # on the figure page, of a valid machine with no error
    panels: list[str]  # the machines whose results panel the page shows
    tables: dict[str, Table]  # the table models made: the panels' and a comparison's verdicts'
    failed: dict[str, str]  # a panel's machine -> why its table cannot be made (file:line)
    digests: dict[str, str]  # a shown panel's results file's sha256
    committed: dict[str, tuple[str, str] | None]  # (path, commit) of a shown panel's results file as committed
    texts: dict[str, SessionTexts]  # a panel's machine with no problem -> its kept sessions' texts
    stale: dict[str, str]  # each machine the page says is stale -> why (Summary.stale)


@dataclass(frozen=True)
class SiteFacts:
    """What a count over the whole site needs, as :meth:`Catalog.site_facts` finds it: plain values."""

    refs: dict[str, str | None]  # each figure's reference machine (Catalog.reference)
    summaries: dict[tuple[str, str], Summary]  # every (figure, machine) pair whose table can be made


@dataclass(frozen=True)
class SessionTexts:
    """The sessions of one figure on one machine, as :meth:`Catalog.session_texts` finds them."""

    # (session id, summary text, runs text, (where the summary is, where the runs are))
    sessions: tuple[tuple[str, str, str, tuple[str, str]], ...]
    errors: dict[str, str]  # session id -> why its kept files cannot be read (file:line)


def read_kept(summary: Path, runs: Path) -> tuple[str, str]:
    """A kept session's two files as text; a missing or unreadable one is refused (ResultsError)."""
    texts = []
    for path, other in ((summary, runs), (runs, summary)):
        if not path.is_file():
            raise ResultsError(f"{other}:1: {path.name} is missing beside it (a partial session)")
        try:
            texts.append(gzip.decompress(path.read_bytes()).decode("utf-8"))
        except (OSError, EOFError, UnicodeDecodeError, zlib.error) as err:  # gzip.BadGzipFile is an OSError
            raise ResultsError(f"{path}:1: cannot read: {err}") from None
    return texts[0], texts[1]


def preferred_machine(results: Path, configured: str | None = None) -> str | None:
    """``BENCH_MACHINE``, else the machine the last local ``make bench`` measured,
    else the site's configured default."""
    return local_machine(results) or configured


def local_machine(results: Path) -> str | None:
    """The machine a local run asks the prose to quote: ``BENCH_MACHINE``, else the one the last
    ``make bench`` in this checkout measured (``.bench/last_machine``, which a clone does not
    have), else None: a fresh clone, CI and the Pages workflow quote the declared machine."""
    if os.environ.get("BENCH_MACHINE"):
        return os.environ["BENCH_MACHINE"]
    last = results.resolve().parent / ".bench" / "last_machine"
    if last.is_file() and (results / last.read_text().strip()).is_dir():
        return last.read_text().strip()
    return None


def results_dir(configured: str | None = None, root: Path = REPO) -> Path:
    """``BENCH_RESULTS`` (a scratch folder), else the configured one, else results/ (relative to ``root``)."""
    chosen = os.environ.get("BENCH_RESULTS") or configured or "results"
    path = Path(chosen)
    return path if path.is_absolute() else root / path
