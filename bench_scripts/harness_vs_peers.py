"""fig-harness-vs-peers: the same workloads timed by this harness and by other timers.

Three workloads (a jitted ``x + 1`` on a small array, a 512x512 and a 1024x1024
float32 matmul), each checked against NumPy first, then timed in one process by
this project's harness (``collect`` at the ``completed`` boundary), a bare
``perf_counter`` + ``block_until_ready`` loop in three forms (``bare-loop``: one
warm-up call, the output freed inside the interval when the statement ends;
``bare-loop-warm``: the same after about the harness's warm-up; ``bare-loop-kept``:
that, with the output kept until the clock has stopped, the interval the harness
times), ``timeit`` (block inside the
statement, per-call time from ``timeit.repeat``), and, where installed,
pytest-benchmark (its fixture's calibration and rounds, driven in-process) and
pyperf (``python -m pyperf timeit`` worker processes, bounded settings).

The in-process methods are measured in rounds: in each round every method takes
a share of the time budget, in an order shuffled from the run's seed, so slow
drift within the run cannot favour one method. pyperf's own worker processes
cannot be interleaved with the others call by call: it runs once per workload, in
a round drawn from the same seed.

Two quantities per method and workload (params ``quantity``):

* ``per-call``: the method's own samples, seconds per call (``calls`` = how many
  calls one sample averaged: 1 for the bare loops, k for the harness on a call
  shorter than a millisecond, the calibrated
  ``number`` / iterations / loops for timeit, pytest-benchmark and pyperf);
* ``wall``: seconds of wall time from the start of that method's measurement,
  including its own warm-up and calibration (and, for pyperf, starting its
  worker processes), to its samples in hand: one value per share, stored with
  boundary ``wall``. They are not per-call times.
"""

FIGURE = {
    "budget_s": 7.7,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "The harness next to other timers: per-call time and wall time to a number",
    "caption": (
        "The same warm, checked workloads timed in one process by this harness, a bare "
        "perf_counter loop with a block (as written: one warm-up call, the output freed inside its "
        "interval; warm: after about the harness's warm-up; kept: warm, and the output freed after "
        "the clock stops, the interval the harness times), timeit with a block in the statement, and the peers "
        "pytest-benchmark and pyperf where they are installed, in alternating order. Per-call rows "
        "compare what each method reports (the bare loops' samples are single calls; the harness, "
        "for fast calls, timeit, pytest-benchmark and pyperf average several calls per sample); "
        "the ratio column is the harness over the bare loop, with its verdict below. Wall rows are a "
        "different quantity (boundary wall): the seconds each method needed, "
        "warm-up and calibration included, to produce its samples with the budget share this "
        "script gives it; they compare the methods' procedures as configured here, not the "
        "workloads. pyperf runs once per workload in its own worker processes, so its wall time "
        "includes starting them and importing jax there."
    ),
    "chapter": "diagnosing/harness.md",
    "group_by": ["quantity", "n", "op"],
    "variants": ["harness", "bare-loop", "bare-loop-warm", "bare-loop-kept", "timeit", "pytest-benchmark", "pyperf"],
    "ratio": ["harness", "bare-loop"],
    "headline": {"stat": "ratio", "quantity": "per-call", "n": 1024},
}

# --8<-- [start:measure]
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import timeit
from types import SimpleNamespace

import jax
import numpy as np

from benchkit import MIN_SAMPLE_S, WARMUP_CALLS, Recorder, Sample, check_close, collect, compiles, figure_main

try:  # optional peers: a missing one is recorded as not measured
    from pytest_benchmark.fixture import BenchmarkFixture
    from pytest_benchmark.utils import NameWrapper
except ImportError:
    BenchmarkFixture = None
try:
    import pyperf
except ImportError:
    pyperf = None

# op -> (the jitted function's source, its NumPy float64 reference). The source is kept as
# text because pyperf's worker processes build the function again from it.
OPS = {
    "add": ("lambda x: x + 1", lambda h: h.astype(np.float64) + 1),
    "matmul": ("lambda x: x @ x", lambda h: h.astype(np.float64) @ h),
}


def host_input(op: str, n: int) -> str:
    """Source of the input array; the same text builds it here and in pyperf's workers."""
    shape = f"({n},)" if op == "add" else f"({n}, {n})"
    return f"np.random.default_rng({n}).standard_normal({shape}, dtype=np.float32)"


