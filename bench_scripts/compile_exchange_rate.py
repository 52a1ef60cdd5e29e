"""fig-compile-exchange-rate: what one compile costs, counted in steady steps.

A 6-layer tanh MLP (512 wide, batch 256). Each ``first-call`` sample jits a
fresh function object and times trace / lower / compile / first execute with
the ahead-of-time API; ``first-call`` itself is the sum of the four stages.
``steady`` is a warm step in a back-to-back loop. The figure's ratio,
first call / steady step per run, is the exchange rate.
"""

FIGURE = {
    "title": "First call vs steady step of a jitted MLP",
    "caption": (
        "The first call of a jitted function pays for tracing, lowering and compiling before "
        "it runs, and the compile is the largest part. Counted in steady steps, one first call "
        "costs many of them: a recompile in the middle of a run is a visible stall, and a "
        "timing that includes the first call measures the compiler."
    ),
    "chapter": "what-the-clock-caught.md",
    "group_by": ["width"],
    "variants": ["trace", "lower", "compile", "first-execute", "first-call", "steady"],
    "ratio": ["first-call", "steady"],
}

# --8<-- [start:measure]
import jax
import jax.numpy as jnp
import numpy as np

from harness import Recorder, Sample, check_close, compiles, figure_main, time_first_call

LAYERS = 6


def make_mlp():
    """A new function object on every call: jitting the same object twice
    would reuse its trace cache and hide the trace and lower stages."""
    def mlp(params, x):
        for w, b in params:
            x = jnp.tanh(x @ w + b)
        return x
    return mlp


def numpy_mlp(params: list, x: np.ndarray) -> np.ndarray:
    for w, b in params:
        x = np.tanh(x @ w + b)
    return x


def shapes(rec: Recorder) -> list[tuple[int, int]]:
    """(width, batch) pairs; the 512-wide MLP is the one every machine runs."""
    if rec.config.smoke:
        return [(32, 8)]
    return [(512, 256)] + ([(4096, 1024)] if rec.config.accelerator else [])


def first_calls(args: tuple, count: int) -> dict[str, list[Sample]]:
    """``count`` first calls, each of a freshly made and jitted function."""
    stages: dict[str, list[Sample]] = {}
    for _ in range(count):
        with compiles.count() as seen:
            split = time_first_call(jax.jit(make_mlp()), args)
        split["first-call"] = sum(split.values())
        for stage, t in split.items():
            # The backend compile belongs to the compile stage (and the total).
            n = seen.n if stage in ("compile", "first-call") else 0
            stages.setdefault(stage, []).append(Sample(t, 1, n))
    return stages


def measure(rec: Recorder) -> None:
    rng = np.random.default_rng(0)
    for width, batch in shapes(rec):
        host = [((rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32),
                 (0.1 * rng.standard_normal(width)).astype(np.float32)) for _ in range(LAYERS)]
        x_host = rng.standard_normal((batch, width)).astype(np.float32)
        args = jax.block_until_ready((jax.device_put(host), jax.device_put(x_host)))
        step = jax.jit(make_mlp())
        ref = numpy_mlp([(w.astype(np.float64), b.astype(np.float64)) for w, b in host], x_host)
        err = check_close(step(*args), ref, rtol=1e-3, atol=1e-3, what=f"MLP width={width}")
        common = {"dtype": "float32", "shape": f"{batch}x{width}", "max_rel_error": err,
                  "params": {"width": width, "batch": batch, "layers": LAYERS}}
        # The process's first compile also pays one-time backend set-up that a
        # recompile in the middle of a run does not: done once, not recorded.
        first_calls(args, 1)
        for stage, samples in first_calls(args, 2 if rec.config.smoke else 8).items():
            rec.add(stage, "first-call", samples, **common)
        rec.collect("steady", "loop", step, args, loop_calls=10, **common)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
