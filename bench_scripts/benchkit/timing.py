"""Timing boundaries: what each measured interval contains.

Every function takes the clock and the blocking function as arguments so the
tests can drive them with fakes whose timing they control. The defaults are
``time.perf_counter`` and ``jax.block_until_ready``.

Boundaries (recorded with every sample as ``boundary``):

* ``dispatch``   the call returned; the device may still be working. The output
                 is waited on after the clock stops.
* ``completed``  inputs already placed and ready; the interval ends when the
                 whole output pytree is ready. The output is freed only after
                 the clock has stopped, and a single-array output is waited on
                 through its own ``block_until_ready`` (resolved once, in
                 warm-up), so the interval holds the call and the wait, not the
                 harness's pytree walk or the deallocation.
* ``loop``       ``calls`` back-to-back calls, one block at the end, divided
                 by ``calls``: throughput of a pipelined loop.
* ``first-call`` trace / lower / compile / first execute of a fresh function
                 object, each stage timed on its own (ahead-of-time API).
* ``trace``      an interval read from a profiler trace's own timestamps
                 (``benchkit.profiles``), not from this module's clock.
* ``clock``      two back-to-back clock reads and nothing between them: the
                 smallest interval any other boundary can report.

Samples of fast calls (``calls`` > 1 at ``dispatch`` and ``completed``): one
sample of a call that takes less than ``MIN_SAMPLE_S`` of wall time repeats it
``k`` times, k chosen so the sample spans about ``MIN_SAMPLE_S``. Each of the k
calls is its own interval with the same boundary as a single call (a
``completed`` call is blocked before the next starts; a ``dispatch`` interval
is followed by an untimed wait for its output), and ``time_s`` is the mean of
the k intervals, recorded with ``calls = k``. So a 4 µs op's 100 samples span
100 ms of timed work instead of 0.4 ms, and ``time_s`` still means one call at
that boundary (unlike ``loop``, nothing overlaps).

Interleaving (:func:`interleave`): several cells (variant, params) are warmed up
together, sized from the budget one by one, then sampled in rounds whose visiting
order is shuffled by a seeded ``random.Random``: a slow drift of the machine
spreads over every cell instead of landing on whichever was measured last.

Carry-over: an interleaved sample starts right after a sample of some other cell,
whose data may have pushed this cell's out of the caches and whose threads may be
parked or busy. So every visit to a cell starts with ``LEAD_IN_CALLS`` untimed
calls of that cell (recorded as ``lead_in``), unless one call takes at least
``LEAD_IN_UNDER_S``; the recorder writes which cell ran just before each sample
(``after``), so the carry-over that is left can be read from the data.

Inside each sample's window the garbage collector is off (as ``timeit`` does) and
``getrusage`` is read before and after: the process's CPU time, page faults and
context switches over the sample (all threads, the k calls and any untimed waits
between them; not the lead-in) are recorded beside its wall time.
"""

from __future__ import annotations

import gc
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import compiles

try:
    import resource
except ImportError:  # Windows has no getrusage: its samples record no usage columns
    resource = None

Clock = Callable[[], float]
Block = Callable[[Any], Any]

MIN_SAMPLES = 5  # a run's median needs a few; the spread that decides a verdict is between runs
MAX_SAMPLES = 100  # keeps a committed CSV near a megabyte; 100 samples pin a median well
BUDGET_S = 0.05  # 50 ms of timed work per (variant, shape) per run: more runs beat longer ones
WARMUP_CALLS = 2  # more than one: the first warm call is often slow too
MIN_SAMPLE_S = 1e-3  # a sample of a fast call repeats it until it spans about this much wall time
MAX_CALLS = 10_000  # calls per sample, at most (a 100 ns call)
LEAD_IN_CALLS = 1  # untimed calls of a cell before each of its samples (carry-over control)
# A call at least this long keeps no lead-in: it would double the cost of every sample, while what a
# neighbour leaves behind (a cache to refill, a thread to wake) is a small part of such a call; the
# ``after`` column lets the carry-over diagnostic check that on every run.
LEAD_IN_UNDER_S = 0.02
SIZING_SAMPLES = 3  # samples whose median sizes a cell's sample count (fewer for a slow call)