METHODS = ("harness", "bare-loop", "bare-loop-warm", "bare-loop-kept", "timeit", "pytest-benchmark", "pyperf")
JAX_ENV_PREFIXES = ("JAX_", "XLA_", "TPU_", "CUDA_", "NVIDIA_")


def workloads(rec: Recorder) -> list[tuple[str, int]]:
    if rec.config.smoke:
        return [("add", 16), ("matmul", 32), ("matmul", 64)]
    return [("add", 16), ("matmul", 512), ("matmul", 1024)]


def rounds(rec: Recorder) -> int:
    return 2 if rec.config.smoke else 3


def cap(rec: Recorder) -> int:  # samples per method and share: keeps the CSV small
    return rec.config.min_samples


def harness_method(fn, x, share_s: float, rec: Recorder) -> list[Sample]:
    return collect("completed", fn, (x,), budget_s=share_s, minimum=rec.config.min_samples,
                   maximum=cap(rec))


def bare_loop(fn, x, share_s: float, rec: Recorder) -> list[Sample]:
    fn(x).block_until_ready()  # one warm-up call
    times = []
    stop = time.perf_counter() + share_s
    while len(times) < cap(rec) and (len(times) < rec.config.min_samples or time.perf_counter() < stop):
        t0 = time.perf_counter()
        fn(x).block_until_ready()
        times.append(time.perf_counter() - t0)
    return [Sample(t) for t in times]


def warm_up(fn, x) -> None:
    """About the warm-up the harness gives a call before its first sample: WARMUP_CALLS calls,
    then more calls for MIN_SAMPLE_S of wall time (the harness sizes a sample of a short call
    from about that many)."""
    for _ in range(WARMUP_CALLS):
        fn(x).block_until_ready()
    stop = time.perf_counter() + MIN_SAMPLE_S
    while time.perf_counter() < stop:
        fn(x).block_until_ready()


def bare_loop_warm(fn, x, share_s: float, rec: Recorder) -> list[Sample]:
    """The bare loop after that warm-up: its output is still freed inside the interval."""
    warm_up(fn, x)
    times = []
    stop = time.perf_counter() + share_s
    while len(times) < cap(rec) and (len(times) < rec.config.min_samples or time.perf_counter() < stop):
        t0 = time.perf_counter()
        fn(x).block_until_ready()
        times.append(time.perf_counter() - t0)
    return [Sample(t) for t in times]


def bare_loop_kept(fn, x, share_s: float, rec: Recorder) -> list[Sample]:
    """The same, keeping the output until the clock has stopped: the interval the harness's
    completed boundary times (the call and the wait, not freeing the output)."""
    warm_up(fn, x)
    times = []
    stop = time.perf_counter() + share_s
    while len(times) < cap(rec) and (len(times) < rec.config.min_samples or time.perf_counter() < stop):
        t0 = time.perf_counter()
        out = fn(x).block_until_ready()
        t1 = time.perf_counter()
        del out  # freed here, outside the interval
        times.append(t1 - t0)
    return [Sample(t) for t in times]


def timeit_method(fn, x, share_s: float, rec: Recorder) -> list[Sample]:
    timer = timeit.Timer(lambda: fn(x).block_until_ready())
    # timeit's autorange (1, 2, 5, 10, 20, ... calls), aimed at a repeat of share / repeats
    # instead of its fixed 0.2 s, so that every method gets the same share of the budget.
    repeats, number = cap(rec), 1
    while True:
        for k in (1, 2, 5):
            if timer.timeit(number * k) >= share_s / repeats:
                number *= k
                break
        else:
            number *= 10
            continue
        break
    return [Sample(t / number, number) for t in timer.repeat(repeat=repeats, number=number)]


class _Quiet:
    def debug(self, *a, **k): pass
    def info(self, *a, **k): pass
    def warning(self, *a, **k): pass


def pytest_benchmark_method(fn, x, share_s: float, rec: Recorder) -> list[Sample]:
    # The fixture pytest hands to a test, with pytest-benchmark's defaults except the two
    # time options (--benchmark-min-time, --benchmark-max-time), sized to the share.
    bench = BenchmarkFixture(
        SimpleNamespace(name="harness_vs_peers", nodeid="harness_vs_peers"), disable_gc=False,
        timer=NameWrapper(time.perf_counter), min_rounds=5, min_time=share_s / cap(rec),
        max_time=share_s, precision=None, confidence=None, warmup=False, warmup_iterations=100000,
        calibration_precision=10, add_stats=lambda stats: None, logger=_Quiet(), warner=None,
        disabled=False, cprofile=False, cprofile_loops=None, cprofile_dump=None)
    bench(lambda: fn(x).block_until_ready())
    n = bench.stats.iterations
    return [Sample(t, n) for t in bench.stats.stats.data]  # data: seconds per iteration


