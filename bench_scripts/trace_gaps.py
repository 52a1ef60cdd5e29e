"""fig-trace-gaps: find the gap in a trace, host-bound against running ahead.

The same small training step runs two ways, in one profiler session:

* ``host-bound``  every step prepares its batch on the host (NumPy), places
                  it, dispatches the step and then reads the loss back as a
                  Python float (a per-step block, as a loop that logs does);
* ``run-ahead``   the batches are prepared and placed before the loop, and the
                  loop only dispatches: one block after the last step.

Blocks of a few steps of each mode alternate in rounds whose order is drawn
from the run's seed. The script then reads the trace file it wrote and, per
executed step on the compute lanes (the compiled operations, grouped by the
``run_id`` XLA gives each execution), records the step period (first
operation to the next step's first operation), the time at least one compute
lane was busy, and the gap between the step's last operation and the next
step's first: the time the device waited. Steps and their host-side parts are
labelled with ``jax.profiler.StepTraceAnnotation`` / ``TraceAnnotation``; the
device-side parts with ``jax.named_scope``, which the compiled program's
metadata carries to each operation. The same loops are also timed with the
clock and no profiler running. The first run's trace and a one-step timeline
of each mode are published beside the CSV.
"""

FIGURE = {
    "budget_s": 1.6,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Find the gap: a host-bound loop against one that runs ahead",
    "caption": (
        "Read from the trace file, per executed step on the compute lanes: the step period (first "
        "operation to the next step's first operation), the time at least one lane was busy, and "
        "the gap between the step's last operation and the next step's first, when the device "
        "waited for the host. The ratio column is the gap's share of the step (a part of its whole: "
        "no verdict). Host-bound, each "
        "step prepares its batch and reads the loss back before the next is dispatched; run ahead, "
        "the batches were placed beforehand and <!-- bench:claim fig-trace-gaps ratio(mode='run-ahead') * 4 < ratio(mode='host-bound') -->the gap's share of the step fell to a fraction of the host-bound one<!-- /bench:claim -->."  # noqa: E501
    ),
    "chapter": "diagnosing/gaps-and-residuals.md",
    "group_by": ["mode"],
    "variants": ["step", "busy", "gap"],
    "ratio": ["gap", "step"],
    "ratio_verdict": False,
    "headline": {"stat": "ratio", "mode": "host-bound"},
    "code_sections": ["model", "loops", "gaps", "measure"],
}

# --8<-- [start:model]
import jax
import jax.numpy as jnp
import numpy as np

Params = list[tuple[jax.Array, jax.Array]]
LEARNING_RATE = 0.01


