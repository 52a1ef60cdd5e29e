"""fig-profile-top-ops: a profiler trace of a few training steps, summarised from the file.

A small tanh MLP takes a few SGD steps under ``jax.profiler.trace``. The script
then reads the trace file it just wrote (gzipped trace-event JSON) and records,
per step: how long the step took as the host saw it, how long the host spent
dispatching it, how long the compiled operations ran (summed, and first start
to last end), and each operation's own time. A device memory profile taken
after the steps is summed per sample type and compared with JAX's own census
of live arrays. The trace and the memory profile of the first run are
published beside the CSV.
"""

FIGURE = {
    "budget_s": 1.5,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Where a training step's time goes, read from a profiler trace",
    "caption": (
        "Every number but the unprofiled step is read from the trace file the profiler wrote, not "
        "from a stopwatch around the step: how long the traced step took as the host saw it, how "
        "much of it the host spent dispatching, and how long the compiled operations ran. The "
        "ratio is traced over unprofiled time; its verdict says whether the profiler cost anything "
        "measurable. The operations behind the busy time are ranked below."
    ),
    "chapter": "diagnosing/profiling.md",
    "variants": ["unprofiled-step", "traced-step", "host-dispatch", "ops-busy", "ops-span"],
    "ratio": ["traced-step", "unprofiled-step"],
    "headline": {"stat": "ratio"},
    "code_sections": ["model", "measure"],
}

# --8<-- [start:model]
import jax
import jax.numpy as jnp
import numpy as np

Params = list[tuple[jax.Array, jax.Array]]
LEARNING_RATE = 0.01


def loss(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return jnp.mean((x @ w + b - y) ** 2)


@jax.jit
def train_step(params: Params, x: jax.Array, y: jax.Array) -> tuple[Params, jax.Array]:
    value, grads = jax.value_and_grad(loss)(params, x, y)
    new = [(w - LEARNING_RATE * gw, b - LEARNING_RATE * gb) for (w, b), (gw, gb) in zip(params, grads)]
    return new, value


def step_numpy(params: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray,
               y: np.ndarray) -> tuple[float, list[tuple[np.ndarray, np.ndarray]]]:
    """The loss and its gradient by hand-written backpropagation: the reference."""
    hidden = [x]
    for w, b in params[:-1]:
        hidden.append(np.tanh(hidden[-1] @ w + b))
    w, b = params[-1]
    residual = hidden[-1] @ w + b - y
    d = 2 * residual / residual.size  # d loss / d output
    grads = [(hidden[-1].T @ d, d.sum(axis=0))]
    d = d @ w.T
    for (w, _), h_in, h_out in zip(params[-2::-1], hidden[-2::-1], hidden[:0:-1]):
        d = d * (1 - h_out**2)  # back through tanh
        grads.append((h_in.T @ d, d.sum(axis=0)))
        d = d @ w.T
    return float(np.mean(residual**2)), grads[::-1]
# --8<-- [end:model]


# --8<-- [start:measure]
import re
import tempfile
import time
from pathlib import Path

from benchkit import Recorder, Sample, check_close, compiles, figure_main, profiles

STEP_ANNOTATION = "train"


def check_step(host_params: list, host_x: np.ndarray, host_y: np.ndarray, params: Params,
               x: jax.Array, y: jax.Array) -> float:
    """The jitted step itself against the float64 NumPy reference: its loss, and the
    gradient it applied, read back as (old - new) / learning rate (comparing the new
    parameters themselves would hide a wrong gradient behind the parameters' size)."""
    wide = [(w.astype(np.float64), b.astype(np.float64)) for w, b in host_params]
    want_value, want_grads = step_numpy(wide, host_x.astype(np.float64), host_y.astype(np.float64))
    new, value = train_step(params, x, y)
    errors = [check_close(value, want_value, rtol=1e-4, atol=1e-5, what="train_step loss")]
    for i, ((w, b), (w1, b1), (gw, gb)) in enumerate(zip(wide, new, want_grads)):
        for name, old, got, want in (("w", w, w1, gw), ("b", b, b1, gb)):
            applied = (old - np.asarray(got, dtype=np.float64)) / LEARNING_RATE
            scale = float(np.max(np.abs(want)))
            errors.append(check_close(applied, want, rtol=0.0, atol=2e-2 * scale,
                                      what=f"train_step gradient of layer {i} {name}"))
    return max(errors)


def sizes(rec: Recorder) -> dict[str, int]:
    if rec.config.smoke:
        return {"width": 64, "batch": 32, "layers": 3, "steps": 2}
    if rec.config.accelerator:
        return {"width": 4096, "batch": 1024, "layers": 3, "steps": 5}
    return {"width": 512, "batch": 256, "layers": 3, "steps": 8}


def make_inputs(size: dict[str, int]) -> tuple[list, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    dims = [size["width"]] * size["layers"] + [10]
    params = [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), np.zeros(b, np.float32))
              for a, b in zip(dims[:-1], dims[1:])]
    x = rng.standard_normal((size["batch"], size["width"]), dtype=np.float32)
    return params, x, rng.standard_normal((size["batch"], 10), dtype=np.float32)


def capture_trace(logdir: str, params: Params, x: jax.Array, y: jax.Array,
                  steps: int) -> tuple[Params, float, int]:
    """Run ``steps`` steps under the profiler; return the final parameters, the
    seconds the profiler took to write its files, and compiles seen."""
    with compiles.count() as seen:
        with jax.profiler.trace(logdir, create_perfetto_trace=True):
            for i in range(steps):
                with jax.profiler.StepTraceAnnotation(STEP_ANNOTATION, step_num=i):
                    params, value = train_step(params, x, y)
                    jax.block_until_ready((params, value))  # steps do not overlap in the trace
            stop = time.perf_counter()
        written_s = time.perf_counter() - stop
    return params, written_s, seen.n


