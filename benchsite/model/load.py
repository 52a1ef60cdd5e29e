"""Load a results CSV through the one validator; its error names the file and line.

One path for every reader (the site build, ``make compare``, the tools): the
file is split into records by the ``csv`` module (which knows each record's
line, even when a ``detail`` cell spans several), and every rule of the schema
is then checked column by column on the whole file at once. Of all the rows
that break a rule, the first one in the file is reported, with the first rule it
breaks in the order a reader would check them: field count, each column's
presence, type and range, the schema version, params, the figure and machine the
file's place names, and duplicates.
"""

from __future__ import annotations

import csv
import datetime
import functools
import hashlib
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchkit import archive
from benchkit.layout import ResultFile, discover
from benchkit.provenance import LABEL_RE
from benchkit.schema import (
    BOOL_COLUMNS,
    COLUMNS,
    FLOAT_COLUMNS,
    INT_COLUMNS,
    NULLABLE_COLUMNS,
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    V1_MISSING,
    V2_MISSING,
    V3_MISSING,
    figure_id_for,
    parse_params,
)
from benchsite.core import cachefile

__all__ = ["ResultFile", "ResultsError", "discover", "header_version", "load"]

POSITIVE_COLUMNS = frozenset({"time_s"})
NON_NEGATIVE_COLUMNS = frozenset({"max_rel_error", "bytes_moved", "flops", "size_bytes", "calls",
                                  "compiles", "run", "sample", "device_count", "cpu_count"})
V3_COLUMNS = tuple(c for c in COLUMNS if c not in V3_MISSING)
V1_COLUMNS = tuple(c for c in V3_COLUMNS if c not in V1_MISSING)
V2_COLUMNS = tuple(c for c in V3_COLUMNS if c not in V2_MISSING)
# older header -> what its rows read in the columns added since
UPGRADES = {1: {**V1_MISSING, **V3_MISSING}, 2: {**V2_MISSING, **V3_MISSING}, 3: V3_MISSING}
INT_PATTERN = r"[+-]?[0-9]+"
_INT = re.compile(INT_PATTERN)
# A number as the writers write it (benchkit.results: str of an int, repr of a float; archive: repr):
# ASCII digits, sign, point and exponent only. float() and int() also read "1_000", " 12", "١٢"
# and "0x", which no writer writes; the one rule (:func:`number`) refuses them in results files and
# kept sessions alike. nan and inf are read, then refused as not finite.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NOT_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
INT64 = (-2**63, 2**63 - 1)  # what an integer column holds (numpy int64): a count, an index, bytes
BOOLS = {"true": True, "false": False}
KEY = ["run", "variant", "params", "sample"]  # one sample; a second row with the same key is a duplicate
# When a run's process started, as the harness writes it (provenance.utc_now): the site shows its
# day, and the run-order chapter reads it as a time.
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


class ResultsError(ValueError):
    """A results file that cannot be trusted; the message starts with ``file:line:``."""


def header_version(header: list[str]) -> int:
    """The schema version a header belongs to: today's, or 1, 2 or 3 (upgraded on load). Columns
    are read by name, so an older header's columns in another order are still that version."""
    if len(set(header)) == len(header):
        for version, columns in ((1, V1_COLUMNS), (2, V2_COLUMNS), (3, V3_COLUMNS)):
            if len(header) == len(columns) and set(header) == set(columns):
                return version
    return SCHEMA_VERSION


def _check_header(header: list[str], path: Path) -> None:
    if header_version(header) in UPGRADES:
        return
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise ResultsError(f"{path}:1: column(s) {', '.join(repeated)} appear more than once in the header")
    # Missing against the version the header is closest to: a version-2 file that lost time_s
    # lacks time_s, not the columns version 3 added.
    closest = min((V1_COLUMNS, V2_COLUMNS, V3_COLUMNS, COLUMNS),
                  key=lambda cols: (len(set(cols) - set(header)), cols is not COLUMNS))
    missing = [c for c in closest if c not in header]
    unknown = [c for c in header if c not in COLUMNS]
    if not missing and not unknown:
        # All of an older version's columns and some, not all, of those a later one added: missing
        # against the first version that has every column it holds.
        later = next(cols for cols in (V1_COLUMNS, V2_COLUMNS, V3_COLUMNS, COLUMNS) if set(header) <= set(cols))
        missing = [c for c in later if c not in header]
    if missing:
        raise ResultsError(f"{path}:1: missing column(s) {', '.join(missing)}")
    if unknown:
        raise ResultsError(f"{path}:1: unknown column(s) {', '.join(unknown)} "
                           f"(schema version {SCHEMA_VERSION} has none of these)")


