"""Provenance: small ``collect_*`` functions, each returning flat scalar fields.

Nothing here names a person or a host: the machine label is derived from the
hardware (``cpu-amd-epyc-f26m2-2c``, ``gpu-nvidia-h200-x1``) and can be
overridden with the ``MACHINE`` environment variable.

The label keeps apart processors that share a marketing name: virtual machines
often report a model name of just "AMD EPYC" for parts of different families
(one with AVX512-BF16, one without), and the same script then gave numbers
2.4x apart. CPU vendor, family and model number are part of the label.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform as _platform
import re
import subprocess
import time
from pathlib import Path

from .schema import SCHEMA_VERSION

Scalar = str | int | float | bool

LABEL_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")

VENDORS = {"genuineintel": "intel", "authenticamd": "amd", "hygongenuine": "hygon"}
# Marketing words that say nothing about the part: dropped from the label.
_NOISE = re.compile(r"\((r|tm)\)|\bcpu\b|\bprocessor\b|\b\d+-core\b|@.*$", re.IGNORECASE)
# Flags worth reading in a table (the full list is digested in cpu_flags_sha256).
NOTABLE_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni",
                 "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8",
                 "asimd", "asimdhp", "sve", "sve2", "bf16", "i8mm")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unknown"


def machine_label(platform: str, device_kind: str, cpu_model: str, cpu_count: int,
                  override: str | None = None, *, cpu_vendor: str = "unknown",
                  cpu_family: str = "unknown", cpu_model_number: str = "unknown",
                  device_count: int | None = None) -> str:
    """A label that names hardware, never a host. ``override`` (``MACHINE=``) wins.

    CPU: ``cpu-<vendor>-<model name>-f<family>m<model>-<cores>c``, the family and
    model part only where the processor reports them; accelerators:
    ``<platform>-<device kind>-x<device count>``.
    """
    if override:
        if not LABEL_RE.match(override):
            raise ValueError(f"MACHINE={override!r}: use lower-case letters, digits, '.', '_' and '-'")
        return override
    if platform == "cpu":
        vendor = VENDORS.get(cpu_vendor.lower(), slug(cpu_vendor)) if cpu_vendor != "unknown" else ""
        name = slug(_NOISE.sub(" ", cpu_model))
        if vendor and not name.startswith(vendor):
            name = f"{vendor}-{name}"
        ident = (f"-f{slug(cpu_family)}m{slug(cpu_model_number)}"
                 if "unknown" not in (cpu_family, cpu_model_number) else "")
        return f"cpu-{name}{ident}-{cpu_count}c"[:64]
    count = f"-x{device_count}" if device_count else ""
    return f"{slug(platform)}-{slug(device_kind)}{count}"[:64]


def read_cpuinfo(path: Path = Path("/proc/cpuinfo")) -> dict[str, str]:
    """The first processor's block of ``/proc/cpuinfo``, keys lower-case ({} elsewhere)."""
    try:
        text = path.read_text()
    except OSError:
        return {}
    info: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if info:
                break
            continue
        key, _, value = line.partition(":")
        info.setdefault(key.strip().lower(), value.strip())
    return info


def cpu_model(info: dict[str, str] | None = None) -> str:
    info = read_cpuinfo() if info is None else info
    return info.get("model name") or _platform.processor() or _platform.machine() or "unknown"


def collect_cpu(info: dict[str, str] | None = None) -> dict[str, Scalar]:
    """Vendor, family, model, stepping and flags of the processor (``unknown`` where
    the system does not say: macOS, say). ARM reports implementer/part instead."""
    info = read_cpuinfo() if info is None else info
    flags = (info.get("flags") or info.get("features") or "").split()
    return {
        "cpu_model": cpu_model(info),
        "cpu_vendor": info.get("vendor_id") or info.get("cpu implementer") or "unknown",
        "cpu_family": info.get("cpu family") or info.get("cpu architecture") or "unknown",
        "cpu_model_number": info.get("model") or info.get("cpu part") or "unknown",
        "cpu_stepping": info.get("stepping") or info.get("cpu variant") or "unknown",
        "cpu_flags_sha256": hashlib.sha256(" ".join(sorted(flags)).encode()).hexdigest() if flags else "unknown",
        "cpu_isa": " ".join(f for f in NOTABLE_FLAGS if f in flags),
        "cpu_mhz": info.get("cpu mhz") or "unknown",
    }


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip() or None
    except OSError:
        return None