def loss(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    with jax.named_scope("forward"):  # the compiled operations keep these names
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = params[-1]
        out = x @ w + b
    with jax.named_scope("loss"):
        return jnp.mean((out - y) ** 2)


@jax.jit
def train_step(params: Params, x: jax.Array, y: jax.Array) -> tuple[Params, jax.Array]:
    value, grads = jax.value_and_grad(loss)(params, x, y)  # backward: transpose(jvp(forward))
    with jax.named_scope("update"):
        new = [(w - LEARNING_RATE * gw, b - LEARNING_RATE * gb)
               for (w, b), (gw, gb) in zip(params, grads)]
    return new, value


def prepare(raw: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The host's input pipeline for one batch (NumPy): standardise, add augmentation noise."""
    x = (raw - raw.mean(axis=0)) / (raw.std(axis=0) + 1e-6)
    return (x + 0.1 * rng.standard_normal(raw.shape, dtype=np.float32)).astype(np.float32)
# --8<-- [end:model]


# --8<-- [start:loops]
def host_bound(params: Params, raws: list[np.ndarray], y: jax.Array,
               rng: np.random.Generator) -> tuple[Params, float]:
    """Each step: prepare and place its batch, dispatch, then read the loss (a block)."""
    value = 0.0
    for i, raw in enumerate(raws):
        with jax.profiler.StepTraceAnnotation("host-bound", step_num=i):
            with jax.profiler.TraceAnnotation("prepare"):
                x = jax.device_put(prepare(raw, rng))
            params, loss_value = train_step(params, x, y)
            with jax.profiler.TraceAnnotation("read-loss"):
                value = float(loss_value)  # the host waits here; then the device waits for it
    return params, value


def run_ahead(params: Params, xs: list[jax.Array], y: jax.Array) -> tuple[Params, float]:
    """Batches already prepared and placed: dispatch every step, block once at the end."""
    for i, x in enumerate(xs):
        with jax.profiler.StepTraceAnnotation("run-ahead", step_num=i):
            params, loss_value = train_step(params, x, y)
    return params, float(loss_value)
# --8<-- [end:loops]


# --8<-- [start:gaps]
from collections import defaultdict
from dataclasses import dataclass

from benchkit import profiles


@dataclass(frozen=True)
class DeviceStep:
    """One execution of the program on the compute lanes, times in microseconds."""

    run_id: str
    start: float  # first operation's start
    end: float  # last operation's end
    busy: float  # time at least one lane ran an operation (overlaps counted once)
    ops: tuple[profiles.Event, ...]


def union_length(intervals: list[tuple[float, float]]) -> float:
    """Length of the union of [start, end) intervals."""
    total, open_start, open_end = 0.0, None, None
    for start, end in sorted(intervals):
        if open_end is None or start > open_end:
            total += 0.0 if open_end is None else open_end - open_start
            open_start, open_end = start, end
        else:
            open_end = max(open_end, end)
    return total + (0.0 if open_end is None else open_end - open_start)


def device_steps(events: list[profiles.Event]) -> list[DeviceStep]:
    """Compiled-operation events grouped by execution (XLA's ``run_id``), in start order.
    Where the events carry no ``run_id``, a new execution starts each time the program's
    first operation recurs."""
    ops = profiles.op_events(events)
    runs: dict[str, list[profiles.Event]] = defaultdict(list)
    if all("run_id" in e.args for e in ops):
        for e in ops:
            runs[str(e.args["run_id"])].append(e)
    else:
        first, count = (ops[0].args.get("hlo_module"), ops[0].hlo_op), 0
        for e in ops:
            count += (e.args.get("hlo_module"), e.hlo_op) == first
            runs[f"#{count}"].append(e)
    steps = [DeviceStep(run, min(e.ts for e in ops), max(e.end for e in ops),
                        union_length([(e.ts, e.end) for e in ops]), tuple(ops))
             for run, ops in runs.items()]
    return sorted(steps, key=lambda s: s.start)


@dataclass(frozen=True)
class StepGap:
    step: DeviceStep
    period: float  # this step's first operation to the next step's first operation
    gap: float  # this step's last operation to the next step's first: the device waited

    @property
    def fraction(self) -> float:
        return self.gap / self.period


def step_gaps(steps: list[DeviceStep]) -> list[StepGap]:
    """Each step but the last, with the period and the idle gap up to its successor."""
    return [StepGap(a, b.start - a.start, b.start - a.end) for a, b in zip(steps, steps[1:])]
# --8<-- [end:gaps]


# --8<-- [start:measure]
import json
import re
import tempfile
import time

from benchkit import Recorder, Sample, check_close, compiles, figure_main

MODES = ("host-bound", "run-ahead")
HOST_LABELS = ("prepare", "read-loss")  # TraceAnnotation names inside a host-bound step
DEVICE_PARTS = ("backward", "forward", "loss", "update")  # named scopes, backward first
PART_DETAIL = {"backward": "compiled operations from transpose(jvp(...)): the backward pass",
               "other": "compiled operations outside every named scope"}


def sizes(rec: Recorder) -> dict[str, int]:
    if rec.config.smoke:
        return {"width": 64, "batch": 32, "layers": 3, "steps": 3, "rounds": 2, "clock": 3}
    if rec.config.accelerator:
        return {"width": 2048, "batch": 512, "layers": 3, "steps": 6, "rounds": 3, "clock": 5}
    return {"width": 256, "batch": 128, "layers": 3, "steps": 6, "rounds": 3, "clock": 4}


def make_data(size: dict[str, int], rng: np.random.Generator) -> tuple[list, np.ndarray]:
    dims = [size["width"]] * size["layers"] + [10]
    params = [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), np.zeros(b, np.float32))
              for a, b in zip(dims[:-1], dims[1:])]
    return params, rng.standard_normal((size["batch"], 10), dtype=np.float32)


