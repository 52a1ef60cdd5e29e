"""Load a results CSV through the one validator; its error names the file and line.

One path for every reader (the site build, ``make compare``, the tools): the
file is split into records by the ``csv`` module (which knows each record's
line, even when a ``detail`` cell spans several), and every rule of the schema
is then checked column by column on the whole file at once. Of all the rows
that break a rule, the first one in the file is reported, with the first rule it
breaks in the order a reader would check them: field count, each column's
presence, type and range, the schema version, params, the figure and machine the
file's place names, and duplicates.

A kept session (``sessions.py``: a summary file and a runs file per figure) is read by
the same functions, with its own columns (:class:`Rules`) and row rules: the same
records and lines, header check, cell rules, first failure and ``file:line:`` error.
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import math
import re
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
    """A results file (or a kept session) that cannot be trusted; the message starts with ``file:line:``."""


@dataclass(frozen=True)
class Rules:
    """What the columns of one kind of file hold: the rules :func:`cell` reads a cell by. A column
    in none of ``ints``, ``floats`` and ``bools`` is text; one not ``nullable`` must not be empty."""

    ints: frozenset[str] = frozenset()
    floats: frozenset[str] = frozenset()
    bools: frozenset[str] = frozenset()
    nullable: frozenset[str] = frozenset()
    positive: frozenset[str] = frozenset()  # a time: > 0
    non_negative: frozenset[str] = frozenset()  # a count, an index, bytes: >= 0


RESULTS = Rules(INT_COLUMNS, FLOAT_COLUMNS, BOOL_COLUMNS, NULLABLE_COLUMNS, POSITIVE_COLUMNS, NON_NEGATIVE_COLUMNS)


FORMATS = (V1_COLUMNS, V2_COLUMNS, V3_COLUMNS, COLUMNS)  # a results file's headers, oldest first


def header_version(header: list[str]) -> int:
    """The schema version a header belongs to: today's, or 1, 2 or 3 (upgraded on load). Columns
    are read by name, so an older header's columns in another order are still that version."""
    found = header_format(header, FORMATS)
    return SCHEMA_VERSION if found is None or found == len(FORMATS) - 1 else found + 1


def header_format(header: list[str], formats: tuple[tuple[str, ...], ...]) -> int | None:
    """Which of ``formats`` (oldest first) ``header`` names, by name in any order; None if none."""
    if len(set(header)) == len(header):
        for i, columns in enumerate(formats):
            if len(header) == len(columns) and set(header) == set(columns):
                return i
    return None


def check_header(header: list[str], where: str, formats: tuple[tuple[str, ...], ...], name: str) -> int:
    """The format (index in ``formats``, oldest first) whose columns ``header`` names, or
    :class:`ResultsError` at ``where``:1 saying which columns it repeats, lacks or does not know
    (``name``, the newest format's: "schema version 5")."""
    found = header_format(header, formats)
    if found is not None:
        return found
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise ResultsError(f"{where}:1: column(s) {', '.join(repeated)} appear more than once in the header")
    # Missing against the format the header is closest to: a version-2 file that lost time_s
    # lacks time_s, not the columns version 3 added.
    newest = formats[-1]
    closest = min(formats, key=lambda cols: (len(set(cols) - set(header)), cols is not newest))
    missing = [c for c in closest if c not in header]
    unknown = [c for c in header if c not in newest]
    if not missing and not unknown:
        # All of an older format's columns and some, not all, of those a later one added: missing
        # against the first format that has every column it holds.
        later = next(cols for cols in formats if set(header) <= set(cols))
        missing = [c for c in later if c not in header]
    if missing:
        raise ResultsError(f"{where}:1: missing column(s) {', '.join(missing)}")
    raise ResultsError(f"{where}:1: unknown column(s) {', '.join(unknown)} ({name} has none of these)")


def _check_header(header: list[str], path: Path) -> None:
    check_header(header, str(path), FORMATS, f"schema version {SCHEMA_VERSION}")


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
    return split(text, str(path))


def split(text: str, where: str) -> _Records:
    """A CSV text's header and records, each with the line it ends on; a file with no header is
    refused at ``where``:1, a syntax error later is kept in ``broken`` (the records before it are read)."""
    lines = text.splitlines(keepends=True)
    reader = csv.reader(lines, strict=True)
    try:
        header = next(reader, None)
    except csv.Error as err:
        raise ResultsError(f"{where}:1: malformed CSV: {err}") from None
    if header is None:
        raise ResultsError(f"{where}:1: empty file")
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


def cell(col: str, text: str, rules: Rules = RESULTS) -> tuple[object, str | None]:
    """One cell of column ``col`` read by ``rules``: its value (None where empty or not a value)
    and the first rule it breaks, presence, type, then range, as the message that follows
    ``file:line:`` (None when it breaks none)."""
    if text == "":
        return None, None if col in rules.nullable else f"column {col!r} is empty"
    if col in rules.bools:
        if text not in BOOLS:
            return None, f"column {col!r} has {text!r}, not a valid true/false"
        return BOOLS[text], None
    if col not in rules.ints and col not in rules.floats:
        return text, None
    value, why = number(text, integer=col in rules.ints)
    if why == NOT_FINITE:
        return value, f"column {col!r} is {value}, not a finite number"
    if why is not None:
        return None, f"column {col!r} has {text!r}, {why}"
    if col in rules.positive and value <= 0:
        return value, f"column {col!r} is {value}; a time must be positive"
    if col in rules.non_negative and value < 0:
        return value, f"column {col!r} is {value}; must not be negative"
    return value, None


