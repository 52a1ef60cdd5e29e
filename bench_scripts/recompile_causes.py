"""fig-recompile-causes: three ways a training loop keeps recompiling, and their fixes.

The same short least-squares SGD loop runs under one cause at a time:

* ``shape-drift``   the last batch is short, so its shapes are new;
* ``closure``       a fresh ``jax.jit(lambda ...)`` is built inside the loop;
* ``weak-type``     the learning rate starts as a Python float (weakly typed)
                    and becomes a float32 value after the first decay.

and again with the fix (pad to one batch shape, hoist the jitted step, give
the learning rate an explicit dtype). Every sample clears JAX's caches, runs
one warm-up step (the compile every loop pays), then times the whole loop
while counting backend compiles and keeping ``jax_explain_cache_misses``'s
explanations, which go into the ``detail`` column (empty when the log stayed
silent). The samples of all six loops are interleaved in shuffled rounds. A
compile served from the persistent compilation cache (a cache hit anywhere in
a sample, warm-up included) stops the script: it would time a disk read.
"""

FIGURE = {
    "budget_s": 7.3,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Recompiles in a training loop: three causes and their fixes",
    "caption": (
        "Each cause makes the loop compile again after its warm-up step, and "
        "<!-- bench:claim fig-recompile-causes slower('as-written', 'fixed', cause='closure') and ratio(cause='closure') > 10 and slower('as-written', 'fixed', cause='shape-drift') and ratio(cause='shape-drift') > 10 and slower('as-written', 'fixed', cause='weak-type') and ratio(cause='weak-type') > 10 -->each loop as written took many times its fixed version<!-- /bench:claim -->; the fixed loops compile nothing after "  # noqa: E501
        "warm-up. By JAX's cache rules a short last batch and a weakly typed learning rate add a "
        "compile per new signature and a closure rebuilt in the loop adds one per step; the "
        "chapter's table counts the compiles each loop actually paid."
    ),
    "chapter": "diagnosing/recompiles.md",
    "group_by": ["cause"],
    "variants": ["as-written", "fixed"],
    "ratio": ["as-written", "fixed"],
    "headline": {"stat": "ratio", "cause": "closure"},
}

# --8<-- [start:measure]
import time
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from benchkit import Recorder, Sample, check_close, figure_main
from benchkit.compiles import compile_log, count, refuse_cache_hits, tidy

ROOT = Path(__file__).resolve().parents[1]  # log paths are published relative to the repository
LR = 0.05  # initial learning rate
DECAY = np.float32(0.5)  # the learning rate halves after every epoch
Batch = tuple[np.ndarray | jax.Array, ...]  # (x, y, mask)
Rate = float | np.float32

# --8<-- [start:loop]
def sgd_step(w: jax.Array, x: jax.Array, y: jax.Array, mask: jax.Array,
             lr: Rate) -> jax.Array:
    """One least-squares SGD step; ``mask`` weighs rows: padding rows count for nothing."""
    r = mask * (x @ w - y)
    return w - lr * (2 / jnp.sum(mask)) * (r @ x)


def train(step: Callable, w: jax.Array, batches: list[Batch], lr: Rate,
          epochs: int) -> jax.Array:
    for _ in range(epochs):
        for x, y, mask in batches:
            w = step(w, x, y, mask, lr)
        lr = lr * DECAY
    return w
# --8<-- [end:loop]


# --8<-- [start:split]
def split(x: np.ndarray, y: np.ndarray, size: int) -> list[Batch]:
    """Batches in order; the last one is short when ``size`` does not divide the data."""
    starts = range(0, len(y), size)
    return [(x[i:i + size], y[i:i + size], np.ones(len(y[i:i + size]), np.float32))
            for i in starts]
# --8<-- [end:split]


# --8<-- [start:pad]
def pad(batch: Batch, size: int) -> Batch:
    """Fix for shape drift: fill up to ``size`` rows; the padding's mask is 0."""
    x, y, mask = batch
    extra = size - len(y)
    return np.pad(x, ((0, extra), (0, 0))), np.pad(y, (0, extra)), np.pad(mask, (0, extra))
# --8<-- [end:pad]


# --8<-- [start:closure]
def train_closure(step: Callable, w: jax.Array, batches: list[Batch], lr: Rate,
                  epochs: int) -> jax.Array:
    """Cause: a new function object every step; ``step`` is there but not used."""
    for _ in range(epochs):
        for x, y, mask in batches:
            fresh = jax.jit(lambda w, x, y, m: sgd_step(w, x, y, m, lr))  # noqa: B023
            w = fresh(w, x, y, mask)
        lr = lr * DECAY
    return w
# --8<-- [end:closure]


