"""Every session of a figure on a machine, as a table model, through one validator.

A session is one ``make bench``. The latest is the one the results file holds; the
earlier ones were kept under ``results/<machine>/sessions/<session_id>/`` as per-run
summaries (``archive.py`` writes them and says the format). Both are read the same way:
the latest file is summarised with :func:`archive.compact` (cached by the file's
bytes) and the text parsed by :func:`parse`, exactly as a kept session's files are, so
a session's page shows the same bytes before and after it is archived.

The table of a session is ``Table.of`` on a frame with one row per run and cell whose
``time_s`` is that run's median: a run median of one value is that value, so its
cells, ratios, paired verdicts and headline are the ones the full table had.

A kept session that is damaged or partial is refused with ``file:line`` (:class:`SessionError`,
an error box on the pages that show it, a failure in a strict build); the results
file and every other session are not affected.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from benchkit import archive
from benchkit.schema import (
    NULLABLE_COLUMNS,
    PROVENANCE_COLUMNS,
    READABLE_VERSIONS,
    V3_MISSING,
    figure_id_for,
)
from benchsite.core import cachefile
from benchsite.core.cachefile import cache_dir, cached, store_bytes
from benchsite.model import load, stats
from benchsite.model.catalog import Catalog
from benchsite.model.load import param_columns
from benchsite.model.table import Table, distinct_texts, run_days

RUN_COLUMNS = (*archive.RUN_KEY, *PROVENANCE_COLUMNS)
# A summary-format-1 runs file: the provenance before schema 4's per-run columns (read as empty).
RUN_COLUMNS_V1 = tuple(c for c in RUN_COLUMNS if c not in V3_MISSING)
SUMMARY_INT = frozenset({"summary_version", "run", "samples", "cache_hits"})
SUMMARY_TIME = frozenset({"median_s", "min_s", "max_s", "q1_s", "q3_s", "mean_s"})  # > 0
SUMMARY_NUMBER = frozenset({"calls", "compiles", *archive.OPTIONAL_NUMBERS})  # >= 0 (medians: not whole)
# The cells of a kept session by the results file's rules (load.cell): a column the results file
# has reads as it does there (a run's provenance, a cell's run, variant and params), and the
# summaries' statistics are times (> 0) and medians of counts (>= 0).
SUMMARY_RULES = load.Rules(
    ints=SUMMARY_INT, floats=SUMMARY_TIME | SUMMARY_NUMBER, nullable=NULLABLE_COLUMNS & set(archive.SUMMARY_COLUMNS),
    positive=SUMMARY_TIME, non_negative=SUMMARY_NUMBER | (load.NON_NEGATIVE_COLUMNS & set(archive.SUMMARY_COLUMNS)))
RUNS_RULES = dataclasses.replace(load.RESULTS, ints=load.RESULTS.ints | {"summary_version"})


class SessionError(load.ResultsError):
    """A kept session that cannot be trusted; the message starts with ``file:line:``."""


# --- the validator: load's, with a kept session's columns and row rules ---------------------------

RowChecks = Callable[[load.Columns, load.Columns, list[int]], list[load.Check]]  # (texts, typed, lines)


def _read(text: str, where: str, formats: tuple[tuple[str, ...], ...], rules: load.Rules,
          row_checks: RowChecks) -> tuple[load.Columns, list[int]]:
    """One file of a kept session, typed by ``load``'s rules: its records and lines
    (``load.split``), header (read by name, as a results file's; an older format's records
    widened to the newest, the columns it lacks empty), cells and ``row_checks``; with the line
    each row ends on."""
    rec = load.split(text, where)
    found = load.check_header(rec.header, where, formats, f"summary format {archive.SUMMARY_VERSION}")
    newest = formats[-1]
    return load.check_rows(rec, where, newest, rules, lambda raw, typed: row_checks(raw, typed, rec.lines),
                           {c: "" for c in newest if c not in formats[found]}), rec.lines


def _summary_version(typed: load.Columns) -> load.Check:
    readable = " or ".join(str(v) for v in archive.READABLE_SUMMARY_VERSIONS)
    versions = typed["summary_version"]
    return (~np.isin(versions, archive.READABLE_SUMMARY_VERSIONS),
            lambda i: f"summary_version {versions[i]} is not one this site reads ({readable}); see "
                      f"results/README.md, 'Sessions kept'")


def _summary_checks(where: str) -> RowChecks:
    def checks(raw: load.Columns, typed: load.Columns, lines: list[int]) -> list[load.Check]:
        low, q1, median, q3, high = (typed[c] for c in ("min_s", "q1_s", "median_s", "q3_s", "max_s"))
        with np.errstate(invalid="ignore"):
            ordered = (low <= q1) & (q1 <= median) & (median <= q3) & (q3 <= high)
            few = typed["samples"] < 1
        return [
            _summary_version(typed),
            (few, lambda i: f"samples is {typed['samples'][i]}; a summary needs at least one"),
            (~ordered, lambda i: "min_s <= q1_s <= median_s <= q3_s <= max_s does not hold"),
            load.params_check(raw),
            load.duplicate_check(typed, list(archive.CELL_COLUMNS), where, lines,
                                 lambda k: f"summary (run {k[0]}, variant {k[1]!r}, params {k[5]!r})"),
        ]
    return checks


def _runs_checks(where: str, machine: str, stem: str, session: str) -> RowChecks:
    expected = {"figure_id": figure_id_for(stem), "machine": machine, "session_id": session}
    readable = " and ".join(str(v) for v in READABLE_VERSIONS)

    def checks(raw: load.Columns, typed: load.Columns, lines: list[int]) -> list[load.Check]:
        def place(col: str) -> load.Check:
            return (raw[col] != expected[col],
                    lambda i: f"{col} {raw[col][i]!r} does not match its place (expected {expected[col]!r})")
        versions = typed["schema_version"]
        return [
            _summary_version(typed),
            (~np.isin(versions, READABLE_VERSIONS),
             lambda i: f"schema_version {versions[i]} is not one this site reads (it reads {readable}); "
                       f"see the format history in results/README.md"),
            *(place(col) for col in expected),
            load.session_id_check(raw),  # the folder's name, which every row repeats: a page's URL
            load.timestamp_check(raw),
            load.duplicate_check(typed, ["run"], where, lines, lambda k: f"run {k[0]}"),
        ]
    return checks


def parse(summary_text: str, runs_text: str, where: tuple[str, str], machine: str, stem: str,
          session: str) -> pd.DataFrame:
    """One session's summaries joined with their runs' provenance: one row per run and cell,
    ``time_s`` the run's median, params parsed into ``p_<key>`` columns (``load.param_columns``);
    :class:`SessionError` (``file:line:``) at the first thing that breaks a rule."""
    summary_at, runs_at = where
    try:
        summaries, summary_lines = _read(summary_text, summary_at, (archive.SUMMARY_COLUMNS,), SUMMARY_RULES,
                                         _summary_checks(summary_at))
        runs, runs_lines = _read(runs_text, runs_at, (RUN_COLUMNS_V1, RUN_COLUMNS), RUNS_RULES,
                                 _runs_checks(runs_at, machine, stem, session))
    except load.ResultsError as err:
        raise SessionError(str(err)) from None
    # Between the two files: every run has its provenance and its summaries (a partial session not).
    alone = np.flatnonzero(~np.isin(summaries["run"], runs["run"]))
    if alone.size:
        raise SessionError(f"{summary_at}:{summary_lines[alone[0]]}: run {summaries['run'][alone[0]]} has "
                           f"no provenance in {Path(runs_at).name} (a partial session)")
    bare = np.flatnonzero(~np.isin(runs["run"], summaries["run"]))
    if bare.size:
        raise SessionError(f"{runs_at}:{runs_lines[bare[0]]}: run(s) {', '.join(str(r) for r in runs['run'][bare])} "
                           f"have no summaries in {Path(summary_at).name} (a partial session)")
    return _frame(summaries, runs)


def _frame(summaries: load.Columns, runs: load.Columns) -> pd.DataFrame:
    """Each summary with its run's provenance (the runs file's columns, then the summary's), typed
    as ``load`` types the same columns of a results file; ``time_s`` the run's median."""
    at = pd.Index(runs["run"]).get_indexer(summaries["run"])
    data = {col: summaries[col] if col in summaries else runs[col][at]
            for col in (*RUN_COLUMNS, *archive.SUMMARY_COLUMNS) if col != "summary_version"}
    data["time_s"] = data["median_s"]  # the run's median: what every table cell is made of
    data["sample"] = np.zeros(len(at), dtype=np.int64)
    data["detail"] = np.full(len(at), None, dtype=object)
    frame = load.frame_of(data)
    for col, values in param_columns(frame["params"]).items():
        frame[col] = values
    return frame


