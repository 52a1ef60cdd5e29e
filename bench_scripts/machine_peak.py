"""fig-machine-peak: what this machine can reach, and where a few workloads sit below it.

Two probes measure the achieved ceilings on the machine itself: a large
matmul per dtype the machine runs natively (``probe=compute``: its FLOP/s is
the compute ceiling) and a stream over arrays larger than the last-level
cache (``probe=memory``: ``axpy``, ``a*x + y``, whose bytes per second are the memory
ceiling). The memory probe writes its result into the buffer of ``y``, donated
(``donate_argnums``), and the next call takes that result as its ``y``: a fresh
output of hundreds of megabytes would be new memory on every call, and the kernel's
page faults on its first touch would sit inside the timed interval. The same stream
with a fresh output each call is measured beside it (``probe=memory-fresh``), and
every sample records its page faults (``minflt``). A small set of
workloads (``probe=workload``: small matmuls, an in-cache axpy and one SGD
step of a tanh MLP) is measured in the same shuffled rounds, so the roofline
(``fig-roofline`` on the chapter page, drawn from this figure's rows) places
each at its arithmetic intensity under the ceilings of the same runs.

Every workload is compiled ahead of time (``jit(f).lower(*args).compile()``) and
that executable is both timed and asked for its counts: FLOPs and bytes of
every row come from ``compiled.cost_analysis()``,
cross-checked against the analytic count (2·n³ flops and 3·n² elements for a
matmul, 2 flops and 3 elements per axpy element, ...). Where the two disagree
by more than ``COUNT_TOLERANCE`` the analytic count is used, and ``detail``
says so with both numbers; where jax returns nothing, the analytic count is
used; the MLP step has no analytic byte count, so its bytes are jax's.
"""

FIGURE = {
    "budget_s": 2.7,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "The machine's ceilings: peak matmul FLOP/s, streaming bandwidth, and a few workloads",
    "caption": (
        "The compute ceiling is the FLOP/s of a large matmul, the memory ceiling the bandwidth of "
        "a stream over arrays larger than the last-level cache; both are what this machine "
        "reached, not what a datasheet promises. The small matmuls, the in-cache axpy and the "
        "MLP step are the workloads the roofline places under those ceilings."
    ),
    "chapter": "how-good-is-this-number.md",
    "group_by": ["op", "n"],
    "variants": ["float32", "bfloat16", "float16", "float64"],
    "metrics": ["flop_rate", "bandwidth"],
    "headline": {"stat": "median", "variant": "float32", "op": "matmul", "n": 1024},
}

# --8<-- [start:measure]
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from benchkit import Interleaved, Recorder, ReferenceMismatch, Sample, check_close, figure_main, time_completed, timed

COUNT_TOLERANCE = 0.25  # cost_analysis vs analytic count: beyond this relative gap, use the analytic one
TOLERANCE = {"float32": 1e-4, "bfloat16": 3e-2, "float16": 5e-3, "float64": 1e-10}
ACCELERATOR_FLOAT32 = 3e-2  # a float32 matmul at default precision may use TF32 (GPU) or bfloat16 passes (TPU)
CHECKED_ROWS = 64  # a large matmul is checked on its first rows: a full float64 reference would take minutes
STREAM_SAMPLES = 3  # per run, fresh output: one call streams hundreds of megabytes and faults them in
DONATED_SAMPLES = 10  # per run, donated output: no page faults, a call is over ten times cheaper
FALLBACK_LLC = 32 << 20
STREAM_OVER_LLC = 4  # the memory probe's working set, in last-level caches
A = 2.0

matmul = jax.jit(lambda a, b: a @ b)
axpy = jax.jit(lambda x, y: A * x + y)
gather = jax.jit(lambda v, i: v[i])  # a few elements of a long vector, for the reference check


def mlp_loss(params: list[tuple[jax.Array, jax.Array]], x: jax.Array, y: jax.Array) -> jax.Array:
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return jnp.mean((x @ w + b - y) ** 2)


@jax.jit
def mlp_step(params, x, y):
    grads = jax.grad(mlp_loss)(params, x, y)
    return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)]


def last_level_cache() -> int:
    sizes = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
            sizes.append(int(text[:-1]) << {"K": 10, "M": 20, "G": 30}[text[-1]])
        except (OSError, ValueError, KeyError, IndexError):
            continue
    return max(sizes, default=FALLBACK_LLC)