@dataclass
class _Records:
    header: list[str]
    rows: list[list[str]]
    lines: list[int]  # the line each record ends on (what a reader sees in an editor)
    broken: str | None = None  # a CSV syntax error after the last good record ("line: message")


def _split(path: Path) -> _Records:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ResultsError(f"{path}:1: cannot read: {err}") from None
    lines = text.splitlines(keepends=True)
    reader = csv.reader(lines, strict=True)
    try:
        header = next(reader, None)
    except csv.Error as err:
        raise ResultsError(f"{path}:1: malformed CSV: {err}") from None
    if header is None:
        raise ResultsError(f"{path}:1: empty file")
    try:
        rows = list(reader)
    except csv.Error:
        rows = None  # read again below, record by record, to find the line it fails on
    if rows is not None and len(rows) == len(lines) - 1:
        # One line per record (no cell spans lines): record i ends on line i + 2.
        return _Records(header, rows, list(range(2, len(rows) + 2)))
    out = _Records(header, [], [])
    reader = csv.reader(lines, strict=True)
    next(reader)
    try:
        for record in reader:
            out.rows.append(record)
            out.lines.append(reader.line_num)
    except csv.Error as err:
        # Named by the line its record starts on: a quote left open there reads on until the
        # field grows past csv's limit or the file ends, many lines later.
        start = out.lines[-1] + 1 if out.lines else 2
        read_to = f" (read on to line {reader.line_num})" if reader.line_num > start else ""
        out.broken = f"{start}: malformed CSV in the record that starts here{read_to}: {err}"
    return out


Check = tuple[np.ndarray, Callable[[int], str]]  # rows that break a rule, and the message for one of them


NOT_FINITE = "not finite"


def number(text: str, integer: bool) -> tuple[float | int | None, str | None]:
    """One cell's number, or why it is not one (``None`` value for an empty cell): the one rule
    for the numbers of a results file (:func:`validate`) and of a kept session (``sessions.py``).
    ``why`` completes "column 'calls' has '1.5', ..."; :data:`NOT_FINITE` comes with the value."""
    if text == "":
        return None, None
    if integer:
        if not _INT.fullmatch(text):
            return None, "not a valid integer"
        value = int(text)
        if not INT64[0] <= value <= INT64[1]:  # numpy's int64 would raise OverflowError, naming no file
            return None, "not a valid integer (beyond the 64-bit range)"
        return value, None
    if _NOT_FINITE.fullmatch(text):
        return float(text), NOT_FINITE  # nan and inf parse, but are no measurement
    if not _DECIMAL.fullmatch(text):
        return None, "not a valid number"
    value = float(text)
    if not math.isfinite(value):  # 1e400
        return value, NOT_FINITE
    return value, None


