"""The results-file contract, in code. ``results/README.md`` is its written twin.

A test keeps the two in step: every column named here is documented there and
nothing else is. Standard library only, so the measuring side and the
publishing side can both import it.

Format history (the newest last; ``results/README.md`` repeats it for readers):
  1  first version: one row per sample, flat provenance on every row.
  2  machine identity and session: ``session_id`` (shared by every figure of one
     ``make bench``), ``harness_sha256``, CPU vendor/family/model/stepping, a
     digest of the CPU flags and the notable ISA extensions, load average,
     frequency governor and current frequency, total memory, the persistent
     compilation cache (on/off and its folder), the ``JAX_*``/``XLA_*``
     environment, the run's ``order_seed``; per sample ``seq`` (position in the
     run's measuring order) and ``cache_hits`` (persistent-cache hits inside the
     timed window); boundary ``wall`` (the wall time a whole measuring procedure
     took). Readers upgrade version 1 files: the new columns read
     ``unknown`` (text) or empty (numbers), ``seq`` is left empty.
  3  multi-process runs: per sample ``process_index`` (which of the run's
     processes measured it, 0-based) and ``process_count`` (how many processes
     the run had: ``FIGURE["processes"]``, started together by the runner under
     ``jax.distributed``). Readers upgrade version 1 and 2 files: every row was
     measured by a run of one process, so ``process_index`` 0, ``process_count`` 1.
  4  carry-over and what the process did: per sample ``after`` (the cell measured
     just before it), ``lead_in`` (untimed calls of its own cell just before it),
     and the process's ``getrusage`` over its window (``cpu_s``, ``minflt``,
     ``majflt``, ``nvcsw``, ``nivcsw``); per run ``load_avg_1m_end`` (the load
     average when the measuring ended), ``other_load`` (other processes' CPU use
     while this one measured, in CPUs) and ``run_wall_s`` (the run's whole wall
     time as the runner saw it). Readers upgrade version 1-3 files: these columns
     read empty, ``lead_in`` 0.
"""

from __future__ import annotations

SCHEMA_VERSION = 4
READABLE_VERSIONS = (1, 2, 3, 4)  # older versions a reader upgrades on load

# Provenance: identical on every row of one run (one process).
PROVENANCE_COLUMNS: tuple[str, ...] = (
    "schema_version",
    "figure_id",
    "script_path",
    "script_sha256",
    "harness_sha256",
    "session_id",
    "git_commit",
    "git_dirty",
    "timestamp_utc",
    "machine",
    "platform",
    "device_kind",
    "device_count",
    "platform_version",
    "jax_version",
    "jaxlib_version",
    "numpy_version",
    "python_version",
    "cpu_model",
    "cpu_count",
    "cpu_vendor",
    "cpu_family",
    "cpu_model_number",
    "cpu_stepping",
    "cpu_flags_sha256",
    "cpu_isa",
    "cpu_governor",
    "cpu_mhz",
    "mem_total_bytes",
    "load_avg_1m",
    "load_avg_1m_end",
    "other_load",
    "run_wall_s",
    "jax_env",
    "compilation_cache",
    "order_seed",
    "xla_flags",
    "jax_enable_x64",
    "jax_default_matmul_precision",
)

# What was measured (the spec) and what was observed, per sample.
MEASUREMENT_COLUMNS: tuple[str, ...] = (
    "variant",
    "boundary",
    "dtype",
    "shape",
    "params",
    "run",
    "process_index",
    "process_count",
    "sample",
    "seq",
    "after",
    "lead_in",
    "calls",
    "compiles",
    "cache_hits",
    "time_s",
    "cpu_s",
    "minflt",
    "majflt",
    "nvcsw",
    "nivcsw",
)

# Figure-specific quantities; empty where a figure does not record them.
OPTIONAL_COLUMNS: tuple[str, ...] = (
    "max_rel_error",
    "bytes_moved",
    "flops",
    "size_bytes",
    "detail",
)

COLUMNS: tuple[str, ...] = PROVENANCE_COLUMNS + MEASUREMENT_COLUMNS + OPTIONAL_COLUMNS