def collect_state() -> dict[str, Scalar]:
    """What the machine was doing when the run started: load, frequency policy, memory."""
    mem = None
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) * 1024
    if mem is None:
        try:
            mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            mem = None
    try:
        load: float | None = round(os.getloadavg()[0], 2)
    except OSError:
        load = None
    state: dict[str, Scalar] = {
        "cpu_governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") or "unknown",
        "mem_total_bytes": mem if mem is not None else "",
        "load_avg_1m": load if load is not None else "",
    }
    freq = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")
    if freq and freq.isdigit():
        state["cpu_mhz"] = str(int(freq) // 1000)  # kHz -> MHz; cpufreq beats /proc/cpuinfo
    return state


def _busy_cpu_s(stat: str | None) -> float | None:
    """CPU seconds every process on the host has spent busy since boot: the
    aggregate ``cpu`` line of ``/proc/stat`` less its idle and iowait ticks
    (guest time is already inside user)."""
    for line in (stat or "").splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu" and len(fields) >= 8:
            ticks = [int(v) for v in fields[1:8]]  # user nice system idle iowait irq softirq
            return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")
    return None


class LoadMeter:
    """What else the machine did while this process measured: the host's busy CPU
    seconds (``/proc/stat``) less this process's own, over the wall time between
    :meth:`start` and :meth:`stop`, in CPUs (1.0 = one other CPU busy all along),
    and the load average when the measuring ended. Empty where ``/proc/stat`` or
    the load average cannot be read."""

    def __init__(self, read_stat=lambda: _read("/proc/stat"), clock=time.monotonic,
                 own_cpu=lambda: sum(os.times()[:2])) -> None:
        self._read_stat, self._clock, self._own = read_stat, clock, own_cpu

    def start(self) -> LoadMeter:
        self._t0, self._busy0, self._own0 = self._clock(), _busy_cpu_s(self._read_stat()), self._own()
        return self

    def stop(self) -> dict[str, Scalar]:
        busy, wall, own = _busy_cpu_s(self._read_stat()), self._clock() - self._t0, self._own() - self._own0
        other: Scalar = ""
        if busy is not None and self._busy0 is not None and wall > 0:
            other = round(max(0.0, (busy - self._busy0 - own) / wall), 3)
        try:
            end: Scalar = round(os.getloadavg()[0], 2)
        except OSError:
            end = ""
        return {"other_load": other, "load_avg_1m_end": end}


def jax_env(environ: dict[str, str] | None = None) -> str:
    """Every ``JAX_*`` / ``XLA_*`` variable but ``XLA_FLAGS`` (a column of its own),
    as compact JSON with sorted keys; empty when none is set."""
    env = os.environ if environ is None else environ
    chosen = {k: v for k, v in env.items() if k.startswith(("JAX_", "XLA_")) and k != "XLA_FLAGS"}
    return json.dumps(chosen, sort_keys=True, separators=(",", ":")) if chosen else ""


# The modules a figure's measuring runs through: the harness. The rest of the package
# (Bench, compare, the report, the verdict rules, keeping sessions, the exports) reads or
# reports what was measured, and an edit there leaves every figure's numbers as they were;
# tests/test_imports.py checks that no harness module imports one of them.
HARNESS_MODULES = ("compiles", "figure", "layout", "multiproc", "profiles", "provenance", "results", "runner",
                   "schema", "timing")


def harness_sha256(harness_dir: Path | None = None) -> str:
    """One digest of the harness's modules (:data:`HARNESS_MODULES`, names and bytes): a change
    to any of them marks every figure measured with the old harness stale."""
    folder = harness_dir or Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in sorted(HARNESS_MODULES):
        path = folder / f"{name}.py"
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def collect_host() -> dict[str, Scalar]:
    import numpy

    return {
        **collect_cpu(),
        **collect_state(),
        "cpu_count": os.cpu_count() or 0,
        "python_version": _platform.python_version(),
        "numpy_version": numpy.__version__,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "jax_env": jax_env(),
    }


def _cache_state() -> str:
    from . import compiles

    state = getattr(compiles, "cache_state", None)
    return state() if state else "unknown"


def collect_jax() -> dict[str, Scalar]:
    import jax
    import jaxlib

    device = jax.devices()[0]
    return {
        "platform": device.platform,
        "device_kind": device.device_kind,
        "device_count": jax.device_count(),
        "platform_version": str(getattr(device.client, "platform_version", "unknown")).strip(),
        "jax_version": jax.__version__,
        "jaxlib_version": jaxlib.__version__,
        "jax_enable_x64": bool(jax.config.jax_enable_x64),
        "jax_default_matmul_precision": str(jax.config.jax_default_matmul_precision or ""),
        "compilation_cache": _cache_state(),
    }


# What a benchmark session writes itself: a change there says nothing about the code that ran.
GIT_OUTPUTS = ("results", "docs/lessons/*.ipynb")


def collect_git(repo: Path | None) -> dict[str, Scalar]:
    """Commit and dirty flag; ``unknown`` outside a git checkout (a copied tree).

    ``git_dirty`` describes the code that ran: tracked files changed outside the
    session's own outputs (:data:`GIT_OUTPUTS`: the results and the executed
    lesson notebook, which ``make bench`` rewrites)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                              text=True, check=True, timeout=10).stdout.strip()
    excludes = [f":(exclude,glob){p}" if "*" in p else f":(exclude){p}" for p in GIT_OUTPUTS]
    if repo is None:
        return {"git_commit": "unknown", "git_dirty": False}
    try:
        return {"git_commit": git("rev-parse", "HEAD"),
                "git_dirty": bool(git("status", "--porcelain", "--untracked-files=no", "--", ".", *excludes))}
    except (OSError, subprocess.SubprocessError):
        return {"git_commit": "unknown", "git_dirty": False}


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def collect_script(script: Path, repo: Path | None) -> dict[str, Scalar]:
    from .schema import figure_id_for

    resolved = script.resolve()
    inside = repo is not None and resolved.is_relative_to(repo.resolve())
    return {
        "figure_id": figure_id_for(script.stem),
        "script_path": resolved.relative_to(repo.resolve()).as_posix() if inside else script.name,
        "script_sha256": sha256_file(script),
    }


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_session_id() -> str:
    """``20261201T104500Z-3f2a``: when the session started, plus a random suffix."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + os.urandom(2).hex()


def collect_all(script: Path, repo: Path | None, *, session_id: str = "", order_seed: int = 0) -> dict[str, Scalar]:
    """Every provenance column, for the process that is about to measure. A run
    started outside a session (a script run by hand) gets a session of its own."""
    fields: dict[str, Scalar] = {"schema_version": SCHEMA_VERSION, "timestamp_utc": utc_now(),
                                 "session_id": session_id or new_session_id(), "order_seed": order_seed,
                                 "harness_sha256": harness_sha256()}
    fields |= collect_script(script, repo)
    fields |= collect_git(repo)
    fields |= collect_host()
    fields |= collect_jax()
    fields["machine"] = machine_label(str(fields["platform"]), str(fields["device_kind"]),
                                      str(fields["cpu_model"]), int(fields["cpu_count"]),
                                      os.environ.get("MACHINE"), cpu_vendor=str(fields["cpu_vendor"]),
                                      cpu_family=str(fields["cpu_family"]),
                                      cpu_model_number=str(fields["cpu_model_number"]),
                                      device_count=int(fields["device_count"]))
    return fields
