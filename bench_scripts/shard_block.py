"""fig-shard-block: what "done" means for a global array spread over two processes.

Two processes, two simulated CPU devices each: one global array split by rows over
the four devices. Each process times the same call and stops its clock at a
different point:

* ``one-shard``: the first of this process's shards is ready;
* ``local-shards``: ``block_until_ready`` on the global output: every shard *this
  process* holds is ready; the other process's shards are not waited for;
* ``global-sum``: a result that needs every shard (the array's sum, replicated to
  every device through an all-reduce) is ready.

Process 1 is a simulated straggler: before each call it sleeps ``straggle_ms``
(outside its clock). Rows ``proc=0`` and ``proc=1`` are each process's clock.
"""

FIGURE = {
    "budget_s": 3.4,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Blocking on one shard, this process's shards, or the global result",
    "caption": (
        "A global array's `block_until_ready` returns when this process's shards are done. "
        "<!-- bench:claim fig-shard-block ratio(proc=\"0\") > 1.5 -->On the process that was on time, waiting "
        "for a result that needs every shard took much longer than blocking on its own shards: the local "
        "clock said \"done\" while the other process had not started<!-- /bench:claim -->. A clock that "
        "blocks on local shards measures one process's share of the work, not the step."
    ),
    "chapter": "timing-sharded-programs.md",
    "group_by": ["proc"],
    "variants": ["one-shard", "local-shards", "global-sum"],
    "ratio": ["global-sum", "local-shards"],
    "headline": {"stat": "ratio", "proc": "0"},
    "processes": 2,
    "cpu_devices": 2,
    "min_devices": 2,
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
from benchkit.multiproc import gather, timed_steps


@jax.jit
def layer(x: jax.Array, w: jax.Array) -> jax.Array:
    return jnp.tanh(x @ w)  # row-sharded in, row-sharded out: no communication


@jax.jit
def layer_sum(x: jax.Array, w: jax.Array) -> jax.Array:
    return jnp.sum(layer(x, w))  # needs every shard: an all-reduce, replicated everywhere


def sizes(rec: Recorder) -> dict[str, int]:
    if rec.config.smoke:
        return {"rows": 32, "width": 32, "straggle_ms": 2, "samples": 4}
    return {"rows": 512, "width": 256, "straggle_ms": 20, "samples": 15}


def measure(rec: Recorder) -> None:
    size = sizes(rec)
    me = jax.process_index()
    mesh = jax.make_mesh((jax.device_count(),), ("d",), axis_types=(AxisType.Auto,))
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((size["rows"] * jax.device_count(), size["width"]), dtype=np.float32)
    w_np = rng.standard_normal((size["width"], size["width"]), dtype=np.float32) / np.sqrt(size["width"])
    x = jax.make_array_from_callback(x_np.shape, NamedSharding(mesh, P("d")), lambda i: x_np[i])
    w = jax.make_array_from_callback(w_np.shape, NamedSharding(mesh, P()), lambda i: w_np[i])
    want = np.tanh(x_np.astype(np.float64) @ w_np.astype(np.float64))
    got = layer_sum(x, w).addressable_shards[0].data
    err = check_close(got, want.sum(), rtol=1e-3, atol=1e-2 * np.sqrt(want.size), what="global sum")
    for shard in layer(x, w).addressable_shards:  # this process's rows, against the same reference
        check_close(shard.data, want[shard.index], rtol=1e-4, atol=1e-4, what=f"shard {shard.index}")

    def straggle() -> None:  # process 1 is late to every call (outside its clock)
        if me == 1:
            time.sleep(size["straggle_ms"] / 1e3)

    first_shard = lambda y: y.addressable_shards[0].data.block_until_ready()  # noqa: E731
    plans = {
        "one-shard": lambda: timed_steps(lambda: layer(x, w), 1, before=straggle, wait=first_shard),
        "local-shards": lambda: timed_steps(lambda: layer(x, w), 1, before=straggle),
        "global-sum": lambda: timed_steps(lambda: layer_sum(x, w), 1, before=straggle),
    }
    taken: dict[str, list] = {v: [] for v in plans}
    for _ in range(size["samples"]):  # rounds; the order is the run's seed, the same in every process
        for variant in rec.shuffled(plans):
            taken[variant] += plans[variant]()
    params = {"proc": me, "straggle_ms": size["straggle_ms"]}
    for variant, samples in taken.items():
        rec.add(variant, "completed", samples, dtype="float32", shape=f"{x.shape[0]}x{size['width']}",
                params=params, max_rel_error=err)
    gather([0.0])  # both processes finish together
# --8<-- [end:measure]

if __name__ == "__main__":
    figure_main(__file__, measure)
