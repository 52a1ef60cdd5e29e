"""fig-compile-exchange-rate: what one compile costs, counted in steady steps.

A 6-layer tanh MLP (512 wide, batch 256). Each ``first-call`` sample jits a
fresh function object and times trace / lower / compile / first execute with
the ahead-of-time API; ``first-call`` itself is the sum of the four stages.
``steady`` is a warm step in a back-to-back loop. First calls and steady
samples are interleaved in shuffled rounds. The figure's ratio, first call /
steady step per run, is the exchange rate. Workers run with the persistent
compilation cache off; a first call served from it (a cache hit in its window)
stops the script instead of being recorded as a compile.
"""

FIGURE = {
    "budget_s": 2.0,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "First call vs steady step of a jitted MLP",
    "caption": (
        "The first call of a jitted function pays for tracing, lowering and compiling before "
        "it runs, and <!-- bench:claim fig-compile-exchange-rate median('compile') > median('first-execute') and median('compile') > median('lower') and median('compile') > median('trace') -->the compile is the largest of those stages<!-- /bench:claim -->. Counted in steady "  # noqa: E501
        "steps, <!-- bench:claim fig-compile-exchange-rate slower('first-call', 'steady') and ratio() > 5 -->one first call costs many of them<!-- /bench:claim -->: a recompile in the middle of a run is a visible stall, and a "  # noqa: E501
        "timing that includes the first call measures the compiler."
    ),
    "chapter": "what-the-clock-caught.md",
    "group_by": ["width"],
    "variants": ["trace", "lower", "compile", "first-execute", "first-call", "steady"],
    "ratio": ["first-call", "steady"],
    "headline": {"stat": "ratio", "width": 512},
}

# --8<-- [start:measure]
import jax
import jax.numpy as jnp
import numpy as np

from benchkit import Recorder, Sample, check_close, compiles, figure_main, time_first_call

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


def first_call(args: tuple) -> list[tuple[Sample, dict]]:
    """One first call of a freshly made and jitted function: a row per stage and the total."""
    with compiles.count() as seen:
        split = time_first_call(jax.jit(make_mlp()), args)
    split["first-call"] = sum(split.values())
    rows = []
    for stage, t in split.items():
        # The backend compile (and any cache hit) belongs to the compile stage and the total.
        mine = stage in ("compile", "first-call")
        rows.append((Sample(t, 1, seen.n if mine else 0, seen.cache_hits if mine else 0),
                     {"variant": stage}))
    compiles.refuse_cache_hits([s for s, _ in rows], "compile_exchange_rate first call")
    return rows


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
        with rec.interleaved() as cells:  # first calls and steady samples in shuffled rounds
            # The process's first compile also pays one-time backend set-up that a
            # recompile in the middle of a run does not: its warm-up, not recorded.
            cells.sample("first-call", "first-call", lambda args=args: first_call(args),
                         2 if rec.config.smoke else 8, warmup=lambda args=args: first_call(args), **common)
            cells.collect("steady", "loop", step, args, loop_calls=10, **common)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
