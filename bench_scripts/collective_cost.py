"""fig-collective-cost: an all-reduce and an all-gather, by message size, between processes
and between simulated devices of one process.

Two processes, two simulated CPU devices each. The same collective runs over two
devices that sit

* in different processes (``*-2proc``: one device of each process; the data crosses
  processes through gloo over TCP on 127.0.0.1), or
* in the same process (``*-1proc``: this process's two devices; XLA's in-process
  CPU collectives, memory to memory).

``bytes`` is each device's message. A barrier precedes every sample so both processes
start together; the rows are process 0's clock (process 1 runs the same calls).
``bytes_moved`` is the bus traffic per device by the usual convention (all-reduce
``2(n-1)/n`` times the message, all-gather ``(n-1)/n`` times the output; with n = 2
both equal the message), so the bandwidth table is the achieved bus bandwidth.
"""

FIGURE = {
    "budget_s": 4.3,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "What a collective costs: latency floor and bandwidth, across processes and within one",
    "caption": (
        "<!-- bench:claim fig-collective-cost growth(\"psum-2proc\") > 2 and median(\"psum-2proc\", bytes=65536) "
        "< 5 * median(\"psum-2proc\", bytes=4096) -->A small all-reduce costs a floor: sixteen times the "
        "bytes (4 KiB to 64 KiB) took less than five times the time, and the time grows with the message "
        "only at the large end<!-- /bench:claim -->, so a small collective is all latency and the bandwidth "
        "it achieves says nothing about the link. The ratio column compares the two placements (devices in different "
        "processes, through gloo over TCP, or in one process); both processes share the same two cores, "
        "so that comparison measures scheduling on this machine, not an interconnect."
    ),
    "chapter": "timing-sharded-programs.md",
    "group_by": ["bytes"],
    "variants": ["psum-2proc", "psum-1proc", "allgather-2proc", "allgather-1proc"],
    "ratio": ["psum-2proc", "psum-1proc"],
    "metrics": ["bandwidth"],
    "ceilings": False,  # bytes sent between processes: not memory traffic, no place on the memory roof
    "headline": {"stat": "median", "variant": "psum-2proc", "bytes": 4096},
    "processes": 2,
    "cpu_devices": 2,
    "min_devices": 2,
    "timeout_s": 240,
}

# --8<-- [start:measure]
import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from benchkit import Recorder, check_close, figure_main
from benchkit.multiproc import gather, timed_steps


def collectives(mesh: Mesh) -> dict[str, object]:
    """psum and all-gather over the mesh's one axis, each device holding one block."""
    def psum(a):
        return lax.psum(a, "d")

    def gather_all(a):
        return lax.all_gather(a, "d", tiled=True)

    spec = dict(mesh=mesh, in_specs=P("d"), out_specs=P())
    # all_gather's output is the same on every device, but shard_map cannot infer it: check_vma=False
    return {"psum": jax.jit(jax.shard_map(psum, **spec)),
            "allgather": jax.jit(jax.shard_map(gather_all, check_vma=False, **spec))}


def meshes() -> dict[str, Mesh]:
    """Two devices in different processes, and this process's own two devices."""
    across = [next(d for d in jax.devices() if d.process_index == p) for p in range(2)]
    return {"2proc": Mesh(np.array(across), ("d",)), "1proc": Mesh(np.array(jax.local_devices()[:2]), ("d",))}


def sizes(rec: Recorder) -> tuple[list[int], int]:
    """Per-device message sizes in bytes, and samples per cell."""
    if rec.config.smoke:
        return [4096, 65536], 3
    return [4096, 65536, 1 << 20, 8 << 20], 8


def measure(rec: Recorder) -> None:
    message_sizes, samples = sizes(rec)
    cells = []
    for where, mesh in meshes().items():
        ops = collectives(mesh)
        for nbytes in message_sizes:
            n = nbytes // 4
            host = np.arange(2 * n, dtype=np.float32).reshape(2, n) % 251  # exact in float32 sums
            x = jax.make_array_from_callback(host.shape, NamedSharding(mesh, P("d")), host.__getitem__)
            want = {"psum": host.sum(axis=0, keepdims=True), "allgather": host}
            for op, fn in ops.items():
                got = fn(x)
                err = check_close(got.addressable_shards[0].data, want[op], rtol=0, atol=0,
                                  what=f"{op} over {where}, {nbytes} bytes")
                cells.append((f"{op}-{where}", fn, x, nbytes, err))
    taken: dict[int, list] = {k: [] for k in range(len(cells))}
    for _ in range(samples):  # rounds; the order is the run's seed, the same in every process
        for k in rec.shuffled(range(len(cells))):
            fn, x = cells[k][1], cells[k][2]
            taken[k] += timed_steps(lambda fn=fn, x=x: fn(x), 1, warmup=1, sync=True)
    if jax.process_index() == 0:
        for k, (variant, _, _, nbytes, err) in enumerate(cells):
            rec.add(variant, "completed", taken[k], dtype="float32", shape=f"2x{nbytes // 4}",
                    params={"bytes": nbytes}, bytes_moved=float(nbytes), max_rel_error=err)
    gather([0.0])  # both processes finish together
# --8<-- [end:measure]

if __name__ == "__main__":
    figure_main(__file__, measure)
