import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# benchsite and benchkit come from the project's editable install (make venv); the figure scripts
# and the lesson helpers are not packages: pyproject.toml's pytest `pythonpath` lists their folders.

# The machine whose numbers the prose quotes (extra.bench.machine in mkdocs.yml).
REFERENCE = re.search(r"^\s+machine:\s*(\S+)", (REPO / "mkdocs.yml").read_text(), re.MULTILINE).group(1)


def load_hook(name: str, monkeypatch) -> object:
    """A fresh copy of ``docs/.hooks/<name>.py`` as a module (registered for the test's length:
    its dataclasses look their module up)."""
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", REPO / "docs" / ".hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def build_site(out: Path, results: Path | None = None, strict: bool = True,
               extra_env: dict | None = None, args: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """``mkdocs build`` into ``out``, optionally from another results folder (``args``: more options)."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", **(extra_env or {}))
    for var in ("BENCH_RESULTS", "BENCH_MACHINE", "BENCH_STRICT", "BENCH_CLAIMS"):
        if var not in (extra_env or {}):
            env.pop(var, None)
    if results is not None:
        env["BENCH_RESULTS"] = str(results)
    cmd = [str(REPO / ".venv" / "bin" / "mkdocs"), "build", "-d", str(out),
           "--strict" if strict else "--no-strict", *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The site as `make site` builds it from the committed results."""
    out = tmp_path_factory.mktemp("site")
    proc = build_site(out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out
