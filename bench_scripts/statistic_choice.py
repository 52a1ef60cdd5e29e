"""fig-statistic-choice: one workload, three honest numbers.

The same jitted matmul is sampled two ways in one process, interleaved in
shuffled rounds: ``isolated`` (boundary ``completed``: one call per sample,
waited on before the next; this figure is about the statistics of single
calls, so it does not average several fast calls into one sample) and
``loop`` (boundary ``loop``: ``CALLS`` back-to-back calls, one block at the
end, seconds per call). The page reports the minimum and the median of the
isolated calls and the mean of the loop; every sample is kept, so each
statistic is derived from the same rows.
"""

FIGURE = {
    "budget_s": 1.7,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Min, median or mean: one workload, three numbers",
    "caption": (
        "The minimum of isolated calls, their median and the mean of a back-to-back loop are "
        "all honest and <!-- bench:claim fig-statistic-choice slower('isolated', 'loop', n='first') -->still disagree, at least for the small matmul<!-- /bench:claim -->: the minimum is the luckiest call, the median the "  # noqa: E501
        "typical one, and the loop mean includes the tail but hides the dispatch round trip. "
        "Compare implementations on the minimum or median; quote throughput as a loop mean; "
        "always say which one a number is."
    ),
    "chapter": "what-the-clock-caught.md",
    "group_by": ["n"],
    "variants": ["isolated", "loop"],
    "ratio": ["isolated", "loop"],
    "headline": {"stat": "ratio", "n": 64},
}

# --8<-- [start:measure]
import jax
import numpy as np

from benchkit import Recorder, check_close, figure_main

CALLS = 50
matmul = jax.jit(lambda x: x @ x)


def sizes(rec: Recorder) -> list[int]:
    """A call that is mostly dispatch and one that is mostly compute."""
    if rec.config.smoke:
        return [16]
    return [64, 512] + ([4096] if rec.config.accelerator else [])


def measure(rec: Recorder) -> None:
    rng = np.random.default_rng(0)
    # Isolated calls and loop samples of every size, interleaved in shuffled
    # rounds so that a slow stretch of a shared machine lands on all of them.
    with rec.interleaved() as cells:
        for n in sizes(rec):
            host = rng.standard_normal((n, n), dtype=np.float32)
            x = jax.block_until_ready(jax.device_put(host))
            err = check_close(matmul(x), host.astype(np.float64) @ host,
                              rtol=1e-3, atol=1e-3 * n, what=f"x @ x at n={n}")
            common = {"dtype": "float32", "shape": f"{n}x{n}", "params": {"n": n},
                      "max_rel_error": err}
            cells.collect("isolated", "completed", matmul, (x,), calls=1, **common)
            cells.collect("loop", "loop", matmul, (x,), loop_calls=CALLS, **common)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
