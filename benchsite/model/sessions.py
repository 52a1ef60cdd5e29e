"""Every session of a figure on a machine, as a table model, through one validator.

A session is one ``make bench``. The latest is the one the results file holds; the
earlier ones were kept under ``results/<machine>/sessions/<session_id>/`` as per-run
summaries (``archive.py`` writes them and says the format). A kept session's texts come
from the catalog (``Catalog.session_texts``) and are parsed by ``session_files.parse``; the
latest is summarised from the frame the loader validated (``session_files.from_results``, the
same arithmetic and typing), so a session's page shows the same bytes before and after it is
archived.

The table of a session is ``Table.of`` on a frame with one row per run and cell whose
``time_s`` is that run's median: a run median of one value is that value, so its
cells, ratios, paired verdicts and headline are the ones the full table had.

A kept session that is damaged or partial is refused with ``file:line`` (:class:`SessionError`,
an error box on the pages that show it, a failure in a strict build); the results
file and every other session are not affected.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from benchsite.core.cachefile import cached
from benchsite.model import session_files, stats
from benchsite.model.catalog import Catalog, SessionTexts
from benchsite.model.figures import Figure
from benchsite.model.table import Table, distinct_texts, run_days

# The validator of a kept session's files (and of the latest session's texts): session_files.py.
RUN_COLUMNS = session_files.RUN_COLUMNS
SessionError = session_files.SessionError
parse = session_files.parse
read_texts = session_files.read_texts


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

    def per_run(self, col: str) -> list:
        """The first value of ``col`` in each run that has one (as ``groupby("run")[col].first()``:
        empty cells skipped), in run order, with None for a run that has none. Every page and step
        asks a few columns of each session; a grouping each time dominated their time."""
        memo = self.__dict__.setdefault("_per_run", {})  # a frozen dataclass: not through setattr
        if col not in memo:
            runs = self.frame["run"].to_numpy()
            values = self.frame[col].to_numpy()
            order, inverse = np.unique(runs, return_inverse=True)
            present = np.flatnonzero(~pd.isna(values))
            groups, first = np.unique(inverse[present], return_index=True)
            found: list = [None] * len(order)
            for group, at in zip(groups.tolist(), present[first].tolist()):
                found[group] = values[at]
            memo[col] = found
        return memo[col]

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

    @property
    def latest(self) -> Session | None:
        """The session the results file holds, or None (a format-1 file records none)."""
        return next((s for s in reversed(self.sessions) if s.latest), None)


def history(cat: Catalog, fig_id: str, machine: str) -> History:
    """Every session of ``fig_id`` on ``machine``, computed once per build (``Catalog.derived``), from
    what the catalog has of it (:func:`of_texts`): the results file's frame and digest, and the kept
    sessions' texts (:meth:`Catalog.session_texts`)."""
    done = cat.derived.get(("history", fig_id, machine))
    if done is not None:
        return done
    texts = cat.session_texts(fig_id, machine)
    digest = cat.csv_digest(fig_id, machine) if (fig_id, machine) in cat.frames else ""
    return of_texts(cat.derived, cat.frames, cat.figures[fig_id], machine, digest, texts)


def of_texts(memo: dict, frames: Mapping, fig: Figure, machine: str, digest: str, texts: SessionTexts) -> History:
    """Every session of ``fig`` on ``machine``, once per build (``memo``: ``Catalog.derived``, shared
    with :func:`history`), from what the catalog has read: the latest (the results file's) made from
    the frame the loader validated (in ``frames``, ``Catalog.frames``: read only where the build cache
    lacks it; ``session_files.from_results``), kept under the build cache by the file's ``digest``;
    each kept one from its files' ``texts`` (``Catalog.session_texts``), kept by those texts, else
    parsed by ``session_files.parse``, which refuses a damaged one with ``file:line``."""
    made = memo.get(("history", fig.id, machine))
    if made is not None:
        return made
    found = _latest(frames, fig, machine, digest)
    # A kept session the results file holds too (archived once already, e.g. by a failed rerun) is
    # the results file's.
    errors = {sid: why for sid, why in texts.errors.items() if sid not in found}
    for sid, summary, runs, where in texts.sessions:
        if sid in found:
            continue
        key = _digest(summary, runs, repr(fig), machine, sid, "False")
        try:  # cached calls the function at once, in this turn of the loop
            found[sid] = cached("session", key, lambda: Session(  # noqa: B023
                sid, fig.id, machine, Table.of(session_files.parse(summary, runs, where, machine, fig.stem, sid), fig),  # noqa: B023
                False, key))  # noqa: B023
        except ValueError as err:  # SessionError included
            errors[sid] = str(err) if isinstance(err, SessionError) else f"{where[0]}:1: {err}"
    done = memo[("history", fig.id, machine)] = History(tuple(found[s] for s in sorted(found)), errors)
    return done


def latest(cat: Catalog, fig_id: str, machine: str) -> Session | None:
    """``history(cat, fig_id, machine).latest`` without the kept sessions when the history is not
    made yet: the latest session with the greatest id of those the results file holds (the kept ones
    are never the latest). A page's header names it, and reads no kept session for it."""
    done = cat.derived.get(("history", fig_id, machine))
    if done is not None:
        return done.latest
    digest = cat.csv_digest(fig_id, machine) if (fig_id, machine) in cat.frames else ""
    found = _latest(cat.frames, cat.figures[fig_id], machine, digest)
    return found[max(found)] if found else None


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _latest(frames: Mapping, fig: Figure, machine: str, digest: str) -> dict[str, Session]:
    """The sessions the results file holds (one, as make bench writes it), kept under the build cache
    by the file's ``digest``: a warm build reads them back without the file's frame (in ``frames``)."""
    if (fig.id, machine) not in frames:
        return {}
    key = _digest(digest, repr(fig), machine, "latest")

    def made() -> dict[str, Session]:
        by_session = session_files.from_results(frames[(fig.id, machine)])
        return {sid: Session(sid, fig.id, machine, Table.of(frame, fig), True, _digest(key, sid))
                for sid, frame in by_session.items()}
    return dict(cached("latest-sessions", key, made))


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
    values = np.array([v for v in s.per_run("load_avg_1m") if v is not None], dtype=float)
    if not values.size:
        return "—"
    low, high = f"{values.min():g}", f"{values.max():g}"
    return f"{np.median(values):g}" + ("" if low == high else f" [{low}..{high}]")


def env_diff(old: Session, new: Session) -> list[tuple[str, str, str]]:
    """(what, before, after) for each provenance field that differs, then the load average
    at the runs' start (median [min..max]), which always does a little."""
    out = [(label, old.values(col, width), new.values(col, width)) for col, label, width in ENV_FIELDS
           if old.values(col, width) != new.values(col, width)]
    return out + [("load average at start", _load(old), _load(new))]