@dataclass(frozen=True)
class Usage:
    """What ``getrusage(RUSAGE_SELF)`` counted over one sample's window: every
    thread of the process, so the backend's worker threads too."""

    cpu_s: float  # user + system CPU time
    minflt: int  # page faults served without I/O (first touch of fresh memory among them)
    majflt: int  # page faults that needed I/O
    nvcsw: int  # voluntary context switches (waited: a lock, a condition, I/O)
    nivcsw: int  # involuntary context switches (preempted: another thread or process ran)

    @staticmethod
    def now() -> Any:
        """``getrusage`` of this process now; None where the platform has none."""
        return resource.getrusage(resource.RUSAGE_SELF) if resource is not None else None

    @classmethod
    def between(cls, a: Any, b: Any) -> Usage:
        return cls(cpu_s=(b.ru_utime + b.ru_stime) - (a.ru_utime + a.ru_stime),
                   minflt=b.ru_minflt - a.ru_minflt, majflt=b.ru_majflt - a.ru_majflt,
                   nvcsw=b.ru_nvcsw - a.ru_nvcsw, nivcsw=b.ru_nivcsw - a.ru_nivcsw)

    def columns(self) -> dict[str, float | int]:
        return {"cpu_s": self.cpu_s, "minflt": self.minflt, "majflt": self.majflt,
                "nvcsw": self.nvcsw, "nivcsw": self.nivcsw}


@dataclass(frozen=True)
class Sample:
    """One observed interval: seconds per call, calls it averaged, compiles and
    persistent-compilation-cache hits seen inside its window, untimed lead-in
    calls made just before it, and the process's resource usage over its window
    (``None`` where a script's own sampler did not measure it)."""

    time_s: float
    calls: int = 1
    compiles: int = 0
    cache_hits: int = 0
    lead_in: int = 0
    usage: Usage | None = None


class window:
    """One sample's window: compiles and cache hits counted, the garbage collector
    off (as ``timeit`` does: a collection is not the code's cost), ``getrusage``
    read on entry and exit. ``sample(t, calls)`` builds the :class:`Sample`."""

    def __enter__(self) -> window:
        self._gc = gc.isenabled()
        gc.disable()
        self._count = compiles.count()
        self.seen = self._count.__enter__()
        self._u0 = Usage.now()
        return self

    def __exit__(self, *exc: object) -> None:
        self.usage = Usage.between(self._u0, Usage.now()) if self._u0 is not None else None
        self._count.__exit__(*exc)
        if self._gc:
            gc.enable()

    def sample(self, time_s: float, calls: int = 1, lead_in: int = 0) -> Sample:
        return Sample(time_s, calls, self.seen.n, self.seen.cache_hits, lead_in, self.usage)


def _block_default(tree: Any) -> Any:
    import jax

    return jax.block_until_ready(tree)


def resolve_block(out: Any, block: Block = _block_default) -> Block:
    """The cheapest correct wait for outputs shaped like ``out``, chosen once.

    A single array is waited on through its own ``block_until_ready`` (what a
    bare ``f(x).block_until_ready()`` loop does); a pytree keeps the generic
    ``jax.block_until_ready``, which waits for every leaf. A caller's own
    ``block`` (a test's fake) is kept as it is.
    """
    if block is not _block_default or isinstance(out, (list, tuple, dict)):
        return block
    method = getattr(type(out), "block_until_ready", None)
    return method if callable(method) else block


