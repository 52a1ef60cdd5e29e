"""fig-run-to-run-spread: the same script, R separate processes, nothing changed.

One workload (a jitted matmul, output ready) timed in every run. The spread of
samples inside one run (within-process) and the spread of the run medians
(between processes) are reported separately; the second bounds what a
comparison of two runs can resolve. Run it with R >= 5 (``make bench`` does).
"""

FIGURE = {
    "budget_s": 1.6,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Run-to-run spread of one unchanged workload",
    "caption": (
        "<!-- bench:claim fig-run-to-run-spread spread('completed') > within('completed') -->Separate processes running the identical script, spread over one session, did not agree on the median: their range is wider than the typical scatter inside one run<!-- /bench:claim -->. That between-run variation, not the scatter of samples inside one run, is "  # noqa: E501
        "what a claimed speed-up has to clear: the site's verdict rule ties its floor to it."
    ),
    "chapter": "what-the-clock-caught.md",
    "group_by": ["n"],
    "variants": ["completed"],
    "headline": {"stat": "median", "variant": "completed", "n": 1024},
}

# --8<-- [start:measure]
import jax
import numpy as np

from benchkit import Recorder, check_close, collect, figure_main

matmul = jax.jit(lambda x: x @ x)


def size(rec: Recorder) -> int:
    if rec.config.smoke:
        return 32
    return 4096 if rec.config.accelerator else 1024


def measure(rec: Recorder) -> None:
    n = size(rec)
    host = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    x = jax.block_until_ready(jax.device_put(host))
    err = check_close(matmul(x), host.astype(np.float64) @ host,
                      rtol=1e-3, atol=1e-3 * n, what=f"x @ x at n={n}")
    # Three times the usual minimum: this figure is about the spread, and a
    # within-run IQR from a handful of samples would itself be noise.
    samples = collect("completed", matmul, (x,), budget_s=rec.config.budget_s,
                      minimum=3 * rec.config.min_samples)
    rec.add("completed", "completed", samples, dtype="float32", shape=f"{n}x{n}", params={"n": n},
            max_rel_error=err)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
