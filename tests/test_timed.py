"""``timing.timed``: a script's own timer becomes a Sample with its compiles counted."""

import jax.monitoring

from benchkit import compiles, timing


def test_timed_keeps_the_timer_value_and_the_calls_it_averaged():
    sample = timing.timed(lambda a, b: a + b, 0.25, 0.5, calls=50)
    assert sample == timing.Sample(0.75, 50, 0)


def test_timed_counts_a_compile_inside_its_window_and_not_outside():
    def compiling_timer() -> float:
        # Stands in for a timed call that triggered one backend compile.
        jax.monitoring.record_event_duration_secs(compiles.BACKEND_COMPILE_EVENT, 0.01)
        return 0.125

    inside = timing.timed(compiling_timer)
    outside = timing.timed(lambda: 0.125)
    assert inside.compiles == 1
    assert outside.compiles == 0


def test_completed_sampler_sizes_calls_from_one_warm_call_and_uses_the_callers_block():
    from fakes import FakeClock

    clock, blocked, called = FakeClock(), [], []

    def fn(x):  # each call costs 0.1 ms of the fake clock; its result is a plain number
        called.append(x)
        clock.advance(1e-4)
        return x

    take = timing.completed_sampler(fn, (7,), blocked.append, warm_calls=2, clock=clock)
    assert len(called) == 3 and len(blocked) == 3  # two warm calls and the sizing call, each blocked
    sample = take()
    assert sample.calls == 10  # 1 ms a sample at 0.1 ms a call
    assert abs(sample.time_s - 1e-4) < 1e-12
    assert len(called) == 13 and blocked == [7] * 13  # the caller's block, never a pytree walk


def test_completed_sampler_takes_one_call_a_sample_when_a_call_is_slow():
    from fakes import FakeClock

    clock = FakeClock()
    take = timing.completed_sampler(lambda: clock.advance(0.01), (), lambda out: out, clock=clock)
    assert take().calls == 1