def on_device(batches: list[Batch]) -> list[Batch]:
    """Place every batch before timing, so the window holds the loop and nothing else."""
    return [tuple(jax.block_until_ready(jax.device_put(a)) for a in b) for b in batches]


def numpy_train(batches: list[Batch], w: np.ndarray, lr: float, epochs: int) -> np.ndarray:
    """The same SGD in float64 NumPy, on the unpadded batches: the reference."""
    for _ in range(epochs):
        for x, y, _mask in batches:
            w = w - lr * (2 / len(y)) * ((x @ w - y) @ x)
        lr *= float(DECAY)
    return w


# --8<-- [start:sample]
def one_sample(train_fn: Callable, w0: jax.Array, batches: list[Batch], lr: Rate,
               epochs: int) -> tuple[Sample, str, jax.Array]:
    """Clear the caches, warm up on one step, then time the loop; then run the same loop again,
    from cleared caches, with the compile log on to hear why it compiled.

    The log is kept out of the timed window: formatting and emitting its lines is work a
    program without the log does not do. Returns the sample, what the log said (its cache-miss
    explanations, else its plain lines; empty when it was silent) and the timed pass's weights.
    """
    def fresh_start() -> Callable:
        jax.clear_caches()  # each pass starts with nothing compiled, as a new process would
        step = jax.jit(sgd_step)
        jax.block_until_ready(step(w0, *batches[0], lr))  # warm-up: the one compile it must pay
        return step

    with count() as whole:  # warm-ups included: no compile may come from the disk cache
        step = fresh_start()
        with count() as seen:
            t0 = time.perf_counter()
            w = jax.block_until_ready(train_fn(step, w0, batches, lr, epochs))
            elapsed = time.perf_counter() - t0
        step = fresh_start()
        with compile_log() as log:  # the same loop again, untimed, to hear why it compiled
            jax.block_until_ready(train_fn(step, w0, batches, lr, epochs))
    steps = epochs * len(batches)
    said = "\n\n".join(dict.fromkeys(tidy(t, ROOT) for t in log.explanations or log.lines))
    refuse_cache_hits([whole], "recompile_causes sample")
    return Sample(elapsed / steps, steps, seen.n, seen.cache_hits), said, w
# --8<-- [end:sample]


# --8<-- [start:cases]
def cases(x: np.ndarray, y: np.ndarray, size: int) -> dict[tuple[str, str], tuple]:
    """(cause, variant) -> (train function, batches, initial learning rate)."""
    ragged = split(x, y, size)
    padded = on_device([pad(b, size) for b in ragged])
    lr = np.float32(LR)  # explicit dtype: a strongly typed float32 from the start
    return {
        ("shape-drift", "as-written"): (train, on_device(ragged), lr),
        ("shape-drift", "fixed"): (train, padded, lr),
        ("closure", "as-written"): (train_closure, padded, lr),
        ("closure", "fixed"): (train, padded, lr),
        ("weak-type", "as-written"): (train, padded, LR),  # Python float: weak type
        ("weak-type", "fixed"): (train, padded, lr),
    }
# --8<-- [end:cases]


def sizes(rec: Recorder) -> tuple[int, int, int, int, int]:
    """rows, features, batch size, epochs, samples per run. Full size: two full batches
    and a short one per epoch; the closure loop compiles on each of its steps."""
    return (40, 8, 16, 2, 1) if rec.config.smoke else (168, 32, 64, 2, 3)


def measure(rec: Recorder) -> None:
    rows, dim, size, epochs, samples = sizes(rec)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, dim), dtype=np.float32)
    noise = 0.1 * rng.standard_normal(rows, dtype=np.float32)
    y = x @ rng.standard_normal(dim, dtype=np.float32) + noise
    w0 = jax.block_until_ready(jax.device_put(np.zeros(dim, np.float32)))
    ref_batches = split(x.astype(np.float64), y.astype(np.float64), size)
    want = numpy_train(ref_batches, np.zeros(dim), LR, epochs)
    def sampler(cause: str, variant: str, train_fn: Callable, batches: list[Batch], lr: Rate):
        def one() -> tuple[Sample, dict]:
            sample, said, w = one_sample(train_fn, w0, batches, lr, epochs)
            err = check_close(w, want, rtol=1e-4, atol=1e-5, what=f"{cause} {variant} weights")
            return sample, {"max_rel_error": err, "detail": said}
        return one

    with rec.interleaved() as cells:  # every loop's samples in shuffled rounds
        for (cause, variant), (train_fn, batches, lr) in cases(x, y, size).items():
            cells.sample(variant, "loop", sampler(cause, variant, train_fn, batches, lr), samples,
                         dtype="float32", shape=f"{size}x{dim}",
                         params={"cause": cause, "epochs": epochs, "rows": rows})
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
