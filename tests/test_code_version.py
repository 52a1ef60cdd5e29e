"""One code version for every entry of the build cache (``cachefile.code_version``): every file of
the publishing package and of the harness package it reads results with, found by walking their
folders (no list of files to keep), and the installed libraries. A warm build after any edit to
them is then byte for byte a cold build of the edited tree (the slow test at the end)."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import benchkit
import benchsite
from benchsite.build import parallel, sitesetup
from benchsite.build.buildcache import BuildCache
from benchsite.core import cachefile
from benchsite.model import load
from conftest import NOTEBOOK_LOG, REPO, edited_tree

IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc")


@pytest.fixture
def package(tmp_path):
    """A copy of the publishing package (its modules, templates and data files), to edit."""
    copy = tmp_path / "benchsite"
    shutil.copytree(Path(benchsite.__file__).parent, copy, ignore=IGNORED)
    return copy


def test_the_code_folders_are_the_packages_the_build_imports():
    assert cachefile.code_folders() == [Path(benchsite.__file__).resolve().parent,
                                        Path(benchkit.__file__).resolve().parent]


def test_one_byte_changed_in_any_file_of_the_package_changes_the_digest(package):
    """Every file, whatever its kind (module, template, data file), by walking the copy."""
    base = cachefile.tree_digest(package)
    files = cachefile.tree_files(package)
    kinds = {p.suffix for p in files}
    assert {".py", ".html", ".csv", ".md"} <= kinds, kinds  # modules, templates, peaks.csv and the rest
    for path in files:
        data = path.read_bytes()
        path.write_bytes(bytes([data[0] ^ 1]) + data[1:] if data else b"\n")
        assert cachefile.tree_digest(package) != base, path.relative_to(package)
        path.write_bytes(data)
    assert cachefile.tree_digest(package) == base


def test_a_module_in_a_subpackage_is_in_the_digest_and_bytecode_is_not(package):
    base = cachefile.tree_digest(package)
    (package / "extra").mkdir()
    (package / "extra" / "peaks.csv").write_bytes((package / "views" / "peaks.csv").read_bytes())
    with_copy = cachefile.tree_digest(package)
    assert with_copy != base
    (package / "views" / "peaks.csv").unlink()  # moved into another subpackage: the same bytes, another place
    assert cachefile.tree_digest(package) not in (base, with_copy)
    moved = cachefile.tree_digest(package)
    (package / "extra" / "__pycache__").mkdir()
    (package / "extra" / "__pycache__" / "x.cpython-312.pyc").write_bytes(b"\0")
    (package / ".chart.py.swp").write_bytes(b"\0")  # an editor's
    assert cachefile.tree_digest(package) == moved


def test_the_code_version_follows_the_package_and_the_libraries(package, monkeypatch):
    monkeypatch.setattr(cachefile, "code_folders", lambda: [package])
    versions = []
    axes = package / "views" / "templates" / "axes.html"
    for change in (lambda: None, lambda: axes.write_bytes(axes.read_bytes() + b"<!-- -->"),
                   lambda: monkeypatch.setattr(cachefile, "installed", lambda: "jinja2-0.0.dist-info")):
        change()
        cachefile.code_version.cache_clear()
        versions.append(cachefile.code_version())
    cachefile.code_version.cache_clear()
    monkeypatch.undo()
    assert len(set(versions)) == 3
    assert "\njinja2-" in cachefile.installed() and "\nmkdocs_material-" in cachefile.installed()


def test_every_cache_key_moves_with_the_code_version(tmp_path, monkeypatch):
    """The frames, charts, blocks, gzip downloads, compacted sessions, cached values, warming jobs,
    pages (the site's set-up) and renders: each entry is keyed on the one code version."""
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    results = tmp_path / "results" / "cpu-a"
    results.mkdir(parents=True)
    csv = results / "demo.csv"
    csv.write_text("a\n1\n")
    file = load.ResultFile("cpu-a", "demo", csv)
    config = {"markdown_extensions": [], "mdx_configs": {}, "plugins": {}}
    made = []

    def keys() -> tuple:
        cache = BuildCache()
        cache.block("demo", "key", lambda: made.append("block") or "<p>")
        cache.compressed(csv)
        cachefile.cached("demo", "key", lambda: made.append("value") or 1)
        return (load._stored(file, tmp_path / "frames"), parallel.key("job"), sitesetup.digest(config),
                cachefile.entry("latest-sessions", "d" * 64))

    monkeypatch.setattr(cachefile, "code_version", lambda: "one")
    first = keys()
    assert keys() == first and made == ["block", "value"]  # the same code: found
    monkeypatch.setattr(cachefile, "code_version", lambda: "two")
    second = keys()
    assert all(a != b for a, b in zip(first, second)), list(zip(first, second))
    assert made == ["block", "value"] * 2
    assert len(list((tmp_path / "cache" / "gzip").iterdir())) == 2


# --- the hold: a warm build after an edit is a cold build of the edited tree -----------------

# The builds run the checkout's mkdocs.yml, docs/ and results/, as the session's build of the
# committed site does (tests/conftest.py, committed_build), with an edited copy of the code: the
# publishing package and bench_scripts/ (the harness, and the figure scripts the package finds
# beside it), imported from the copy (PYTHONPATH, and -P: not the checkout's from the current
# folder), so the real tree is never edited. The code version is a digest of the code's bytes,
# wherever they lie, and every other input is the committed build's: each key the warm build asks
# for is the one the committed build made, but for the code version.
CODE = ("benchsite", "bench_scripts")
EDIT_METRICS = """
import dataclasses as _edited

METRICS["bandwidth"] = _edited.replace(METRICS["bandwidth"], label=METRICS["bandwidth"].label + " (edited)")
"""


def _code_ignored(folder: str, names: list[str]) -> set[str]:
    """What the copy leaves out: bytecode, and what installing or packaging the harness left in
    bench_scripts/ (its egg-info would be one more installed distribution in the code version;
    tests/test_benchkit_install.py builds a wheel there while other tests run)."""
    left = {n for n in names if n == "__pycache__" or n.endswith(".pyc")}
    if Path(folder) == REPO / "bench_scripts":
        left |= {n for n in names if n in ("build", "dist") or n.endswith(".egg-info")}
    return left


def _linked_copy(source: Path, target: Path) -> None:
    """A copy of a build cache that other builds may be writing, its files hard links: an entry is
    only ever replaced whole (cachefile.store_bytes: a temp file renamed over it), never written in
    place, so neither cache sees the other's later entries. Temp files are left out."""
    for folder, _, names in os.walk(source):
        out = target / os.path.relpath(folder, source)
        out.mkdir(parents=True, exist_ok=True)
        for name in names:
            if not name.startswith(".tmp-"):
                try:
                    os.link(os.path.join(folder, name), out / name)
                except FileNotFoundError:  # replaced or removed since it was listed
                    pass


def _site_files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def _build(code: Path, site: Path, cache: Path, jobs: int = 2) -> str:
    """``make site``'s build (strict, cold on ``jobs`` workers when the cache is empty) of the
    checkout with the code in ``code``, saying when the build itself converts the notebook
    (tests/conftest.py, NOTEBOOK_LOG): its log."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    env |= {"BENCH_CACHE": str(cache), "BENCH_JOBS": str(jobs), "NO_MKDOCS_2_WARNING": "1",
            "PYTHONPATH": os.pathsep.join([str(code), str(code / "bench_scripts")])}
    proc = subprocess.run([sys.executable, "-P", "-c", NOTEBOOK_LOG, "build", "--strict", "-d", str(site)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stderr


def edited_builds(root: Path, committed_cache: Path) -> dict[str, str]:
    """Two builds of the checkout with an edited copy of its code, into ``root``/warm and cold:
    warm on two workers, on a copy of the cache of the session's cold build of the committed site
    on two workers (which holds every entry of the unedited code, the workers' included), after an
    edit to a template every chart draws with and to a model module; and cold in one process on an
    empty cache (no workers: the build makes every page itself). Once a run (tests/conftest.py,
    edited_tree: tests/test_warm_build.py reads them too). {name: the build's log}"""
    code = root / "code"
    for name in CODE:
        shutil.copytree(REPO / name, code / name, ignore=_code_ignored, symlinks=True)
    package = code / "benchsite"
    # The chart kit's template (every chart draws its axes with its macros): a comment in each macro.
    axes = next(p for p in cachefile.tree_files(package) if p.name == "axes.html")
    kit, count = re.subn(r"(\{%-? macro [^%]*%\})", r"\1<!-- edited: every chart -->", axes.read_text(encoding="utf-8"))
    assert count, "no macro in axes.html to edit"
    axes.write_text(kit, encoding="utf-8")
    # A model module: the label of every bandwidth table (cached in panels, pages and renders).
    metrics = next(p for p in cachefile.tree_files(package) if p.name == "metrics.py")
    metrics.write_text(metrics.read_text(encoding="utf-8") + EDIT_METRICS, encoding="utf-8")
    _linked_copy(committed_cache, root / "cache")
    return {"warm": _build(code, root / "warm", root / "cache"),
            "cold": _build(code, root / "cold", root / "cache-cold", jobs=1)}


@pytest.mark.slow
def test_a_warm_build_after_editing_a_template_and_a_module_is_a_cold_build():
    """The two builds of the edited tree are byte for byte the same, and both show the edits (the
    cold one in one process: warming by workers may only make a build faster, and
    tests/test_warm_build.py asks that of these builds too)."""
    sites, _ = edited_tree()
    before, warm, cold = (_site_files(sites[name]) for name in ("before", "warm", "cold"))
    assert sorted(warm) == sorted(cold) and len(cold) > 100
    differ = [name for name in cold if warm[name] != cold[name]]
    assert differ == [], differ[:20]
    changed = [name for name in cold if before.get(name) != cold[name]]
    assert any(b"<!-- edited: every chart -->" in cold[name] for name in changed)
    assert any(b"bytes moved / time (edited)" in cold[name] for name in changed)


def test_no_module_keeps_a_code_version_of_its_own():
    """A key that hashes some modules' source or some libraries' versions is a list someone must
    keep (buildcache.CHART_CODE was one): every key takes the one code version instead."""
    own = re.compile(r"__file__\)?\.read_(?:bytes|text)|\.__version__\b|metadata\.version\(")
    sources = [p for p in cachefile.tree_files(Path(benchsite.__file__).parent) if p.suffix == ".py"]
    found = [f"{p.relative_to(REPO)}:{n}" for p in sources if p.name != "cachefile.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if own.search(line)]
    assert found == []
