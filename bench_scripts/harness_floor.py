"""fig-harness-floor: the smallest intervals the harness can report on this machine.

A pair of clock reads with nothing between them, then a jitted call that does
next to no work (one scalar add) at the dispatch, completed and loop
boundaries. On the CPU that call runs inline (under the CPU client's flop
threshold): a result within a few times these numbers measures the harness and
the call path of an inline program, not the computation; a program handed to the
worker threads pays more (fig-cpu-dispatch-threshold).
"""

FIGURE = {
    "budget_s": 1.1,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "The timing floor: clock reads and a near-empty jitted call",
    "caption": (
        "The clock pair is what two clock reads cost, which every interval on the site contains "
        "(not the clock's resolution); the near-empty "
        "jitted call is the least a jitted call cost here at each boundary. On the CPU that call "
        "is a program small enough to run inline (one flop, under the CPU client's threshold), "
        "on the calling thread before the call returns: "
        "<!-- bench:claim fig-harness-floor ratio('completed', 'dispatch') < 1.3 and ratio('loop', 'dispatch') < 1.3 -->its completed and loop times are each less than a third above its dispatch time<!-- /bench:claim -->. "  # noqa: E501
        "A program the CPU client hands to its worker threads pays for the hand-off on top "
        "(fig-cpu-dispatch-threshold), so these are the floors of inline calls only. A rule of "
        "thumb, not a measurement: a time within a few times the floor of its own kind of call "
        "is mostly call overhead, so compare it with care or batch more work into each call."
    ),
    "chapter": "diagnosing/harness.md",
    "group_by": [],
    "variants": ["clock-pair", "dispatch", "completed", "loop"],
    "headline": {"stat": "median", "variant": "completed"},
}

# --8<-- [start:measure]
import jax
import numpy as np

from benchkit import MAX_SAMPLES, Recorder, Sample, check_close, figure_main, time_clock_pair

CLOCK_WARMUP = 20  # the first reads of a fresh process touch cold code paths

tiny = jax.jit(lambda x: x + 1)  # one scalar add: the call's own cost, next to no work


def clock_warmup() -> None:
    for _ in range(CLOCK_WARMUP):
        time_clock_pair()


def measure(rec: Recorder) -> None:
    host = np.float32(1.5)
    x = jax.device_put(host)  # placed and ready before any clock starts
    x.block_until_ready()
    err = check_close(tiny(x), np.float64(host) + 1, rtol=0, atol=0, what="x + 1")
    common = dict(dtype="float32", shape="scalar", max_rel_error=err)
    with rec.interleaved() as cells:  # the four floors sampled in shuffled rounds
        cells.sample("clock-pair", "clock", lambda: Sample(time_clock_pair()), MAX_SAMPLES,
                     warmup=clock_warmup, dtype="none", shape="")
        cells.collect("dispatch", "dispatch", tiny, (x,), **common)
        cells.collect("completed", "completed", tiny, (x,), **common)
        cells.collect("loop", "loop", tiny, (x,), **common)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
