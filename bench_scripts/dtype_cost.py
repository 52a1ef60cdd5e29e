"""fig-dtype-cost: one memory-bound and one compute-bound operation in four dtypes.

``axpy`` (``a * x + y`` over a long vector) does two FLOPs per element it
reads, so its time is set by bytes moved. ``matmul`` (n x n) does about n/6
FLOPs per byte moved at float32, so its time is set by arithmetic. Each is
timed in float32, bfloat16, float16 and float64, and checked against a float64
NumPy reference computed from the very same (already rounded) inputs, so the
error column is what the arithmetic and the output's rounding add.
"""

FIGURE = {
    "title": "What a dtype costs: time, throughput and error of axpy and matmul",
    "caption": (
        "Halving the bytes per element is not the same as halving the time: whether a narrower "
        "dtype pays off depends on what bounds the operation and on what the hardware supports "
        "natively. Read the time next to the error it buys, and only call a difference that is "
        "larger than the run-to-run spread."
    ),
    "chapter": "diagnosing/dtypes-and-precision.md",
    "group_by": ["op"],
    "variants": ["float32", "bfloat16", "float16", "float64"],
    "metrics": ["bandwidth", "flop_rate", "error"],
}

# --8<-- [start:measure]
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from harness import Recorder, check_close, figure_main

A = 2.0  # axpy's scalar: a Python float is weakly typed, so it takes x's dtype

axpy = jax.jit(lambda x, y: A * x + y)
matmul = jax.jit(lambda a, b: a @ b)

# Allowed error relative to the largest reference value, per dtype (a few
# units in the last place of each format, with room for a length-n sum).
TOLERANCE = {"float32": 1e-4, "bfloat16": 3e-2, "float16": 5e-3, "float64": 1e-10}


def sizes(rec: Recorder) -> dict[str, int]:
    if rec.config.smoke:
        return {"axpy": 1 << 12, "matmul": 64}
    if rec.config.accelerator:
        return {"axpy": 1 << 26, "matmul": 4096}
    # On this CPU an output of 32 MB or more comes back from the allocator as
    # fresh pages on every call; 3 Mi elements keeps even float64 below that.
    return {"axpy": 3 << 20, "matmul": 1024}


def place(host: np.ndarray, dtype: str) -> jax.Array:
    x = jax.device_put(host.astype(jnp.dtype(dtype)))  # rounded once, on the host
    return x.block_until_ready()


def as_f64(x: jax.Array) -> np.ndarray:
    return np.asarray(x).astype(np.float64)  # the rounded values, exactly


def check(got: jax.Array, want: np.ndarray, dtype: str, what: str) -> float:
    scale = float(np.max(np.abs(want)))
    return check_close(got, want, rtol=0.0, atol=TOLERANCE[dtype] * scale, what=f"{what} in {dtype}")


def time_axpy(rec: Recorder, dtype: str, n: int, rng: np.random.Generator) -> None:
    x, y = (place(rng.standard_normal(n), dtype) for _ in range(2))
    err = check(axpy(x, y), A * as_f64(x) + as_f64(y), dtype, "axpy")
    record(rec, "axpy", dtype, axpy, (x, y), shape=f"{n}", n=n, err=err,
           bytes_moved=3 * n * x.dtype.itemsize, flops=2 * n)


def time_matmul(rec: Recorder, dtype: str, n: int, rng: np.random.Generator) -> None:
    a, b = (place(rng.standard_normal((n, n)), dtype) for _ in range(2))
    err = check(matmul(a, b), as_f64(a) @ as_f64(b), dtype, "matmul")
    record(rec, "matmul", dtype, matmul, (a, b), shape=f"{n}x{n}", n=n, err=err,
           bytes_moved=3 * n * n * a.dtype.itemsize, flops=2 * n**3)


def record(rec: Recorder, op: str, dtype: str, fn: Callable, args: tuple, *, shape: str,
           n: int, err: float, bytes_moved: int, flops: int) -> None:
    # The x64 flag is read at the moment of measuring, so float64 rows say True
    # and every other row says False: the provenance column stays truthful.
    rec.collect(dtype, "completed", fn, args, dtype=dtype, shape=shape,
                params={"op": op, "n": n}, max_rel_error=err, bytes_moved=float(bytes_moved),
                flops=float(flops), jax_enable_x64=bool(jax.config.jax_enable_x64))


def measure_dtype(rec: Recorder, dtype: str) -> None:
    rng = np.random.default_rng(0)  # same values for every dtype, rounded differently
    n = sizes(rec)
    time_axpy(rec, dtype, n["axpy"], rng)
    time_matmul(rec, dtype, n["matmul"], rng)


def measure(rec: Recorder) -> None:
    for dtype in ("float32", "bfloat16", "float16"):
        measure_dtype(rec, dtype)
    # float64 needs x64; the context manager switches it on for this block only,
    # after every other dtype is done, so it cannot leak into their traces.
    with jax.enable_x64(True):
        measure_dtype(rec, "float64")
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
