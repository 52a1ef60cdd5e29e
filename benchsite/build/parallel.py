"""Fill the build cache on every core before the build reads it.

A site build is one process: mkdocs makes pages one after another. What makes a page
slow (a results file validated, a table model, a session's history, a machine panel,
a page body) is kept under the build cache by a key of everything it is made from
(``buildcache``, ``cachefile.cached``, ``load.load``). :func:`warm` runs jobs that make
such things in forked worker processes, one per core, and waits; the build then runs
exactly as before and finds them on disk. Nothing a worker computes reaches the build
except through those files, so a warm-up can only make the build faster: a job that
fails, or a worker that dies, leaves the work (and any message about it) to the build.
A page that reported a problem is never cached (``benchsite/build/plugin.py``), so every
warning is still raised by the build itself, where a strict build counts it.
"""

from __future__ import annotations

import ctypes
import gc
import hashlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from benchsite.core import cachefile
from benchsite.core.cachefile import cache_dir

__all__ = ["Job", "key", "pending", "warm", "workers"]

_JOBS: list[Job] = []  # what the forked workers run, by index (inherited, not pickled)


@dataclass(frozen=True)
class Job:
    """``run()``, skipped when a job of the same ``key`` (everything it reads, hashed) has
    already run to the end with this cache: a warm build does not repeat the warming."""

    run: Callable[[], object]
    key: str | None = None  # None: always run (the job is cheap to skip on its own)
    kind: str = ""  # what it makes, for the report of where the workers' time went (``warm``)
    # Jobs next to each other with the same group run in one worker, one after another (``warm``):
    # what the first reads back from the build cache, the next find in that worker's memory.
    group: str = ""

    @property
    def done_file(self) -> Path | None:
        return cache_dir() / "warmed" / self.key if self.key else None


def workers() -> int:
    """``BENCH_JOBS`` (1 turns warming off), else the cores this process may use."""
    chosen = os.environ.get("BENCH_JOBS", "").strip()
    if chosen:
        try:
            return max(1, int(chosen))
        except ValueError:
            raise SystemExit(f"BENCH_JOBS={chosen!r}: expected a number of worker processes") from None
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _start(build: int) -> None:
    """A worker's set-up: it dies with the build, says nothing, and its garbage collector leaves
    what it inherited alone."""
    _die_with(build)
    # Everything the build made before the fork (the catalog, mkdocs' pages and files, the imported
    # modules) stays for the worker's life: its collections would scan it again and again, and write
    # to every page of it. Frozen, they scan what the worker makes (0.9 s of the pages step's CPU was
    # collecting here, 0.4 s once frozen).
    gc.freeze()
    # A worker says nothing: the build makes again whatever reported a problem, and says it there.
    for name in ("mkdocs", ""):
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
    logging.getLogger("mkdocs").addHandler(logging.NullHandler())


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with(build: int) -> None:
    """Ask Linux to kill this worker when the build process ends, however it ends: a build killed
    (SIGKILL, an out-of-memory kill, a test's time limit) would otherwise leave its workers waiting
    on their queue for ever. Elsewhere a worker ends when its queue closes, as before."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    if os.getppid() != build:  # the build ended before the request was made
        os._exit(1)


def _fork_unsafe() -> bool:
    """Whether this process runs threads a fork would copy mid-work: Python threads (``mkdocs
    serve``'s server), or JAX's runtime (a test process that imported it). A numpy BLAS pool is
    not counted: it idles between calls and prepares itself for a fork."""
    return threading.active_count() > 1 or "jax" in sys.modules


def _run(index: int) -> float | None:
    """Seconds the job took, or None when it failed (the build makes it again)."""
    job = _JOBS[index]
    start = time.perf_counter()
    try:
        job.run()
    except Exception:  # noqa: BLE001 - the build makes it again and reports what went wrong
        return None
    seconds = time.perf_counter() - start
    if job.done_file:
        try:
            job.done_file.parent.mkdir(parents=True, exist_ok=True)
            job.done_file.touch()
        except OSError:
            pass
    return seconds


def _run_group(indices: list[int]) -> list[float | None]:
    """:func:`_run` of each job of one group, in order, in this worker."""
    return [_run(index) for index in indices]


def _groups(jobs: Sequence[Job]) -> list[list[int]]:
    """The jobs' indices, those next to each other with the same (non-empty) group together."""
    out: list[list[int]] = []
    for index, job in enumerate(jobs):
        if out and job.group and jobs[out[-1][-1]].group == job.group:
            out[-1].append(index)
        else:
            out.append([index])
    return out


def key(*parts: object) -> str:
    """A cache key of ``parts`` (everything the entry is made from) and the one code version
    (``cachefile.code_version``): a job done, or an entry kept, with other code is not found."""
    return hashlib.sha256("\0".join(map(str, (cachefile.code_version(), *parts))).encode()).hexdigest()


def pending(jobs: Sequence[Job]) -> list[Job]:
    """The jobs that have not run to the end with this cache before (the folder of finished jobs
    is listed once: a warm build of a hundred machine folders asks about ten thousand jobs)."""
    done = cachefile.names(cache_dir() / "warmed")
    return [job for job in jobs if not (job.key and job.key in done)]


def warm(jobs: Sequence[Job], spent: dict[str, list[float]] | None = None) -> int:
    """Run the jobs not done before on the worker processes (each once, handed out one at a
    time as workers come free, a group as one: ``Job.group``) and wait for them. Returns how many
    ran: 0 when nothing was left to do or warming is not worth it or not safe here (one core, no
    ``fork``, or threads running, as under ``mkdocs serve``: the build then does everything itself).
    ``spent``, if given, gets the seconds of each job that ran to the end, by its ``kind``."""
    todo = pending(jobs)
    count = min(workers(), len(todo))
    if count < 2 or "fork" not in multiprocessing.get_all_start_methods() or _fork_unsafe():
        return 0
    _JOBS[:] = todo
    try:
        with ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("fork"), initializer=_start,
                                 initargs=(os.getpid(),)) as pool:
            done = (seconds for group in pool.map(_run_group, _groups(todo), chunksize=1) for seconds in group)
            for job, seconds in zip(todo, done):
                if seconds is not None and spent is not None:
                    spent.setdefault(job.kind, []).append(seconds)
    except (BrokenProcessPool, OSError):
        pass  # a worker died (memory?) or none could start: the build does the rest itself
    finally:
        _JOBS.clear()
    return len(todo)
