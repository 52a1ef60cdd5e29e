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

import csv
import gzip
import hashlib
import io
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from benchkit import archive
from benchkit.schema import (
    BOOL_COLUMNS,
    FLOAT_COLUMNS,
    INT_COLUMNS,
    NULLABLE_COLUMNS,
    PROVENANCE_COLUMNS,
    V3_MISSING,
    figure_id_for,
    parse_params,
)
from benchsite.core.cachefile import cache_dir, cached, store_bytes
from benchsite.model import stats
from benchsite.model.catalog import Catalog
from benchsite.model.load import NOT_FINITE, number, param_columns, session_id_ok, timestamp_ok
from benchsite.model.table import Table, distinct_texts, run_days

RUN_COLUMNS = (*archive.RUN_KEY, *PROVENANCE_COLUMNS)
# A summary-format-1 runs file: the provenance before schema 4's per-run columns (read as empty).
RUN_COLUMNS_V1 = tuple(c for c in RUN_COLUMNS if c not in V3_MISSING)
SUMMARY_INT = frozenset({"summary_version", "run", "samples", "cache_hits"})
SUMMARY_TIME = frozenset({"median_s", "min_s", "max_s", "q1_s", "q3_s", "mean_s"})  # > 0
SUMMARY_NUMBER = frozenset({"calls", "compiles", *archive.OPTIONAL_NUMBERS})  # >= 0
SUMMARY_NULLABLE = frozenset({"shape", "params", *archive.OPTIONAL_NUMBERS})
BOOLS = {"true": True, "false": False}


class SessionError(ValueError):
    """A kept session that cannot be trusted; the message starts with ``file:line:``."""


# --- the validator -------------------------------------------------------------------------

def _typed(col: str, text: str, ints: frozenset, floats: frozenset, nullable: frozenset,
           bools: frozenset = frozenset()) -> object:
    """One cell's value, or ValueError saying why it is not one."""
    if text == "":
        if col not in nullable:
            raise ValueError(f"column {col!r} is empty")
        return None
    if col in bools:
        if text not in BOOLS:
            raise ValueError(f"column {col!r} has {text!r}, not a valid true/false")
        return BOOLS[text]
    if col in ints or col in floats:  # the results file's rule (load.number): one reading of a number
        value, why = number(text, integer=col in ints)
        if why == NOT_FINITE:
            raise ValueError(f"column {col!r} is {value}, not a finite number")
        if why is not None:
            raise ValueError(f"column {col!r} has {text!r}, {why}")
        return value
    return text


def _records(text: str, where: str, header: tuple[str, ...],
             older: tuple[str, ...] | None = None) -> list[tuple[int, list[str]]]:
    """(line, fields in ``header``'s order) of every data record, after the header was checked.
    Columns are read by name, as ``load`` reads a results file's (a results file with its columns
    in another order is compacted with them in that order); a file with the ``older`` header
    (summary format 1) has its records widened to ``header``, the columns it lacks empty."""
    reader = csv.reader(io.StringIO(text), strict=True)
    try:
        head = next(reader, None)
        if head is None:
            raise SessionError(f"{where}:1: empty file")
        if not any(len(set(head)) == len(head) == len(cols) and set(head) == set(cols)
                   for cols in (header, older) if cols is not None):
            raise SessionError(f"{where}:1: header is not summary format {archive.SUMMARY_VERSION}'s "
                               f"({', '.join(header[:4])}, ...); see results/README.md, 'Sessions kept'")
        out = []
        for rec in reader:
            if len(rec) != len(head):
                raise SessionError(f"{where}:{reader.line_num}: {len(rec)} fields where the header has "
                                   f"{len(head)} (truncated or damaged row)")
            out.append((reader.line_num, rec if tuple(head) == header else
                        [dict(zip(head, rec)).get(c, "") for c in header]))
    except csv.Error as err:
        raise SessionError(f"{where}:{reader.line_num}: malformed CSV: {err}") from None
    if not out:
        raise SessionError(f"{where}:2: no data rows")
    return out


