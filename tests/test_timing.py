"""The boundaries contain what they claim, driven by a fake clock."""

import math

import pytest

from benchkit import timing
from fakes import FakeClock, FakeFunction, block


@pytest.fixture
def clock():
    return FakeClock()


def test_dispatch_excludes_the_wait_for_the_result(clock):
    fn = FakeFunction(clock, dispatch_s=0.001, work_s=0.5)
    t = timing.time_dispatch(fn, (), clock=clock, block=block)
    assert t == pytest.approx(0.001)
    assert fn.results[0].waited, "the output must still be drained, outside the interval"


def test_completed_includes_the_wait_for_the_result(clock):
    fn = FakeFunction(clock, dispatch_s=0.001, work_s=0.5)
    assert timing.time_completed(fn, (), clock=clock, block=block) == pytest.approx(0.501)


def test_completed_waits_for_every_leaf_of_a_pytree(clock):
    slow = FakeFunction(clock, dispatch_s=0.0, work_s=0.3)
    fast = FakeFunction(clock, dispatch_s=0.0, work_s=0.1)

    def tree_fn():
        return {"fast": fast(), "slow": slow()}

    assert timing.time_completed(tree_fn, (), clock=clock, block=block) == pytest.approx(0.4)


def test_loop_blocks_once_and_divides_by_calls(clock):
    fn = FakeFunction(clock, dispatch_s=0.002, work_s=0.1)
    per_call = timing.time_loop(fn, (), 10, clock=clock, block=block)
    assert fn.calls == 10
    assert [r.waited for r in fn.results] == [False] * 9 + [True]
    assert per_call == pytest.approx((10 * 0.002 + 0.1) / 10)


def test_loop_rejects_zero_calls(clock):
    with pytest.raises(ValueError):
        timing.time_loop(FakeFunction(clock, 0, 0), (), 0, clock=clock, block=block)


@pytest.mark.parametrize("estimate, expected", [(0.1, 10), (0.01, 50), (1e-9, 100), (0.0, 100)])
def test_sample_count_follows_the_budget_within_limits(estimate, expected):
    assert timing.choose_count(estimate, budget_s=0.5, minimum=10, maximum=100) == expected


def test_collect_warms_up_then_fills_the_budget(clock):
    fn = FakeFunction(clock, dispatch_s=0.0, work_s=2**-6)  # binary fractions: exact sums
    samples = timing.collect("completed", fn, (), budget_s=20 * 2**-6, minimum=3, maximum=100, warmup=2,
                             clock=clock, block=block)
    assert len(samples) == 20
    # warm-up; sizing: one sample to choose calls, then SIZING_SAMPLES; the samples; each sample
    # (sizing ones too) after its untimed lead-in call
    lead = 1 + timing.LEAD_IN_CALLS
    assert fn.calls == 2 + lead * (1 + timing.SIZING_SAMPLES) + lead * 20
    assert all(s.time_s == 2**-6 and s.calls == 1 for s in samples)


def test_collect_loop_records_calls_per_sample(clock):
    fn = FakeFunction(clock, dispatch_s=0.001, work_s=0.0)
    samples = timing.collect("loop", fn, (), budget_s=0.0, minimum=2, maximum=2, warmup=0,
                             loop_calls=7, clock=clock, block=block)
    assert [s.calls for s in samples] == [7, 7]


def test_collect_rejects_an_unknown_boundary(clock):
    with pytest.raises(ValueError, match="first-call"):
        timing.collect("first-call", FakeFunction(clock, 0, 0), (), clock=clock, block=block)


class FakeStages:
    """Stands in for jax.jit(f): trace / lower / compile each take known time."""

    def __init__(self, clock):
        self.clock = clock

    def trace(self, *args):
        self.clock.advance(0.003)
        return self

    def lower(self):
        self.clock.advance(0.010)
        return self

    def compile(self):
        self.clock.advance(0.057)
        return FakeFunction(self.clock, dispatch_s=0.001, work_s=0.017)


def test_first_call_is_split_into_its_stages(clock):
    stages = timing.time_first_call(FakeStages(clock), (), clock=clock, block=block)
    assert list(stages) == ["trace", "lower", "compile", "first-execute"]
    assert stages["trace"] == pytest.approx(0.003)
    assert stages["lower"] == pytest.approx(0.010)
    assert stages["compile"] == pytest.approx(0.057)
    assert stages["first-execute"] == pytest.approx(0.018)