INT_COLUMNS = frozenset({"schema_version", "device_count", "cpu_count", "run", "process_index", "process_count",
                         "sample", "seq", "calls", "lead_in", "minflt", "majflt", "nvcsw", "nivcsw",
                         "compiles", "cache_hits", "mem_total_bytes", "order_seed"})
BOOL_COLUMNS = frozenset({"git_dirty", "jax_enable_x64"})
FLOAT_COLUMNS = frozenset({"time_s", "max_rel_error", "bytes_moved", "flops", "size_bytes", "load_avg_1m",
                           "load_avg_1m_end", "other_load", "run_wall_s", "cpu_s"})
V3_MISSING_NULLABLE = ("after", "cpu_s", "minflt", "majflt", "nvcsw", "nivcsw", "load_avg_1m_end",
                       "other_load", "run_wall_s")
# Columns that may be empty; every other column must hold a value.
NULLABLE_COLUMNS = frozenset(OPTIONAL_COLUMNS) | {"xla_flags", "jax_default_matmul_precision", "params", "shape",
                                                   "jax_env", "cpu_isa", "seq", "load_avg_1m",
                                                   "mem_total_bytes"} | set(V3_MISSING_NULLABLE)

# Columns a version 3 file lacks, and what an upgraded row holds in them.
V3_MISSING: dict[str, str] = {"after": "", "lead_in": "0", "cpu_s": "", "minflt": "", "majflt": "",
                              "nvcsw": "", "nivcsw": "", "load_avg_1m_end": "", "other_load": "",
                              "run_wall_s": ""}

# Columns a version 2 file lacks, and what an upgraded row holds in them: one process per run.
V2_MISSING: dict[str, str] = {"process_index": "0", "process_count": "1"}

# What a row means when a writer leaves these out: measured by a run of one process.
WRITE_DEFAULTS: dict[str, object] = {"process_index": 0, "process_count": 1, "lead_in": 0}

# Columns a version 1 file lacks, and what an upgraded row holds in them.
V1_MISSING: dict[str, str] = {**V2_MISSING,
    "harness_sha256": "unknown", "session_id": "unknown", "cpu_vendor": "unknown",
    "cpu_family": "unknown", "cpu_model_number": "unknown", "cpu_stepping": "unknown",
    "cpu_flags_sha256": "unknown", "cpu_isa": "", "cpu_governor": "unknown", "cpu_mhz": "unknown",
    "mem_total_bytes": "", "load_avg_1m": "", "jax_env": "", "compilation_cache": "unknown",
    "order_seed": "0", "seq": "", "cache_hits": "0",
}

BOUNDARIES = ("dispatch", "completed", "loop", "first-call", "clock", "trace", "wall")


def figure_id_for(stem: str) -> str:
    """``dispatch_vs_completion`` -> ``fig-dispatch-vs-completion``."""
    return "fig-" + stem.replace("_", "-")


def stem_for(figure_id: str) -> str:
    """Inverse of :func:`figure_id_for`."""
    if not figure_id.startswith("fig-"):
        raise ValueError(f"figure id {figure_id!r} does not start with 'fig-'")
    return figure_id[4:].replace("-", "_")


def format_params(params: dict[str, object]) -> str:
    """Parameters as ``key=value;key=value``, keys sorted, for one flat column."""
    for key, value in params.items():
        text = f"{key}{value}"
        if any(ch in text for ch in ";=\n"):
            raise ValueError(f"parameter {key}={value!r} may not contain ';', '=' or a newline")
    return ";".join(f"{k}={params[k]}" for k in sorted(params))


def parse_params(text: str) -> dict[str, str]:
    """Inverse of :func:`format_params`; values stay strings."""
    if not text:
        return {}
    pairs = [item.split("=", 1) for item in text.split(";")]
    if any(len(pair) != 2 or not pair[0] for pair in pairs):
        raise ValueError(f"params {text!r} is not of the form key=value;key=value")
    return {k: v for k, v in pairs}
