"""The measuring side's harness: jax, numpy and the standard library only."""

from .figure import Config, Recorder, ReferenceMismatch, check_close, figure_main
from .timing import Sample, collect, time_clock_pair, time_completed, time_dispatch, time_first_call, time_loop, timed

__all__ = [
    "Config", "Recorder", "ReferenceMismatch", "Sample", "check_close", "collect", "figure_main",
    "time_clock_pair", "time_completed", "time_dispatch", "time_first_call", "time_loop", "timed",
]
