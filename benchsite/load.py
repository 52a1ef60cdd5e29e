"""Load results CSVs, validating every row; errors name the file and line."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from harness.provenance import LABEL_RE
from harness.schema import (
    BOOL_COLUMNS,
    COLUMNS,
    FLOAT_COLUMNS,
    INT_COLUMNS,
    NULLABLE_COLUMNS,
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    V1_MISSING,
    figure_id_for,
    parse_params,
)

POSITIVE_COLUMNS = frozenset({"time_s"})
NON_NEGATIVE_COLUMNS = frozenset({"max_rel_error", "bytes_moved", "flops", "size_bytes", "calls",
                                  "compiles", "run", "sample", "device_count", "cpu_count"})


class ResultsError(ValueError):
    """A results file that cannot be trusted; the message starts with ``file:line:``."""


@dataclass(frozen=True)
class ResultFile:
    machine: str
    stem: str
    path: Path


def discover(results: Path) -> list[ResultFile]:
    """Every ``results/<machine>/<stem>.csv``, sorted."""
    if not results.is_dir():
        return []
    return [ResultFile(p.parent.name, p.stem, p) for p in sorted(results.glob("*/*.csv"))]


def _convert(column: str, text: str, where: str) -> object:
    if text == "":
        if column in NULLABLE_COLUMNS:
            return None
        raise ResultsError(f"{where}: column {column!r} is empty")
    try:
        if column in INT_COLUMNS:
            value: object = int(text)
        elif column in FLOAT_COLUMNS:
            value = float(text)
        elif column in BOOL_COLUMNS:
            value = {"true": True, "false": False}[text]
        else:
            return text
    except (ValueError, KeyError):
        kind = "integer" if column in INT_COLUMNS else "number" if column in FLOAT_COLUMNS else "true/false"
        raise ResultsError(f"{where}: column {column!r} has {text!r}, not a valid {kind}") from None
    return _check_range(column, value, where)


def _check_range(column: str, value: object, where: str) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        raise ResultsError(f"{where}: column {column!r} is {value}, not a finite number")
    if column in POSITIVE_COLUMNS and value <= 0:  # type: ignore[operator]
        raise ResultsError(f"{where}: column {column!r} is {value}; a time must be positive")
    if column in NON_NEGATIVE_COLUMNS and value < 0:  # type: ignore[operator]
        raise ResultsError(f"{where}: column {column!r} is {value}; must not be negative")
    return value


V1_COLUMNS = tuple(c for c in COLUMNS if c not in V1_MISSING)


def header_version(header: list[str]) -> int:
    """The schema version a header belongs to: 2 (today's) or 1 (upgraded on load)."""
    return 1 if list(header) == list(V1_COLUMNS) else SCHEMA_VERSION


def _check_header(header: list[str], path: Path) -> None:
    if header_version(header) == 1:
        return
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise ResultsError(f"{path}:1: missing column(s) {', '.join(missing)}")
    unknown = [c for c in header if c not in COLUMNS]
    if unknown:
        raise ResultsError(f"{path}:1: unknown column(s) {', '.join(unknown)} "
                           f"(schema version {SCHEMA_VERSION} has none of these)")


def _check_row(row: dict[str, object], where: str, expect: ResultFile | None, version: int) -> None:
    if row["schema_version"] != version:
        readable = " and ".join(str(v) for v in READABLE_VERSIONS)
        raise ResultsError(f"{where}: schema_version {row['schema_version']} is not one this "
                           f"site reads (it reads {readable}; this file's header is version {version}); "
                           "see the format history in results/README.md")
    try:
        parse_params(str(row["params"] or ""))
    except ValueError as err:
        raise ResultsError(f"{where}: {err}") from None
    if expect and row["figure_id"] != figure_id_for(expect.stem):
        raise ResultsError(f"{where}: figure_id {row['figure_id']!r} does not match the file name "
                           f"(expected {figure_id_for(expect.stem)!r})")
    if expect and row["machine"] != expect.machine:
        raise ResultsError(f"{where}: machine {row['machine']!r} does not match its folder "
                           f"{expect.machine!r}")


def read_validated(path: Path, expect: ResultFile | None = None) -> list[dict[str, object]]:
    """Rows of ``path`` as typed dicts, or :class:`ResultsError` at the first bad line."""
    if expect and not LABEL_RE.match(expect.machine):
        raise ResultsError(f"{path}:1: folder name {expect.machine!r} is not a machine label "
                           "(lower-case letters, digits, '.', '_' and '-')")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ResultsError(f"{path}:1: cannot read: {err}") from None
    reader = csv.reader(text.splitlines(keepends=True), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise ResultsError(f"{path}:1: empty file")
        _check_header(header, path)
        rows, seen = [], {}
        for record in reader:
            rows.append(_parse_record(record, header, f"{path}:{reader.line_num}", expect, seen))
    except csv.Error as err:
        raise ResultsError(f"{path}:{reader.line_num}: malformed CSV: {err}") from None
    if not rows:
        raise ResultsError(f"{path}:2: no data rows")
    return rows


def _parse_record(record: list[str], header: list[str], where: str, expect: ResultFile | None,
                  seen: dict[tuple, str]) -> dict[str, object]:
    if len(record) != len(header):
        raise ResultsError(f"{where}: {len(record)} fields where the header has {len(header)} "
                           "(truncated or damaged row)")
    version = header_version(header)
    texts = dict(zip(header, record))
    if version == 1:
        texts |= V1_MISSING
    row = {col: _convert(col, texts[col], where) for col in COLUMNS}
    _check_row(row, where, expect, version)
    key = (row["run"], row["variant"], row["params"], row["sample"])
    if key in seen:
        raise ResultsError(f"{where}: duplicate sample (run {key[0]}, variant {key[1]!r}, "
                           f"params {key[2]!r}, sample {key[3]}), first seen at {seen[key]}")
    seen[key] = where
    return row


def _fast_frame(file: ResultFile) -> pd.DataFrame | None:
    """Vectorised load and checks; ``None`` when anything looks wrong, so that the
    row-by-row reader can name the exact line."""
    try:
        raw = pd.read_csv(file.path, dtype=str, keep_default_na=False, na_filter=False,
                          engine="c", on_bad_lines="error", encoding="utf-8")
    except (ValueError, OSError, pd.errors.ParserError, UnicodeDecodeError):
        return None
    version = header_version(list(raw.columns))
    if version == 1:
        raw = raw.assign(**V1_MISSING)[list(COLUMNS)]
    if list(raw.columns) != list(COLUMNS) or raw.empty or raw.isna().any().any():
        return None
    frame = raw.copy()
    for col in INT_COLUMNS | FLOAT_COLUMNS:
        frame[col] = pd.to_numeric(raw[col].replace("", None), errors="coerce")
        if frame[col].isna().ne(raw[col].eq("")).any():
            return None
    for col in BOOL_COLUMNS:
        frame[col] = raw[col].map({"true": True, "false": False})
    ok = (frame[list(BOOL_COLUMNS)].notna().all().all()
          and (raw[[c for c in COLUMNS if c not in NULLABLE_COLUMNS]] != "").all().all()
          and (frame["schema_version"] == version).all()
          and (frame["time_s"] > 0).all() and all(_finite(frame[c]) for c in FLOAT_COLUMNS)
          and all((frame[c].dropna() >= 0).all() for c in NON_NEGATIVE_COLUMNS)
          and (frame["figure_id"] == figure_id_for(file.stem)).all()
          and (frame["machine"] == file.machine).all()
          and not frame.duplicated(["run", "variant", "params", "sample"]).any())
    if not ok or not _params_parse(raw["params"]):
        return None
    for col in NULLABLE_COLUMNS - FLOAT_COLUMNS:
        frame[col] = frame[col].replace("", None)
    return frame


def _params_parse(values: pd.Series) -> bool:
    try:
        values.map(parse_params)
    except ValueError:
        return False
    return True


def _finite(values: pd.Series) -> bool:
    present = values.dropna()
    return bool(present.map(math.isfinite).all())


def load(file: ResultFile) -> pd.DataFrame:
    """One validated results file as a DataFrame with parsed params as ``p_<key>`` columns.

    Raises :class:`ResultsError` naming the file and line of the first problem.
    """
    frame = _fast_frame(file) if LABEL_RE.match(file.machine) else None
    if frame is None:
        rows = read_validated(file.path, file)  # raises with file:line if bad
        frame = pd.DataFrame(rows, columns=list(COLUMNS))
    params = frame["params"].fillna("").map(parse_params)  # checked above
    for key in sorted({k for p in params for k in p}):
        frame[f"p_{key}"] = params.map(lambda p, k=key: p.get(k))
    return frame
