"""fig-process-clocks: each process's clock, the slowest process, and a barrier before the clock.

Two processes (``FIGURE["processes"]``) under one ``jax.distributed`` runtime run the
same data-parallel step: each multiplies its half of the rows, then the partial
products are summed across processes (an all-reduce), so the step's output exists
only when both halves are done. Process 1 is a simulated straggler: before each step
it sleeps ``straggle_ms`` (outside its clock), as a process busy with its input
pipeline or a checkpoint would be late.

* ``no-barrier``: each process starts its clock when it is ready and stops it when
  the step's output is ready here.
* ``barrier``: a barrier (``sync_global_devices``) just before the clock, so both
  clocks start together.
* ``barrier-cost``: the barrier alone, with no straggler: what the honesty costs.

Rows ``proc=0`` and ``proc=1`` are each process's own clock; ``proc=max`` (recorded
by process 0 after gathering both) is the slower of the two, sample by sample: the
step time the job actually runs at.
"""

FIGURE = {
    "budget_s": 3.3,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Whose clock? Per-process step time, the slowest process, and a barrier",
    "caption": (
        "Two processes run one data-parallel step; process 1 arrives late to every step. "
        "<!-- bench:claim fig-process-clocks ratio(proc=\"0\") > 1.5 -->Without a barrier, process 0's clock "
        "measured its own step plus the time it waited inside the all-reduce for the straggler<!-- /bench:claim -->, "
        "while the straggler's own clock saw only the step. "
        "<!-- bench:claim fig-process-clocks "
        "median(\"no-barrier\", proc=\"1\") < median(\"no-barrier\", proc=\"0\") -->"
        "The late process reported the faster step<!-- /bench:claim -->: the clock that looks best belongs to the "
        "process that held everyone up. A barrier before the clock makes the clocks agree on the step; the wait "
        "moves into the barrier, which is worth timing on its own."
    ),
    "chapter": "timing-sharded-programs.md",
    "group_by": ["proc"],
    "variants": ["no-barrier", "barrier", "barrier-cost"],
    "ratio": ["no-barrier", "barrier"],
    "headline": {"stat": "ratio", "proc": "max"},
    "processes": 2,
    "cpu_devices": 1,
    "timeout_s": 240,
}

# --8<-- [start:measure]
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from benchkit import Recorder, check_close, figure_main
from benchkit.multiproc import barrier, gather, max_across, timed_steps


@jax.jit
def step(x: jax.Array, w: jax.Array) -> jax.Array:
    # Rows are split across processes; x.T @ ... sums over rows: an all-reduce across processes.
    return x.T @ jnp.tanh(x @ w) / x.shape[0]


def sizes(rec: Recorder) -> dict[str, int]:
    if rec.config.smoke:
        return {"rows": 64, "width": 32, "straggle_ms": 2, "samples": 4}
    return {"rows": 1024, "width": 256, "straggle_ms": 20, "samples": 15}


def global_inputs(rows: int, width: int) -> tuple[jax.Array, jax.Array, np.ndarray, np.ndarray]:
    """x split by rows over every process's devices, w replicated; every process builds the
    same host arrays from one seed and hands over only its own part."""
    mesh = jax.make_mesh((jax.device_count(),), ("p",), axis_types=(AxisType.Auto,))
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((rows * jax.process_count(), width), dtype=np.float32)
    w_np = rng.standard_normal((width, width), dtype=np.float32) / np.sqrt(width)
    x = jax.make_array_from_callback(x_np.shape, NamedSharding(mesh, P("p")), lambda i: x_np[i])
    w = jax.make_array_from_callback(w_np.shape, NamedSharding(mesh, P()), lambda i: w_np[i])
    return x, w, x_np, w_np


def measure(rec: Recorder) -> None:
    size = sizes(rec)
    me = jax.process_index()
    x, w, x_np, w_np = global_inputs(size["rows"], size["width"])
    x64 = x_np.astype(np.float64)
    want = x64.T @ np.tanh(x64 @ w_np.astype(np.float64)) / x64.shape[0]
    got = step(x, w).addressable_shards[0].data  # replicated: this process holds all of it
    err = check_close(got, want, rtol=1e-3, atol=1e-4, what="data-parallel step")

    def straggle() -> None:  # process 1 is late to every step (outside its clock)
        if me == 1:
            time.sleep(size["straggle_ms"] / 1e3)

    plans = {
        "no-barrier": lambda n: timed_steps(lambda: step(x, w), n, before=straggle),
        "barrier": lambda n: timed_steps(lambda: step(x, w), n, before=straggle, sync=True),
        "barrier-cost": lambda n: timed_steps(barrier, n, wait=lambda _: None),
    }
    taken: dict[str, list] = {v: [] for v in plans}
    for _ in range(size["samples"]):  # rounds; the order is the run's seed, the same in every process
        for variant in rec.shuffled(plans):
            taken[variant] += plans[variant](1)
    common = dict(dtype="float32", shape=f"{x.shape[0]}x{size['width']}", max_rel_error=err)
    params = {"straggle_ms": size["straggle_ms"]}
    for variant, samples in taken.items():
        slowest = max_across(samples)  # every process takes part in the gather
        rec.add(variant, "completed", samples, params={**params, "proc": me}, **common)
        if me == 0:
            rec.add(variant, "completed", slowest, params={**params, "proc": "max"}, **common)
    gather([0.0])  # both processes finish together: neither leaves while the other still gathers
# --8<-- [end:measure]

if __name__ == "__main__":
    figure_main(__file__, measure)