def numpy_step(params: list, x: np.ndarray, y: np.ndarray) -> tuple[float, list]:
    """Loss and new parameters by hand-written backpropagation in float64: the reference."""
    hidden = [x]
    for w, b in params[:-1]:
        hidden.append(np.tanh(hidden[-1] @ w + b))
    w, b = params[-1]
    residual = hidden[-1] @ w + b - y
    d = 2 * residual / residual.size
    grads = [(hidden[-1].T @ d, d.sum(axis=0))]
    d = d @ w.T
    for (w, _), h_in, h_out in zip(params[-2::-1], hidden[-2::-1], hidden[:0:-1]):
        d = d * (1 - h_out**2)
        grads.append((h_in.T @ d, d.sum(axis=0)))
        d = d @ w.T
    new = [(w - LEARNING_RATE * gw, b - LEARNING_RATE * gb) for (w, b), (gw, gb) in zip(params, grads[::-1])]
    return float(np.mean(residual**2)), new


def check_step(host_params: list, x: np.ndarray, y: np.ndarray) -> float:
    """One jitted step against the NumPy reference: the loss, and the update it applied."""
    wide = [(w.astype(np.float64), b.astype(np.float64)) for w, b in host_params]
    want_value, want_new = numpy_step(wide, x.astype(np.float64), y.astype(np.float64))
    new, value = train_step(jax.device_put(host_params), jax.device_put(x), jax.device_put(y))
    errors = [check_close(value, want_value, rtol=1e-4, atol=1e-5, what="train_step loss")]
    for i, ((w0, b0), (w1, b1), (w2, b2)) in enumerate(zip(wide, new, want_new)):
        for name, old, got, want in (("w", w0, w1, w2), ("b", b0, b1, b2)):
            applied, expected = old - np.asarray(got, np.float64), old - want
            scale = float(np.max(np.abs(expected)))
            errors.append(check_close(applied, expected, rtol=0.0, atol=2e-2 * scale,
                                      what=f"train_step update of layer {i} {name}"))
    return max(errors)


def part_of(source: str) -> str:
    """The named scope an operation came from, read from its op_name metadata."""
    if "transpose(" in source:
        return "backward"
    scopes = re.split(r"[/()]", source)  # jit(train_step)/jvp(forward)/dot_general
    return next((p for p in DEVICE_PARTS if p in scopes), "other")


def op_parts(params: Params, x: jax.Array, y: jax.Array) -> dict[str, str]:
    """Instruction name -> named scope, from the compiled program's metadata."""
    text = train_step.lower(params, x, y).compile().as_text()
    pattern = re.compile(r'^\s*(?:ROOT )?%?([\w.\-]+) = .*?op_name="([^"]*)"', re.MULTILINE)
    return {m[1]: part_of(m[2]) for m in pattern.finditer(text)}