Columns = dict[str, np.ndarray]  # column -> one value a row (object arrays of text, or typed values)
SHORT = 64  # up to this many rows, a dict finds a column's distinct values quicker than pandas does


def _distinct(values: np.ndarray) -> tuple[np.ndarray, list]:
    """Each row's index into the column's distinct values, and those values in the order first
    seen. Pandas' factorize for a long column; a kept session's few rows would spend most of their
    time in its set-up."""
    if len(values) > SHORT:
        codes, uniques = pd.factorize(values, sort=False, use_na_sentinel=False)
        return codes, list(uniques)
    seen: dict[object, int] = {}
    return np.array([seen.setdefault(v, len(seen)) for v in values], dtype=np.intp), list(seen)


def _numbers(col: str, uniques: list, rules: Rules) -> list | None:
    """The values of a number column's distinct texts when every one is a number that breaks no
    rule (what :func:`cell` reads each as, without asking it once per text: a column of times holds
    as many distinct texts as rows), else None (then :func:`cell` reads each and says what is wrong)."""
    integer = col in rules.ints
    if col in rules.bools or not (integer or col in rules.floats) or not uniques:
        return None
    if not all(map((_INT if integer else _DECIMAL).fullmatch, uniques)):  # "" and nan, inf fail here
        return None
    values = list(map(int if integer else float, uniques))
    low, high = min(values), max(values)
    if integer and not INT64[0] <= low <= high <= INT64[1]:
        return None
    if not integer and not (math.isfinite(low) and math.isfinite(high)):  # 1e400
        return None
    if (col in rules.positive and low <= 0) or (col in rules.non_negative and low < 0):
        return None
    return values


def _column(col: str, texts: np.ndarray, rules: Rules = RESULTS) -> tuple[Check, np.ndarray]:
    """The rows whose cell breaks a rule (:func:`cell`), and the column's typed values.

    Each rule runs once per distinct text (a provenance column holds one or a few
    on every row) and the answer is spread back to the rows: every row is checked,
    at the cost of its distinct values."""
    codes, uniques = _distinct(texts)
    numbers = _numbers(col, uniques, rules)
    read = [(v, None) for v in numbers] if numbers is not None else [cell(col, u, rules) for u in uniques]
    why_u = [why for _, why in read]
    bad_u = np.array([why is not None for why in why_u], dtype=bool)
    check = (bad_u[codes], lambda i: why_u[codes[i]])
    empty_u = np.array([u == "" for u in uniques], dtype=bool)
    if col in rules.bools:
        typed_u = np.array([value for value, _ in read], dtype=object)
        return check, typed_u[codes] if bad_u.any() or empty_u.any() else typed_u[codes].astype(bool)
    if col not in rules.ints and col not in rules.floats:
        # Text: each distinct value once, every row holding that one object. A provenance column
        # repeats one string on thousands of rows; stored once, the frame pickles into the build
        # cache a fraction of the size and speed, and every set of its values is quicker.
        typed_u = np.empty(len(uniques), dtype=object)
        typed_u[:] = [None if u == "" and col in rules.nullable else u for u in uniques]
        return check, typed_u[codes]
    if col in rules.ints and not bad_u.any() and not empty_u.any():
        return check, np.array([v for v, _ in read], dtype=np.int64)[codes]
    return check, np.array([np.nan if v is None else float(v) for v, _ in read], dtype=float)[codes]


def _row_checks(raw: Columns, file: ResultFile, version: int, lines: list[int]) -> list[Check]:
    """What a row must agree with: the schema version, params, its file's figure and folder, the other rows."""
    readable = " and ".join(str(v) for v in READABLE_VERSIONS)
    versions = raw["schema_version"]
    expected_id = figure_id_for(file.stem)
    return [
        ((versions != str(version)) & _by_distinct(versions, _an_integer),
         lambda i: f"schema_version {versions[i]} is not one this site reads (it reads {readable}; this "
                   f"file's header is version {version}); see the format history in results/README.md"),
        params_check(raw),
        (raw["figure_id"] != expected_id,
         lambda i: f"figure_id {raw['figure_id'][i]!r} does not match the file name (expected {expected_id!r})"),
        (raw["machine"] != file.machine,
         lambda i: f"machine {raw['machine'][i]!r} does not match its folder {file.machine!r}"),
        session_id_check(raw),
        timestamp_check(raw),
        duplicate_check(raw, KEY, str(file.path), lines,
                        lambda k: f"sample (run {int(k[0])}, variant {k[1]!r}, params {k[2]!r}, sample {int(k[3])})"),
    ]


# The row rules a results file and a kept session share (on the texts, or the typed values).

