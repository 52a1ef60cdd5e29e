"""A kept session's two files judged by the results file's validator (``load.py``): the summaries
and the runs' provenance, each cell typed by ``load``'s rules and each row checked, then joined into
one frame of one row per run and cell (``time_s`` the run's median). A damaged or partial session is
refused with ``file:line`` (:class:`SessionError`). ``sessions.py`` makes each session's table model
from the frame; the texts come from ``Catalog.session_texts``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
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
from benchsite.model import load
from benchsite.model.catalog import read_kept
from benchsite.model.load import param_columns

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
    files = ((summary_text, summary_at, (archive.SUMMARY_COLUMNS,), SUMMARY_RULES, _summary_checks(summary_at)),
             (runs_text, runs_at, (RUN_COLUMNS_V1, RUN_COLUMNS), RUNS_RULES,
              _runs_checks(runs_at, machine, stem, session)))
    read = []
    try:  # the summaries, then the runs: the first error of the first file is the one reported
        for text, at, formats, rules, checks in files:
            read.append(_read(text, at, formats, rules, checks))
    except load.ResultsError as err:
        raise SessionError(str(err)) from None
    (summaries, summary_lines), (runs, runs_lines) = read
    # Between the two files: every run has its provenance and its summaries (a partial session not).
    alone = np.flatnonzero(~np.isin(summaries["run"], runs["run"]))
    if alone.size:
        raise SessionError(f"{summary_at}:{summary_lines[alone[0]]}: run {summaries['run'][alone[0]]} has "
                           f"no provenance in {Path(runs_at).name} (a partial session)")
    bare = np.flatnonzero(~np.isin(runs["run"], summaries["run"]))
    if bare.size:
        raise SessionError(f"{runs_at}:{runs_lines[bare[0]]}: run(s) {', '.join(str(r) for r in runs['run'][bare])} "
                           f"have no summaries in {Path(summary_at).name} (a partial session)")
    # Each summary with its run's provenance (the runs file's columns, then the summary's), typed
    # as ``load`` types the same columns of a results file; ``time_s`` the run's median.
    at = pd.Index(runs["run"]).get_indexer(summaries["run"])
    data = {col: summaries[col] if col in summaries else runs[col][at]
            for col in (*RUN_COLUMNS, *archive.SUMMARY_COLUMNS) if col != "summary_version"}
    return _framed(data, len(at))


def _framed(data: dict, rows: int) -> pd.DataFrame:
    """A session's columns (``data``: the runs' provenance and the summaries' numbers, ``rows`` a
    cell each) as the frame :func:`parse` gives: ``time_s`` the run's median, what every table cell
    is made of, and the ``params`` split into their columns as ``load`` splits them."""
    data["time_s"] = data["median_s"]
    data["sample"] = np.zeros(rows, dtype=np.int64)
    data["detail"] = np.full(rows, None, dtype=object)
    frame = load.frame_of(data)
    for col, values in param_columns(frame["params"]).items():
        frame[col] = values
    return frame


_MOST_CODES = 2 ** 62  # below int64's largest


def from_results(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Session id -> the frame :func:`parse` gives of the summaries ``archive`` keeps of that session,
    made from a results file's validated frame (``load.load``) without writing them as text: each
    run's cells summarised by the same arithmetic (``archive.cell_stats``), each run's provenance
    its first row's (as ``archive.compact`` keeps it), typed as ``load`` types those columns. So a
    session's pages show the same values while the results file holds it and once it is kept.
    Empty for a format-1 file, which records no session."""
    if frame.empty or int(frame["schema_version"].iloc[0]) == 1:
        return {}
    # Each row's cell (session, then archive.CELL_COLUMNS) as one number, cells numbered in the
    # order the file first shows them, as archive.compact keeps them.
    codes = np.zeros(len(frame), dtype=np.int64)
    span = 1  # how many values the codes can take
    for col in ("session_id", *archive.CELL_COLUMNS):
        column, uniques = pd.factorize(frame[col].to_numpy(), use_na_sentinel=False)
        if span * max(len(uniques), 1) >= _MOST_CODES:  # renumbered first: no overflow, however many
            codes, seen = pd.factorize(codes)
            span = len(seen)
        codes = codes * len(uniques) + column
        span *= max(len(uniques), 1)
    _, first, cell = np.unique(codes, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    cell = rank[cell]  # cells numbered by first appearance
    order = np.argsort(cell, kind="stable")  # rows cell by cell, each cell's in the file's order
    firsts = np.sort(first)
    ends = np.cumsum(np.bincount(cell))
    starts = ends - np.bincount(cell)
    times = frame["time_s"].to_numpy(dtype=float)[order].tolist()
    calls = frame["calls"].to_numpy(dtype=float)[order].tolist()
    hits = np.add.reduceat(np.nan_to_num(frame["cache_hits"].to_numpy(dtype=float)[order]), starts)  # empty: none
    present = [_present(frame[c].to_numpy(dtype=float)[order]) for c in archive.MEDIAN_COLUMNS]
    stats = [archive.cell_stats(times[a:b], calls[a:b], int(h), [p(a, b) for p in present])
             for a, b, h in zip(starts.tolist(), ends.tolist(), hits.tolist())]
    sessions = frame["session_id"].to_numpy()[firsts]
    out = {}
    for session in dict.fromkeys(sessions.tolist()):
        mine = np.flatnonzero(sessions == session)
        out[session] = _session_frame(frame, firsts[mine].tolist(), [stats[i] for i in mine])
    return out


def _present(values: np.ndarray) -> Callable[[int, int], list[float]]:
    """The values of rows ``a:b`` that are not empty (NaN), as a list: for a column with none empty
    or none present, without looking at each value."""
    empty = np.isnan(values)
    listed = values.tolist()
    if not empty.any():
        return lambda a, b: listed[a:b]
    if empty.all():
        return lambda a, b: []
    return lambda a, b: [v for v, e in zip(listed[a:b], empty[a:b].tolist()) if not e]


_STAT_NAMES = (*archive.STAT_COLUMNS, *archive.OPTIONAL_NUMBERS)  # the order of archive.cell_stats' numbers


def _session_frame(frame: pd.DataFrame, firsts: list[int], stats: list[list]) -> pd.DataFrame:
    """:func:`parse`'s frame of one session: a row per cell (``firsts``: the cell's first row of the
    results frame; ``stats``: its numbers), with its run's provenance from the run's first row."""
    runs = frame["run"].to_numpy()
    first_of_run: dict[int, int] = {}
    for i in firsts:  # a cell's first row comes no earlier than its run's first row
        first_of_run.setdefault(runs[i], i)
    cell_rows = np.array(firsts)
    run_rows = np.array([first_of_run[r] for r in runs[cell_rows]])
    typed = dict(zip(_STAT_NAMES, zip(*stats)))
    data: dict[str, np.ndarray] = {}
    for col in (*RUN_COLUMNS, *archive.SUMMARY_COLUMNS):
        if col == "summary_version" or col in data:
            continue
        if col in typed:
            ints = col in SUMMARY_INT
            values = [v if v is not None else np.nan for v in typed[col]]
            data[col] = np.array(values, dtype=np.int64 if ints else float)
        else:
            data[col] = _retyped(col, frame[col].to_numpy()[cell_rows if col in archive.CELL_COLUMNS else run_rows])
    return _framed(data, len(cell_rows))


def _retyped(col: str, values: np.ndarray) -> np.ndarray:
    """A column of the results frame, cut to a session's rows, as ``load`` types those rows alone: a
    whole number column that had an empty cell elsewhere in the file (float) is whole again, a flag
    column likewise (object)."""
    if col in RUNS_RULES.ints and values.dtype.kind == "f" and not np.isnan(values).any():
        return values.astype(np.int64)
    if col in RUNS_RULES.bools and values.dtype == object and not any(v is None for v in values):
        return values.astype(bool)
    return values


def read_texts(summary: Path, runs: Path) -> tuple[str, str]:
    """A kept session's two files as text; a missing or unreadable one is refused (``Catalog.read_kept``)."""
    try:
        return read_kept(summary, runs)
    except load.ResultsError as err:
        raise SessionError(str(err)) from None