# --8<-- [start:dispatch]
def time_dispatch(fn: Callable, args: Sequence, *, clock: Clock = time.perf_counter,
                  block: Block = _block_default, calls: int = 1) -> float:
    """Seconds until ``fn(*args)`` returns control, the mean of ``calls`` such
    intervals. Each output is waited on afterwards, outside the interval, so
    the next call starts with an idle device."""
    total = 0.0
    for _ in range(calls):
        t0 = clock()
        out = fn(*args)
        t1 = clock()
        total += t1 - t0
        block(out)
        del out
    return total / calls
# --8<-- [end:dispatch]


# --8<-- [start:completed]
def time_completed(fn: Callable, args: Sequence, *, clock: Clock = time.perf_counter,
                   block: Block = _block_default, calls: int = 1) -> float:
    """Seconds until every leaf of ``fn(*args)`` is ready, the mean of ``calls``
    such intervals. The output is freed after the clock stops: deallocating it
    is not part of the call's latency."""
    total = 0.0
    for _ in range(calls):
        t0 = clock()
        out = fn(*args)
        block(out)
        t1 = clock()
        total += t1 - t0
        del out  # freed here, outside the interval
    return total / calls
# --8<-- [end:completed]


# --8<-- [start:loop]
def time_loop(fn: Callable, args: Sequence, calls: int, *, clock: Clock = time.perf_counter,
              block: Block = _block_default) -> float:
    """Mean seconds per call over ``calls`` back-to-back calls, one block at the end."""
    if calls < 1:
        raise ValueError(f"calls must be >= 1, got {calls}")
    t0 = clock()
    for _ in range(calls):
        out = fn(*args)
    block(out)
    return (clock() - t0) / calls
# --8<-- [end:loop]


# --8<-- [start:clock]
def time_clock_pair(*, clock: Clock = time.perf_counter) -> float:
    """Seconds between two back-to-back clock reads: the part of every other
    interval that is the clock itself, and the smallest one it can report."""
    t0 = clock()
    return clock() - t0
# --8<-- [end:clock]


TIMERS = {"dispatch": time_dispatch, "completed": time_completed}


# --8<-- [start:collect]
def choose_count(estimate_s: float, budget_s: float, minimum: int = MIN_SAMPLES,
                 maximum: int = MAX_SAMPLES) -> int:
    """How many samples fit in ``budget_s`` given one sample takes ``estimate_s``."""
    if estimate_s <= 0 or not math.isfinite(estimate_s):
        return maximum
    return max(minimum, min(maximum, math.ceil(budget_s / estimate_s)))


def choose_calls(wall_per_call_s: float, span_s: float = MIN_SAMPLE_S) -> int:
    """Calls per sample so that one sample spans about ``span_s`` of wall time."""
    if wall_per_call_s >= span_s:
        return 1
    if wall_per_call_s <= 0 or not math.isfinite(wall_per_call_s):
        return MAX_CALLS
    return min(MAX_CALLS, math.ceil(span_s / wall_per_call_s))


