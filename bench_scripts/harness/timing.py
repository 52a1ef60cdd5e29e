"""Timing boundaries: what each measured interval contains.

Every function takes the clock and the blocking function as arguments so the
tests can drive them with fakes whose timing they control. The defaults are
``time.perf_counter`` and ``jax.block_until_ready``.

Boundaries (recorded with every sample as ``boundary``):

* ``dispatch``   the call returned; the device may still be working.
* ``completed``  inputs already placed and ready; the interval ends when the
                 whole output pytree is ready.
* ``loop``       ``calls`` back-to-back calls, one block at the end, divided
                 by ``calls``: throughput of a pipelined loop.
* ``first-call`` trace / lower / compile / first execute of a fresh function
                 object, each stage timed on its own (ahead-of-time API).
* ``trace``      an interval read from a profiler trace's own timestamps
                 (``harness.profiles``), not from this module's clock.
* ``clock``      two back-to-back clock reads and nothing between them: the
                 smallest interval any other boundary can report.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import compiles

Clock = Callable[[], float]
Block = Callable[[Any], Any]

MIN_SAMPLES = 10
MAX_SAMPLES = 100  # keeps a committed CSV near a megabyte; 100 samples pin a median well
BUDGET_S = 0.5  # 500 ms of timed work per (variant, shape) per run
WARMUP_CALLS = 3  # more than one: the first warm call is often slow too


@dataclass(frozen=True)
class Sample:
    """One observed interval: seconds per call, calls it averaged, compiles seen."""

    time_s: float
    calls: int = 1
    compiles: int = 0


def _block_default(tree: Any) -> Any:
    import jax

    return jax.block_until_ready(tree)


# --8<-- [start:dispatch]
def time_dispatch(fn: Callable, args: Sequence, *, clock: Clock = time.perf_counter,
                  block: Block = _block_default) -> float:
    """Seconds until ``fn(*args)`` returns control. The output is waited on
    afterwards, outside the interval, so the next sample starts with an idle
    device."""
    t0 = clock()
    out = fn(*args)
    t1 = clock()
    block(out)
    return t1 - t0
# --8<-- [end:dispatch]


# --8<-- [start:completed]
def time_completed(fn: Callable, args: Sequence, *, clock: Clock = time.perf_counter,
                   block: Block = _block_default) -> float:
    """Seconds until every leaf of ``fn(*args)`` is ready."""
    t0 = clock()
    block(fn(*args))
    return clock() - t0
# --8<-- [end:completed]


# --8<-- [start:loop]
def time_loop(fn: Callable, args: Sequence, calls: int, *, clock: Clock = time.perf_counter,
              block: Block = _block_default) -> float:
    """Mean seconds per call over ``calls`` back-to-back calls, one block at the end."""
    if calls < 1:
        raise ValueError(f"calls must be >= 1, got {calls}")
    t0 = clock()
    for _ in range(calls):
        out = fn(*args)
    block(out)
    return (clock() - t0) / calls
# --8<-- [end:loop]


# --8<-- [start:clock]
def time_clock_pair(*, clock: Clock = time.perf_counter) -> float:
    """Seconds between two back-to-back clock reads: the part of every other
    interval that is the clock itself, and the smallest one it can report."""
    t0 = clock()
    return clock() - t0
# --8<-- [end:clock]


TIMERS = {"dispatch": time_dispatch, "completed": time_completed}


# --8<-- [start:collect]
def choose_count(estimate_s: float, budget_s: float, minimum: int = MIN_SAMPLES,
                 maximum: int = MAX_SAMPLES) -> int:
    """How many samples fit in ``budget_s`` given one sample takes ``estimate_s``."""
    if estimate_s <= 0 or not math.isfinite(estimate_s):
        return maximum
    return max(minimum, min(maximum, math.ceil(budget_s / estimate_s)))


def collect(boundary: str, fn: Callable, args: Sequence, *, budget_s: float = BUDGET_S,
            minimum: int = MIN_SAMPLES, maximum: int = MAX_SAMPLES, warmup: int = WARMUP_CALLS,
            loop_calls: int = 50, clock: Clock = time.perf_counter,
            block: Block = _block_default) -> list[Sample]:
    """Warm ``fn`` up, size the sample count from a time budget, then time it.

    Each sample records how many backend compiles happened inside its window,
    so a "warm" sample that compiled is visible in the data instead of hidden
    in a median.
    """
    def one() -> Sample:
        with compiles.count() as seen:
            if boundary == "loop":
                t = time_loop(fn, args, loop_calls, clock=clock, block=block)
            else:
                t = TIMERS[boundary](fn, args, clock=clock, block=block)
        return Sample(t, loop_calls if boundary == "loop" else 1, seen.n)

    if boundary not in ("dispatch", "completed", "loop"):
        raise ValueError(f"collect() takes dispatch, completed or loop, not {boundary!r}")
    for _ in range(warmup):
        block(fn(*args))
    estimate = one()
    per_sample = estimate.time_s * estimate.calls
    count = choose_count(per_sample, budget_s, minimum, maximum)
    return [one() for _ in range(count)]
# --8<-- [end:collect]


FIRST_CALL_STAGES = ("trace", "lower", "compile", "first-execute")


# --8<-- [start:first-call]
def time_first_call(jitted: Any, args: Sequence, *, clock: Clock = time.perf_counter,
                    block: Block = _block_default) -> dict[str, float]:
    """Seconds per stage of a first call, via the ahead-of-time API.

    ``jitted`` must be a fresh ``jax.jit`` of a fresh Python function object:
    jitting the same function again reuses its trace cache and hides a stage.
    """
    t0 = clock()
    traced = jitted.trace(*args)
    t1 = clock()
    lowered = traced.lower()
    t2 = clock()
    compiled = lowered.compile()
    t3 = clock()
    block(compiled(*args))
    t4 = clock()
    return dict(zip(FIRST_CALL_STAGES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)))
# --8<-- [end:first-call]


def timed(timer: Callable[..., float], *args: Any, calls: int = 1) -> Sample:
    """One sample from any timer (a script's own loop, say), with the backend
    compiles seen inside its window, so hand-rolled sampling is flagged the
    same way :func:`collect` flags its own."""
    with compiles.count() as seen:
        t = timer(*args)
    return Sample(t, calls, seen.n)
