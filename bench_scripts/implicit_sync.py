"""fig-implicit-sync: operations that wait for the device without saying so.

One jitted computation (a matmul reduced to a scalar) is timed three ways:
``dispatch`` (the call returned), ``completed`` (the scalar is ready), and
once per implicit synchronisation: the call followed by ``np.asarray``,
``.item()``, ``float()``, ``print()`` or a Python ``if``. Those five use the
``dispatch`` boundary too: the clock stops when the statement returns, and
nothing in the interval blocks explicitly. If they land on ``completed``, the
conversion itself waited.
"""

FIGURE = {
    "budget_s": 3.6,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Conversions and branches that wait for the device",
    "caption": (
        "<!-- bench:claim fig-implicit-sync slower('np.asarray', 'dispatch') and ratio('np.asarray', 'completed') > 0.5 and slower('item', 'dispatch') and ratio('item', 'completed') > 0.5 and slower('float', 'dispatch') and ratio('float', 'completed') > 0.5 and slower('print', 'dispatch') and ratio('print', 'completed') > 0.5 and slower('if', 'dispatch') and ratio('if', 'completed') > 0.5 -->np.asarray, .item(), float(), print() and a Python if on an array each took at least half the completed computation's time, far more than its dispatch<!-- /bench:claim -->: "  # noqa: E501
        "every one of them waits for the device before it returns, so each is a synchronisation "
        "point in your loop."
    ),
    "chapter": "asynchronous-dispatch.md",
    # One size per machine (recorded in shape and params); no group column and no
    # ratio column, so that seven variants fit the page's width.
    "group_by": [],
    "variants": ["dispatch", "completed", "np.asarray", "item", "float", "print", "if"],
    "headline": {"stat": "ratio", "a": "np.asarray", "b": "dispatch"},
}

# --8<-- [start:measure]
import io

import jax
import jax.numpy as jnp
import numpy as np

from benchkit import Recorder, check_close, figure_main

mean_of_square = jax.jit(lambda x: jnp.mean(x @ x))
printed = io.StringIO()  # print() needs a file; the terminal would add its own cost


def via_asarray(x: jax.Array) -> np.ndarray:
    return np.asarray(mean_of_square(x))


def via_item(x: jax.Array) -> float:
    return mean_of_square(x).item()


def via_float(x: jax.Array) -> float:
    return float(mean_of_square(x))


def via_print(x: jax.Array) -> None:
    print(mean_of_square(x), file=printed)  # formats through str()


def via_if(x: jax.Array) -> int:
    if mean_of_square(x) > 0:  # `if` calls bool() on the array, which needs its value
        return 1
    return -1


IMPLICIT = {"np.asarray": via_asarray, "item": via_item, "float": via_float,
            "print": via_print, "if": via_if}


def size(rec: Recorder) -> int:
    if rec.config.smoke:
        return 32
    return 8192 if rec.config.accelerator else 1024


def measure(rec: Recorder) -> None:
    n = size(rec)
    host = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    x = jax.device_put(host).block_until_ready()
    # mean(x @ x) = (column sums . row sums) / n^2: an exact float64 reference
    # that needs no n^3 product on the host.
    wide = host.astype(np.float64)
    reference = wide.sum(axis=0) @ wide.sum(axis=1) / n**2
    common = dict(dtype="float32", shape=f"{n}x{n}", params={"n": n},
                  max_rel_error=check_close(mean_of_square(x), reference, rtol=1e-3,
                                            atol=1e-3, what=f"mean(x @ x) at n={n}"))
    with rec.interleaved() as cells:  # all seven sampled in shuffled rounds
        cells.collect("dispatch", "dispatch", mean_of_square, (x,), maximum=30, **common)
        cells.collect("completed", "completed", mean_of_square, (x,), **common)
        for name, convert in IMPLICIT.items():
            cells.collect(name, "dispatch", convert, (x,), maximum=30, **common)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