def pyperf_method(op: str, n: int, share_s: float, estimate_s: float, rec: Recorder) -> list[Sample]:
    # Bounded: 1 worker process x 3 values, 1 warm-up value; --loops is given (sized from one
    # timed call) so pyperf skips its calibration process. Its workers see only the
    # environment listed in --inherit-environ: pass JAX/XLA settings on explicitly.
    source, _ = OPS[op]
    setup = (f"import jax, numpy as np; f = jax.jit({source}); "
             f"x = jax.device_put({host_input(op, n)}); f(x).block_until_ready()")
    loops = max(1, round(share_s / 3 / max(estimate_s, 1e-9)))
    env_names = sorted({k for k in os.environ if k.startswith(JAX_ENV_PREFIXES)} | {"PYTHONPATH"})
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "pyperf.json")
        subprocess.run([sys.executable, "-m", "pyperf", "timeit", "--quiet", "-p", "1", "-n", "3",
                        "-w", "1", "--loops", str(loops), "--inherit-environ", ",".join(env_names),
                        "-o", out, "-s", setup, "f(x).block_until_ready()"],
                       check=True, capture_output=True, text=True, timeout=120)
        with open(out, encoding="utf-8") as fh:
            runs = json.load(fh)["benchmarks"][0]["runs"]
    return [Sample(v, loops) for run in runs for v in run.get("values", [])]


def one_call(fn, x) -> float:
    t0 = time.perf_counter()
    fn(x).block_until_ready()
    return time.perf_counter() - t0


def measure(rec: Recorder) -> None:
    rng = random.Random(rec.config.seed)
    measured = ["harness", "bare-loop", "bare-loop-warm", "bare-loop-kept", "timeit"]
    not_measured = []
    for name, module in (("pytest-benchmark", BenchmarkFixture), ("pyperf", pyperf)):
        if module is None:
            not_measured.append(f"{name} (not installed)")
        elif name == "pyperf" and rec.config.smoke:
            not_measured.append("pyperf (not run with --smoke: it starts worker processes)")
        else:
            measured.append(name)
    note = f"measured: {', '.join(measured)}; not measured: {', '.join(not_measured) or 'none'}"
    in_process = {"harness": harness_method, "bare-loop": bare_loop, "bare-loop-warm": bare_loop_warm,
                  "bare-loop-kept": bare_loop_kept, "timeit": timeit_method}
    if BenchmarkFixture is not None:
        in_process["pytest-benchmark"] = pytest_benchmark_method
    run_pyperf = pyperf is not None and not rec.config.smoke
    share = rec.config.budget_s / rounds(rec)

    placed = []
    for op, n in workloads(rec):
        source, reference = OPS[op]
        fn = jax.jit(eval(source))  # the OPS text, so pyperf's workers time the same function
        host = eval(host_input(op, n))
        x = jax.block_until_ready(jax.device_put(host))
        err = check_close(fn(x), reference(host), rtol=1e-3, atol=1e-3 * n, what=f"{op} at n={n}")
        placed.append((op, n, fn, x, err, rng.randrange(rounds(rec))))

    for r in range(rounds(rec)):
        for op, n, fn, x, err, pyperf_round in placed:
            methods = list(in_process) + (["pyperf"] if run_pyperf and r == pyperf_round else [])
            rng.shuffle(methods)
            for method in methods:
                with compiles.count() as seen:
                    t0 = time.perf_counter()
                    if method == "pyperf":
                        samples = pyperf_method(op, n, share, one_call(fn, x), rec)
                    else:
                        samples = in_process[method](fn, x, share, rec)
                    wall = time.perf_counter() - t0
                if seen.n and samples and all(s.compiles == 0 for s in samples):
                    samples[0] = Sample(samples[0].time_s, samples[0].calls, seen.n)  # flag it
                shape = f"{n}" if op == "add" else f"{n}x{n}"
                common = dict(dtype="float32", shape=shape, max_rel_error=err)
                rec.add(method, "completed", samples, params={"quantity": "per-call", "n": n, "op": op},
                        **common)
                rec.add(method, "wall", [Sample(wall, 1, seen.n)],
                        params={"quantity": "wall", "n": n, "op": op}, detail=note, **common)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
