"""fig-host-device-overlap: prepare the next batch while the device computes.

Every variant is a loop of ``steps`` steps timed as one sample (boundary
``loop``: one final block, time divided by ``steps``), so the table reads as
seconds per step and its inverse is the throughput.

* ``host-only``: the batch preparation alone (NumPy on the host).
* ``device-only``: the training step alone, on a batch already placed.
* ``blocked-each-step``: dispatch the step, wait for it, then prepare the next batch.
* ``overlapped``: dispatch the step, prepare the next batch while it runs.

Perfect overlap would make ``overlapped`` as fast as the slower of the first
two; ``blocked-each-step`` pays for both in turn.
"""

FIGURE = {
    "budget_s": 4.2,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Overlapping host batch preparation with device compute",
    "caption": (
        "Preparing the next batch while the device works on the current one can make each step cheaper "
        "than doing the two in turn: the loop that waits every step pays for the host and the device "
        "one after the other, <!-- bench:claim fig-host-device-overlap slower('blocked-each-step', 'host-only') and slower('blocked-each-step', 'device-only') -->a result slower here than either side alone<!-- /bench:claim -->, "  # noqa: E501
        "and the overlapped loop pays for them at the same time, so whether it pays off is the ratio "
        "column's verdict. On a CPU backend both sides share the same "
        "cores, and <!-- bench:claim fig-host-device-overlap median('overlapped') > median('host-only') and median('overlapped') > median('device-only') -->the overlap here is at best partial: an overlapped step took longer than either side alone<!-- /bench:claim -->."  # noqa: E501
    ),
    "chapter": "asynchronous-dispatch.md",
    "group_by": ["batch", "width", "inner"],
    "variants": ["host-only", "device-only", "blocked-each-step", "overlapped"],
    "ratio": ["blocked-each-step", "overlapped"],
    "headline": {"stat": "ratio"},
}

# --8<-- [start:measure]
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from benchkit import Recorder, check_close, figure_main

LR = 0.01


def gradient(w: jax.Array, batch: jax.Array) -> jax.Array:
    # Gradient of sum(log cosh(batch @ w)) / rows: tanh is bounded, so w stays finite.
    return batch.T @ jnp.tanh(batch @ w) / batch.shape[0]


@partial(jax.jit, static_argnames="inner")
def train_step(w: jax.Array, batch: jax.Array, inner: int) -> jax.Array:
    # ``inner`` gradient steps per call: an accelerator needs several to take
    # as long as the host spends preparing one batch.
    return jax.lax.fori_loop(0, inner, lambda _, v: v - LR * gradient(v, batch), w)


@dataclass
class Loop:
    """A training loop's state; each ``step_*`` method runs one step."""

    w: jax.Array
    rng: np.random.Generator
    shape: tuple[int, int]
    inner: int
    batch: jax.Array = field(init=False)

    def __post_init__(self) -> None:
        self.batch = jax.device_put(self.prepare()).block_until_ready()

    def prepare(self) -> np.ndarray:  # host work: sample and standardise a batch
        raw = self.rng.standard_normal(self.shape, dtype=np.float32)
        return (raw - raw.mean(axis=0)) / (raw.std(axis=0) + 1e-6)

    def step_host_only(self) -> np.ndarray:
        return self.prepare()

    def step_device_only(self) -> jax.Array:
        self.w = train_step(self.w, self.batch, self.inner)
        return self.w

    def step_blocked(self) -> jax.Array:
        self.w = train_step(self.w, self.batch, self.inner)
        self.w.block_until_ready()  # the host idles until the device is done
        self.batch = jax.device_put(self.prepare())
        return self.w

    def step_overlapped(self) -> jax.Array:
        self.w = train_step(self.w, self.batch, self.inner)  # returns at once; the device starts
        self.batch = jax.device_put(self.prepare())  # meanwhile, on the host
        return self.w


def sizes(rec: Recorder) -> dict[str, int]:
    """Batch rows, width, gradient steps per call, loop steps per sample."""
    if rec.config.smoke:
        return {"batch": 16, "width": 8, "inner": 1, "steps": 3}
    if rec.config.accelerator:
        return {"batch": 1024, "width": 1024, "inner": 100, "steps": 10}
    return {"batch": 1024, "width": 512, "inner": 1, "steps": 10}


def check(batch: int, width: int) -> float:
    # Checks the update itself, (w - step(w)) / LR, against a float64 gradient
    # (comparing step(w) with w would hide a wrong gradient behind w's size);
    # one inner step, as the fori_loop only repeats it.
    rng = np.random.default_rng(2)
    w, x = (rng.standard_normal(s, dtype=np.float32) for s in ((width, width), (batch, width)))
    w64, x64 = w.astype(np.float64), x.astype(np.float64)
    got = (w64 - np.asarray(train_step(w, x, 1), dtype=np.float64)) / LR
    want = x64.T @ np.tanh(x64 @ w64) / batch
    return check_close(got, want, rtol=1e-2, atol=1e-3 * float(np.max(np.abs(want))),
                       what=f"gradient step at batch={batch}, width={width}")


def measure(rec: Recorder) -> None:
    size = sizes(rec)
    batch, width, steps = size["batch"], size["width"], size["steps"]
    common = dict(dtype="float32", shape=f"{batch}x{width}", params=size,
                  max_rel_error=check(batch, width))
    loop = Loop(jnp.full((width, width), 0.01, jnp.float32), np.random.default_rng(0),
                (batch, width), size["inner"])
    variants: dict[str, Callable[[], object]] = {
        "host-only": loop.step_host_only, "device-only": loop.step_device_only,
        "blocked-each-step": loop.step_blocked, "overlapped": loop.step_overlapped}
    with rec.interleaved() as cells:  # the four loops sampled in shuffled rounds
        for name, step in variants.items():
            cells.collect(name, "loop", step, (), loop_calls=steps, **common)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