class Blocks:
    """Runs blocks of steps of either mode; keeps the training going from block to block."""

    def __init__(self, params: Params, y: jax.Array, size: dict[str, int], seed: int) -> None:
        self.params, self.y, self.size = params, y, size
        self.rng = np.random.default_rng(seed)
        shape = (size["steps"], size["batch"], size["width"])
        self.data = list(self.rng.standard_normal(shape, dtype=np.float32))  # the raw "dataset"

    def raws(self) -> list[np.ndarray]:
        return self.data  # the same raw batches each block; prepare() draws fresh noise

    def run(self, mode: str) -> float:
        """One block of ``steps`` steps; returns the clock's seconds per step. For
        ``run-ahead`` the batches are prepared and placed before the clock starts."""
        raws = self.raws()
        if mode == "run-ahead":
            xs = jax.block_until_ready([jax.device_put(prepare(r, self.rng)) for r in raws])
        with jax.profiler.TraceAnnotation("block", mode=mode):
            t0 = time.perf_counter()
            if mode == "host-bound":
                self.params, _ = host_bound(self.params, raws, self.y, self.rng)
            else:
                self.params, _ = run_ahead(self.params, xs, self.y)
            jax.block_until_ready(self.params)
            elapsed = time.perf_counter() - t0
        return elapsed / len(raws)


def capture(blocks: Blocks, logdir: str, rounds: int, order: Recorder) -> tuple[float, int]:
    """Rounds of one block per mode, in seeded order, under one profiler session.
    Python-function tracing is off: it would bury the gap under interpreter events."""
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    with compiles.count() as seen:
        with jax.profiler.trace(logdir, create_perfetto_trace=True, profiler_options=options):
            for _ in range(rounds):
                for mode in order.shuffled(MODES):
                    blocks.run(mode)
            stop = time.perf_counter()
        written_s = time.perf_counter() - stop
    return written_s, seen.n


def host_label_times(events: list[profiles.Event], span: profiles.Event) -> dict[str, float]:
    """Microseconds per host-side label inside one annotated host step."""
    inside = [e for e in profiles.within(events, span) if e.tid == span.tid]
    times = {label: sum(e.dur for e in profiles.outermost([e for e in inside if e.name == label]))
             for label in HOST_LABELS}
    calls = profiles.outermost([e for e in inside if e.name.startswith("PjitFunction(")])
    times["dispatch"] = sum(e.dur for e in calls)
    return {k: v for k, v in times.items() if v > 0}


def record_trace(rec: Recorder, events: list[profiles.Event], parts: dict[str, str],
                 n_compiles: int, shape: str, err: float) -> dict[str, list[StepGap]]:
    steps = device_steps(events)
    found: dict[str, list[StepGap]] = {m: [] for m in MODES}
    common = {"dtype": "float32", "shape": shape, "max_rel_error": err}
    for block in (e for e in events if e.name == "block"):
        mode = str(block.args.get("mode"))
        inside = [s for s in steps if block.ts <= s.start < block.end]
        for g in step_gaps(inside):
            found[mode].append(g)
            for variant, us in (("step", g.period), ("busy", g.step.busy), ("gap", g.gap)):
                if us <= 0:
                    raise RuntimeError(f"{mode}: a {variant} of {us} µs between two steps in the trace")
                rec.add(variant, "trace", [Sample(us * profiles.US, 1, n_compiles)],
                        params={"mode": mode}, **common)
            by_part: dict[str, list[tuple[float, float]]] = defaultdict(list)
            for e in g.step.ops:
                by_part[parts.get(str(e.hlo_op), "other")].append((e.ts, e.end))
            for part, spans in sorted(by_part.items()):
                rec.add("label", "trace", [Sample(union_length(spans) * profiles.US, 1, n_compiles)],
                        params={"mode": mode, "lane": "device", "label": part},
                        detail=PART_DETAIL.get(part, f"compiled operations under jax.named_scope({part!r})"),
                        **common)
        for span in (e for e in profiles.within(events, block) if e.name == mode):
            for label, us in host_label_times(events, span).items():
                how = ("the PjitFunction(train_step) call" if label == "dispatch"
                       else f"jax.profiler.TraceAnnotation({label!r})")
                rec.add("label", "trace", [Sample(us * profiles.US, 1, n_compiles)],
                        params={"mode": mode, "lane": "host", "label": label}, detail=how, **common)
    if not all(found.values()):
        raise RuntimeError(f"no step gaps found for {[m for m in MODES if not found[m]]}")
    return found


