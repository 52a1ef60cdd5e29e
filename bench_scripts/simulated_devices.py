"""fig-simulated-devices: the same work split over 1, 2, 4 and 8 simulated CPU devices.

One process with eight simulated CPU devices (``FIGURE["cpu_devices"]``, which the
worker sets as ``jax_num_cpu_devices`` before the backend starts). One layer,
``tanh(x @ w)``, on the same ``x`` every time: its rows are split over the first
``devices`` devices, ``w`` is replicated. The total work is the same in every row; only
the number of devices that share it changes. On real devices the step time would fall
about as ``1/devices``; simulated devices are threads of one process on the same cores.

``step`` is one sharded call, completed (every shard ready). The step time times the
device count is the device time one step used: constant if the devices were independent
and the split were free (derived when read, not stored).
"""

FIGURE = {
    "budget_s": 2.1,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Simulated devices share the same cores: one step split over 1 to 8 CPU devices",
    "caption": (
        "The same layer on the same data, its rows split over more simulated CPU devices. "
        "<!-- bench:claim fig-simulated-devices "
        "median(\"step\", devices=\"8\") > 0.4 * median(\"step\", devices=\"1\") "
        "-->Eight simulated devices did not make the step anywhere near eight times faster<!-- /bench:claim -->: "
        "they are threads sharing the machine's cores, so a sharded program prototyped on one CPU shows the "
        "overhead of sharding without its speed-up."
    ),
    "chapter": "timing-sharded-programs.md",
    "group_by": ["devices"],
    "variants": ["step"],
    "headline": {"stat": "median", "variant": "step", "devices": 8},
    "cpu_devices": 8,
}

# --8<-- [start:measure]
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from benchkit import Recorder, check_close, figure_main

COUNTS = (1, 2, 4, 8)


@jax.jit
def layer(x: jax.Array, w: jax.Array) -> jax.Array:
    return jnp.tanh(x @ w)  # follows its inputs' shardings: rows split, w replicated


def sizes(rec: Recorder) -> tuple[int, int]:
    return (64, 32) if rec.config.smoke else (2048, 512)


def measure(rec: Recorder) -> None:
    rows, width = sizes(rec)
    cpus = jax.devices("cpu")  # the simulated devices, also on a machine whose default is an accelerator
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((rows, width), dtype=np.float32)
    w_np = rng.standard_normal((width, width), dtype=np.float32) / np.sqrt(width)
    want = np.tanh(x_np.astype(np.float64) @ w_np.astype(np.float64))
    with rec.interleaved() as cells:
        for k in COUNTS:
            mesh = Mesh(np.array(cpus[:k]), ("d",))
            x = jax.device_put(x_np, NamedSharding(mesh, P("d"))).block_until_ready()
            w = jax.device_put(w_np, NamedSharding(mesh, P())).block_until_ready()
            err = check_close(layer(x, w), want, rtol=1e-4, atol=1e-4, what=f"layer over {k} devices")
            cells.collect("step", "completed", layer, (x, w), dtype="float32", shape=f"{rows}x{width}",
                          params={"devices": k}, max_rel_error=err)
# --8<-- [end:measure]

if __name__ == "__main__":
    figure_main(__file__, measure)
