"""fig-time-your-own-code: the worked example of the chapter "Time your own code".

Three jitted functions of one float32 vector, timed at the completed boundary and
interleaved in every run, as ``benchkit.Bench`` and ``python -m benchkit compare`` time
a reader's own functions:

- ``once``: ``jnp.sin(x)``;
- ``twice``: ``jnp.sin(jnp.sin(x))``, the same work done twice: a difference the
  chapter knows in advance (the transcendental work doubles, the vector is read and
  written once in either, so "2×" is what it should approach, not a promise);
- ``once-again``: the very same Python function as ``once``, passed to ``jax.jit`` a
  second time: an A/A pair, where any verdict of a difference would be a false one.

Each is checked against NumPy's ``sin`` in float64 before anything is timed.
"""

FIGURE = {
    "budget_s": 1.9,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Timing your own function: a known difference and an A/A pair",
    "caption": (
        "Three jitted functions of one vector, timed at the completed boundary in the same runs: "
        "sin, sin applied twice, and the first function jitted a second time. The second is a "
        "difference known in advance; the third is no difference at all, so any verdict of a "
        "result between it and the first would be a false one."
    ),
    "chapter": "time-your-own-code.md",
    "group_by": [],
    "variants": ["once", "twice", "once-again"],
    "ratio": ["twice", "once"],
    "headline": {"stat": "ratio"},
}

# --8<-- [start:measure]
import jax
import jax.numpy as jnp
import numpy as np

from benchkit import Recorder, check_close, figure_main

# At least this many samples per function and run: a slow stretch of a shared machine
# lasts seconds, and the median of the few samples that the time budget buys for a call
# of milliseconds can fall inside one.
SAMPLES = 30


def sin_once(x):
    return jnp.sin(x)


def sin_twice(x):
    return jnp.sin(jnp.sin(x))


def length(rec: Recorder) -> int:
    """A quarter of a million floats (1 MB): milliseconds on a CPU, far above dispatch."""
    return 1 << 10 if rec.config.smoke else 1 << 18


def functions() -> dict[str, tuple]:
    """Each label's jitted function and its float64 NumPy reference."""
    return {"once": (jax.jit(sin_once), np.sin),
            "twice": (jax.jit(sin_twice), lambda h: np.sin(np.sin(h))),
            "once-again": (jax.jit(sin_once), np.sin)}  # the same function, jitted again


def measure(rec: Recorder) -> None:
    n = length(rec)
    host = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    x = jax.device_put(host).block_until_ready()  # placed and ready before any clock
    with rec.interleaved() as cells:  # warmed up, then sampled in shuffled rounds
        for label, (fn, reference) in functions().items():
            err = check_close(fn(x), reference(host.astype(np.float64)), rtol=1e-5, atol=1e-5,
                              what=f"{label} on {n} floats")
            cells.collect(label, "completed", fn, (x,), dtype="float32", shape=str(n),
                          max_rel_error=err, minimum=SAMPLES)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
