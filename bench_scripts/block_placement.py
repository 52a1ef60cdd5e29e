"""fig-block-placement: one block after the loop vs a block after every call.

The same jitted matmul is called ``CALLS`` times back to back; each sample is
the mean seconds per call. ``block-at-end`` (boundary ``loop``) lets the host
enqueue the next call while the current one runs: loop throughput.
``block-every-call`` (boundary ``completed``, averaged over the calls) waits
for each result before the next call: the latency of a caller that needs every
answer before it can go on.
"""

FIGURE = {
    "title": "Where the block goes: end of the loop vs every call",
    "caption": (
        "Blocking once after a loop and blocking after every call answer different questions: "
        "the first is the throughput of a pipelined loop, the second the per-request latency "
        "of a caller that waits on each result. How far apart they land depends on how much "
        "of a call is dispatch rather than compute, so say which one you measured."
    ),
    "chapter": "what-the-clock-caught.md",
    "group_by": ["n"],
    "variants": ["block-at-end", "block-every-call"],
    "ratio": ["block-every-call", "block-at-end"],
}

# --8<-- [start:measure]
import time
from collections.abc import Callable

import jax
import numpy as np

from harness import Recorder, Sample, check_close, figure_main, time_loop, timed
from harness.timing import choose_count

CALLS = 50
matmul = jax.jit(lambda x: x @ x)


def block_every_call(fn: Callable, args: tuple, calls: int) -> float:
    """Mean seconds per call when each result is waited on before the next call."""
    t0 = time.perf_counter()
    for _ in range(calls):
        jax.block_until_ready(fn(*args))
    return (time.perf_counter() - t0) / calls


def sizes(rec: Recorder) -> list[int]:
    if rec.config.smoke:
        return [16]
    return [64, 512] + ([4096] if rec.config.accelerator else [])


def sample_both(rec: Recorder, x: jax.Array) -> tuple[list[Sample], list[Sample]]:
    """Both placements, interleaved sample by sample so that a slow stretch
    of a shared machine lands on both instead of on one."""
    block_every_call(matmul, (x,), CALLS)  # warm-up: fifty calls, not recorded
    one = block_every_call(matmul, (x,), CALLS) * CALLS  # sizes the sample count
    count = choose_count(one, rec.config.budget_s, rec.config.min_samples)  # budget per variant
    at_end, every = [], []
    for _ in range(count):
        at_end.append(timed(time_loop, matmul, (x,), CALLS, calls=CALLS))
        every.append(timed(block_every_call, matmul, (x,), CALLS, calls=CALLS))
    return at_end, every


def measure(rec: Recorder) -> None:
    rng = np.random.default_rng(0)
    for n in sizes(rec):
        host = rng.standard_normal((n, n), dtype=np.float32)
        x = jax.block_until_ready(jax.device_put(host))
        err = check_close(matmul(x), host.astype(np.float64) @ host,
                          rtol=1e-3, atol=1e-3 * n, what=f"x @ x at n={n}")
        at_end, every = sample_both(rec, x)
        common = {"dtype": "float32", "shape": f"{n}x{n}", "params": {"n": n, "calls": CALLS},
                  "max_rel_error": err}
        rec.add("block-at-end", "loop", at_end, **common)
        rec.add("block-every-call", "completed", every, **common)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