def read_texts(summary: Path, runs: Path) -> tuple[str, str]:
    """A kept session's two files as text; a missing or unreadable one is refused."""
    texts = []
    for path, other in ((summary, runs), (runs, summary)):
        if not path.is_file():
            raise SessionError(f"{other}:1: {path.name} is missing beside it (a partial session)")
        try:
            texts.append(gzip.decompress(path.read_bytes()).decode("utf-8"))
        except (OSError, EOFError, UnicodeDecodeError, zlib.error) as err:  # gzip.BadGzipFile is an OSError
            raise SessionError(f"{path}:1: cannot read: {err}") from None
    return texts[0], texts[1]


# --- the sessions of a figure on a machine -------------------------------------------------

@dataclass(frozen=True)
class Session:
    id: str
    fig_id: str
    machine: str
    table: Table  # the session's table model (no stale reason: a session is what it was)
    latest: bool  # the session the results file holds
    digest: str = ""  # a hash of what it was made from (its files, the figure): what its page is cached by

    @property
    def frame(self) -> pd.DataFrame:
        return self.table.frame

    @property
    def date(self) -> str:
        """The days its runs started (UTC): ``2026-12-01``, or ``2026-12-01 … 2026-12-02``."""
        return run_days(self.frame)

    def values(self, col: str, width: int | None = None) -> str:
        """The distinct values of a provenance column, shown (every step between sessions asks)."""
        memo = self.__dict__.setdefault("_values", {})  # a frozen dataclass: not through setattr
        if (col, width) not in memo:
            if col not in memo:
                memo[col] = distinct_texts(self.frame[col])
            memo[(col, width)] = ", ".join(sorted({v[:width] for v in memo[col]})) or "—"
        return memo[(col, width)]

    def within(self, variant: str, row_label: str) -> float:
        """Median over runs of IQR / median, from the kept quartiles (NaN: too few samples)."""
        memo = self.__dict__.setdefault("_within", {})  # per row: every variant is asked in turn
        if row_label not in memo:
            runs = next(r for r in self.table.rows if r.label == row_label).samples
            with np.errstate(divide="ignore", invalid="ignore"):
                frac = ((runs["q3_s"].to_numpy(dtype=float) - runs["q1_s"].to_numpy(dtype=float))
                        / runs["median_s"].to_numpy(dtype=float))
            memo[row_label] = (runs["variant"].to_numpy(),
                               runs["samples"].to_numpy() >= stats.MIN_WITHIN_SAMPLES, frac)
        variants, enough, frac = memo[row_label]
        frac = frac[(variants == variant) & enough]
        frac = frac[~np.isnan(frac)]  # as Series.median skips them
        return float(np.median(frac)) if frac.size else float("nan")