def test_clock_pair_is_two_reads_and_nothing_between():
    reads = []

    def ticking() -> float:  # each read costs 40 ns of fake time
        reads.append(len(reads) * 40e-9)
        return reads[-1]

    assert timing.time_clock_pair(clock=ticking) == pytest.approx(40e-9)
    assert len(reads) == 2


def test_clock_is_a_known_boundary():
    from benchkit.schema import BOUNDARIES

    assert "clock" in BOUNDARIES


# --- the output is freed outside the interval --------------------------------------------


def test_completed_frees_the_output_after_the_clock_stops(clock):
    fn = FakeFunction(clock, dispatch_s=0.001, work_s=0.01, keep=False)
    assert timing.time_completed(fn, (), clock=clock, block=block) == pytest.approx(0.011)
    assert clock.reads == 2
    assert fn.released == [2], "the output must be released after the second clock read"


def test_dispatch_frees_the_output_after_the_clock_stops(clock):
    fn = FakeFunction(clock, dispatch_s=0.001, work_s=0.01, keep=False)
    timing.time_dispatch(fn, (), clock=clock, block=block)
    assert fn.released == [2]


def test_each_of_k_completed_calls_is_freed_outside_its_interval(clock):
    fn = FakeFunction(clock, dispatch_s=0.0, work_s=2**-12, keep=False)
    assert timing.time_completed(fn, (), clock=clock, block=block, calls=4) == 2**-12
    assert fn.released == [2, 4, 6, 8]  # call i freed right after its own second read


def test_a_single_array_output_is_blocked_through_its_own_method():
    class Array:
        def block_until_ready(self):
            return self

    chosen = timing.resolve_block(Array())
    assert chosen is Array.block_until_ready
    assert timing.resolve_block((Array(), Array())) is timing._block_default  # a pytree: every leaf
    assert timing.resolve_block(Array(), block) is block  # a caller's own block is kept


def test_collect_on_a_jax_array_blocks_it_directly():
    import jax
    import jax.numpy as jnp

    f = jax.jit(lambda x: x + 1)
    cell = timing.Cell("completed", f, (jnp.float32(1.0),))
    cell.warm(1, timing._block_default)
    assert cell.block is type(f(jnp.float32(1.0))).block_until_ready


# --- fast calls: k calls per sample ----------------------------------------------------------


def test_a_fast_completed_call_is_repeated_until_a_sample_spans_a_millisecond(clock):
    fn = FakeFunction(clock, dispatch_s=0.0, work_s=2**-18)  # about 3.8 us
    samples = timing.collect("completed", fn, (), budget_s=0.5, minimum=3, maximum=100, warmup=1,
                             clock=clock, block=block)
    k = samples[0].calls
    assert k == 263  # ceil(1 ms / 3.8 us)
    assert all(s.calls == k and s.time_s == 2**-18 for s in samples)
    assert k * 2**-18 >= timing.MIN_SAMPLE_S
    assert len(samples) == 100  # the sample cap still holds
    assert all(r.waited for r in fn.results), "every call is blocked before the next"


def test_a_fast_dispatch_sample_sums_k_intervals_each_followed_by_a_wait(clock):
    fn = FakeFunction(clock, dispatch_s=2**-19, work_s=2**-17)
    samples = timing.collect("dispatch", fn, (), budget_s=0.5, minimum=3, maximum=5, warmup=1,
                             clock=clock, block=block)
    wall = 2**-19 + 2**-17  # k is sized on wall time: the waits count toward the span
    assert samples[0].calls == math.ceil(timing.MIN_SAMPLE_S / wall)
    assert all(s.time_s == 2**-19 for s in samples)  # the waits are not in the interval
    assert all(r.waited for r in fn.results)


def test_a_slow_call_keeps_one_call_per_sample(clock):
    fn = FakeFunction(clock, dispatch_s=0.0, work_s=2**-9)
    samples = timing.collect("completed", fn, (), budget_s=0.5, minimum=3, maximum=5, warmup=1,
                             clock=clock, block=block)
    assert [s.calls for s in samples] == [1] * 5


def test_a_fixed_call_count_is_honoured(clock):
    fn = FakeFunction(clock, dispatch_s=0.0, work_s=2**-18)
    samples = timing.collect("completed", fn, (), budget_s=0.5, minimum=3, maximum=4, warmup=0,
                             calls=7, clock=clock, block=block)
    assert [s.calls for s in samples] == [7] * 4


@pytest.mark.parametrize("wall, expected", [(2e-3, 1), (1e-3, 1), (2**-18, 263), (0.0, timing.MAX_CALLS)])
def test_calls_per_sample(wall, expected):
    assert timing.choose_calls(wall) == expected


