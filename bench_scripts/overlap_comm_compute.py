"""fig-overlap-comm-compute: a cross-process all-reduce and independent compute, together or in turn.

Two processes, one device each. Two pieces of work that do not depend on each other:
an all-reduce of a gradient-sized buffer across the processes, and a matmul chain on
each process's own data.

* ``comm-only``: the all-reduce alone.
* ``compute-only``: the matmul chain alone.
* ``serialized``: the all-reduce, waited for, then the matmul chain (two calls).
* ``overlapped``: both in one jitted call, free to run at the same time.

Perfect overlap would make ``overlapped`` as fast as the slower of the two alone; no
overlap makes it as slow as ``serialized``. On an accelerator the collective runs on
the interconnect while the cores compute; on this CPU backend both use the same cores
and the collective's bytes go through the host's network stack. A barrier precedes
every sample; rows are process 0's clock.
"""

FIGURE = {
    "budget_s": 3.6,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Overlapping a collective with independent compute",
    "caption": (
        "An all-reduce across two processes and an independent matmul chain, run in turn or in one call "
        "that leaves the scheduler free to overlap them. Whether XLA overlaps them, and by how much, "
        "depends on the backend: on an accelerator the collective has an interconnect and engines of its "
        "own; on this CPU backend both pieces compete for the same two cores, so the table shows the CPU "
        "backend's scheduling, not what a GPU or TPU would do."
    ),
    "chapter": "timing-sharded-programs.md",
    "group_by": ["bytes", "width"],
    "variants": ["comm-only", "compute-only", "serialized", "overlapped"],
    "ratio": ["serialized", "overlapped"],
    "headline": {"stat": "ratio"},
    "processes": 2,
    "cpu_devices": 1,
    "timeout_s": 240,
}

# --8<-- [start:measure]
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from benchkit import Recorder, check_close, figure_main
from benchkit.multiproc import gather, timed_steps

DEPTH = 4  # matmuls in the compute chain


def programs(mesh):
    spec = dict(mesh=mesh, in_specs=(P("p"), P("p")), out_specs=(P(), P("p")))

    def chain(x):  # this process's block only: no communication
        y = x[0]
        for _ in range(DEPTH):
            y = jnp.tanh(y @ y)
        return y[None]

    def both(g, x):  # independent: XLA may run them at the same time
        return lax.psum(g, "p"), chain(x)

    comm = jax.jit(jax.shard_map(lambda g: lax.psum(g, "p"), mesh=mesh, in_specs=P("p"), out_specs=P()))
    compute = jax.jit(jax.shard_map(chain, mesh=mesh, in_specs=P("p"), out_specs=P("p")))
    return comm, compute, jax.jit(jax.shard_map(both, **spec))


def sizes(rec: Recorder) -> dict[str, int]:
    if rec.config.smoke:
        return {"bytes": 4096, "width": 32, "samples": 3}
    return {"bytes": 4 << 20, "width": 384, "samples": 12}


def measure(rec: Recorder) -> None:
    size = sizes(rec)
    n, width = size["bytes"] // 4, size["width"]
    mesh = jax.make_mesh((jax.process_count(),), ("p",), axis_types=(AxisType.Explicit,))
    procs = jax.process_count()
    rng = np.random.default_rng(0)
    g_np = rng.standard_normal((procs, n), dtype=np.float32)
    x_np = rng.standard_normal((procs, width, width), dtype=np.float32) / np.sqrt(width)
    g = jax.make_array_from_callback(g_np.shape, NamedSharding(mesh, P("p")), lambda i: g_np[i])
    x = jax.make_array_from_callback(x_np.shape, NamedSharding(mesh, P("p")), lambda i: x_np[i])
    comm, compute, both = programs(mesh)
    me = jax.process_index()
    want_y = x_np[me].astype(np.float64)
    for _ in range(DEPTH):
        want_y = np.tanh(want_y @ want_y)
    summed, y = both(g, x)
    err = check_close(summed.addressable_shards[0].data, g_np.sum(axis=0, keepdims=True), rtol=1e-5,
                      atol=1e-5, what="all-reduce")
    check_close(y.addressable_shards[0].data[0], want_y, rtol=1e-3, atol=1e-3, what="matmul chain")

    def serialized():
        jax.block_until_ready(comm(g))
        return compute(x)

    plans = {"comm-only": lambda: comm(g), "compute-only": lambda: compute(x), "serialized": serialized,
             "overlapped": lambda: both(g, x)}
    taken: dict[str, list] = {v: [] for v in plans}
    for _ in range(size["samples"]):  # rounds; the order is the run's seed, the same in every process
        for variant in rec.shuffled(plans):
            taken[variant] += timed_steps(plans[variant], 1, warmup=1, sync=True)
    if me == 0:
        for variant, samples in taken.items():
            rec.add(variant, "completed", samples, dtype="float32", shape=f"{procs}x{n}",
                    params={"bytes": size["bytes"], "width": width}, max_rel_error=err)
    gather([0.0])  # both processes finish together
# --8<-- [end:measure]

if __name__ == "__main__":
    figure_main(__file__, measure)