def params_check(raw: Columns) -> Check:
    return (~_by_distinct(raw["params"], _params_ok),
            lambda i: f"params {raw['params'][i]!r} is not of the form key=value;key=value")


def session_id_check(raw: Columns) -> Check:
    return (~_by_distinct(raw["session_id"], session_id_ok),
            lambda i: f"session_id {raw['session_id'][i]!r} is not a session id (up to 64 letters, digits, "
                      f"'.', '_' and '-', as make bench writes them: 20261201T104500Z-3f2a)")


def timestamp_check(raw: Columns) -> Check:
    return (~_by_distinct(raw["timestamp_utc"], timestamp_ok),
            lambda i: f"timestamp_utc {raw['timestamp_utc'][i]!r} is not a UTC time of the form "
                      f"2026-12-01T10:45:00Z")


def duplicate_check(columns: Columns, key: list[str], where: str, lines: list[int],
                    what: Callable[[tuple], str]) -> Check:
    """Rows whose ``key`` columns repeat an earlier row's: "duplicate <what(key)>, first seen at
    ``where``:line"."""
    first: dict[tuple, int] = {}
    keys = list(zip(*(columns[c].tolist() for c in key)))
    earlier = [first.setdefault(k, i) for i, k in enumerate(keys)]
    return (np.array(earlier) != np.arange(len(keys)),
            lambda i: f"duplicate {what(keys[i])}, first seen at {where}:{lines[earlier[i]]}")


def _by_distinct(column: np.ndarray, rule: Callable[[object], bool]) -> np.ndarray:
    """``rule`` of every row's value, asked once per distinct value (a column of a results
    file holds a few distinct values on thousands of rows)."""
    codes, uniques = _distinct(column)
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


def _raw_columns(rec: _Records, columns: tuple[str, ...], upgrade: dict[str, str]) -> tuple[Columns, np.ndarray]:
    """The records' texts by column, in ``columns``' order (those the header lacks hold what
    ``upgrade`` says), and which records had the wrong field count."""
    width = len(rec.header)
    short = np.array([len(r) != width for r in rec.rows], dtype=bool)
    rows = rec.rows if not short.any() else [r if len(r) == width else (r + [""] * width)[:width]
                                               for r in rec.rows]
    by_name = dict(zip(rec.header, (np.array(c, dtype=object) for c in zip(*rows))))
    return {c: by_name[c] if c in by_name else np.full(len(rows), upgrade[c], dtype=object) for c in columns}, short


def frame_of(columns: Columns) -> pd.DataFrame:
    """Typed columns as a frame: numbers and flags as their arrays, anything else as objects (an
    array of text as it is: pandas would read it as strings)."""
    index = pd.RangeIndex(len(next(iter(columns.values()))))
    return pd.DataFrame({col: pd.Series(a, index=index, dtype=object) if a.dtype == object else a
                         for col, a in columns.items()}, index=index)


Records = Callable[[list[str], list[list[str]]], None]  # (header, rows) of a file that validated
RowChecks = Callable[[Columns, Columns], list[Check]]  # (texts, typed values) -> a file's row rules


def check_rows(rec: _Records, where: str, columns: tuple[str, ...], rules: Rules, row_checks: RowChecks,
               upgrade: dict[str, str] | None = None) -> Columns:
    """The typed columns of records whose header :func:`check_header` accepted, or
    :class:`ResultsError` naming ``where`` and the line of the earliest row that breaks a rule, and
    the first rule it breaks: field count, each column's cells in ``columns``' order (:func:`cell`),
    then ``row_checks``; then a CSV syntax error after the last record. ``upgrade``: what a row of an
    older header holds in the columns it lacks."""
    if not rec.rows and rec.broken is None:
        raise ResultsError(f"{where}:2: no data rows")
    if rec.broken and not rec.rows:
        raise ResultsError(f"{where}:{rec.broken}")
    raw, short = _raw_columns(rec, columns, upgrade or {})
    checks: list[Check] = [(short, lambda i: f"{len(rec.rows[i])} fields where the header has "
                                             f"{len(rec.header)} (truncated or damaged row)")]
    typed = {}
    for col in columns:
        check, typed[col] = _column(col, raw[col], rules)
        checks.append(check)
    checks += row_checks(raw, typed)
    failure = _first_failure(checks)
    if failure:
        raise ResultsError(f"{where}:{rec.lines[failure[0]]}: {failure[1]}")
    if rec.broken:
        raise ResultsError(f"{where}:{rec.broken}")
    return typed


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
    version = header_version(rec.header)
    typed = check_rows(rec, str(file.path), COLUMNS, RESULTS,
                       lambda raw, typed: _row_checks(raw, file, version, rec.lines), UPGRADES.get(version))
    if records is not None and rec.lines[-1] == len(rec.rows) + 1:  # one line per record
        records(rec.header, rec.rows)
    return frame_of(typed)  # every column typed, in schema order


def _stored(file: ResultFile, cache: Path) -> Path | None:
    """Where a validated frame of ``file`` (as its bytes are now) is kept; None if unreadable."""
    digest = hashlib.sha256(cachefile.code_version().encode())
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
