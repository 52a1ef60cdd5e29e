"""fig-naive-vs-blocked: one large jitted matmul, timed the naive way and blocked.

``naive``: the clock stops when the call returns (boundary ``dispatch``).
``blocked``: the clock stops when the product is ready (boundary ``completed``).
The size depends on the platform and is recorded in ``shape`` and ``params``.
"""

FIGURE = {
    "budget_s": 4.7,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Naive vs blocked timing of a large jitted matmul",
    "caption": (
        "Stopping the clock when the call returns catches only the dispatch: "
        "<!-- bench:claim fig-naive-vs-blocked result() and ratio() > 100 -->the naive time is a small fraction of the blocked one<!-- /bench:claim -->, because "  # noqa: E501
        "control came back to Python long before the product existed. Only the blocked time "
        "measures the matmul."
    ),
    "chapter": "asynchronous-dispatch.md",
    "group_by": ["n"],
    "variants": ["naive", "blocked"],
    "ratio": ["blocked", "naive"],
    "headline": {"stat": "ratio"},
}

# --8<-- [start:measure]
import jax
import numpy as np

from benchkit import Recorder, check_close, figure_main

matmul = jax.jit(lambda a, b: a @ b)
CHECKED_ROWS = 32


def size(rec: Recorder) -> int:
    # Long enough that the product dwarfs a dispatch; short enough that five
    # runs fit the figure's time budget on each kind of machine.
    if rec.config.smoke:
        return 64
    return 8192 if rec.config.accelerator else 2048


def check_rows(a: jax.Array, b: jax.Array, a_host: np.ndarray, b_host: np.ndarray) -> float:
    # A float64 reference of the whole product costs the host seconds at
    # n = 8192; a random set of rows exercises the same compiled code.
    n = a_host.shape[0]
    rows = np.random.default_rng(1).choice(n, size=min(n, CHECKED_ROWS), replace=False)
    return check_close(matmul(a, b)[rows], a_host[rows].astype(np.float64) @ b_host,
                       rtol=1e-3, atol=1e-3 * n, what=f"a @ b at n={n}, {len(rows)} rows")


def async_setting() -> str:
    # The CPU backend dispatches asynchronously unless this option is off; it
    # decides what the naive column shows there, so every row records it.
    name = "jax_cpu_enable_async_dispatch"
    return f"{name}={jax.config.values.get(name, 'absent')}"


def measure(rec: Recorder) -> None:
    n = size(rec)
    rng = np.random.default_rng(0)
    a_host, b_host = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    a, b = jax.block_until_ready(jax.device_put((a_host, b_host)))  # ready before any clock
    common = dict(dtype="float32", shape=f"{n}x{n}", params={"n": n},
                  max_rel_error=check_rows(a, b, a_host, b_host), flops=2.0 * n**3,
                  bytes_moved=3.0 * n * n * 4,  # a, b and the output once each: the least traffic
                  detail=async_setting())
    # naive: t0 = perf_counter(); c = matmul(a, b); t1 = perf_counter().
    # The harness waits for c after t1, so every sample starts with an idle
    # device; that wait, a full matmul per sample, is why naive samples are capped.
    with rec.interleaved() as cells:  # the two sampled in shuffled rounds, not one after the other
        cells.collect("naive", "dispatch", matmul, (a, b), maximum=10, **common)
        # blocked: the same call, with c.block_until_ready() before t1.
        cells.collect("blocked", "completed", matmul, (a, b), **common)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