def _rows(text: str, where: str, header: tuple[str, ...], older: tuple[str, ...] | None = None,
          **kinds) -> list[tuple[int, dict]]:
    rows = []
    for line, rec in _records(text, where, header, older):
        try:
            row = {c: _typed(c, t, **kinds) for c, t in zip(header, rec)}
        except ValueError as err:
            raise SessionError(f"{where}:{line}: {err}") from None
        if row["summary_version"] not in archive.READABLE_SUMMARY_VERSIONS:
            readable = " or ".join(str(v) for v in archive.READABLE_SUMMARY_VERSIONS)
            raise SessionError(f"{where}:{line}: summary_version {row['summary_version']} is not one this site "
                               f"reads ({readable}); see results/README.md, 'Sessions kept'")
        rows.append((line, row))
    return rows


def _check_summary(line: int, row: dict, where: str) -> str | None:
    if row["samples"] < 1:
        return f"samples is {row['samples']}; a summary needs at least one"
    bad = [c for c in SUMMARY_TIME if row[c] <= 0]
    if bad:
        return f"column {bad[0]!r} is {row[bad[0]]}; a time must be positive"
    if not row["min_s"] <= row["q1_s"] <= row["median_s"] <= row["q3_s"] <= row["max_s"]:
        return "min_s <= q1_s <= median_s <= q3_s <= max_s does not hold"
    negative = [c for c in SUMMARY_NUMBER if row[c] is not None and row[c] < 0]
    if negative:
        return f"column {negative[0]!r} is {row[negative[0]]}; must not be negative"
    try:
        parse_params(row["params"] or "")
    except ValueError as err:
        return str(err)
    return None


def parse(summary_text: str, runs_text: str, where: tuple[str, str], machine: str, stem: str,
          session: str) -> pd.DataFrame:
    """One session's summaries joined with their runs' provenance: one row per run and cell,
    ``time_s`` the run's median, params parsed into ``p_<key>`` columns (``load.param_columns``)."""
    summary_at, runs_at = where
    summaries = _rows(summary_text, summary_at, archive.SUMMARY_COLUMNS, ints=SUMMARY_INT,
                      floats=SUMMARY_TIME | SUMMARY_NUMBER, nullable=SUMMARY_NULLABLE)
    runs = _rows(runs_text, runs_at, RUN_COLUMNS, RUN_COLUMNS_V1, ints=INT_COLUMNS | {"summary_version", "run"},
                 floats=FLOAT_COLUMNS, nullable=NULLABLE_COLUMNS, bools=BOOL_COLUMNS)
    expected = {"figure_id": figure_id_for(stem), "machine": machine, "session_id": session}
    provenance: dict[int, dict] = {}
    for line, row in runs:
        wrong = next((c for c, v in expected.items() if row[c] != v), None)
        if wrong:
            raise SessionError(f"{runs_at}:{line}: {wrong} {row[wrong]!r} does not match its place "
                               f"(expected {expected[wrong]!r})")
        if not session_id_ok(session):  # the folder's name, which every row repeats: a page's URL
            raise SessionError(f"{runs_at}:{line}: session_id {session!r} is not a session id (up to 64 letters, "
                               f"digits, '.', '_' and '-', as make bench writes them)")
        if not timestamp_ok(row["timestamp_utc"]):
            raise SessionError(f"{runs_at}:{line}: timestamp_utc {row['timestamp_utc']!r} is not a UTC time of "
                               f"the form 2026-12-01T10:45:00Z")
        if row["run"] in provenance:
            raise SessionError(f"{runs_at}:{line}: run {row['run']} appears twice")
        provenance[row["run"]] = row
    seen: set[tuple] = set()
    out = []
    for line, row in summaries:
        problem = _check_summary(line, row, summary_at)
        key = tuple(row[c] for c in archive.CELL_COLUMNS)
        if problem is None and key in seen:
            problem = f"duplicate summary (run {row['run']}, variant {row['variant']!r}, params {row['params']!r})"
        if problem is None and row["run"] not in provenance:
            problem = f"run {row['run']} has no provenance in {Path(runs_at).name} (a partial session)"
        if problem:
            raise SessionError(f"{summary_at}:{line}: {problem}")
        seen.add(key)
        out.append({**provenance[row["run"]], **row})
    missing = sorted(set(provenance) - {r["run"] for r in out})
    if missing:
        raise SessionError(f"{runs_at}:2: run(s) {', '.join(map(str, missing))} have no summaries "
                           f"in {Path(summary_at).name} (a partial session)")
    return _frame(out)


