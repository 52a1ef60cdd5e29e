"""fig-first-use-costs: what a first call costs beyond jit, and what timeit reports.

Three parts (``part``):

* ``eager-first-use``: un-jitted ``jnp`` code compiles too, once per primitive
  and shape. Each sample gives ``tanh(x) * 2`` a vector of a length not seen
  before (``cold``: its first call, compiles counted) and then calls it again
  on the same vector (``warm``).
* ``mlp-first-call``: the first call of a jitted MLP training step with the
  persistent compilation cache switched on, deliberately, in a fresh temporary
  folder of its own (workers keep it off; see ``benchkit.compiles``): ``cold``
  with the folder empty (compile, then write the entry), ``warm`` after
  ``jax.clear_caches()`` and a fresh function object, so only the disk entry
  can save the compile. Those rows record the cache's state
  (``compilation_cache``) and its hits (``cache_hits``); the cache is switched
  off again before anything else is measured.
* ``timeit``: a jitted 256 x 256 matmul timed as people time it,
  ``timeit.timeit(lambda: f(x), number=N) / N`` without blocking (``timeit``,
  recorded at the ``dispatch`` boundary: the calls returned, the work may still
  be queued) and with ``.block_until_ready()`` in the lambda
  (``timeit-block``), against the harness's own completed samples (``harness``).
"""

FIGURE = {
    "budget_s": 1.8,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "First-use costs outside jit, the persistent cache, and timeit as people use it",
    "caption": (
        "First calls outside jit: the compiles column shows whether un-jitted jnp compiled on a "
        "new shape. The persistent compilation cache is switched on here on purpose, in a folder "
        "of its own, and its state and hits are in every row; cold against warm is what it saved. "
        "timeit without a block measures how long the calls took to return: compare it with the "
        "harness column before trusting it."
    ),
    "chapter": "how-good-is-this-number.md",
    "group_by": ["part", "n"],
    "variants": ["cold", "warm", "timeit", "timeit-block", "harness"],
    "ratio": ["cold", "warm"],
    "headline": {"stat": "ratio", "part": "mlp-first-call"},
}

# --8<-- [start:measure]
import math
import tempfile
import time
import timeit
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from benchkit import Recorder, Sample, check_close, figure_main
from benchkit.compiles import cache_state, count, disable_persistent_cache

NUMBER = 20  # calls per timeit sample


def eager_op(x: jax.Array) -> jax.Array:  # un-jitted: each primitive compiles per shape
    return jnp.tanh(x) * 2.0


def eager_sampler(base: int, rng: np.random.Generator) -> Callable:
    lengths = iter(range(base, base + 10_000))  # a length never seen before, every sample

    def one() -> list[tuple[Sample, dict]]:
        host = rng.standard_normal(next(lengths), dtype=np.float32)
        x = jax.device_put(host).block_until_ready()
        rows = []
        for variant in ("cold", "warm"):
            with count() as seen:
                t0 = time.perf_counter()
                out = eager_op(x).block_until_ready()
                elapsed = time.perf_counter() - t0
            rows.append((Sample(elapsed, 1, seen.n, seen.cache_hits),
                         {"variant": variant, "shape": f"{host.size}"}))
        check_close(out, np.tanh(host.astype(np.float64)) * 2.0, rtol=1e-5, atol=1e-6,
                    what="eager tanh(x) * 2")
        return rows
    return one


def make_mlp_step() -> Callable:
    """A fresh Python function (and jit) every time: nothing in memory can be reused."""
    def loss(params, x, y):
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = params[-1]
        return jnp.mean((x @ w + b - y) ** 2)

    def step(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)]
    return jax.jit(step)


def enable_cache(folder: str) -> None:
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    jax.config.update("jax_enable_compilation_cache", True)
    from jax._src import compilation_cache  # the cache decides once whether it is used: decide again
    compilation_cache.reset_cache()


