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
    quick = _split_quick(text)
    if quick is not None:
        return _Records(quick[0], quick[1:], list(range(2, len(quick) + 1)))
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


# What splits a line besides "\n" (str.splitlines), and what csv reads other than text: a file
# without any of them has one record a line, and a line without a quote is its cells split at commas.
_NOT_QUICK = ("\r", "\x00", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _split_quick(text: str) -> list[list[str]] | None:
    """Every record of ``text`` (the header first) as :func:`split` reads it, without the ``csv``
    module's reading of each character, when each line is one record: lines with no quote split at
    their commas, those with one read by ``csv`` (each a record of its own, or None). None also
    for text that holds what :data:`_NOT_QUICK` names or a line as long as csv's field limit:
    :func:`split` reads those with ``csv`` alone (and names the line of any error)."""
    if any(c in text for c in _NOT_QUICK):  # ten quick scans, quicker than one regular expression
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    if not lines or max(map(len, lines)) >= csv.field_size_limit():
        return None
    records = _cells(lines)
    quoted = [i for i, line in enumerate(lines) if '"' in line]
    if quoted:
        try:
            read = list(csv.reader([lines[i] for i in quoted], strict=True))
        except csv.Error:
            return None
        if len(read) != len(quoted):  # a quoted cell went on past its line
            return None
        for i, record in zip(quoted, read):
            records[i] = record
    return records


# The first of a results file's columns that change from sample to sample (results/README.md): those
# before it are a run's provenance, the same text on every row of a run.
_PER_SAMPLE_FROM = "variant"


def _cells(lines: list[str]) -> list[list[str]]:
    """Each line split at its commas (``line.split(",")``; a blank line ``[]``, as csv reads it). In a
    results file the cells before :data:`_PER_SAMPLE_FROM` (the header's, first line) repeat on every
    row of a run: each line is split from the right into that many cells after them and the text
    before, and each distinct text before is split once, its cells shared by the rows that hold it
    (the same values; a line with fewer commas splits into the same cells all the same)."""
    header = lines[0].split(",")
    tail = len(header) - header.index(_PER_SAMPLE_FROM) if _PER_SAMPLE_FROM in header else 0
    if tail <= 0 or len(lines) < 3:
        return [line.split(",") if line else [] for line in lines]
    heads: dict[str, list[str]] = {}
    out = []
    for line in lines:
        if not line:
            out.append([])
            continue
        parts = line.rsplit(",", tail)
        head = heads.get(parts[0])
        if head is None:
            head = heads[parts[0]] = parts[0].split(",")
        out.append(head + parts[1:])
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


def _factor(values: np.ndarray) -> tuple[np.ndarray, dict]:
    """Each row's index into the column's distinct values, and those values (in the order first
    seen) -> their index. A provenance column holds one text on every row (compared with the
    first, not hashed), a column of times a new one on every row (one dict, no lookups)."""
    seq = values.tolist()
    if seq and seq.count(seq[0]) == len(seq):  # one value on every row: compared, not hashed
        return np.zeros(len(seq), dtype=np.intp), {seq[0]: 0}
    seen = dict.fromkeys(seq)
    if len(seen) == len(seq):
        codes = np.arange(len(seq), dtype=np.intp)
    elif len(seen) == 1:
        codes = np.zeros(len(seq), dtype=np.intp)
    else:
        codes = None
    for i, value in enumerate(seen):
        seen[value] = i
    if codes is None:
        codes = np.fromiter(map(seen.__getitem__, seq), dtype=np.intp, count=len(seq))
    return codes, seen


def _distinct(values: np.ndarray) -> tuple[np.ndarray, list]:
    """Each row's index into the column's distinct values, and those values in the order first seen."""
    codes, seen = _factor(values)
    return codes, list(seen)


def _all_match(pattern: re.Pattern, texts: list[str]) -> bool:
    """Whether every text fully matches ``pattern``, asked of them joined in one match (a column of
    times holds as many distinct texts as rows) when no text holds the separator."""
    joined = "\0".join(texts)
    if joined.count("\0") != len(texts) - 1:  # a text holds the separator: one at a time
        return all(map(pattern.fullmatch, texts))
    return _JOINED[pattern].fullmatch(joined) is not None


# Each text an atomic group: a match of one is never taken apart again when a later one fails
# (else a failing column would be tried in exponentially many ways). A text that matches the pattern
# matches it greedily to its end, so the joined texts match exactly when every text does.
_JOINED = {pattern: re.compile(f"(?>{pattern.pattern})(?:\0(?>{pattern.pattern}))*") for pattern in (_INT, _DECIMAL)}


def _numbers(col: str, uniques: list, rules: Rules) -> list | None:
    """The values of a number column's distinct texts when every one is a number that breaks no
    rule (what :func:`cell` reads each as, without asking it once per text: a column of times holds
    as many distinct texts as rows), else None (then :func:`cell` reads each and says what is wrong)."""
    integer = col in rules.ints
    if col in rules.bools or not (integer or col in rules.floats) or not uniques:
        return None
    if not _all_match(_INT if integer else _DECIMAL, uniques):  # "" and nan, inf fail here
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


def _none(i: int) -> None:
    return None


def _column(col: str, texts: np.ndarray, rules: Rules = RESULTS) -> tuple[Check, np.ndarray]:
    """The rows whose cell breaks a rule (:func:`cell`), and the column's typed values.

    Each rule runs once per distinct text (a provenance column holds one or a few
    on every row) and the answer is spread back to the rows: every row is checked,
    at the cost of its distinct values."""
    codes, seen = _factor(texts)
    uniques = list(seen)
    numbers = _numbers(col, uniques, rules)
    if numbers is not None:  # every text a number that breaks no rule
        clean = (np.zeros(len(codes), dtype=bool), _none)
        return clean, np.array(numbers, dtype=np.int64 if col in rules.ints else float)[codes]
    if col not in rules.bools and col not in rules.ints and col not in rules.floats:
        # Text: each distinct value once, every row holding that one object. A provenance column
        # repeats one string on thousands of rows; stored once, the frame pickles into the build
        # cache a fraction of the size and speed, and every set of its values is quicker. The one
        # rule of text: not empty, unless the column may be.
        typed_u = np.empty(len(uniques), dtype=object)
        typed_u[:] = uniques
        bad_u = np.zeros(len(uniques), dtype=bool)
        if "" in seen:
            if col in rules.nullable:
                typed_u[seen[""]] = None
            else:
                bad_u[seen[""]] = True
        why = f"column {col!r} is empty"
        return (bad_u[codes], lambda i: why if bad_u[codes[i]] else None), typed_u[codes]
    read = [cell(col, u, rules) for u in uniques]
    why_u = [why for _, why in read]
    bad_u = np.array([why is not None for why in why_u], dtype=bool)
    check = (bad_u[codes], lambda i: why_u[codes[i]])
    empty = "" in seen
    if col in rules.bools:
        typed_u = np.array([value for value, _ in read], dtype=object)
        return check, typed_u[codes] if bad_u.any() or empty else typed_u[codes].astype(bool)
    if col in rules.ints and not bad_u.any() and not empty:
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
    keys = list(zip(*(columns[c].tolist() for c in key)))
    if len(set(keys)) == len(keys):  # none repeats (the usual file): no row to look up
        return np.zeros(len(keys), dtype=bool), _none
    first: dict[tuple, int] = {}
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
    short = np.fromiter(map(len, rec.rows), dtype=np.intp, count=len(rec.rows)) != width
    rows = rec.rows if not short.any() else [r if len(r) == width else (r + [""] * width)[:width]
                                               for r in rec.rows]
    table = np.empty((len(rows), width), dtype=object)  # one array of every cell (a list of lists
    table[:] = rows  # of one length fills it row by row); each column a view of it
    by_name = {name: table[:, j] for j, name in enumerate(rec.header)}
    return {c: by_name[c] if c in by_name else np.full(len(rows), upgrade[c], dtype=object) for c in columns}, short


def frame_of(columns: dict[str, np.ndarray | pd.Series]) -> pd.DataFrame:
    """Typed columns as a frame: numbers and flags as their arrays, anything else as objects (an
    array of text as it is: pandas would read it as strings), a Series as it is; one block per
    dtype, not one per column: every filter, slice and unpickling of the frame (each pair's table,
    chart, sessions and pages) handles a handful of arrays instead of ~60."""
    rows = len(next(iter(columns.values())))
    index = pd.RangeIndex(rows)
    texts = [c for c, a in columns.items() if isinstance(a, np.ndarray) and a.dtype == object]
    parts = []
    if texts:  # the text columns as one array, given as objects (pandas would read them as strings)
        block = np.empty((len(texts), rows), dtype=object)
        for j, col in enumerate(texts):
            block[j] = columns[col]
        parts.append(pd.DataFrame(block.T, index=index, columns=texts, dtype=object, copy=False))
    if len(texts) < len(columns):
        parts.append(pd.DataFrame({c: a for c, a in columns.items() if c not in set(texts)}, index=index))
    frame = parts[0] if len(parts) == 1 else pd.concat(parts, axis=1)
    return frame if frame.columns.tolist() == list(columns) else frame[list(columns)]


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
    return frame_of(_validated(file, records))  # every column typed, in schema order


def _validated(file: ResultFile, records: Records | None = None) -> Columns:
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
    return typed


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
    codes, seen = _factor(params.to_numpy(dtype=object))
    parsed = [parse_params(t if isinstance(t, str) else "") for t in seen]  # an empty cell reads None
    out = {}
    for key in sorted({k for p in parsed for k in p}):
        values = np.empty(len(parsed), dtype=object)
        values[:] = [p.get(key) for p in parsed]
        out[f"p_{key}"] = pd.Series(values[codes], index=params.index)  # text, as pandas reads it
    return out


def _load(file: ResultFile, records: Records | None = None) -> pd.DataFrame:
    columns: dict[str, np.ndarray | pd.Series] = dict(_validated(file, records))
    columns.update(param_columns(pd.Series(columns["params"], dtype=object)))
    return frame_of(columns)
