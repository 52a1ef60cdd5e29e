"""Timing helpers for figures that run as several processes (``FIGURE["processes"]``).

Every process of a run must issue the same collectives in the same order, or they wait
on each other for ever. So a multi-process figure never sizes its sample count from its
own clock (two processes would pick different counts): counts are fixed, the order is
the run's seed (the same in every process), and each helper below is called by every
process. Standard library and jax only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from . import compiles
from .timing import Sample

_barriers = 0


def barrier() -> None:
    """Wait until every process reaches this point (``sync_global_devices``: itself a
    small collective, so it has a cost, which ``fig-process-clocks`` measures)."""
    global _barriers
    from jax.experimental import multihost_utils

    _barriers += 1
    multihost_utils.sync_global_devices(f"benchkit-{_barriers}")


def timed_steps(step: Callable[[], Any], count: int, *, warmup: int = 2, sync: bool = False,
                before: Callable[[], Any] | None = None,
                wait: Callable[[Any], Any] | None = None) -> list[Sample]:
    """``count`` samples of one step on this process's clock, the same count in every process.

    ``before`` runs untimed before each clock start (a straggler's extra host work);
    ``sync`` puts a barrier after it, just before the clock, so every process starts
    timing together; ``wait`` is what the clock waits for (default: ``block_until_ready``
    on the step's output, which covers only this process's shards)."""
    import jax

    wait = wait or jax.block_until_ready
    for _ in range(warmup):
        wait(step())
    out = []
    for _ in range(count):
        if before is not None:
            before()
        if sync:
            barrier()
        with compiles.count() as window:
            start = time.perf_counter()
            wait(step())
            elapsed = time.perf_counter() - start
        out.append(Sample(elapsed, 1, window.n, window.cache_hits))
    return out


def gather(values: list[float]) -> list[list[float]]:
    """Every process's ``values`` (same length everywhere), one list per process, in process order."""
    import numpy as np
    from jax.experimental import multihost_utils

    got = multihost_utils.process_allgather(np.asarray(values, dtype=np.float64))
    return np.asarray(got).reshape(-1, len(values)).tolist()


def max_across(samples: list[Sample]) -> list[Sample]:
    """Per sample, the slowest process's time: the step time that matters to the job."""
    every = gather([s.time_s for s in samples])
    return [Sample(max(col), s.calls, s.compiles, s.cache_hits) for s, col in zip(samples, zip(*every))]
