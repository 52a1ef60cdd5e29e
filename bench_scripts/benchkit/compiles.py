"""Count backend compiles inside a window, through ``jax.monitoring`` events,
and keep what JAX's compile log says about them.

One listener is registered per process (the first time a window opens) and
bumps a counter; a window reads the counter before and after. Each XLA backend
compile emits one ``backend_compile_duration`` event, eager helpers such as
``jnp.ones`` included, so a window should hold only the code under test.

That event also fires when the executable came from the persistent compilation
cache (it wraps the cache lookup), so a compile count cannot tell a compile
from a cache hit. A second listener counts ``/jax/compilation_cache/cache_hits``
(a plain ``record_event``, no duration) in the same windows; workers turn the
persistent cache off (:func:`disable_persistent_cache`), and figures that time
compiles refuse samples that saw a hit (:func:`refuse_cache_hits`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# --8<-- [start:count]
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"

CACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"  # a record_event: no duration

_state = {"total": 0, "hits": 0, "registered": False, "names": []}


def _listener(event: str, duration_secs: float, **kwargs: object) -> None:
    if event == BACKEND_COMPILE_EVENT:
        _state["total"] += 1
        _state["names"].append(str(kwargs.get("fun_name", "")))


def _hit_listener(event: str, **kwargs: object) -> None:
    if event == CACHE_HIT_EVENT:
        _state["hits"] += 1


def _ensure_registered() -> None:
    if not _state["registered"]:
        import jax.monitoring

        jax.monitoring.register_event_duration_secs_listener(_listener)
        jax.monitoring.register_event_listener(_hit_listener)
        _state["registered"] = True


@dataclass
class Window:
    """Compiles and persistent-cache hits seen in one window; final once it closes."""

    n: int = 0
    names: tuple[str, ...] = ()
    cache_hits: int = 0


@contextlib.contextmanager
def count() -> Iterator[Window]:
    _ensure_registered()
    window = Window()
    start, hits = _state["total"], _state["hits"]
    try:
        yield window
    finally:
        window.n = _state["total"] - start
        window.names = tuple(_state["names"][start:])
        window.cache_hits = _state["hits"] - hits
# --8<-- [end:count]


# --8<-- [start:cache]
ALLOW_CACHE_ENV = "BENCH_ALLOW_COMPILATION_CACHE"


class PersistentCacheHit(RuntimeError):
    """A sample that times compiles was served from the persistent compilation cache."""


def cache_state() -> str:
    """The provenance column ``compilation_cache``: ``off`` or ``on:<dir>``."""
    import jax

    folder = jax.config.jax_compilation_cache_dir
    if folder is None or not jax.config.jax_enable_compilation_cache:
        return "off"
    return f"on:{folder}"


def disable_persistent_cache() -> bool:
    """Keep this process off the persistent compilation cache, unless
    ``BENCH_ALLOW_COMPILATION_CACHE=1``: a warm cache turns a 40 ms compile into
    a 3 ms read, and a compile count cannot tell. Returns whether it is off."""
    import jax

    if os.environ.get(ALLOW_CACHE_ENV) == "1":
        return cache_state() == "off"
    jax.config.update("jax_enable_compilation_cache", False)
    # The cache decides once per process whether it is used: make it decide again (the public
    # module re-exports the function from jax._src.compilation_cache).
    from jax.experimental.compilation_cache import compilation_cache

    compilation_cache.reset_cache()
    return True


def refuse_cache_hits(samples: Iterable[Any], what: str) -> None:
    """Raise :class:`PersistentCacheHit` when any sample saw a persistent-cache hit:
    a figure that times compiles would be timing a disk read."""
    hits = sum(getattr(s, "cache_hits", 0) for s in samples)
    if hits:
        raise PersistentCacheHit(
            f"{what}: {hits} persistent compilation cache hit(s) inside timed windows "
            f"(compilation_cache={cache_state()}); these samples time a cache read, not a "
            f"compile. Unset jax_compilation_cache_dir / JAX_COMPILATION_CACHE_DIR or leave "
            f"{ALLOW_CACHE_ENV} unset so workers disable the cache.")
# --8<-- [end:cache]


# --8<-- [start:log]
EXPLAIN_LOGGER = "jax._src.interpreters.partial_eval"  # where cache-miss explanations come from


@dataclass
class CompileLog:
    """What JAX logged in one window: every line, and the cache-miss explanations."""

    lines: list[str] = field(default_factory=list)
    explanations: list[str] = field(default_factory=list)


class _Keep(logging.Handler):
    def __init__(self, log: CompileLog) -> None:
        super().__init__(logging.WARNING)
        self.log = log

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        self.log.lines.append(text)
        if record.name == EXPLAIN_LOGGER:
            self.log.explanations.append(text)


@contextlib.contextmanager
def compile_log() -> Iterator[CompileLog]:
    """Turn ``jax_log_compiles`` and ``jax_explain_cache_misses`` on for a window
    and keep their messages: a steady-state loop should leave both lists empty."""
    import jax

    log = CompileLog()
    handler, logger = _Keep(log), logging.getLogger("jax")
    logger.addHandler(handler)  # on the "jax" logger: every jax._src.* module reports here
    try:
        with jax.log_compiles(True), jax.explain_cache_misses(True):
            yield log
    finally:
        logger.removeHandler(handler)
# --8<-- [end:log]


def tidy(text: str, root: Path) -> str:
    """A log message fit to publish: paths relative to ``root`` (no home folders
    in the data) and object ids, which change every run, blanked."""
    text = text.replace(str(root.resolve()) + "/", "")
    return re.sub(r"\bid=\d+", "id=…", text)
