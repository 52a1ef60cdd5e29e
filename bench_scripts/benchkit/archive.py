"""Past sessions kept in the tree, compactly: the per-run summaries of a results file.

Standard library only: ``bench_scripts/run.py`` imports this module on accelerator
images that have jax and numpy but no pandas, to keep the session a results file
holds before a new session replaces it. The site reads the files back through
``benchsite/model/sessions.py`` (the validator) and computes the latest session's
summaries with the same :func:`compact`, so a session's page reads the same
before and after it is archived.

    results/<machine>/sessions/<session_id>/<stem>.csv.gz       one row per (run, variant, boundary,
                                                                 dtype, shape, params): the run's summary
    results/<machine>/sessions/<session_id>/<stem>.runs.csv.gz  one row per run: its provenance

Both are gzip-compressed CSV written with ``mtime=0``, so the same results file always
archives to the same bytes: two people who archive the same session write the same
files, and machine folders still merge by copying.

Format history (``results/README.md``, "Sessions kept", repeats it):
  1  first version: median, min, max, quartiles, weighted mean, sample count, and the
     medians of calls, compiles and the optional numeric columns per run and cell;
     cache hits summed; provenance once per run; ``detail`` text is not kept.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import re
import statistics
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

SUMMARY_VERSION = 2
# Summary format history (results/README.md, 'Sessions kept', repeats it):
#   1  first version.
#   2  the runs file's provenance gains schema 4's per-run columns (load_avg_1m_end, other_load,
#      run_wall_s); a version-1 runs file is read with them empty. The summary file is unchanged.
READABLE_SUMMARY_VERSIONS = (1, 2)
SESSIONS_DIR = "sessions"
SUMMARY_SUFFIX = ".csv.gz"
RUNS_SUFFIX = ".runs.csv.gz"

# What identifies one summary row: a cell of one run, as the raw file names it.
CELL_COLUMNS = ("run", "variant", "boundary", "dtype", "shape", "params")
# Per run and cell: how many samples, and what the table model reads of them.
STAT_COLUMNS = ("samples", "median_s", "min_s", "max_s", "q1_s", "q3_s", "mean_s",
                "calls", "compiles", "cache_hits")
# Optional numeric columns of the raw file: their median over the run's samples (empty: none).
OPTIONAL_NUMBERS = ("max_rel_error", "bytes_moved", "flops", "size_bytes")
SUMMARY_COLUMNS = ("summary_version", *CELL_COLUMNS, *STAT_COLUMNS, *OPTIONAL_NUMBERS)
RUN_KEY = ("summary_version", "run")  # then the raw schema's provenance columns, in its order


class ArchiveError(ValueError):
    """A results file that cannot be archived; the message starts with ``file:line:``."""


SESSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # a folder name: `20261201T142107Z-c39a`


def session_dir(results: Path, machine: str, session: str) -> Path:
    """``results/<machine>/sessions/<session_id>/``."""
    return results / machine / SESSIONS_DIR / session


def summary_file(results: Path, machine: str, session: str, stem: str) -> Path:
    return session_dir(results, machine, session) / f"{stem}{SUMMARY_SUFFIX}"


def runs_file(results: Path, machine: str, session: str, stem: str) -> Path:
    return session_dir(results, machine, session) / f"{stem}{RUNS_SUFFIX}"


def kept_files(results: Path) -> dict[tuple[str, str], dict[str, tuple[Path, Path]]]:
    """(machine, stem) -> session id -> (summary file, runs file), for every file under
    ``results/*/sessions/*/`` (either file of a pair may be missing: a partial session)."""
    out: dict[tuple[str, str], dict[str, tuple[Path, Path]]] = {}
    for path in sorted(results.glob(f"*/{SESSIONS_DIR}/*/*.csv.gz")):
        session, machine = path.parent.name, path.parents[2].name
        stem = path.name.removesuffix(RUNS_SUFFIX).removesuffix(SUMMARY_SUFFIX)
        out.setdefault((machine, stem), {})[session] = (
            summary_file(results, machine, session, stem), runs_file(results, machine, session, stem))
    return out


def _number(text: str) -> str:
    return repr(float(text))


def quantile(ordered: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's and pandas' default)."""
    h = (len(ordered) - 1) * q
    lo = int(h)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (h - lo) * (ordered[hi] - ordered[lo])


