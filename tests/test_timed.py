"""``timing.timed``: a script's own timer becomes a Sample with its compiles counted."""

import dataclasses

import jax.monitoring

from benchkit import compiles, timing


def test_timed_keeps_the_timer_value_and_the_calls_it_averaged():
    sample = timing.timed(lambda a, b: a + b, 0.25, 0.5, calls=50)
    assert dataclasses.replace(sample, usage=None) == timing.Sample(0.75, 50, 0)
    assert sample.usage is not None and sample.usage.cpu_s >= 0  # getrusage read over the window


def test_timed_counts_a_compile_inside_its_window_and_not_outside():
    def compiling_timer() -> float:
        # Stands in for a timed call that triggered one backend compile.
        jax.monitoring.record_event_duration_secs(compiles.BACKEND_COMPILE_EVENT, 0.01)
        return 0.125

    inside = timing.timed(compiling_timer)
    outside = timing.timed(lambda: 0.125)
    assert inside.compiles == 1
    assert outside.compiles == 0


def test_completed_sampler_sizes_calls_from_warm_calls_and_uses_the_callers_block():
    from fakes import FakeClock

    clock, blocked, called = FakeClock(), [], []

    def fn(x):  # each call costs 2**-13 s (0.12 ms, exact in binary) of the fake clock; its
        called.append(x)  # result is a plain number
        clock.advance(2**-13)
        return x

    take = timing.completed_sampler(fn, (7,), blocked.append, warm_calls=2, clock=clock)
    sized = 2 + timing.SIZING_SAMPLES  # two warm calls and the sizing calls, each blocked
    assert len(called) == sized and len(blocked) == sized
    sample = take()
    assert sample.calls == 9  # about 1 ms a sample at 0.12 ms a call
    assert sample.lead_in == timing.LEAD_IN_CALLS
    assert sample.time_s == 2**-13
    total = sized + timing.LEAD_IN_CALLS + 9  # the lead-in call, untimed, then the sample's calls
    assert len(called) == total and blocked == [7] * total  # the caller's block, never a pytree walk


def test_completed_sampler_takes_one_call_a_sample_when_a_call_is_slow():
    from fakes import FakeClock

    clock = FakeClock()
    take = timing.completed_sampler(lambda: clock.advance(0.01), (), lambda out: out, clock=clock)
    assert take().calls == 1