# --- persistent compilation cache ------------------------------------------------------------


def test_cache_hits_are_counted_per_window():
    import jax.monitoring

    from benchkit import compiles

    def hitting_timer() -> float:  # stands in for a call served from the persistent cache
        jax.monitoring.record_event(compiles.CACHE_HIT_EVENT)
        return 0.125

    assert timing.timed(hitting_timer).cache_hits == 1
    assert timing.timed(lambda: 0.125).cache_hits == 0


def test_collect_records_cache_hits_seen_in_a_sample(clock):
    import jax.monitoring

    from benchkit import compiles

    inner = FakeFunction(clock, dispatch_s=0.0, work_s=2**-9)
    state = {"n": 0}

    def fn():
        state["n"] += 1
        lead = 1 + timing.LEAD_IN_CALLS  # a sample's calls: its lead-in and the timed one
        # warm-up 1, the sizing samples (one to choose calls, then SIZING_SAMPLES), the first
        # sample, then the second sample's timed call
        if state["n"] == 1 + lead * (1 + timing.SIZING_SAMPLES) + lead + lead:
            jax.monitoring.record_event(compiles.CACHE_HIT_EVENT)
        return inner()

    samples = timing.collect("completed", fn, (), budget_s=0.5, minimum=3, maximum=3, warmup=1,
                             clock=clock, block=block)
    assert [s.cache_hits for s in samples] == [0, 1, 0]


def test_cache_state_and_disabling_it(monkeypatch, tmp_path):
    import jax

    from benchkit import compiles

    monkeypatch.delenv(compiles.ALLOW_CACHE_ENV, raising=False)
    before = (jax.config.jax_compilation_cache_dir, jax.config.jax_enable_compilation_cache)
    try:
        jax.config.update("jax_compilation_cache_dir", str(tmp_path))
        jax.config.update("jax_enable_compilation_cache", True)
        assert compiles.cache_state() == f"on:{tmp_path}"
        monkeypatch.setenv(compiles.ALLOW_CACHE_ENV, "1")
        assert compiles.disable_persistent_cache() is False  # allowed: left on
        assert compiles.cache_state() == f"on:{tmp_path}"
        monkeypatch.delenv(compiles.ALLOW_CACHE_ENV)
        assert compiles.disable_persistent_cache() is True
        assert compiles.cache_state() == "off"
        jax.config.update("jax_compilation_cache_dir", None)
        jax.config.update("jax_enable_compilation_cache", True)
        assert compiles.cache_state() == "off"
    finally:
        jax.config.update("jax_compilation_cache_dir", before[0])
        jax.config.update("jax_enable_compilation_cache", before[1])


def test_figures_that_time_compiles_refuse_cache_hits():
    from benchkit import compiles

    compiles.refuse_cache_hits([timing.Sample(0.1), timing.Sample(0.1, cache_hits=0)], "ok")
    with pytest.raises(compiles.PersistentCacheHit, match="compile-stage samples: 2 persistent"):
        compiles.refuse_cache_hits([timing.Sample(0.1, cache_hits=2)], "compile-stage samples")


def test_a_disabled_cache_serves_no_hits(monkeypatch, tmp_path):
    import jax
    import jax.numpy as jnp

    from benchkit import compiles

    monkeypatch.delenv(compiles.ALLOW_CACHE_ENV, raising=False)
    before = {k: getattr(jax.config, k) for k in (
        "jax_compilation_cache_dir", "jax_enable_compilation_cache",
        "jax_persistent_cache_min_compile_time_secs", "jax_persistent_cache_min_entry_size_bytes")}
    try:
        jax.config.update("jax_compilation_cache_dir", str(tmp_path))
        jax.config.update("jax_enable_compilation_cache", True)  # whatever an earlier test in this process left
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)

        def make():
            return jax.jit(lambda x: x * 3 - 1)

        with compiles.count() as first:  # writes the entry
            make()(jnp.ones(5)).block_until_ready()
        jax.clear_caches()
        with compiles.count() as warm:  # a fresh function object: served from the disk cache
            make()(jnp.ones(5)).block_until_ready()
        compiles.disable_persistent_cache()
        jax.clear_caches()
        with compiles.count() as off:
            make()(jnp.ones(5)).block_until_ready()
        assert first.cache_hits == 0 and warm.cache_hits >= 1 and off.cache_hits == 0
        assert off.n >= 1
    finally:
        for k, v in before.items():
            jax.config.update(k, v)
        from jax._src import compilation_cache

        compilation_cache.reset_cache()
