"""Provenance: small ``collect_*`` functions, each returning flat scalar fields.

Nothing here names a person or a host: the machine label is derived from the
hardware (``cpu-amd-epyc-2c``, ``gpu-nvidia-h200``) and can be overridden with
the ``MACHINE`` environment variable.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import platform as _platform
import re
import subprocess
from pathlib import Path

from .schema import SCHEMA_VERSION

Scalar = str | int | float | bool

LABEL_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unknown"


def machine_label(platform: str, device_kind: str, cpu_model: str, cpu_count: int,
                  override: str | None = None) -> str:
    """A label that names hardware, never a host. ``override`` (``MACHINE=``) wins."""
    if override:
        if not LABEL_RE.match(override):
            raise ValueError(f"MACHINE={override!r}: use lower-case letters, digits, '.', '_' and '-'")
        return override
    if platform == "cpu":
        return f"cpu-{slug(cpu_model)}-{cpu_count}c"
    return f"{slug(platform)}-{slug(device_kind)}"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return _platform.processor() or _platform.machine() or "unknown"


def collect_host() -> dict[str, Scalar]:
    import numpy

    return {
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count() or 0,
        "python_version": _platform.python_version(),
        "numpy_version": numpy.__version__,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }


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
    }


def collect_git(repo: Path) -> dict[str, Scalar]:
    """Commit and dirty flag; ``unknown`` outside a git checkout (a copied tree)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                              text=True, check=True, timeout=10).stdout.strip()
    try:
        return {"git_commit": git("rev-parse", "HEAD"),
                "git_dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}
    except (OSError, subprocess.SubprocessError):
        return {"git_commit": "unknown", "git_dirty": False}


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def collect_script(script: Path, repo: Path) -> dict[str, Scalar]:
    from .schema import figure_id_for

    resolved = script.resolve()
    inside = resolved.is_relative_to(repo.resolve())
    return {
        "figure_id": figure_id_for(script.stem),
        "script_path": resolved.relative_to(repo.resolve()).as_posix() if inside else script.name,
        "script_sha256": sha256_file(script),
    }


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def collect_all(script: Path, repo: Path) -> dict[str, Scalar]:
    """Every provenance column, for the process that is about to measure."""
    fields: dict[str, Scalar] = {"schema_version": SCHEMA_VERSION, "timestamp_utc": utc_now()}
    fields |= collect_script(script, repo)
    fields |= collect_git(repo)
    fields |= collect_host()
    fields |= collect_jax()
    fields["machine"] = machine_label(str(fields["platform"]), str(fields["device_kind"]),
                                      str(fields["cpu_model"]), int(fields["cpu_count"]),
                                      os.environ.get("MACHINE"))
    return fields