@dataclass(frozen=True)
class History:
    """Every session of one figure on one machine, oldest first, and the kept ones refused."""

    sessions: tuple[Session, ...] = ()
    errors: dict[str, str] = field(default_factory=dict)  # session id -> file:line message

    @property
    def ids(self) -> list[str]:
        return sorted({s.id for s in self.sessions} | set(self.errors))

    def get(self, session: str) -> Session | None:
        return next((s for s in self.sessions if s.id == session), None)


def _latest_store(digest: str) -> Path:
    return cache_dir() / "sessions" / f"{digest}-{cachefile.code_version()[:16]}.json"


def _keep_texts(stored: Path, texts: dict[str, tuple[str, str]]) -> None:
    try:
        store_bytes(stored, json.dumps(texts).encode("utf-8"))
    except OSError:
        pass


def _latest_texts(path: Path, digest: str) -> dict[str, tuple[str, str]]:
    """:func:`archive.compact_file` of a results file, kept under ``.cache/bench/sessions/`` by
    the file's sha256 and the code (``cachefile.code_version``): most of a warm build's time
    would go here."""
    stored = _latest_store(digest)
    if stored.is_file():
        return {k: tuple(v) for k, v in json.loads(stored.read_text(encoding="utf-8")).items()}
    texts = archive.compact_file(path)
    _keep_texts(stored, texts)
    return texts


