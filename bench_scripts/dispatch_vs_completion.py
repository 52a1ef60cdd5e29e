"""fig-dispatch-vs-completion: a jitted matmul timed at two boundaries.

``dispatch``: the call returned. ``completed``: the product is ready.
The first tracks the Python call and the enqueue; the second tracks the work.
"""

FIGURE = {
    "budget_s": 2.7,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Dispatch-only vs completed time of a jitted matmul",
    "caption": (
        "Stopping the clock when the call returns measures the dispatch path, not the "
        "matmul: <!-- bench:claim fig-dispatch-vs-completion growth('dispatch') * 10 < growth('completed') and ratio(n='last') > 10 -->from the smallest to the largest n the completed time grows far more than the dispatch time, which is a small fraction of it at the largest n<!-- /bench:claim -->. "  # noqa: E501
        "An unblocked timing loop reports your Python, not your program."
    ),
    "chapter": "what-the-clock-caught.md",
    "group_by": ["n"],
    "variants": ["dispatch", "completed"],
    "ratio": ["completed", "dispatch"],
    "headline": {"stat": "ratio", "n": 1024},
}

# --8<-- [start:measure]
import jax
import numpy as np

from benchkit import Recorder, check_close, figure_main

matmul = jax.jit(lambda x: x @ x)


def sizes(rec: Recorder) -> list[int]:
    if rec.config.smoke:
        return [16, 32]
    return [128, 512, 1024] + ([4096] if rec.config.accelerator else [])


def measure(rec: Recorder) -> None:
    rng = np.random.default_rng(0)
    # Every (boundary, size) cell is sampled in shuffled rounds: a slow stretch
    # of the machine lands on all of them, not on whichever came last.
    with rec.interleaved() as cells:
        for n in sizes(rec):
            host = rng.standard_normal((n, n), dtype=np.float32)
            x = jax.device_put(host)  # placed and ready before any clock starts
            x.block_until_ready()
            err = check_close(matmul(x), host.astype(np.float64) @ host,
                              rtol=1e-3, atol=1e-3 * n, what=f"x @ x at n={n}")
            common = dict(dtype="float32", shape=f"{n}x{n}", params={"n": n}, max_rel_error=err)
            # A dispatch sample waits for its output after the clock stops: a budget of timed
            # work alone would ask for the cap of samples, each a whole call of wall time.
            cells.collect("dispatch", "dispatch", matmul, (x,), maximum=30, **common)
            cells.collect("completed", "completed", matmul, (x,), **common)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
