"""Where things live: figure scripts, results folders, results files and side files.

The one definition of ``results/<machine>/<stem>.csv`` (and of the figure list),
read by the runner that writes results and by the site that publishes them.
Standard library only, like the rest of the measuring side.

    bench_scripts/<stem>.py              a figure script (FIGURE + measure)
    results/<machine>/<stem>.csv         every sample of it on one machine
    results/<machine>/<stem>.<name>      a side file (a trace, a memory profile)

Site URLs mirror the results folder; the site serves each CSV gzip-compressed
(``results/<machine>/<stem>.csv.gz``: a results file compresses about 30 times).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

# Nothing here is derived from where this package's files are: installed in a venv, they
# are in site-packages. Folders are arguments; these are the defaults, relative to the
# folder a command runs in.
RESULTS_NAME = "results"  # the results root, beside the figure scripts' folder
BENCH_DIR_NAME = "bench_scripts"  # this project's figure scripts (the site's checkout)
NOT_FIGURES = frozenset({"run.py"})  # the runner's entry point sits beside the figure scripts
CSV_SUFFIX = ".csv"
SITE_CSV_SUFFIX = ".gz"  # the site serves results CSVs compressed


@dataclass(frozen=True)
class ResultFile:
    """One figure's results on one machine."""

    machine: str
    stem: str
    path: Path


def find_repo(start: Path | None = None) -> Path | None:
    """The git work tree that holds ``start`` (default: the current directory), or None
    outside one (a copied tree, no git): where provenance reads the commit from."""
    try:
        out = subprocess.run(["git", "-C", str(start or Path.cwd()), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None


def default_results() -> Path:
    """``results/`` at the top of the current directory's git work tree, else in the current directory."""
    return (find_repo() or Path.cwd()) / RESULTS_NAME


def figure_scripts(bench_dir: Path) -> list[Path]:
    """Every figure script: top-level ``*.py`` in ``bench_scripts/`` except ``run.py`` and ``_*``."""
    return sorted(p for p in bench_dir.glob("*.py") if p.name not in NOT_FIGURES and not p.name.startswith("_"))


def results_file(results: Path, machine: str, stem: str) -> Path:
    """``results/<machine>/<stem>.csv``."""
    return results / machine / f"{stem}{CSV_SUFFIX}"


def side_file(results: Path, machine: str, stem: str, name: str) -> Path:
    """``results/<machine>/<stem>.<name>``: a file a figure wrote beside its CSV."""
    return results / machine / f"{stem}.{name}"


def site_path(machine: str, stem: str, name: str = "csv") -> str:
    """Where the site serves a results file (compressed) or a side file (as it is), from the site root."""
    return f"results/{machine}/{stem}.{name}" + (SITE_CSV_SUFFIX if name == "csv" else "")


def machines(results: Path) -> list[str]:
    """Every machine folder in ``results``, sorted."""
    return sorted(p.name for p in results.iterdir() if p.is_dir()) if results.is_dir() else []


def discover(results: Path) -> list[ResultFile]:
    """Every ``results/<machine>/<stem>.csv``, sorted."""
    if not results.is_dir():
        return []
    return [ResultFile(p.parent.name, p.stem, p) for p in sorted(results.glob(f"*/*{CSV_SUFFIX}"))]


def published_files(results: Path) -> list[tuple[str, Path]]:
    """(site path, file) of everything the site offers for download: CSVs (served compressed
    at their path + ``.gz``) and side files."""
    found = sorted(p for p in results.glob("*/*") if p.is_file() and not p.name.startswith("."))
    return [(f"results/{p.parent.name}/{p.name}" + (SITE_CSV_SUFFIX if p.suffix == CSV_SUFFIX else ""), p)
            for p in found]