def keep_latest_texts(path: Path, digest: str, header: list[str], rows: list[list[str]]) -> None:
    """What :func:`_latest_texts` will find for the results file ``path`` (``digest``: its
    sha256), compacted from the records the loader has just read and validated (``load.load``'s
    ``records``), so a cold build parses each file once. The loader hands over the records of a
    file that validated with one line per record: those are the ones :func:`archive.read_raw`
    reads (no blank line, no short row, no bad quoting, no cell spanning lines). A file that
    cannot be compacted is left to the build, which reports why."""
    stored = _latest_store(digest)
    if stored.is_file():
        return
    try:
        texts = archive.compact_records(path, header, rows)
    except archive.ArchiveError:
        return
    _keep_texts(stored, texts)


def _session(summary: str, runs: str, where: tuple[str, str], fig, machine: str, sid: str, latest: bool) -> Session:
    """One session's table model from its two texts, from the cache when they were seen before."""
    def make() -> Session:
        frame = parse(summary, runs, where, machine, fig.stem, sid)
        return Session(sid, fig.id, machine, Table.of(frame, fig), latest, key)
    key = hashlib.sha256("\0".join((summary, runs, repr(fig), machine, sid, str(latest))).encode()).hexdigest()
    return cached("session", key, make)


def history(cat: Catalog, fig_id: str, machine: str) -> History:
    """Every session of ``fig_id`` on ``machine``, computed once per build (``Catalog.memo``)."""
    return cat.memo(("history", fig_id, machine), lambda: _history(cat, fig_id, machine))


def _history(cat: Catalog, fig_id: str, machine: str) -> History:
    fig = cat.figures[fig_id]
    found: dict[str, Session] = {}
    errors: dict[str, str] = {}
    latest: set[str] = set()
    if (fig_id, machine) in cat.frames:
        path = cat.csv_path(fig_id, machine)
        try:
            texts = _latest_texts(path, cat.csv_digest(fig_id, machine))
        except archive.ArchiveError:
            texts = {}  # a format-1 file has no session id: no session pages (the file's own pages stand)
        for sid, (summary, runs) in texts.items():
            latest.add(sid)
            try:
                found[sid] = _session(summary, runs, (str(path), str(path)), fig, machine, sid, True)
            except ValueError as err:  # SessionError included
                errors[sid] = str(err) if isinstance(err, SessionError) else f"{path}:1: {err}"
    kept = cat.kept(machine, fig.stem)
    for sid, (summary, runs) in sorted(kept.items()):
        if sid in latest:
            continue  # the results file holds it (archived once already, e.g. by a failed rerun)
        try:
            found[sid] = _session(*read_texts(summary, runs), (str(summary), str(runs)), fig, machine, sid, False)
        except (SessionError, ValueError) as err:
            errors[sid] = str(err) if isinstance(err, SessionError) else f"{summary}:1: {err}"
    return History(tuple(found[s] for s in sorted(found)), errors)


# --- between two sessions ------------------------------------------------------------------

# What in the provenance can explain a move: (column, label, characters shown).
ENV_FIELDS = (
    ("jax_version", "jax", None), ("jaxlib_version", "jaxlib", None), ("numpy_version", "numpy", None),
    ("python_version", "Python", None), ("harness_sha256", "harness sha256", 12),
    ("script_sha256", "script sha256", 12), ("cpu_flags_sha256", "CPU flags sha256", 12),
    ("cpu_isa", "CPU extensions", None), ("xla_flags", "XLA_FLAGS", None), ("jax_env", "JAX_/XLA_ variables", None),
    ("jax_enable_x64", "x64", None), ("jax_default_matmul_precision", "default matmul precision", None),
    ("compilation_cache", "persistent compilation cache", None), ("git_commit", "git commit", 12),
)


def _load(s: Session) -> str:
    values = s.frame.groupby("run")["load_avg_1m"].first().dropna()
    if values.empty:
        return "—"
    low, high = f"{values.min():g}", f"{values.max():g}"
    return f"{values.median():g}" + ("" if low == high else f" [{low}..{high}]")


def env_diff(old: Session, new: Session) -> list[tuple[str, str, str]]:
    """(what, before, after) for each provenance field that differs, then the load average
    at the runs' start (median [min..max]), which always does a little."""
    out = [(label, old.values(col, width), new.values(col, width)) for col, label, width in ENV_FIELDS
           if old.values(col, width) != new.values(col, width)]
    return out + [("load average at start", _load(old), _load(new))]
