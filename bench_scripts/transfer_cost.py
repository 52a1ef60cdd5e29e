"""fig-transfer-cost: waiting for a result against handing it to NumPy on the host.

A jitted ``2 * x`` with an output of ``n`` float32 elements, ended four ways, every
sample completed and warm:

* ``block``          ``f(x).block_until_ready()``: ready on the device, nothing moved.
* ``asarray``        ``np.asarray(f(x))``: ready and handed to NumPy on the host, a
                     device-to-host copy on an accelerator, maybe no copy at all on a CPU.
* ``asarray-ready``  ``np.asarray(out)`` of an output that is already ready: the hand-over
                     alone. Each sample converts a fresh output (made and waited on before
                     the clock starts), because jax keeps an array's NumPy value once made
                     and a second conversion would only read that back.
* ``copy-ready``     ``np.array(out)`` of a fresh, ready output: NumPy's ``np.array``
                     copies by default, so this is the hand-over plus one host copy of
                     the output, whatever ``np.asarray`` did.

``detail`` says whether ``np.asarray`` returned a view of the device buffer (the same
address: no copy) and whether ``np.array`` shared it. ``bytes_moved`` counts memory
traffic the way the memory probe of fig-machine-peak does, bytes read plus bytes
written: twice the output's size where a copy was made, none for a view, none for
``block``; so the bandwidth table has a row only where bytes moved.
"""

FIGURE = {
    "budget_s": 5.0,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Reading a result on the host: block_until_ready against np.asarray and np.array",
    "caption": (
        "Four ways to end the same call: wait for the output on the device, hand it to NumPy "
        "(np.asarray), and, for an output that is already ready, the hand-over alone and a "
        "forced copy (np.array). Whether np.asarray copied is recorded in every row (the detail "
        "field of the CSV, quoted in the chapter); the bandwidth table has a row only where bytes "
        "were copied, counted as read plus written."
    ),
    "chapter": "how-good-is-this-number.md",
    "group_by": ["n"],
    "variants": ["block", "asarray", "asarray-ready", "copy-ready"],
    "ratio": ["asarray", "block"],
    "metrics": ["bandwidth"],
    "headline": {"stat": "ratio", "n": 4194304},
}

# --8<-- [start:measure]
import time
from collections.abc import Callable

import jax
import numpy as np

from benchkit import Recorder, Sample, check_close, completed_sampler, figure_main

double = jax.jit(lambda x: 2 * x)


def sizes(rec: Recorder) -> list[int]:
    if rec.config.smoke:
        return [4096]
    if rec.config.accelerator:
        return [1 << 20, 1 << 24, 1 << 28]
    return [1 << 16, 1 << 22, 1 << 24]


def wait(out):
    return out.block_until_ready()


def no_wait(out):  # a NumPy array is ready when the call returns
    return out


def from_ready(x: jax.Array, convert: Callable[[jax.Array], np.ndarray]) -> Callable[[], Sample]:
    """Samples of ``convert(out)`` alone, ``out`` a fresh output made and waited on first."""
    def one() -> Sample:
        out = double(x).block_until_ready()  # untimed: a new output, no NumPy value cached on it
        t0 = time.perf_counter()
        host = convert(out)
        elapsed = time.perf_counter() - t0
        del host, out  # freed outside the interval
        return Sample(elapsed)
    return one


def shares(x: jax.Array, convert: Callable[[jax.Array], np.ndarray]) -> bool:
    """Whether ``convert`` returned a view of the output's buffer (same address: no copy)."""
    out = double(x).block_until_ready()
    host = convert(out)
    try:
        return out.unsafe_buffer_pointer() == host.ctypes.data
    except Exception:  # noqa: BLE001 - no host-visible pointer (an accelerator): a real copy
        return False


def measure(rec: Recorder) -> None:
    rng = np.random.default_rng(0)
    samples = 3 if rec.config.smoke else 10
    with rec.interleaved() as cells:
        for n in sizes(rec):
            host = rng.standard_normal(n, dtype=np.float32)
            x = jax.device_put(host).block_until_ready()
            err = check_close(np.asarray(double(x)), 2.0 * host.astype(np.float64), rtol=1e-6, atol=0,
                              what=f"2 * x, n={n}")
            view = shares(x, np.asarray)
            detail = (f"np.asarray {'returned a view of the device buffer (no copy)' if view else 'made a copy'}; "
                      f"np.array {'shared the buffer' if shares(x, np.array) else 'made a copy'}")
            copied = None if view else 8.0 * n  # read + written where np.asarray copied; none for a view
            common = {"dtype": "float32", "shape": f"{n}", "params": {"n": n}, "max_rel_error": err,
                      "detail": detail}
            cells.sample("block", "completed", completed_sampler(double, (x,), wait), samples,
                         bytes_moved=None, **common)
            cells.sample("asarray", "completed", completed_sampler(lambda v: np.asarray(double(v)), (x,), no_wait),
                         samples, bytes_moved=copied, **common)
            cells.sample("asarray-ready", "completed", from_ready(x, np.asarray), samples,
                         bytes_moved=copied, **common)
            cells.sample("copy-ready", "completed", from_ready(x, np.array), samples,
                         bytes_moved=8.0 * n, **common)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