def plan(rec: Recorder) -> dict:
    """Sizes and dtypes: the probes' and the workloads'."""
    platform = rec.config.platform
    if rec.config.smoke:
        return {"probe_n": 128, "dtypes": ("float32",), "stream": 1 << 16, "small": (32,),
                "cache_axpy": 1 << 12, "mlp": (32, 64, 3), "llc": "smoke"}
    if rec.config.accelerator:
        dtypes = ("float32", "bfloat16", "float16") if platform == "gpu" else ("float32", "bfloat16")
        return {"probe_n": 8192, "dtypes": dtypes, "stream": 1 << 28, "small": (64, 256, 2048),
                "cache_axpy": 1 << 16, "mlp": (1024, 2048, 4), "llc": "accelerator"}
    # CPU: float32 and float64 are native everywhere; 16-bit types are emulated on
    # most CPUs (fig-dtype-cost), so they are no ceiling. The axpy's three float32
    # arrays together are about STREAM_OVER_LLC times the last-level cache, so that
    # almost every byte comes from memory, not from a cache that holds a third of it.
    llc = last_level_cache()
    stream = max(1, int(STREAM_OVER_LLC * llc / 12) >> 20) << 20  # elements, whole MiB-element blocks
    return {"probe_n": 1024, "dtypes": ("float32", "float64"), "stream": stream,
            "small": (64, 256), "cache_axpy": 1 << 14, "mlp": (128, 256, 3),
            "llc": f"llc={llc >> 20} MiB; working set {12 * stream / llc:.1f} x llc"}


def cost_counts(compiled: Any) -> tuple[float | None, float | None]:
    """(flops, bytes accessed) from the compiled program's cost analysis; None where missing."""
    try:
        cost = compiled.cost_analysis()
    except Exception:  # noqa: BLE001 - a backend without cost analysis: the analytic count stands
        return None, None
    if isinstance(cost, (list, tuple)):
        cost = cost[0] if cost else {}
    cost = cost or {}

    def get(key: str) -> float | None:
        v = cost.get(key)
        return float(v) if v is not None and float(v) > 0 else None
    return get("flops"), get("bytes accessed")


def pick(what: str, jax_count: float | None, analytic: float | None) -> tuple[float, str]:
    """The count to record and a sentence saying which and why."""
    if jax_count is None and analytic is None:
        raise ValueError(f"no {what} count")
    if jax_count is None:
        return analytic, f"{what}: cost_analysis gave none, analytic {analytic:.3g} used"
    if analytic is None:
        return jax_count, f"{what}: cost_analysis {jax_count:.3g} used (no analytic count)"
    gap = abs(jax_count / analytic - 1)
    if gap <= COUNT_TOLERANCE:
        return jax_count, (f"{what}: cost_analysis {jax_count:.3g}, analytic {analytic:.3g}, "
                           f"agree within {COUNT_TOLERANCE:.0%}: cost_analysis used")
    return analytic, (f"{what}: cost_analysis {jax_count:.3g}, analytic {analytic:.3g}, differ by "
                      f"{gap:.0%}: analytic used (exact for this op; jax's count is an estimate)")


def compiled_with_counts(fn: Callable, args: tuple, flops: float | None,
                         nbytes: float | None) -> tuple[Callable, dict]:
    """Compile ``fn`` for ``args`` ahead of time: the executable that is timed is the one
    whose cost analysis gave the counts (and nothing is compiled twice)."""
    compiled = fn.lower(*args).compile()
    jax_flops, jax_bytes = cost_counts(compiled)
    f, f_note = pick("flops", jax_flops, flops)
    b, b_note = pick("bytes", jax_bytes, nbytes)
    return compiled, {"flops": f, "bytes_moved": b, "detail": f"{f_note}; {b_note}"}


def add_matmul(cells: Interleaved, rng: np.random.Generator, n: int, dtype: str, probe: str,
               maximum: int, accelerator: bool) -> None:
    host_a, host_b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    a = jax.device_put(host_a.astype(jnp.dtype(dtype))).block_until_ready()
    b = jax.device_put(host_b.astype(jnp.dtype(dtype))).block_until_ready()
    size = jnp.dtype(dtype).itemsize
    fn, columns = compiled_with_counts(matmul, (a, b), 2.0 * n**3, 3.0 * n * n * size)
    rows = min(n, CHECKED_ROWS)
    want = np.asarray(a)[:rows].astype(np.float64) @ np.asarray(b).astype(np.float64)
    tol = ACCELERATOR_FLOAT32 if accelerator and dtype == "float32" else TOLERANCE[dtype]
    err = check_close(np.asarray(fn(a, b))[:rows], want, rtol=0.0, atol=tol * np.abs(want).max(),
                      what=f"{n}x{n} matmul in {dtype} (first {rows} rows)")
    # The x64 flag as it was where the arrays were made: True on the float64 rows only.
    cells.collect(dtype, "completed", fn, (a, b), dtype=dtype, shape=f"{n}x{n}",
                  params={"op": "matmul", "n": n, "probe": probe}, max_rel_error=err,
                  jax_enable_x64=bool(jax.config.jax_enable_x64), maximum=maximum,
                  minimum=min(maximum, 10), **columns)


def stream_sampler(fn: Callable, args: tuple) -> Callable[[], Sample]:
    """Samples of one call of ``fn`` on a fresh output each call (its page faults inside)."""
    return lambda: timed(time_completed, fn, args)