def _csv(header: Iterable[str], rows: Iterable[list[str]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(list(header))
    writer.writerows(rows)
    return buf.getvalue()


def read_raw(path: Path) -> tuple[list[str], list[list[str]]]:
    """A results CSV as (header, records of strings; blank lines skipped); a file that cannot be
    read is an :class:`ArchiveError` (:func:`compact_records` checks the header)."""
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            header = next(reader, None) or []
            rows = [row for row in reader if row]
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise ArchiveError(f"{path}:1: cannot read: {err}") from None
    return header, rows


def check_header(path: Path, header: list[str]) -> None:
    """:class:`ArchiveError` unless a results file with this header has sessions to keep."""
    if "session_id" not in header:
        raise ArchiveError(f"{path}:1: results format 1 (no session_id column): no session to keep; "
                           "the file stays in git history")
    missing = [c for c in ("machine", "time_s", *CELL_COLUMNS, "calls") if c not in header]
    if missing:
        raise ArchiveError(f"{path}:1: missing column(s) {', '.join(missing)}")


# Columns measured per sample; every other column of the raw schema is provenance, once per run.
_PER_SAMPLE = frozenset({"variant", "boundary", "dtype", "shape", "params", "run", "process_index",
                         "process_count", "sample", "seq", "calls", "compiles", "cache_hits", "time_s",
                         "after", "lead_in", "cpu_s", "minflt", "majflt", "nvcsw", "nivcsw",
                         "detail", *OPTIONAL_NUMBERS})


MEDIAN_COLUMNS = ("calls", "compiles", *OPTIONAL_NUMBERS)  # a summary keeps their median (of values present)


def cell_stats(times: list[float], calls: list[float], hits: int,
               present: list[list[float]]) -> list[int | float | None]:
    """One summary row's numbers (``STAT_COLUMNS``, then ``OPTIONAL_NUMBERS``) of one run's cell: from
    its samples' times and calls (in the file's order), its cache hits summed, and the values present
    of each of ``MEDIAN_COLUMNS`` (None: a median of none). :func:`compact` writes them with ``repr``;
    the site makes the latest session's summaries with this same arithmetic from the rows it has
    validated, so a session shows the same numbers before and after it is kept."""
    weighted = sum(t * c for t, c in zip(times, calls))
    ordered = sorted(times)
    median = statistics.median(ordered)
    medians = [statistics.median(values) if values else None for values in present]
    return [len(times), median, ordered[0], ordered[-1], quantile(ordered, 0.25), quantile(ordered, 0.75),
            weighted / sum(calls) if sum(calls) else median, *medians[:2], hits, *medians[2:]]


def compact(header: list[str], rows: list[list[str]], where: str = "") -> dict[str, tuple[str, str]]:
    """Session id -> (summary CSV text, runs CSV text) of a results file's records.

    Rows keep the raw file's order of first appearance, so the same rows always give
    the same text (the site compares nothing; it reads the text back). A column named
    twice in the header reads its last field, as ``csv.DictReader`` would."""
    at = {c: i for i, c in enumerate(header)}
    provenance = [at[c] for c in header if c not in _PER_SAMPLE]
    cell_at, session_at, run_at = [at[c] for c in CELL_COLUMNS], at["session_id"], at["run"]
    by_session: dict[str, tuple[dict[tuple[str, ...], list[list[str]]], dict[str, list[str]]]] = {}
    for line, row in enumerate(rows, 2):
        if len(row) != len(header):
            raise ArchiveError(f"{where}:{line}: the row's field count differs from the header's")
        session = row[session_at]
        if session not in by_session and not SESSION_RE.match(session):
            raise ArchiveError(f"{where}:{line}: session_id {session!r} cannot name a sessions/ folder")
        cells, runs = by_session.setdefault(session, ({}, {}))
        cells.setdefault(tuple([row[i] for i in cell_at]), []).append(row)
        runs.setdefault(row[run_at], row)

    def present(part: list[list[str]], col: str) -> list[float]:
        i = at.get(col)
        return [float(r[i]) for r in part if r[i] != ""] if i is not None else []

    time_at, calls_at, hits_at = at["time_s"], at["calls"], at.get("cache_hits")

    def summary(key: tuple[str, ...], part: list[list[str]]) -> list[str]:
        hits = sum(int(r[hits_at] or 0) for r in part) if hits_at is not None else 0
        stats = cell_stats([float(r[time_at]) for r in part], [float(r[calls_at]) for r in part], hits,
                           [present(part, c) for c in MEDIAN_COLUMNS])
        return [str(SUMMARY_VERSION), *key, *("" if v is None else repr(v) for v in stats)]

    out = {}
    for session, (cells, runs) in by_session.items():
        text = _csv(SUMMARY_COLUMNS, (summary(key, part) for key, part in cells.items()))
        prov = _csv((*RUN_KEY, *(header[i] for i in provenance)),
                    ([str(SUMMARY_VERSION), run, *(first[i] for i in provenance)] for run, first in runs.items()))
        out[session] = (text, prov)
    return out


def compact_file(path: Path) -> dict[str, tuple[str, str]]:
    """:func:`compact` of one results file."""
    return compact_records(path, *read_raw(path))


def compact_records(path: Path, header: list[str], rows: list[list[str]]) -> dict[str, tuple[str, str]]:
    """:func:`compact` of the records of the results file ``path`` as :func:`read_raw` returns
    them (the site passes those its loader has read and validated), errors naming ``path``."""
    check_header(path, header)
    try:
        return compact(header, rows, str(path))
    except (ValueError, ZeroDivisionError) as err:
        if isinstance(err, ArchiveError):
            raise
        raise ArchiveError(f"{path}:1: cannot summarise: {err}") from None


def gz(text: str) -> bytes:
    """Deterministic gzip: no timestamp, no file name."""
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def archive(path: Path, results: Path, keep: Iterable[str] = ()) -> list[Path]:
    """Keep every session of the results file ``path`` (``results/<machine>/<stem>.csv``)
    under ``results/<machine>/sessions/`` unless it is there already or in ``keep``
    (the session about to be written). Returns the files written.

    The runs file is written last: a session is complete when both files exist, and an
    interrupted archive leaves a summary without its runs, which the next archive
    replaces (and the site refuses with file:line until then)."""
    machine, stem = path.parent.name, path.name.removesuffix(".csv")
    written = []
    for session, (summary, runs) in compact_file(path).items():
        if session in set(keep):
            continue
        target, prov = summary_file(results, machine, session, stem), runs_file(results, machine, session, stem)
        if target.is_file() and prov.is_file():
            continue
        _write(target, gz(summary))
        _write(prov, gz(runs))
        written += [target, prov]
    return written


def keep_before_replacing(old: Path, results: Path, session: str, *, quiet: bool = False) -> None:
    """The sessions the results file ``old`` holds, kept (:func:`archive`) before a new session
    ``session`` replaces it, so their pages and history stay on the site: what ``make bench``, a
    ``Bench`` script and ``benchkit compare`` each do. A file that cannot be kept (damaged) is
    reported on stderr and replaced all the same: a new measurement is not held back by an old
    file, whose raw CSV stays in git history."""
    if not old.is_file():
        return
    try:
        for path in archive(old, results, keep=[session]):
            if not quiet:
                print(f"kept the previous session: {path}", file=sys.stderr, flush=True)
    except (OSError, ArchiveError) as err:
        print(f"{old}: the previous session was not kept ({err})", file=sys.stderr, flush=True)