def first_call(args: tuple) -> tuple[Sample, list]:
    step = make_mlp_step()
    with count() as seen:
        t0 = time.perf_counter()
        out = jax.block_until_ready(step(*args))
        elapsed = time.perf_counter() - t0
    return Sample(elapsed, 1, seen.n, seen.cache_hits), out


def mlp_cache(rec: Recorder, rng: np.random.Generator, batch: int, width: int, layers: int,
              samples: int) -> None:
    params = [(jax.device_put(rng.standard_normal((width, width), dtype=np.float32) / math.sqrt(width)),
               jax.device_put(np.zeros(width, np.float32))) for _ in range(layers)]
    x = jax.device_put(rng.standard_normal((batch, width), dtype=np.float32))
    args = jax.block_until_ready((params, x, x))
    shape, params_col = f"{batch}x{width}", {"part": "mlp-first-call", "n": width, "layers": layers}
    want = np.asarray(make_mlp_step()(*args)[0][0])  # compiled with the cache off: the reference
    for _ in range(samples):
        with tempfile.TemporaryDirectory(prefix="bench-first-use-cache-") as folder:
            enable_cache(folder)
            state = cache_state()
            try:
                for variant in ("cold", "warm"):
                    jax.clear_caches()  # in-memory caches empty: only the disk can help
                    sample, out = first_call(args)
                    check_close(out[0][0], want, rtol=1e-5, atol=1e-6, what=f"MLP step ({variant} cache)")
                    rec.add(variant, "completed", [sample], dtype="float32", shape=shape,
                            params=params_col, compilation_cache=state,
                            detail="persistent cache on, in its own temporary folder: "
                                   + ("empty" if variant == "cold" else "holding the cold call's entry"))
            finally:
                disable_persistent_cache()
                jax.config.update("jax_compilation_cache_dir", None)
    assert cache_state() == "off", cache_state()


def timeit_sampler(fn: Callable, x: jax.Array, block: bool) -> Callable[[], Sample]:
    call = (lambda: fn(x).block_until_ready()) if block else (lambda: fn(x))

    def one() -> Sample:
        with count() as seen:
            per_call = timeit.timeit(call, number=NUMBER) / NUMBER
        fn(x).block_until_ready()  # drain what the unblocked calls queued, outside the sample
        return Sample(per_call, NUMBER, seen.n, seen.cache_hits)
    return one


def measure(rec: Recorder) -> None:
    smoke = rec.config.smoke
    rng = np.random.default_rng(0)
    n = 64 if smoke else (4096 if rec.config.accelerator else 256)
    matmul = jax.jit(lambda a: a @ a)
    host = rng.standard_normal((n, n), dtype=np.float32)
    a = jax.device_put(host).block_until_ready()
    err = check_close(matmul(a), host.astype(np.float64) @ host, rtol=1e-3, atol=1e-3 * n,
                      what=f"{n}x{n} matmul")
    base = 1000 if smoke else 100_000
    with rec.interleaved() as cells:
        cells.sample("cold", "completed", eager_sampler(base, rng), 2 if smoke else 3,
                     dtype="float32", shape="", params={"part": "eager-first-use", "n": base})
        common = {"dtype": "float32", "shape": f"{n}x{n}", "params": {"part": "timeit", "n": n},
                  "max_rel_error": err}
        cells.sample("timeit", "dispatch", timeit_sampler(matmul, a, False), 3 if smoke else 6,
                     warmup=lambda: matmul(a).block_until_ready(), **common)
        cells.sample("timeit-block", "completed", timeit_sampler(matmul, a, True), 3 if smoke else 6,
                     **common)
        cells.collect("harness", "completed", matmul, (a,), maximum=15, **common)
    # The cache part clears JAX's caches: it runs after every other cell has been measured.
    mlp = (16, 32, 2, 1) if smoke else ((256, 1024, 3, 2) if rec.config.accelerator else (128, 256, 3, 2))
    mlp_cache(rec, rng, *mlp)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
