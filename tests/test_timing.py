"""The boundaries contain what they claim, driven by a fake clock."""

import pytest

from fakes import FakeClock, FakeFunction, block
from harness import timing


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
    assert fn.calls == 2 + 1 + 20  # warm-up, the estimate, the samples
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
    from harness.schema import BOUNDARIES

    assert "clock" in BOUNDARIES
