"""benchkit: time JAX code honestly. jax, numpy and the standard library only.

The public API is what this module exports (``__all__``) and the modules ``benchkit.compiles``,
``benchkit.multiproc`` and ``benchkit.profiles``; the figure scripts of the site use nothing
else (tests/test_imports.py). ``benchkit/README.md`` has the five-line example.
"""

__version__ = "0.1.0"

from . import compiles, multiproc, profiles, verdicts
from .bench import Bench, BenchError
from .figure import CannotRunHere, Config, Interleaved, Recorder, ReferenceMismatch, check_close, figure_main
from .report import Report
from .timing import (
    MAX_SAMPLES,
    MIN_SAMPLE_S,
    WARMUP_CALLS,
    Sample,
    collect,
    completed_sampler,
    time_clock_pair,
    time_completed,
    time_dispatch,
    time_first_call,
    time_loop,
    timed,
)

__all__ = [
    "Bench", "BenchError", "Report", "verdicts",
    "MAX_SAMPLES", "MIN_SAMPLE_S", "WARMUP_CALLS", "CannotRunHere", "Config", "Interleaved", "Recorder",
    "ReferenceMismatch", "Sample", "__version__", "check_close", "collect", "compiles", "completed_sampler",
    "figure_main", "multiproc", "profiles", "time_clock_pair", "time_completed", "time_dispatch",
    "time_first_call", "time_loop", "timed",
]
