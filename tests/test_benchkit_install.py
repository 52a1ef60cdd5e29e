"""benchkit installed from its wheel into a new venv, used from an empty folder outside this
repository: the five-line example and the compare command work there, with no access to
this checkout's copy of benchkit.

The new venv gets jax and its dependencies (numpy, jaxlib, scipy, ml_dtypes, opt_einsum)
through a folder of links to the project venv's copies, so the test needs no network; it
checks that benchkit itself is not importable before the wheel is installed.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.slow  # a wheel built and installed into a new venv

DEPENDENCIES = ("jax", "jaxlib", "numpy", "numpy.libs", "scipy", "scipy.libs", "ml_dtypes", "opt_einsum")


def sh(cmd: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, **kw)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the new venv's python, an empty work folder) with benchkit installed from a wheel."""
    root = tmp_path_factory.mktemp("outside")
    built = sh([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(REPO / "bench_scripts"),
                "-w", str(root / "dist")], root)
    assert built.returncode == 0, built.stderr
    (wheel,) = (root / "dist").glob("jax_benchkit-*.whl")
    made = sh([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], root)
    assert made.returncode == 0, made.stderr
    python = root / "venv" / "bin" / "python"
    site = Path(sh([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], root).stdout.strip())
    deps = root / "deps"
    deps.mkdir()
    ours = Path(__import__("numpy").__file__).resolve().parents[1]  # the project venv's site-packages
    for name in DEPENDENCIES:
        if (ours / name).exists():
            (deps / name).symlink_to(ours / name)
    (site / "deps.pth").write_text(f"{deps}\n")
    work = root / "work"
    work.mkdir()
    before = sh([str(python), "-c", "import benchkit"], work)
    assert before.returncode != 0 and "No module named 'benchkit'" in before.stderr  # not this checkout's copy
    # The new venv has no pip of its own: the project's pip installs into it.
    put = sh([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", str(wheel)],
             root)
    assert put.returncode == 0, put.stderr
    sh(["git", "init", "-q"], work)
    return python, work


def test_the_installed_package_is_the_wheels_with_its_version(installed):
    python, work = installed
    done = sh([str(python), "-c", "import benchkit, sys; print(benchkit.__file__, benchkit.__version__)"], work)
    where, version = done.stdout.split()
    assert Path(where).is_relative_to(python.parents[1]) and not Path(where).is_relative_to(REPO)
    assert version == __import__("benchkit").__version__


def test_the_five_line_example_works_outside_the_repository(installed):
    python, work = installed
    (work / "five.py").write_text(textwrap.dedent("""\
        import jax, jax.numpy as jnp
        from benchkit import Bench
        bench = Bench("tanh_sum")
        bench.time("tanh", jax.jit(lambda x: jnp.tanh(x).sum()), jnp.ones(1_000))
        bench.run()
        """))
    done = sh([str(python), "five.py", "--runs", "2"], work)
    assert done.returncode == 0, done.stderr
    assert "#### benchkit: `tanh_sum`" in done.stdout
    (csv,) = (work / "results").glob("*/tanh_sum.csv")  # results/ at the top of the current work tree
    assert csv.read_text().count("\n") > 10


def test_the_compare_command_works_outside_the_repository(installed):
    python, work = installed
    (work / "ops.py").write_text("import jax.numpy as jnp\n\ndef f(x):\n    return jnp.sin(x)\n")
    script = python.parent / "benchkit"  # the console script
    done = sh([str(script), "compare", "ops.py:f", "ops.py:f", "--args", "jnp.ones(1000)", "--runs", "2",
               "--name", "a_a"], work)
    assert done.returncode == 0, done.stderr
    assert "| `b` / `a` |" in done.stdout
    assert (next((work / "results").glob("*/a_a.compare.json"))).is_file()