def donated_sampler(fn: Callable, x: jax.Array, y: jax.Array) -> Callable[[], Sample]:
    """Samples of ``y <- fn(x, y)`` with ``y`` donated: the output reuses the buffer of the
    input it replaces, so no call writes to memory the process has not touched before."""
    state = {"y": y}

    def sample() -> Sample:
        def one() -> float:
            t0 = time.perf_counter()
            state["y"] = fn(x, state["y"])
            state["y"].block_until_ready()
            return time.perf_counter() - t0
        return timed(one)
    return sample


def add_axpy(cells: Interleaved, rng: np.random.Generator, n: int, probe: str, detail: str,
             maximum: int) -> None:
    """``a*x + y`` over float32 vectors of ``n`` elements, tiled from a random block on the
    device (filling hundreds of megabytes with fresh random numbers would cost more than
    timing them), checked on a random subset of elements gathered on the device."""
    block = min(n, 1 << 20)
    x, y = (jnp.tile(jax.device_put(rng.standard_normal(block, dtype=np.float32)), n // block)
            for _ in range(2))
    fn, counted = compiled_with_counts(axpy, (x, y), 2.0 * n, 4.0 * 3 * n)
    picked = jax.device_put(np.unique(rng.integers(0, n, size=min(n, 1 << 14))))
    got, hx, hy = (np.asarray(gather(v, picked)).astype(np.float64) for v in (fn(x, y), x, y))
    err = check_close(got, A * hx + hy, rtol=1e-6, atol=1e-6, what=f"axpy n={n}")
    columns = {"dtype": "float32", "shape": f"{n}", "params": {"op": "axpy", "n": n, "probe": probe},
               "max_rel_error": err, **counted}
    columns["detail"] = f"{columns['detail']}; {detail}"
    if probe == "memory":  # each call streams hundreds of MB: a few samples, one warm-up call
        donating = jax.jit(lambda x, y: A * x + y, donate_argnums=1).lower(x, y).compile()
        chained = donated_sampler(donating, x, y + 0)  # a copy of y: the chain consumes its own
        cells.sample("float32", "completed", chained, DONATED_SAMPLES, warmup=chained, **columns)
        # its own op name too: the table's rows are (op, n), and this is another program's row
        fresh = {**columns, "params": {**columns["params"], "op": "axpy-fresh-output", "probe": "memory-fresh"},
                 "detail": columns["detail"] + "; a fresh output buffer each call: its first-touch "
                                               "page faults inside the interval"}
        cells.sample("float32", "completed", stream_sampler(fn, (x, y)), STREAM_SAMPLES,
                     warmup=lambda: fn(x, y).block_until_ready(), **fresh)
    else:
        cells.collect("float32", "completed", fn, (x, y), maximum=maximum, **columns)


def add_mlp(cells: Interleaved, rng: np.random.Generator, batch: int, width: int, layers: int,
            maximum: int) -> None:
    dims = [width] * (layers + 1)
    params = [(jax.device_put(rng.standard_normal((i, o), dtype=np.float32) / math.sqrt(i)),
               jax.device_put(np.zeros(o, np.float32))) for i, o in zip(dims[:-1], dims[1:])]
    x = jax.device_put(rng.standard_normal((batch, width), dtype=np.float32))
    y = jax.device_put(rng.standard_normal((batch, width), dtype=np.float32))
    args = jax.block_until_ready((params, x, y))
    matmul_flops = sum(2.0 * batch * i * o for i, o in zip(dims[:-1], dims[1:]))
    # Analytic flops of the matmuls: forward 2·B·din·dout per layer, backward twice that,
    # less the first layer's input gradient, which nothing needs.
    analytic = 3 * matmul_flops - 2.0 * batch * dims[0] * dims[1]
    fn, columns = compiled_with_counts(mlp_step, args, analytic, None)
    # Reference: one step of plain gradient descent must lower the loss (a step, not noise).
    loss = jax.jit(mlp_loss)
    before, after = float(loss(params, x, y)), float(loss(fn(*args), x, y))
    if not after < before:
        raise ReferenceMismatch(f"MLP step raised the loss: {before:.4g} -> {after:.4g}")
    cells.collect("float32", "completed", fn, args, dtype="float32", shape=f"{batch}x{width}",
                  params={"op": "mlp-step", "n": width, "probe": "workload", "layers": layers},
                  maximum=maximum, **columns)


def measure(rec: Recorder) -> None:
    p = plan(rec)
    rng = np.random.default_rng(0)
    small = 5 if rec.config.smoke else 20  # samples per workload cell, at most
    accel = rec.config.accelerator
    with rec.interleaved() as cells:
        for dtype in p["dtypes"]:
            if dtype == "float64":
                with jax.enable_x64(True):
                    add_matmul(cells, rng, p["probe_n"], dtype, "compute", 6, accel)
            else:
                add_matmul(cells, rng, p["probe_n"], dtype, "compute", 6, accel)
        add_axpy(cells, rng, p["stream"], "memory", p["llc"], STREAM_SAMPLES)
        for n in p["small"]:
            add_matmul(cells, rng, n, "float32", "workload", small, accel)
        add_axpy(cells, rng, p["cache_axpy"], "workload", "in cache", small)
        add_mlp(cells, rng, *p["mlp"], small)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