def describe_ops(params: Params, x: jax.Array, y: jax.Array) -> dict[str, str]:
    """Instruction name -> "opcode shape: source op", read from the compiled program.
    The source op names ``jvp()`` for the forward pass, ``transpose(jvp())`` for the backward."""
    text = train_step.lower(params, x, y).compile().as_text()
    pattern = re.compile(r'^\s*(?:ROOT )?%?([\w.\-]+) = (\w+\[[\d,]*\])\S* ([\w\-]+)\(.*?'
                         r'op_name="([^"]*)"', re.MULTILINE)
    names = {}
    for m in pattern.finditer(text):
        source = re.sub(r"jit\(\w+\)/", "", m[4])  # every op is inside jit(train_step)
        names[m[1]] = f"{m[3]} {m[2]}: {source}"
    return names


def record_step(rec: Recorder, events: list[profiles.Event], span: profiles.Event,
                names: dict[str, str], n_compiles: int, shape: str, err: float) -> None:
    inside = profiles.within(events, span)
    ops = profiles.op_events(inside)
    if not ops:
        raise RuntimeError(f"step {span.args.get('step_num')}: the trace holds no compiled-op events")
    busy, active = profiles.busy_and_span(ops)
    calls = [e for e in inside if e.name.startswith("PjitFunction(") and e.tid == span.tid]
    if not calls:  # a zero would be recorded as a time; say what is missing instead
        raise RuntimeError("no PjitFunction(...) event on the step's thread: has the profiler renamed it?")
    dispatch = sum(e.dur for e in profiles.outermost(calls))
    totals = [("traced-step", span.dur * profiles.US), ("host-dispatch", dispatch * profiles.US),
              ("ops-busy", busy), ("ops-span", active)]
    for variant, seconds in totals:
        rec.add(variant, "trace", [Sample(seconds, 1, n_compiles)], dtype="float32", shape=shape,
                max_rel_error=err)
    for op, seconds in profiles.seconds_by_op(ops).items():
        rec.add("op", "trace", [Sample(seconds, 1, n_compiles)], dtype="float32", shape=shape,
                params={"op": op}, detail=names.get(op, ""), max_rel_error=err)


def shorten_path(text: str) -> str:
    """Absolute paths in the published profile would name someone's folders."""
    if not text.startswith("/"):
        return text
    if "site-packages/" in text:
        return "<site-packages>/" + text.split("site-packages/", 1)[1]
    repo = f"{Path(__file__).resolve().parents[1]}/"  # this checkout: its files are shown relative to it
    return text[len(repo):] if text.startswith(repo) else Path(text).name


def record_memory(rec: Recorder, scratch: str, shape: str) -> None:
    raw = Path(scratch) / "memory.prof"  # not published as is: its paths are shortened first
    t0 = time.perf_counter()
    jax.profiler.save_device_memory_profile(str(raw))
    saved_s = time.perf_counter() - t0
    published = rec.artifact("memory.prof")
    published.write_bytes(profiles.rewrite_pprof_strings(raw.read_bytes(), shorten_path))
    totals = profiles.pprof_totals(published.read_bytes())
    t0 = time.perf_counter()
    live = jax.live_arrays()
    live_bytes = sum(a.nbytes for a in live)
    census_s = time.perf_counter() - t0
    rows = [("profile-buffers", saved_s, totals.totals.get(("space/bytes", "buffer"), 0),
             f"{totals.samples.get('buffer', 0)} buffer samples"),
            ("live-arrays", census_s, live_bytes, f"{len(live)} arrays (jax.live_arrays)")]
    for part, seconds, size, detail in rows:
        rec.add("memory", "completed", [Sample(seconds)], dtype="float32", shape=shape,
                params={"part": part}, size_bytes=float(size), detail=detail)
    rec.add("file", "completed", [Sample(saved_s)], dtype="float32", shape=shape,
            params={"part": "memory-profile"}, size_bytes=float(published.stat().st_size))


def measure(rec: Recorder) -> None:
    size = sizes(rec)
    shape = f"{size['batch']}x{size['width']}"  # batch x width
    host_params, host_x, host_y = make_inputs(size)
    params, x, y = jax.device_put((host_params, host_x, host_y))
    jax.block_until_ready((params, x, y))
    err = check_step(host_params, host_x, host_y, params, x, y)  # the computation that is timed
    names = describe_ops(params, x, y)

    def unprofiled() -> None:
        rec.collect("unprofiled-step", "completed", train_step, (params, x, y), dtype="float32",
                    shape=shape, max_rel_error=err)

    def traced() -> None:
        nonlocal params  # the profiled steps train on; the memory profile sees their output
        params, written_s, n_compiles = capture_trace(scratch, params, x, y, size["steps"])
        events = profiles.publish_trace(rec, scratch, written_s, shape)
        for span in [e for e in events if e.name == STEP_ANNOTATION]:
            record_step(rec, events, span, names, n_compiles, shape, err)
        record_memory(rec, scratch, shape)  # params, batch and last loss are still alive here

    with tempfile.TemporaryDirectory() as scratch:
        # The profiled steps run under the profiler as one block, so the two blocks
        # cannot interleave: their order is drawn from the run's seed instead.
        for block in rec.shuffled([unprofiled, traced]):
            block()
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
