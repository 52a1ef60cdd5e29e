"""fig-cpu-dispatch-threshold: the CPU client runs cheap programs inline, the rest asynchronously.

XLA's CPU client estimates each compiled program's floating-point operations with
HloCostAnalysis when it loads the program, and marks it cheap below 1000
(``cheap_computation_`` in ``xla/pjrt/cpu/cpu_client.cc``). A cheap program whose inputs are
ready runs on the calling thread before the call returns; any other is handed to the client's
worker threads and the call returns at once. ``jax_cpu_enable_async_dispatch=False`` makes the
client run every program inline; jax reads it when it creates the CPU client, so this script
clears the backends to get a client with each setting.

Columns: ``dispatch``, ``completed`` and ``loop`` on the default client (async dispatch on);
``inline-*`` the same on a client with it off. ``flops`` is the program's own estimate, read
from ``compiled.cost_analysis()``; ``detail`` says how many calls returned an output that was
already ready (one that ran inline always is).
"""

FIGURE = {
    "budget_s": 3.1,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Inline or asynchronous: the CPU client's flop threshold",
    "caption": (
        "Each row is one small program, ordered by its cost-analysis flop estimate; the CPU "
        "client runs a program estimated under 1000 flops on the calling thread and hands any "
        "other to its worker threads. The inline- columns time the same programs on a client "
        "created with jax_cpu_enable_async_dispatch off, which runs every program inline. "
        "Just above the threshold, with each sample just after an untimed call of the same program, "
        "compare the completed and inline-completed columns for what the hand-off cost. "
        "<!-- bench:claim fig-cpu-dispatch-threshold ratio('completed', 'dispatch', op='matmul', n=128) > 1.2 and ratio('inline-completed', 'inline-dispatch', op='matmul', n=128) < 1.5 -->A large matmul's completed time exceeded its dispatch time by more than a fifth on the default client and by less than a half with async dispatch off<!-- /bench:claim -->. "  # noqa: E501
        "A time near the harness floor belongs to a program that ran inline; a tiny program "
        "above the threshold may pay for the hand-off on top."
    ),
    "chapter": "asynchronous-dispatch.md",
    "group_by": ["flops", "op", "n"],
    "variants": ["dispatch", "completed", "loop", "inline-dispatch", "inline-completed", "inline-loop"],
    "ratio": ["completed", "inline-completed"],
    "headline": {"stat": "ratio", "op": "add", "n": 1000},
}

# --8<-- [start:measure]
import jax
import numpy as np
from jax.extend.backend import clear_backends

from benchkit import CannotRunHere, Recorder, check_close, figure_main

THRESHOLD = 1000  # flops: XLA's CPU client runs a program estimated below this inline
READY_PROBES = 20  # calls per program and client whose output is checked for readiness on return
MAX_SAMPLES = 30  # per cell: 9 programs x 6 columns must fit a run in a few seconds

OPS = {
    "add": jax.jit(lambda x: x + 1),  # fig-harness-floor's near-empty call at n = 1
    "axpy": jax.jit(lambda x, y: 2 * x + y),  # fig-jax-vs-numpy's axpy
    "matmul": jax.jit(lambda x: x @ x),  # fig-dispatch-vs-completion's matmul
    "transpose": jax.jit(lambda x: x.T),  # moves every byte, does no arithmetic: no flops at all
}
# n one apart across the threshold where an op allows it: 999 and 1000 elements, 7 and 8 a side
SIZES = [("add", 1), ("add", 999), ("add", 1000), ("axpy", 16), ("axpy", 1024),
         ("matmul", 7), ("matmul", 8), ("matmul", 128), ("transpose", 256)]


def inputs(op: str, n: int) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Host inputs and the float64 NumPy reference of one program."""
    rng = np.random.default_rng(n)
    if op in ("matmul", "transpose"):
        x = rng.standard_normal((n, n), dtype=np.float32)
        return (x,), (x.astype(np.float64) @ x if op == "matmul" else x.T)
    shape = () if n == 1 else (n,)  # n = 1: a scalar, as in fig-harness-floor
    x = rng.standard_normal(shape, dtype=np.float32)
    if op == "add":
        return (x,), x.astype(np.float64) + 1
    y = rng.standard_normal(shape, dtype=np.float32)
    return (x, y), 2 * x.astype(np.float64) + y


def cost_flops(fn, args) -> int:
    """The compiled program's own flop estimate (a dict in jax 0.12, a list of dicts before;
    a program the analysis counts no flops in has no "flops" entry)."""
    cost = fn.lower(*args).compile().cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost
    return int(cost.get("flops", 0))


def ready_on_return(fn, args) -> int:
    """How many of READY_PROBES calls returned an output that was already ready."""
    ready = 0
    for _ in range(READY_PROBES):
        out = fn(*args)
        ready += out.is_ready()
        out.block_until_ready()
    return ready


def use_client(inline: bool) -> None:
    # jax reads the option when it creates the CPU client (xla_bridge.make_cpu_client): setting
    # it changes nothing until the backends are cleared and the next call creates a new client.
    jax.config.update("jax_cpu_enable_async_dispatch", not inline)
    clear_backends()


def measure_client(rec: Recorder, inline: bool) -> None:
    use_client(inline)
    prefix = "inline-" if inline else ""
    with rec.interleaved() as cells:  # one client's 9 x 3 cells, sampled in shuffled rounds
        for op, n in SIZES:
            fn = OPS[op]
            host, want = inputs(op, n)
            args = jax.block_until_ready(jax.device_put(host))  # placed and ready before any clock
            err = check_close(fn(*args), want, rtol=1e-5, atol=1e-4 * n, what=f"{op} at n={n}")
            flops, ready = cost_flops(fn, args), ready_on_return(fn, args)
            if inline and ready < READY_PROBES:  # the option did not reach the new client
                raise RuntimeError(f"{op} n={n}: {ready} of {READY_PROBES} inline calls returned ready")
            common = dict(dtype="float32", shape="x".join(map(str, host[0].shape)) or "scalar",
                          params={"flops": flops, "op": op, "n": n}, max_rel_error=err,
                          flops=flops, maximum=MAX_SAMPLES,
                          detail=f"output ready when the call returned: {ready} of {READY_PROBES} calls")
            for boundary in ("dispatch", "completed", "loop"):
                cells.collect(prefix + boundary, boundary, fn, args, **common)


def measure(rec: Recorder) -> None:
    if rec.config.accelerator:
        raise CannotRunHere("the flop threshold belongs to the CPU client; this machine's "
                            f"default backend is {rec.config.platform}")
    for inline in rec.shuffled([False, True]):  # which client goes first, drawn from the run's seed
        measure_client(rec, inline)
    use_client(False)  # back to jax's default
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