def _frame(rows: list[dict]) -> pd.DataFrame:
    """The typed rows as a frame with the dtypes ``pd.DataFrame(rows)`` would infer, made column
    by column (a session has a few dozen rows and some fifty columns: inferring them row by row
    took most of a session's parse). Text as load() keeps it: object values, each distinct one
    stored once, None where empty; the statistics numeric, an all-empty one NaN as load() reads it."""
    index = pd.RangeIndex(len(rows))
    data = {col: _array([r[col] for r in rows]) for col in rows[0] if col != "summary_version"}
    for col in (*archive.STAT_COLUMNS, *archive.OPTIONAL_NUMBERS, "load_avg_1m"):
        if data[col].dtype == object:
            data[col] = pd.to_numeric(pd.Series(data[col], index=index)).to_numpy()
    data["time_s"] = data["median_s"]  # the run's median: what every table cell is made of
    data["sample"] = np.zeros(len(rows), dtype=np.int64)
    data["detail"] = np.full(len(rows), None, dtype=object)
    data.update(param_columns(pd.Series(data["params"], index=index, dtype=object)))
    # An array of objects as it is: pandas would read an array of text as strings.
    return pd.DataFrame({col: pd.Series(a, index=index, dtype=object) if a.dtype == object else a
                         for col, a in data.items()}, index=index)


_NONE = type(None)


def _array(values: list) -> np.ndarray:
    """One column's typed cells as the array pandas infers from them: bool; int64, or uint64 for
    integers past int64 that are none of them negative; float64 (NaN where empty) for numbers with
    empties or fractions; objects for text (each distinct value once), for anything mixed, and for
    integers pandas does not read as numbers (past uint64, or past int64 beside a negative one)."""
    kinds = set(map(type, values))
    if kinds == {bool}:
        return np.array(values, dtype=bool)
    ints = [v for v in values if type(v) is int] if int in kinds else []
    # The integers pandas reads as numbers: all within int64, or all within uint64.
    numbers = not ints or (min(ints) >= -2**63 and max(ints) < 2**63) or (min(ints) >= 0 and max(ints) < 2**64)
    if kinds == {int} and numbers:
        return np.array(values, dtype=np.int64 if max(ints) < 2**63 else np.uint64)
    elif kinds - {_NONE} and kinds <= {int, float, _NONE} and numbers:
        return np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    elif str in kinds and kinds <= {str, _NONE}:
        seen: dict[str, str] = {}
        values = [None if v is None else seen.setdefault(v, v) for v in values]
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


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
    code = hashlib.sha256(Path(archive.__file__).read_bytes()).hexdigest()[:16]
    return cache_dir() / "sessions" / f"{digest}-{code}.json"


def _keep_texts(stored: Path, texts: dict[str, tuple[str, str]]) -> None:
    try:
        store_bytes(stored, json.dumps(texts).encode("utf-8"))
    except OSError:
        pass


def _latest_texts(path: Path, digest: str) -> dict[str, tuple[str, str]]:
    """:func:`archive.compact_file` of a results file, kept under ``.cache/bench/sessions/`` by
    the file's sha256 and the archiver's code (most of a warm build's time would go here)."""
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
