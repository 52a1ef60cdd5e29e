"""Count backend compiles inside a window, through ``jax.monitoring`` events,
and keep what JAX's compile log says about them.

One listener is registered per process (the first time a window opens) and
bumps a counter; a window reads the counter before and after. Each XLA backend
compile emits one ``backend_compile_duration`` event, eager helpers such as
``jnp.ones`` included, so a window should hold only the code under test.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

# --8<-- [start:count]
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"

_state = {"total": 0, "registered": False, "names": []}


def _listener(event: str, duration_secs: float, **kwargs: object) -> None:
    if event == BACKEND_COMPILE_EVENT:
        _state["total"] += 1
        _state["names"].append(str(kwargs.get("fun_name", "")))


def _ensure_registered() -> None:
    if not _state["registered"]:
        import jax.monitoring

        jax.monitoring.register_event_duration_secs_listener(_listener)
        _state["registered"] = True


@dataclass
class Window:
    """Compiles seen in one window; ``n`` is final once the window closes."""

    n: int = 0
    names: tuple[str, ...] = ()


@contextlib.contextmanager
def count() -> Iterator[Window]:
    _ensure_registered()
    window = Window()
    start = _state["total"]
    try:
        yield window
    finally:
        window.n = _state["total"] - start
        window.names = tuple(_state["names"][start:])
# --8<-- [end:count]


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
