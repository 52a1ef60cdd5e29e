"""Reference solutions for the lesson "Benchmark asynchronous work correctly".

The notebook shows each function's source in a collapsed fold and then runs
it, so the solution on the page is the code that produced the output below it.
They time with the project's harness, ``benchkit`` (installed into the venv by ``make venv``).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from benchkit import Sample, check_close, collect


def placed_inputs(rows: int, features: int,
                  seed: int) -> tuple[np.ndarray, np.ndarray, Any, Any]:
    """Host copies (for the NumPy check) and device copies, ready before
    any clock starts."""
    rng = np.random.default_rng(seed)
    x_host = rng.standard_normal((rows, features), dtype=np.float32)
    w_host = (rng.standard_normal((features, features), dtype=np.float32)
              / np.float32(np.sqrt(features)))
    x, w = jax.device_put((x_host, w_host))
    jax.block_until_ready((x, w))
    return x_host, w_host, x, w


def warm_summary(samples: list[Sample],
                 shape: tuple[int, ...]) -> dict[str, object]:
    times = [s.time_s for s in samples]
    return {"output shape": shape, "samples": len(times),
            "T_warm (ms)": round(statistics.median(times) * 1e3, 3),
            "compiles inside the samples": sum(s.compiles for s in samples)}


# --- Exercise: a taller batch ------------------------------------------------
def taller_batch(layer: Callable, features: int,
                 repeats: int) -> dict[str, object]:
    rows = 96  # the new workload; the feature width stays as it was
    x_host, w_host, x, w = placed_inputs(rows, features, seed=96)
    # A new row count is a new shape: this call compiles a new specialisation.
    out = layer(x, w)
    reference = np.tanh(x_host.astype(np.float64) @ w_host)
    check_close(out, reference, rtol=1e-4, atol=1e-4,
                what="tanh layer with the taller batch")
    samples = collect("completed", layer, (x, w),
                      minimum=repeats, maximum=repeats)
    return warm_summary(samples, out.shape)


# --- Exercise: a squared-sum reduction ---------------------------------------
@jax.jit
def row_energy(x: jax.Array, w: jax.Array) -> jax.Array:
    return jnp.sum((x @ w) ** 2, axis=1)  # one value per row


def squared_sum(rows: int, features: int,
                repeats: int) -> dict[str, object]:
    x_host, w_host, x, w = placed_inputs(rows, features, seed=7)
    out = row_energy(x, w)
    # Summing over the wrong axis (or everything) would still time fine; the
    # shape says which reduction actually ran.
    assert out.shape == (rows,), f"expected one value per row, got {out.shape}"
    reference = np.sum((x_host.astype(np.float64) @ w_host) ** 2, axis=1)
    check_close(out, reference, rtol=1e-4, atol=1e-3,
                what="row-wise squared sum")
    samples = collect("completed", row_energy, (x, w),
                      minimum=repeats, maximum=repeats)
    return warm_summary(samples, out.shape)


# --- Exercise: repair the broken timer ---------------------------------------
def repaired_benchmark(rows: int, features: int,
                       repeats: int) -> dict[str, object]:
    # Setup happens before any clock: data, placement, wait.
    x_host, w_host, x, w = placed_inputs(rows, features, seed=0)
    fn = jax.jit(lambda a, b: jnp.tanh(a @ b))
    out = fn(x, w)  # the first call compiles here, outside every interval
    reference = np.tanh(x_host.astype(np.float64) @ w_host)
    check_close(out, reference, rtol=1e-4, atol=1e-4, what="repaired benchmark")
    # collect() warms the compiled function, then blocks on the output inside
    # every interval ("completed"); it also counts compiles per sample.
    samples = collect("completed", fn, (x, w),
                      minimum=repeats, maximum=repeats)
    return warm_summary(samples, out.shape)