@dataclass
class Cell:
    """One (variant, params) to sample: a function at a boundary.

    ``calls`` fixes the calls per ``dispatch``/``completed`` sample; ``None``
    sizes it so a sample spans ``MIN_SAMPLE_S``. ``sampler`` replaces the
    function with a script's own: it returns one :class:`Sample` (or a
    ``(Sample, extra columns)`` pair) per call, and ``count`` samples are taken.
    """

    boundary: str
    fn: Callable | None = None
    args: Sequence = ()
    loop_calls: int = 50
    calls: int | None = None
    minimum: int = MIN_SAMPLES
    maximum: int = MAX_SAMPLES
    sampler: Callable[[], Any] | None = None
    count: int | None = None
    warmup: Callable[[], Any] | None = None
    lead_in: int = LEAD_IN_CALLS
    block: Block = field(default=_block_default, repr=False)

    def __post_init__(self) -> None:
        if self.sampler is None and self.boundary not in ("dispatch", "completed", "loop"):
            raise ValueError(f"collect() takes dispatch, completed or loop, not {self.boundary!r}")
        if self.sampler is not None and self.count is None:
            raise ValueError("a cell with its own sampler needs a sample count")

    def warm(self, calls: int, block: Block) -> None:
        if self.sampler is not None:
            if self.warmup is not None:
                self.warmup()
            return
        for _ in range(calls):
            out = self.fn(*self.args)
            block(out)
        if calls:
            self.block = resolve_block(out, block)
        else:
            self.block = block

    def one(self, clock: Clock) -> Any:
        """One sample: the lead-in calls, untimed, then the timed window."""
        if self.sampler is not None:
            return self.sampler()
        for _ in range(self.lead_in):  # the caches and threads this cell left are its own again
            self.block(self.fn(*self.args))
        with window() as w:
            if self.boundary == "loop":
                t = time_loop(self.fn, self.args, self.loop_calls, clock=clock, block=self.block)
            else:
                t = TIMERS[self.boundary](self.fn, self.args, clock=clock, block=self.block,
                                          calls=self.calls or 1)
        calls = self.loop_calls if self.boundary == "loop" else self.calls or 1
        return w.sample(t, calls, self.lead_in)

    def size(self, budget_s: float, clock: Clock) -> int:
        """Choose the calls per sample (a fast call: from the median of ``SIZING_SAMPLES``
        samples of about a span each), then time ``SIZING_SAMPLES`` samples (fewer when
        they already hold half the budget) and size the count from their median: one
        sizing sample that caught a hiccup would set a run's whole sample count."""
        if self.sampler is not None:
            return self.count
        if self.boundary != "loop" and self.calls is None:
            self.calls = 1
            wall = self._wall_per_call(clock)
            if wall < MIN_SAMPLE_S:  # one call is too short to size k from: time about a span,
                self.calls = choose_calls(wall)  # several times (the first cell sized follows
                wall = statistics.median(self._wall_per_call(clock)  # every other's warm-up)
                                         for _ in range(SIZING_SAMPLES))
            self.calls = choose_calls(wall)
        sized: list[float] = []  # up to SIZING_SAMPLES, fewer once they hold half the budget
        walls: list[float] = []  # wall seconds per call of each, lead-in and untimed waits included
        while len(sized) < SIZING_SAMPLES and (not sized or sum(sized) < budget_s / 2):
            w0 = clock()
            s = self.one(clock)
            walls.append((clock() - w0) / (s.calls + self.lead_in))
            sized.append(s.time_s * s.calls)
        per_sample = statistics.median(sized)
        if self.boundary != "loop" and statistics.median(walls) >= LEAD_IN_UNDER_S:
            self.lead_in = 0  # a slow call (a dispatch of slow work too): see LEAD_IN_UNDER_S
        return choose_count(per_sample, budget_s, self.minimum, max(self.minimum, self.maximum))

    def _wall_per_call(self, clock: Clock) -> float:
        """Wall seconds per call of one sample, its lead-in and waits included."""
        w0 = clock()
        self.one(clock)
        return (clock() - w0) / (self.calls + self.lead_in)


