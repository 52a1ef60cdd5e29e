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