def _column(col: str, texts: pd.Series) -> tuple[list[Check], pd.Series]:
    """Presence, type and range of one column, in that order, and its typed values.

    Each rule runs once per distinct text (a provenance column holds one or a few
    on every row) and the answer is spread back to the rows: every row is checked,
    at the cost of its distinct values."""
    codes, uniques = pd.factorize(texts.to_numpy(dtype=object), sort=False)
    empty_u = np.array([u == "" for u in uniques], dtype=bool)
    checks: list[Check] = []
    if col not in NULLABLE_COLUMNS:
        checks.append((empty_u[codes], lambda i: f"column {col!r} is empty"))
    if col in BOOL_COLUMNS:
        bad_u = np.array([u != "" and u not in BOOLS for u in uniques], dtype=bool)
        checks.append((bad_u[codes], lambda i: f"column {col!r} has {texts.iat[i]!r}, not a valid true/false"))
        typed_u = np.array([BOOLS.get(u) for u in uniques], dtype=object)
        typed = typed_u[codes] if bad_u.any() or empty_u.any() else typed_u[codes].astype(bool)
        return checks, pd.Series(typed, index=texts.index)
    if col not in INT_COLUMNS | FLOAT_COLUMNS:
        # Text: each distinct value once, every row holding that one object. A provenance column
        # repeats one string on thousands of rows; stored once, the frame pickles into the build
        # cache a fraction of the size and speed, and every set of its values is quicker.
        typed_u = np.array([None if u == "" and col in NULLABLE_COLUMNS else u for u in uniques], dtype=object)
        return checks, pd.Series(typed_u[codes], index=texts.index, dtype=object)
    integer = col in INT_COLUMNS
    parsed = [number(u, integer) for u in uniques]
    why_u = [why for _, why in parsed]
    bad_u = np.array([why is not None and why != NOT_FINITE for why in why_u], dtype=bool)
    checks.append((bad_u[codes], lambda i: f"column {col!r} has {texts.iat[i]!r}, {why_u[codes[i]]}"))
    if not integer:
        infinite_u = np.array([why == NOT_FINITE for why in why_u], dtype=bool)
        checks.append((infinite_u[codes],
                       lambda i: f"column {col!r} is {float(texts.iat[i])}, not a finite number"))
    numbers_u = np.array([np.nan if v is None else float(v) for v, _ in parsed], dtype=float)
    shown = (lambda i: int(texts.iat[i])) if integer else (lambda i: float(texts.iat[i]))
    with np.errstate(invalid="ignore"):
        if col in POSITIVE_COLUMNS:
            checks.append(((numbers_u <= 0)[codes], lambda i: f"column {col!r} is {shown(i)}; a time must be positive"))
        if col in NON_NEGATIVE_COLUMNS:
            checks.append(((numbers_u < 0)[codes], lambda i: f"column {col!r} is {shown(i)}; must not be negative"))
    if integer and not empty_u.any() and not bad_u.any():
        return checks, pd.Series(np.array([v for v, _ in parsed], dtype=np.int64)[codes], index=texts.index)
    return checks, pd.Series(numbers_u[codes], index=texts.index)


def _row_checks(raw: pd.DataFrame, file: ResultFile, version: int, lines: list[int]) -> list[Check]:
    """What a row must agree with: the schema version, params, its file's figure and folder, the other rows."""
    readable = " and ".join(str(v) for v in READABLE_VERSIONS)
    versions = raw["schema_version"]
    repeated = raw.duplicated(KEY, keep="first")
    first_seen, duplicate = ~repeated, repeated.to_numpy()

    def dup_message(i: int) -> str:
        key = tuple(raw.iloc[i][KEY])
        earlier = int(np.flatnonzero(first_seen & (raw[KEY] == raw.iloc[i][KEY]).all(axis=1))[0])
        return (f"duplicate sample (run {int(key[0])}, variant {key[1]!r}, params {key[2]!r}, "
                f"sample {int(key[3])}), first seen at {file.path}:{lines[earlier]}")

    expected_id = figure_id_for(file.stem)
    return [
        (versions.ne(str(version)).to_numpy() & _by_distinct(versions, _an_integer),
         lambda i: f"schema_version {versions.iat[i]} is not one this site reads (it reads {readable}; this "
                   f"file's header is version {version}); see the format history in results/README.md"),
        (~_by_distinct(raw["params"], _params_ok),
         lambda i: f"params {raw['params'].iat[i]!r} is not of the form key=value;key=value"),
        (raw["figure_id"].ne(expected_id).to_numpy(),
         lambda i: f"figure_id {raw['figure_id'].iat[i]!r} does not match the file name (expected {expected_id!r})"),
        (raw["machine"].ne(file.machine).to_numpy(),
         lambda i: f"machine {raw['machine'].iat[i]!r} does not match its folder {file.machine!r}"),
        (~_by_distinct(raw["session_id"], session_id_ok),
         lambda i: f"session_id {raw['session_id'].iat[i]!r} is not a session id (up to 64 letters, digits, '.', "
                   f"'_' and '-', as make bench writes them: 20261201T104500Z-3f2a)"),
        (~_by_distinct(raw["timestamp_utc"], timestamp_ok),
         lambda i: f"timestamp_utc {raw['timestamp_utc'].iat[i]!r} is not a UTC time of the form "
                   f"2026-12-01T10:45:00Z"),
        (duplicate, dup_message),
    ]


