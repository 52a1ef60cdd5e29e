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

What ``np.asarray`` of a result costs is fig-transfer-cost's question.
"""

FIGURE = {
    "budget_s": 2.1,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "JAX against NumPy: a fixed cost per call against a cost per element",
    "caption": (
        "The same work in NumPy, un-jitted jnp and jitted JAX, from tiny to large. The question "
        "is whether a fixed cost per JAX call (dispatch, once per primitive for un-jitted jnp) "
        "explains NumPy's lead at small sizes, and where, if anywhere, the jit and NumPy curves "
        "cross on this machine: read the ratio column and its verdicts, not the shape of one run."
    ),
    "chapter": "how-good-is-this-number.md",
    "group_by": ["op", "n"],
    "variants": ["numpy", "jnp", "jit"],
    "ratio": ["jit", "numpy"],
    "headline": {"stat": "ratio", "op": "axpy", "n": 16},
}

# --8<-- [start:measure]
import jax
import jax.numpy as jnp
import numpy as np

from benchkit import Recorder, check_close, completed_sampler, figure_main


def np_axpy(x, y):
    return 2.0 * x + y


def jnp_axpy(x, y):  # un-jitted: two primitives, two dispatches
    return 2.0 * x + y


jit_axpy = jax.jit(jnp_axpy)
jit_matmul = jax.jit(jnp.matmul)
OPS = {"axpy": {"numpy": np_axpy, "jnp": jnp_axpy, "jit": jit_axpy},
       "matmul": {"numpy": np.matmul, "jnp": jnp.matmul, "jit": jit_matmul}}


# Analytic counts, the same for every variant: FLOPs, and the least traffic (each operand and
# the output once, float32), so the page can set each rate against the machine's ceilings.
COUNTS = {"axpy": lambda n: {"flops": 2.0 * n, "bytes_moved": 3.0 * n * 4},
          "matmul": lambda n: {"flops": 2.0 * n**3, "bytes_moved": 3.0 * n * n * 4}}


def ladder(rec: Recorder) -> dict[str, list[int]]:
    if rec.config.smoke:
        return {"axpy": [16], "matmul": [8]}
    if rec.config.accelerator:
        return {"axpy": [16, 1 << 10, 1 << 16, 1 << 20, 1 << 24], "matmul": [8, 64, 512, 2048]}
    return {"axpy": [16, 1 << 10, 1 << 16, 1 << 20], "matmul": [8, 64, 512]}


def no_wait(out):  # a NumPy result is ready when the call returns
    return out


def wait(out):
    return out.block_until_ready()


def inputs(op: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    shape = (n,) if op == "axpy" else (n, n)
    return rng.standard_normal(shape, dtype=np.float32), rng.standard_normal(shape, dtype=np.float32)


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
                    cells.sample(variant, "completed", completed_sampler(fn, args, block), samples,
                                 dtype="float32", shape=shape, params={"op": op, "n": n},
                                 max_rel_error=err, **COUNTS[op](n))
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
