"""Count backend compiles inside a window, through ``jax.monitoring`` events.

One listener is registered per process (the first time a window opens) and
bumps a counter; a window reads the counter before and after. Each XLA backend
compile emits one ``backend_compile_duration`` event, eager helpers such as
``jnp.ones`` included, so a window should hold only the code under test.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

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