def _by_distinct(column: pd.Series, rule: Callable[[object], bool]) -> np.ndarray:
    """``rule`` of every row's value, asked once per distinct value (a column of a results
    file holds a few distinct values on thousands of rows)."""
    codes, uniques = pd.factorize(column.to_numpy(dtype=object), use_na_sentinel=False)
    return np.array([rule(u) for u in uniques], dtype=bool)[codes]


def _an_integer(value: object) -> bool:
    # As ``Series.str.fullmatch`` read as booleans: a value that is not text counts as a match.
    return not isinstance(value, str) or _INT.fullmatch(value) is not None


def session_id_ok(text: str) -> bool:
    """A session id names a folder of kept sessions (``archive.SESSION_RE``, the rule the runner
    keeps them by) and a page's URL (/bench/<fig>/<machine>/<session>/): one path segment.
    make bench writes ``20261201T104500Z-3f2a``; a version-1 file reads ``unknown``."""
    return archive.SESSION_RE.fullmatch(text) is not None


def timestamp_ok(text: str) -> bool:
    if not _TIMESTAMP.fullmatch(text):  # strptime alone takes single digits and spaces
        return False
    try:
        datetime.datetime.strptime(text, TIMESTAMP_FORMAT)
    except ValueError:  # a day or an hour that does not exist
        return False
    return True


def _params_ok(text: str) -> bool:
    try:
        parse_params(text)
    except ValueError:
        return False
    return True


def _first_failure(checks: list[Check]) -> tuple[int, str] | None:
    """The earliest row that breaks any rule, with the first rule (in ``checks`` order) it breaks."""
    best: tuple[int, int] | None = None
    for order, (mask, _) in enumerate(checks):
        hits = np.flatnonzero(mask)
        if hits.size and (best is None or hits[0] < best[0]):
            best = (int(hits[0]), order)
    return None if best is None else (best[0], checks[best[1]][1](best[0]))


def _raw_frame(rec: _Records, version: int) -> tuple[pd.DataFrame, np.ndarray]:
    """The records as a frame of strings in schema order, and which had the wrong field count."""
    width = len(rec.header)
    short = np.array([len(r) != width for r in rec.rows], dtype=bool)
    rows = rec.rows if not short.any() else [r if len(r) == width else (r + [""] * width)[:width]
                                               for r in rec.rows]
    raw = pd.DataFrame(dict(zip(rec.header, (np.array(c, dtype=object) for c in zip(*rows)))), dtype=object) \
        if rows else pd.DataFrame(columns=rec.header, dtype=object)
    if version in UPGRADES:
        raw = raw.assign(**UPGRADES[version])
    return raw[list(COLUMNS)], short


Records = Callable[[list[str], list[list[str]]], None]  # (header, rows) of a file that validated


def validate(file: ResultFile, records: Records | None = None) -> pd.DataFrame:
    """The typed rows of one results file, or :class:`ResultsError` at the first bad line.
    ``records``, if given, is called with the file's header and rows of text once they have
    validated (the site compacts its latest session from them without reading the file again),
    when every record is on one line: then they are the records ``archive.read_raw`` reads. A
    cell that spans lines can read differently there (this reads with universal newlines, so a
    quoted ``\r\n`` is ``\n`` here), and such a file is left to ``read_raw``."""
    if not LABEL_RE.match(file.machine):
        raise ResultsError(f"{file.path}:1: folder name {file.machine!r} is not a machine label "
                           "(lower-case letters, digits, '.', '_' and '-')")
    rec = _split(file.path)
    _check_header(rec.header, file.path)
    if not rec.rows and rec.broken is None:
        raise ResultsError(f"{file.path}:2: no data rows")
    version = header_version(rec.header)
    if rec.rows:
        raw, short = _raw_frame(rec, version)
        checks: list[Check] = [(short, lambda i: f"{len(rec.rows[i])} fields where the header has "
                                                 f"{len(rec.header)} (truncated or damaged row)")]
        typed = {}
        for col in COLUMNS:
            col_checks, typed[col] = _column(col, raw[col])
            checks += col_checks
        checks += _row_checks(raw, file, version, rec.lines)
        failure = _first_failure(checks)
        if failure:
            raise ResultsError(f"{file.path}:{rec.lines[failure[0]]}: {failure[1]}")
    if rec.broken:
        raise ResultsError(f"{file.path}:{rec.broken}")
    if records is not None and rec.lines[-1] == len(rec.rows) + 1:  # one line per record
        records(rec.header, rec.rows)
    return pd.DataFrame(typed, index=raw.index)  # every column typed, in schema order (raw's)


