"""fig-jax-vs-numpy: the same operation in NumPy, un-jitted ``jnp`` and jitted JAX, tiny to large.

Two operations: ``axpy`` (``2*x + y`` on vectors of ``n`` elements) and ``matmul``
(``a @ b`` on n x n matrices), each over a ladder of sizes, in float32, at the
completed boundary (a NumPy call is synchronous; a JAX call is waited on with
``block_until_ready``), warm: every variant has run before the clock starts, so
the un-jitted ``jnp`` calls have compiled their per-shape kernels already
(fig-first-use-costs times that first use). Every (op, n, variant) cell is a
sampler of the same shape: a fast call is repeated ``k`` times per sample so
that one sample spans about a millisecond, and a NumPy result is not passed
through ``jax.block_until_ready`` (that walk would be charged to NumPy alone).
All cells are sampled in shuffled rounds. Where the jit and NumPy curves cross
(the smallest size where jitted JAX is faster, interpolated between ladder
steps) is computed per run on the page.

``op=to-host`` (fig-transfer-cost's question, measured here because a figure of
its own would not fit the time budget of a ``make bench`` run): a jitted
``2 * x`` with an output of ``n`` float32 elements, ended three ways:
``block`` (``f(x).block_until_ready()``: ready on the device), ``asarray``
(``np.asarray(f(x))``: ready and handed to NumPy on the host, a device-to-host
copy on an accelerator, maybe nothing on a CPU) and ``copy-only``
(``np.asarray(out)`` of an output already ready, a fresh output every sample:
jax keeps an array's NumPy value once made). ``detail`` says whether
``np.asarray`` returned a view of the device buffer (same address: no copy);
``bytes_moved`` is the output's size where a copy was made (none for a view, none
for ``block``), so the bandwidth table has a row only where bytes moved.
"""

FIGURE = {
    "title": "JAX against NumPy: a fixed cost per call against a cost per element",
    "caption": (
        "The same work in NumPy, un-jitted jnp and jitted JAX, from tiny to large. The question "
        "is whether a fixed cost per JAX call (dispatch, once per primitive for un-jitted jnp) "
        "explains NumPy's lead at small sizes, and where, if anywhere, the jit and NumPy curves "
        "cross on this machine: read the ratio column and its verdicts, not the shape of one run. "
        "The to-host rows compare waiting for a result with handing it to NumPy."
    ),
    "chapter": "how-good-is-this-number.md",
    "group_by": ["op", "n"],
    "variants": ["numpy", "jnp", "jit", "block", "asarray", "copy-only"],
    "ratio": ["jit", "numpy"],
    "metrics": ["bandwidth"],
    "headline": {"stat": "ratio", "op": "axpy", "n": 16},
}

# --8<-- [start:measure]
import functools
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from benchkit import Recorder, Sample, check_close, figure_main
from benchkit.timing import choose_calls, time_completed, timed


def np_axpy(x, y):
    return 2.0 * x + y


def jnp_axpy(x, y):  # un-jitted: two primitives, two dispatches
    return 2.0 * x + y


jit_axpy = jax.jit(jnp_axpy)
jit_matmul = jax.jit(jnp.matmul)
OPS = {"axpy": {"numpy": np_axpy, "jnp": jnp_axpy, "jit": jit_axpy},
       "matmul": {"numpy": np.matmul, "jnp": jnp.matmul, "jit": jit_matmul}}


def ladder(rec: Recorder) -> dict[str, list[int]]:
    if rec.config.smoke:
        return {"axpy": [16], "matmul": [8], "to-host": [4096]}
    if rec.config.accelerator:
        return {"axpy": [16, 1 << 10, 1 << 16, 1 << 20, 1 << 24], "matmul": [8, 64, 512, 2048],
                "to-host": [1 << 22, 1 << 26]}
    return {"axpy": [16, 1 << 10, 1 << 16, 1 << 20], "matmul": [8, 64, 512], "to-host": [1 << 16, 1 << 22]}


def no_wait(out):  # a NumPy result is ready when the call returns
    return out


