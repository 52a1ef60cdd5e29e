"""fig-dtype-cost: one memory-bound and one compute-bound operation in four dtypes.

``axpy`` (``a * x + y`` over a long vector) does two FLOPs per element it
reads, so its time is set by bytes moved. ``matmul`` (n x n) does about n/6
FLOPs per byte moved at float32, so its time is set by arithmetic. Each is
timed in float32, bfloat16, float16 and float64, and checked against a float64
NumPy reference computed from the very same (already rounded) inputs, so the
error column is what the arithmetic and the output's rounding add. On a CPU the
axpy is sized from the last-level cache (read from sysfs, recorded in
``detail``) so that even the narrowest dtype's working set is several times
larger: no dtype's axpy runs from cache. All eight cells are sampled in
shuffled rounds.
"""

FIGURE = {
    "budget_s": 5.7,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "What a dtype costs: time, throughput and error of axpy and matmul",
    "caption": (
        "Halving the bytes per element is not the same as halving the time: whether a narrower "
        "dtype pays off depends on what bounds the operation and on what the hardware supports "
        "natively; <!-- bench:claim fig-dtype-cost faster('bfloat16', 'float32', op='axpy') and ratio('bfloat16', 'float32', op='matmul') > 1 -->here bfloat16 was a result faster than float32 for the memory-bound axpy, and for the matmul the slower of the two at the median<!-- /bench:claim -->. Read the time next to the error it buys, and the verdict on each pair of dtypes "  # noqa: E501
        "next to the time."
    ),
    "chapter": "diagnosing/dtypes-and-precision.md",
    "group_by": ["op"],
    "variants": ["float32", "bfloat16", "float16", "float64"],
    "metrics": ["bandwidth", "flop_rate", "error"],
    "headline": {"stat": "ratio", "a": "bfloat16", "b": "float32", "op": "matmul"},
}

# --8<-- [start:measure]
import math
import os
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from benchkit import Interleaved, Recorder, check_close, figure_main

A = 2.0  # axpy's scalar: a Python float is weakly typed, so it takes x's dtype
DTYPES = ("float32", "bfloat16", "float16", "float64")

axpy = jax.jit(lambda x, y: A * x + y)
matmul = jax.jit(lambda a, b: a @ b)

# Allowed error relative to the largest reference value, per dtype (a few
# units in the last place of each format, with room for a length-n sum).
TOLERANCE = {"float32": 1e-4, "bfloat16": 3e-2, "float16": 5e-3, "float64": 1e-10}

FALLBACK_LLC = 32 << 20  # when sysfs says nothing
LLC_MULTIPLE = 4  # the narrowest dtype's axpy working set, in last-level caches
ALL_ARRAYS_CAP = 4 << 30  # x, y and out of every dtype together, at most (and a quarter of free memory)
CHECKED = 1 << 16  # axpy is elementwise: a random subset of elements checks the compiled code
AXPY_SAMPLES = 5  # per run: a call streams gigabytes, and the spread that matters is between runs


def last_level_cache() -> tuple[int, str]:
    """Bytes of the last-level cache (level 3 in sysfs, else the largest level) and where it came from."""
    found = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            text = (index / "size").read_text().strip()
            size = int(text[:-1]) << {"K": 10, "M": 20, "G": 30}[text[-1]] if text[-1] in "KMG" else int(text)
        except (OSError, ValueError, KeyError, IndexError):
            continue
        if kind != "Instruction":
            found.append((level == 3, size, f"sysfs L{level}"))
    if not found:
        return FALLBACK_LLC, "fallback"
    _, size, source = max(found)
    return size, source


