"""fig-block-placement: one block after the loop vs a block after every call.

The same jitted matmul is called ``CALLS`` times back to back; each sample is
the mean seconds per call. ``block-at-end`` (boundary ``loop``) lets the host
enqueue the next call while the current one runs: loop throughput.
``block-every-call`` (boundary ``completed``, averaged over the calls) waits
for each result before the next call: the latency of a caller that needs every
answer before it can go on. Both are sampled in shuffled rounds, every size in
one run, so a slow stretch of the machine lands on all of them.
"""

FIGURE = {
    "budget_s": 2.1,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Where the block goes: end of the loop vs every call",
    "caption": (
        "Blocking once after a loop and blocking after every call answer different questions: "
        "the first is the throughput of a pipelined loop, the second the per-request latency "
        "of a caller that waits on each result. How far apart they land depends on the call: "
        "<!-- bench:claim fig-block-placement slower('block-every-call', 'block-at-end', n='first') and same(n='last', margin=0.25) -->here they are a result apart for the small matmul, and for the large one the equivalence rule calls them the same within ±25 %<!-- /bench:claim -->; "  # noqa: E501
        "say which one you measured."
    ),
    "chapter": "what-the-clock-caught.md",
    "group_by": ["n"],
    "variants": ["block-at-end", "block-every-call"],
    "ratio": ["block-every-call", "block-at-end"],
    "headline": {"stat": "ratio", "n": 64},
}

# --8<-- [start:measure]
import jax
import numpy as np

from benchkit import Recorder, check_close, figure_main

CALLS = 50
matmul = jax.jit(lambda x: x @ x)


def sizes(rec: Recorder) -> list[int]:
    if rec.config.smoke:
        return [16]
    return [64, 512] + ([4096] if rec.config.accelerator else [])


def measure(rec: Recorder) -> None:
    rng = np.random.default_rng(0)
    with rec.interleaved() as cells:
        for n in sizes(rec):
            host = rng.standard_normal((n, n), dtype=np.float32)
            x = jax.block_until_ready(jax.device_put(host))
            err = check_close(matmul(x), host.astype(np.float64) @ host,
                              rtol=1e-3, atol=1e-3 * n, what=f"x @ x at n={n}")
            common = {"dtype": "float32", "shape": f"{n}x{n}", "params": {"n": n, "calls": CALLS},
                      "max_rel_error": err}
            # CALLS back-to-back calls, one block after the last, seconds per call.
            cells.collect("block-at-end", "loop", matmul, (x,), loop_calls=CALLS, **common)
            # CALLS calls, each waited on before the next: the mean of CALLS completed intervals.
            cells.collect("block-every-call", "completed", matmul, (x,), calls=CALLS, **common)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
