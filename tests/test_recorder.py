"""Recorder.collect: the sample cap, driven by a fake clock."""

import functools

import pytest

from benchkit import Config, Recorder, timing
from fakes import FakeClock, FakeFunction, block


@pytest.fixture
def fake_timing(monkeypatch):
    """Recorder.collect with timing.collect driven by a fake clock."""
    clock = FakeClock()
    monkeypatch.setattr(timing, "collect", functools.partial(timing.collect, clock=clock, block=block))
    return clock


def dispatch_of_slow_work(clock: FakeClock) -> FakeFunction:
    # Returns in 1 ms, finishes 1 s later: a budget of timed work asks for many samples.
    return FakeFunction(clock, dispatch_s=2**-10, work_s=1.0)


@pytest.mark.parametrize("maximum, expected", [(None, timing.choose_count(2**-10, timing.BUDGET_S)), (12, 12),
                                               (3, timing.MIN_SAMPLES)])
def test_maximum_caps_the_samples_but_not_below_the_run_minimum(fake_timing, maximum, expected):
    rec = Recorder(Config(run=0, smoke=False, platform="cpu"))
    cap = {} if maximum is None else {"maximum": maximum}
    samples = rec.collect("v", "dispatch", dispatch_of_slow_work(fake_timing), (), dtype="float32",
                          shape="1", **cap)
    assert len(samples) == len(rec.rows) == expected
    assert all(s.time_s == 2**-10 for s in samples)