def available_memory() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) << 10
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def sizes(rec: Recorder) -> dict[str, int | str]:
    if rec.config.smoke:
        return {"axpy": 1 << 12, "matmul": 64, "llc": "smoke"}
    if rec.config.accelerator:
        return {"axpy": 1 << 26, "matmul": 4096, "llc": "accelerator"}
    # The narrowest dtype's working set (x, y and out: 3 x 2 bytes an element)
    # is LLC_MULTIPLE last-level caches, so no dtype's axpy runs from cache.
    llc, source = last_level_cache()
    wanted = math.ceil(LLC_MULTIPLE * llc / (3 * 2) / (1 << 20)) << 20
    per_element = 3 * sum(jnp.dtype(d).itemsize for d in DTYPES)  # every dtype's arrays live at once
    cap = (min(ALL_ARRAYS_CAP, available_memory() // 4) // per_element) >> 20 << 20
    n = min(wanted, cap)
    note = f"llc={llc >> 20} MiB ({source}); narrowest working set {3 * 2 * n / llc:.2g} x llc"
    return {"axpy": n, "matmul": 1024, "llc": note + ("; capped by memory" if n < wanted else "")}


def place(host: np.ndarray, dtype: str) -> jax.Array:
    x = jax.device_put(host.astype(jnp.dtype(dtype)))  # rounded once, on the host
    return x.block_until_ready()


def as_f64(x: jax.Array | np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.float64)  # the rounded values, exactly


def check(got: jax.Array | np.ndarray, want: np.ndarray, dtype: str, what: str) -> float:
    scale = float(np.max(np.abs(want)))
    return check_close(got, want, rtol=0.0, atol=TOLERANCE[dtype] * scale, what=f"{what} in {dtype}")


def under_x64(fn: Callable) -> Callable:
    """float64 needs x64 at trace and call time: switched on for each call only, so it
    cannot leak into the other dtypes' traces (a few microseconds per call, against
    milliseconds of work)."""
    def call(*args):
        with jax.enable_x64(True):
            return fn(*args)
    return call


def long_vector(block: np.ndarray, n: int, dtype: str) -> jax.Array:
    """``n`` elements: a random block, rounded once and tiled on the device (filling a
    gigabyte with fresh random numbers on the host would take longer than timing it)."""
    x = jnp.tile(place(block, dtype), n // block.size)
    return x.block_until_ready()


def time_axpy(cells: Interleaved, dtype: str, host: dict, llc: str) -> None:
    n, picked = host["n"], host["picked"]
    x, y = long_vector(host["x"], n, dtype), long_vector(host["y"], n, dtype)
    got = np.asarray(axpy(x, y))[picked]
    err = check(got, A * as_f64(np.asarray(x)[picked]) + as_f64(np.asarray(y)[picked]), dtype,
                f"axpy ({len(picked)} of {n} elements)")
    record(cells, "axpy", dtype, axpy, (x, y), shape=f"{n}", n=n, err=err,
           bytes_moved=3 * n * x.dtype.itemsize, flops=2 * n, detail=llc, minimum=AXPY_SAMPLES)


def time_matmul(cells: Interleaved, dtype: str, host: dict) -> None:
    a, b = place(host["a"], dtype), place(host["b"], dtype)
    n = a.shape[0]
    err = check(matmul(a, b), as_f64(a) @ as_f64(b), dtype, "matmul")
    record(cells, "matmul", dtype, matmul, (a, b), shape=f"{n}x{n}", n=n, err=err,
           bytes_moved=3 * n * n * a.dtype.itemsize, flops=2 * n**3, detail="")


def record(cells: Interleaved, op: str, dtype: str, fn: Callable, args: tuple, *, shape: str,
           n: int, err: float, bytes_moved: int, flops: int, detail: str, minimum: int | None = None) -> None:
    # The x64 flag is read where the arrays were made, so float64 rows say True
    # and every other row says False: the provenance column stays truthful.
    x64 = bool(jax.config.jax_enable_x64)
    cells.collect(dtype, "completed", under_x64(fn) if x64 else fn, args, dtype=dtype, shape=shape,
                  params={"op": op, "n": n}, max_rel_error=err, bytes_moved=float(bytes_moved),
                  flops=float(flops), jax_enable_x64=x64, detail=detail, minimum=minimum)


def measure_dtype(cells: Interleaved, dtype: str, host: dict, llc: str) -> None:
    time_axpy(cells, dtype, host, llc)
    time_matmul(cells, dtype, host)


def measure(rec: Recorder) -> None:
    n = sizes(rec)
    rng = np.random.default_rng(0)  # one set of values for every dtype, rounded differently
    block = min(n["axpy"], 1 << 20)  # n is a multiple of it
    host = {"n": n["axpy"], "x": rng.standard_normal(block, dtype=np.float32),
            "y": rng.standard_normal(block, dtype=np.float32),
            "picked": np.unique(rng.integers(0, n["axpy"], size=CHECKED)),  # a random subset, sorted
            "a": rng.standard_normal((n["matmul"], n["matmul"])),
            "b": rng.standard_normal((n["matmul"], n["matmul"]))}
    # Every (op, dtype) cell is sampled in shuffled rounds, float64 included:
    # its arrays are made, checked and called with x64 on, the rest with it off.
    with rec.interleaved() as cells:
        for dtype in DTYPES[:3]:
            measure_dtype(cells, dtype, host, n["llc"])
        with jax.enable_x64(True):
            measure_dtype(cells, "float64", host, n["llc"])
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