def timeline(gaps: list[StepGap], events: list[profiles.Event], parts: dict[str, str],
             mode: str) -> dict:
    """One step of one mode (the one with the median gap) and what ran around it, as
    the trace recorded it: the side file the page draws its timeline from."""
    g = sorted(gaps, key=lambda g: g.gap)[len(gaps) // 2]
    t0, t1 = g.step.start - 0.1 * g.period, g.step.start + 1.1 * g.period
    host = [e for e in events if e.end > t0 and e.ts < t1 and e.hlo_op is None
            and (e.name in (mode, *HOST_LABELS) or e.name.startswith("PjitFunction("))]
    ops = [e for e in profiles.op_events(events) if e.end > t0 and e.ts < t1]
    lanes = ["host"] + [f"compute {i + 1}" for i in range(len({(e.pid, e.tid) for e in ops}))]
    lane_of = {key: i + 1 for i, key in enumerate(sorted({(e.pid, e.tid) for e in ops}))}
    kind = {mode: "step", **{label: label for label in HOST_LABELS}}
    by_kind: dict[str, list[profiles.Event]] = defaultdict(list)
    for e in host:  # nested duplicates (a call and its own inner scope) are drawn once
        by_kind[kind.get(e.name, "dispatch")].append(e)
    rows = [[0, e.ts - t0, e.dur, k, k] for k, evs in by_kind.items() for e in profiles.outermost(evs)]
    rows += [[lane_of[(e.pid, e.tid)], e.ts - t0, e.dur, parts.get(str(e.hlo_op), "other"), str(e.hlo_op)]
             for e in ops]
    rnd = [[lane, round(ts, 2), round(dur, 2), kind, name] for lane, ts, dur, kind, name in rows]
    return {"mode": mode, "window_us": round(t1 - t0, 2), "step_us": round(g.period, 2),
            "busy_us": round(g.step.busy, 2), "gap_us": round(g.gap, 2),
            "gap_at_us": [round(g.step.end - t0, 2), round(g.step.start + g.period - t0, 2)],
            "lanes": lanes, "events": rnd}


def measure(rec: Recorder) -> None:
    size = sizes(rec)
    shape = f"{size['batch']}x{size['width']}"  # batch x width
    rng = np.random.default_rng(0)
    host_params, host_y = make_data(size, rng)
    x0 = prepare(rng.standard_normal((size["batch"], size["width"]), dtype=np.float32), rng)
    err = check_step(host_params, x0, host_y)  # the step that is timed, against NumPy
    params, y = jax.block_until_ready(jax.device_put((host_params, host_y)))
    parts = op_parts(params, jax.device_put(x0), y)
    blocks = Blocks(params, y, size, seed=rec.config.seed)
    for mode in MODES:
        blocks.run(mode)  # warm-up: compile, first calls

    def clocked() -> None:  # the same blocks, no profiler: seconds per step by the clock
        with rec.interleaved() as cells:
            for mode in MODES:
                cells.sample(mode, "loop", lambda m=mode: Sample(blocks.run(m), size["steps"]),
                             size["clock"], dtype="float32", shape=shape, max_rel_error=err)

    def traced() -> None:
        with tempfile.TemporaryDirectory() as logdir:
            written_s, n_compiles = capture(blocks, logdir, size["rounds"], rec)
            events = profiles.publish_trace(rec, logdir, written_s, shape)
        gaps = record_trace(rec, events, parts, n_compiles, shape, err)
        doc = [timeline(gaps[m], events, parts, m) for m in MODES]
        rec.artifact("timeline.json").write_text(json.dumps({"steps": doc}, separators=(",", ":")))

    for phase in rec.shuffled([clocked, traced]):
        phase()
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