def code_digest() -> str:
    """:func:`_code_version` as text: what a cached frame depends on besides its file."""
    return _code_version().hex()


@functools.cache
def _code_version() -> bytes:
    """What a validated frame (or a refusal) depends on besides the file: this module, the schema,
    the machine-label rule (provenance), the session-id rule (archive), the cache format, pandas
    and numpy."""
    from benchkit import provenance, schema

    blob = b"".join(Path(m.__file__).read_bytes()
                    for m in (sys.modules[__name__], schema, provenance, archive, cachefile))
    blob += f"{pd.__version__}\0{np.__version__}".encode()
    return hashlib.sha256(blob).digest()


def _stored(file: ResultFile, cache: Path) -> Path | None:
    """Where a validated frame of ``file`` (as its bytes are now) is kept; None if unreadable."""
    digest = hashlib.sha256(_code_version())
    digest.update(f"{file.machine}\0{file.stem}\0".encode())
    try:
        digest.update(cachefile.file_digest(file.path, cache).encode())
    except OSError:
        return None  # the loader names the problem
    return cache / f"{digest.hexdigest()}.pkl"


def load(file: ResultFile, cache: Path | None = None, records: Records | None = None) -> pd.DataFrame:
    """One validated results file as a DataFrame with parsed params as ``p_<key>`` columns.

    Raises :class:`ResultsError` naming the file and line of the first problem. With
    ``cache`` (a folder), a file already validated, byte for byte, with this code is
    read back from there instead (parsing and checking is most of a warm build's load),
    and so is the error of a file already refused. ``records``: see :func:`validate` (not
    called when the frame is read back).
    """
    stored = _stored(file, cache) if cache is not None else None
    if stored is None:
        return _load(file, records)
    found = cachefile.read(stored)
    if isinstance(found, pd.DataFrame):
        return found
    try:
        frame = _load(file, records)
    except ResultsError as err:
        cachefile.write(_error_file(stored, file), str(err))
        raise
    cachefile.write(stored, frame)
    return frame


def _error_file(stored: Path, file: ResultFile) -> Path:
    # The message names the file's path: the same bytes elsewhere are another entry.
    return stored.with_name(hashlib.sha256(f"{stored.name}\0{file.path}".encode()).hexdigest() + ".err")


def known(file: ResultFile, cache: Path) -> str | None:
    """What an earlier build found in ``file`` as its bytes are now, without reading the frame:
    ``""`` when it validated (:func:`load` reads it back), its error message when it did not,
    None when no build has looked at these bytes with this code."""
    stored = _stored(file, cache)
    if stored is None:
        return None
    if stored.is_file():
        return ""
    error = cachefile.read(_error_file(stored, file))
    return error if isinstance(error, str) else None


def param_columns(params: pd.Series) -> dict[str, pd.Series]:
    """``p_<key>`` -> that key's value on each row (None where a row's params lack it), for
    every key of the ``params`` texts: what a figure groups rows by. Each distinct text is
    parsed once."""
    text = params.fillna("")
    parsed_texts = {t: parse_params(t or "") for t in text.unique()}
    parsed = text.map(parsed_texts)
    return {f"p_{key}": parsed.map(lambda p, k=key: p.get(k))
            for key in sorted({k for p in parsed_texts.values() for k in p})}


def _load(file: ResultFile, records: Records | None = None) -> pd.DataFrame:
    frame = validate(file, records)
    for col, values in param_columns(frame["params"]).items():
        frame[col] = values
    # One block per dtype, not one per column: every filter, slice and unpickling of this frame
    # (each pair's table, chart, sessions and pages) handles a handful of arrays instead of ~60.
    return frame.copy()
