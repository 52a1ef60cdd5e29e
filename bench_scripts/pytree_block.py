"""fig-pytree-block: block on one leaf of an output pytree, or on the whole tree.

A step returns ``{"loss": cheap, "update": expensive}``. ``one-leaf`` stops the
clock once ``out["loss"]`` is ready (boundary ``dispatch``: the timed function
returns then, and the harness waits for the rest after the clock stops);
``whole-tree`` stops it once ``jax.block_until_ready(out)`` returns
(``completed``). Three programs build the same tree: ``cheap-first`` and
``cheap-last`` dispatch the two leaves as separate jitted calls, in either
order; ``one-jit`` computes both in one compiled program.
"""

FIGURE = {
    "budget_s": 4.1,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Blocking one leaf of a pytree vs the whole tree",
    "caption": (
        "Blocking on the cheap leaf stops the clock while the expensive one may still be "
        "running: <!-- bench:claim fig-pytree-block slower('whole-tree', 'one-leaf', program='cheap-first') -->with the cheap leaf dispatched first the time looks small and is wrong<!-- /bench:claim -->. "  # noqa: E501
        "<!-- bench:claim fig-pytree-block same(program='cheap-last', margin=0.25) and same(program='one-jit', margin=0.25) -->Dispatched last, or computed in the same jitted program, it waits for the expensive work anyway: there the two timings are the same within ±25 % by the equivalence rule<!-- /bench:claim -->, so the same line of timing code is right or wrong depending on how the "  # noqa: E501
        "step was written. Blocking on the whole tree is right in every case."
    ),
    "chapter": "asynchronous-dispatch.md",
    "group_by": ["program"],
    "variants": ["one-leaf", "whole-tree"],
    "ratio": ["whole-tree", "one-leaf"],
    "headline": {"stat": "ratio", "program": "cheap-first"},
}

# --8<-- [start:measure]
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from benchkit import Recorder, check_close, figure_main

Tree = dict[str, jax.Array]
loss_of = jax.jit(lambda x: jnp.mean(x * x))  # cheap: one pass over x
update_of = jax.jit(lambda x: jnp.tanh(x @ x) @ x)  # expensive: two matmuls
both = jax.jit(lambda x: {"loss": jnp.mean(x * x), "update": jnp.tanh(x @ x) @ x})


def cheap_first(x: jax.Array) -> Tree:
    loss = loss_of(x)
    return {"loss": loss, "update": update_of(x)}


def cheap_last(x: jax.Array) -> Tree:
    update = update_of(x)
    return {"loss": loss_of(x), "update": update}


PROGRAMS = {"cheap-first": cheap_first, "cheap-last": cheap_last, "one-jit": both}


def one_leaf(step: Callable[[jax.Array], Tree]) -> Callable[[jax.Array], Tree]:
    def timed(x: jax.Array) -> Tree:
        out = step(x)
        out["loss"].block_until_ready()  # waits for this leaf only
        return out
    return timed


def check(step: Callable[[jax.Array], Tree], host: np.ndarray, rows: np.ndarray) -> float:
    # Reference on a subset of rows: the float64 product of the whole matrix
    # would dominate the run on a large accelerator size.
    out, wide = step(jax.device_put(host)), host.astype(np.float64)
    n = host.shape[0]
    check_close(out["loss"], np.mean(wide * wide), rtol=1e-3, atol=0, what="loss")
    return check_close(out["update"][rows], np.tanh(wide[rows] @ wide) @ wide,
                       rtol=1e-3, atol=1e-3 * n, what=f"update rows at n={n}")


def size(rec: Recorder) -> int:
    if rec.config.smoke:
        return 32
    return 8192 if rec.config.accelerator else 1024


def measure(rec: Recorder) -> None:
    n = size(rec)
    host = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    rows = np.random.default_rng(1).choice(n, size=min(n, 16), replace=False)
    x = jax.device_put(host).block_until_ready()
    with rec.interleaved() as cells:  # every (program, boundary) sampled in shuffled rounds
        for program, step in PROGRAMS.items():
            common = dict(dtype="float32", shape=f"{n}x{n}", params={"n": n, "program": program},
                          max_rel_error=check(step, host, rows))
            cells.collect("one-leaf", "dispatch", one_leaf(step), (x,), maximum=30, **common)
            cells.collect("whole-tree", "completed", step, (x,), **common)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
