"""fig-statistic-choice: one workload, three honest numbers.

The same jitted matmul is sampled two ways in one process: ``isolated``
(boundary ``completed``: one call, output ready, then the next sample) and
``loop`` (boundary ``loop``: ``CALLS`` back-to-back calls, one block at the
end, seconds per call). The page reports the minimum and the median of the
isolated calls and the mean of the loop; every sample is kept, so each
statistic is derived from the same rows.
"""

FIGURE = {
    "title": "Min, median or mean: one workload, three numbers",
    "caption": (
        "The minimum of isolated calls, their median and the mean of a back-to-back loop are "
        "all honest and still disagree: the minimum is the luckiest call, the median the "
        "typical one, and the loop mean includes the tail but hides the dispatch round trip. "
        "Compare implementations on the minimum or median; quote throughput as a loop mean; "
        "always say which one a number is."
    ),
    "chapter": "what-the-clock-caught.md",
    "group_by": ["n"],
    "variants": ["isolated", "loop"],
    "ratio": ["isolated", "loop"],
}

# --8<-- [start:measure]
import jax
import numpy as np

from harness import Recorder, Sample, check_close, figure_main, time_completed, time_loop, timed
from harness.timing import choose_count

CALLS = 50
matmul = jax.jit(lambda x: x @ x)


def sizes(rec: Recorder) -> list[int]:
    """A call that is mostly dispatch and one that is mostly compute."""
    if rec.config.smoke:
        return [16]
    return [64, 512] + ([4096] if rec.config.accelerator else [])


def sample_both(rec: Recorder, x: jax.Array) -> tuple[list[Sample], list[Sample]]:
    """Isolated calls and loop samples, interleaved in rounds so that a slow
    stretch of a shared machine lands on both instead of on one."""
    for _ in range(3):
        jax.block_until_ready(matmul(x))  # warm-up, not recorded
    budget, least = rec.config.budget_s, rec.config.min_samples
    rounds = choose_count(time_loop(matmul, (x,), CALLS) * CALLS, budget, least)
    per_round = max(1, choose_count(time_completed(matmul, (x,)), budget, least) // rounds)
    isolated, loop = [], []
    for _ in range(rounds):
        isolated += [timed(time_completed, matmul, (x,)) for _ in range(per_round)]
        loop.append(timed(time_loop, matmul, (x,), CALLS, calls=CALLS))
    return isolated, loop


def measure(rec: Recorder) -> None:
    rng = np.random.default_rng(0)
    for n in sizes(rec):
        host = rng.standard_normal((n, n), dtype=np.float32)
        x = jax.block_until_ready(jax.device_put(host))
        err = check_close(matmul(x), host.astype(np.float64) @ host,
                          rtol=1e-3, atol=1e-3 * n, what=f"x @ x at n={n}")
        isolated, loop = sample_both(rec, x)
        common = {"dtype": "float32", "shape": f"{n}x{n}", "params": {"n": n}, "max_rel_error": err}
        rec.add("isolated", "completed", isolated, **common)
        rec.add("loop", "loop", loop, **common)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