def schedule(counts: Sequence[int], order: random.Random) -> list[int]:
    """Cell indices in measuring order: rounds as many as the largest count; a
    cell with fewer samples takes one in evenly spaced rounds; the cells of each
    round are visited in an order shuffled by ``order``."""
    rounds = max(counts, default=0)
    out: list[int] = []
    for r in range(rounds):
        due = [i for i, c in enumerate(counts) if (r + 1) * c // rounds > r * c // rounds]
        order.shuffle(due)
        out += due
    return out


def interleave(cells: Sequence[Cell], order: random.Random, *, budget_s: float = BUDGET_S,
               warmup: int = WARMUP_CALLS, clock: Clock = time.perf_counter,
               block: Block = _block_default) -> list[tuple[int, Any]]:
    """Warm every cell up, size each one's sample count, then sample them in
    shuffled rounds. Returns ``(cell index, sample)`` in the order taken."""
    for cell in cells:
        cell.warm(warmup, block)
    counts = [cell.size(budget_s, clock) for cell in cells]
    return [(i, cells[i].one(clock)) for i in schedule(counts, order)]


def collect(boundary: str, fn: Callable, args: Sequence, *, budget_s: float = BUDGET_S,
            minimum: int = MIN_SAMPLES, maximum: int = MAX_SAMPLES, warmup: int = WARMUP_CALLS,
            loop_calls: int = 50, calls: int | None = None, clock: Clock = time.perf_counter,
            block: Block = _block_default) -> list[Sample]:
    """Warm ``fn`` up, size the sample count from a time budget, then time it.

    Each sample records how many backend compiles (and persistent-cache hits)
    happened inside its window, so a "warm" sample that compiled is visible in
    the data instead of hidden in a median. One cell of :func:`interleave`.
    """
    cell = Cell(boundary, fn, args, loop_calls=loop_calls, calls=calls, minimum=minimum,
                maximum=maximum)
    return [s for _, s in interleave([cell], random.Random(0), budget_s=budget_s, warmup=warmup,
                                     clock=clock, block=block)]
# --8<-- [end:collect]


FIRST_CALL_STAGES = ("trace", "lower", "compile", "first-execute")


# --8<-- [start:first-call]
def time_first_call(jitted: Any, args: Sequence, *, clock: Clock = time.perf_counter,
                    block: Block = _block_default) -> dict[str, float]:
    """Seconds per stage of a first call, via the ahead-of-time API.

    ``jitted`` must be a fresh ``jax.jit`` of a fresh Python function object:
    jitting the same function again reuses its trace cache and hides a stage.
    """
    t0 = clock()
    traced = jitted.trace(*args)
    t1 = clock()
    lowered = traced.lower()
    t2 = clock()
    compiled = lowered.compile()
    t3 = clock()
    out = compiled(*args)
    block(out)
    t4 = clock()
    return dict(zip(FIRST_CALL_STAGES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)))
# --8<-- [end:first-call]


def timed(timer: Callable[..., float], *args: Any, calls: int = 1, lead_in: int = 0) -> Sample:
    """One sample from any timer (a script's own loop, say), in the same window as
    :func:`collect`'s samples (compiles and persistent-cache hits counted, the garbage
    collector off, ``getrusage`` read), so hand-rolled sampling is flagged the same
    way. ``lead_in`` records the untimed calls the caller made just before."""
    with window() as w:
        t = timer(*args)
    return w.sample(t, calls, lead_in)


# --8<-- [start:completed-sampler]
def completed_sampler(fn: Callable, args: Sequence, block: Block, *, warm_calls: int = WARMUP_CALLS,
                      clock: Clock = time.perf_counter) -> Callable[[], Sample]:
    """Samples of ``fn(*args)`` at the completed boundary with the caller's ``block``
    (the identity for a NumPy result, which is ready when the call returns: a pytree
    walk would be charged to NumPy alone). Warmed, then ``k`` calls a sample, k sized
    once from the median wall time of ``SIZING_SAMPLES`` calls so that a sample spans
    about ``MIN_SAMPLE_S``; each sample starts with ``LEAD_IN_CALLS`` untimed calls."""
    for _ in range(warm_calls):
        block(fn(*args))
    walls = []
    for _ in range(SIZING_SAMPLES):
        t0 = clock()
        block(fn(*args))
        walls.append(clock() - t0)
    calls = choose_calls(statistics.median(walls))

    def sample() -> Sample:
        for _ in range(LEAD_IN_CALLS):
            block(fn(*args))
        return timed(lambda: time_completed(fn, args, block=block, calls=calls, clock=clock),
                     calls=calls, lead_in=LEAD_IN_CALLS)
    return sample
# --8<-- [end:completed-sampler]