def wait(out):
    return out.block_until_ready()


def sampler(fn: Callable, args: tuple, block: Callable) -> Callable:
    """Samples of ``fn(*args)`` at the completed boundary, ``k`` calls each (k sized once,
    after a warm-up, so that a sample spans about a millisecond)."""
    for _ in range(3):
        block(fn(*args))
    t0 = time.perf_counter()
    block(fn(*args))
    calls = choose_calls(time.perf_counter() - t0)
    timer = functools.partial(time_completed, block=block, calls=calls)
    return lambda: timed(timer, fn, args, calls=calls)


def inputs(op: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    shape = (n,) if op == "axpy" else (n, n)
    return rng.standard_normal(shape, dtype=np.float32), rng.standard_normal(shape, dtype=np.float32)


double = jax.jit(lambda x: 2 * x)


def copy_only(x: jax.Array) -> Callable[[], Sample]:
    def one() -> Sample:
        out = double(x).block_until_ready()  # a fresh, ready output: no NumPy value cached on it yet
        t0 = time.perf_counter()
        host = np.asarray(out)
        elapsed = time.perf_counter() - t0
        del host, out
        return Sample(elapsed)
    return one


def shares_buffer(x: jax.Array) -> str:
    out = double(x).block_until_ready()
    host = np.asarray(out)
    try:
        same = out.unsafe_buffer_pointer() == host.ctypes.data
    except Exception:  # noqa: BLE001 - no host-visible pointer (an accelerator): a real copy
        same = False
    return "np.asarray returned a view of the device buffer (no copy)" if same else "np.asarray made a copy"


def add_to_host(cells, rng: np.random.Generator, n: int, samples: int) -> None:
    host = rng.standard_normal(n, dtype=np.float32)
    x = jax.device_put(host).block_until_ready()
    err = check_close(np.asarray(double(x)), 2.0 * host.astype(np.float64), rtol=1e-6, atol=0,
                      what=f"2 * x, n={n}")
    detail = shares_buffer(x)
    # Bytes moved to the host: the output's size where np.asarray copies, none where it returns a
    # view, none for block (it moves nothing); a rate is shown only where bytes moved.
    moved = None if detail.endswith("(no copy)") else 4.0 * n
    common = {"dtype": "float32", "shape": f"{n}", "params": {"op": "to-host", "n": n},
              "max_rel_error": err, "detail": detail}
    cells.sample("block", "completed", sampler(double, (x,), wait), samples, bytes_moved=None, **common)
    cells.sample("asarray", "completed", sampler(lambda v: np.asarray(double(v)), (x,), no_wait),
                 samples, bytes_moved=moved, **common)
    cells.sample("copy-only", "completed", copy_only(x), samples, bytes_moved=moved, **common)


def measure(rec: Recorder) -> None:
    rng = np.random.default_rng(0)
    samples = 3 if rec.config.smoke else 10
    tol = 3e-2 if rec.config.accelerator else 1e-4  # default-precision float32 matmuls: TF32 or bfloat16 passes
    sizes = ladder(rec)
    with rec.interleaved() as cells:
        for op in ("axpy", "matmul"):
            for n in sizes[op]:
                host = inputs(op, n, rng)
                placed = tuple(jax.device_put(h).block_until_ready() for h in host)
                want = OPS[op]["numpy"](*(h.astype(np.float64) for h in host))
                for variant, fn in OPS[op].items():
                    args, block = (host, no_wait) if variant == "numpy" else (placed, wait)
                    err = check_close(fn(*args), want, rtol=0.0, atol=tol * np.abs(want).max(),
                                      what=f"{op} n={n} in {variant}")
                    shape = f"{n}" if op == "axpy" else f"{n}x{n}"
                    cells.sample(variant, "completed", sampler(fn, args, block), samples,
                                 dtype="float32", shape=shape, params={"op": op, "n": n},
                                 max_rel_error=err)
        for n in sizes["to-host"]:
            add_to_host(cells, rng, n, samples)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
