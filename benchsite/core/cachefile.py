"""One cache entry on disk: a pickle written atomically (temp file + rename, so two builds at
once never read half a file) and read back, or ``None`` when it is missing or damaged."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import itertools
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchsite import REPO


def read(path: Path) -> object | None:
    try:
        data = path.read_bytes()  # no stat first: a warm build reads thousands of these
    except OSError:  # missing (or a folder, or unreadable): made again
        return None
    try:
        return pickle.loads(data)
    except Exception:  # noqa: BLE001 - a damaged entry is made again
        return None


def write(path: Path, value: object) -> None:
    """Store ``value``; a read-only checkout still builds, it just makes the value again next time."""
    try:
        store_bytes(path, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:
        pass


def names(folder: Path) -> set[str]:
    """The entries of a cache folder, listed once (empty if it is not there yet): a warm build asks
    about thousands of entries, and one listing costs less than a question each."""
    try:
        return set(os.listdir(folder))
    except OSError:
        return set()


_DIGESTS: dict[str, str] = {}  # file_digest by stamp, in this process


def stamp(path: Path) -> str:
    """What changes whenever a file's bytes do: its path, size, inode, modification and
    status-change times (``OSError`` if it cannot be read). On Linux and other POSIX systems no
    program can set ``ctime`` back, so an edited file always gets a new stamp; on a filesystem
    with coarse timestamps, or on Windows (where ``st_ctime`` is the creation time), an edit
    within the same tick that keeps the size could go unseen: ``make clean`` empties the cache."""
    return _stamp(path, path.stat())


def _stamp(path: Path, st: os.stat_result) -> str:
    return f"{os.path.abspath(path)}\0{st.st_size}\0{st.st_ino}\0{st.st_mtime_ns}\0{st.st_ctime_ns}"


# A file smaller than this is hashed each time a process asks (at most about 0.1 ms: sha256 runs at
# about 1 GB/s here), not remembered: its memo would be one more cache file, whose creation costs
# what hashing it in several later builds does (0.05-0.8 ms a file on this VM, measured, against
# 0.03-0.1 ms), and reading a memo back (about 0.02 ms) saves little. The committed results and
# scripts have 395 such files of 451 (session files, side files, scripts), 1.6 MB in all: a cold
# build creates 395 files fewer, and a warm build hashes them in about 2 ms.
MEMO_MIN_BYTES = 1 << 16  # 64 KiB


def file_digest(path: Path, cache: Path | None) -> str:
    """sha256 of a file's bytes, remembered under ``cache`` by its :func:`stamp` when the file is
    large enough to be worth it (``MEMO_MIN_BYTES``). A warm build of a hundred machine folders
    reads gigabytes of results once per change, not once per build."""
    st = path.stat()
    key = _stamp(path, st)
    if key in _DIGESTS:  # this process has hashed these bytes (a build asks for a file many times)
        return _DIGESTS[key]
    memo = None
    if cache is not None and st.st_size >= MEMO_MIN_BYTES:
        memo = cache / "digest" / f"{hashlib.sha256(key.encode()).hexdigest()}.pkl"
        found = read(memo)
        if isinstance(found, str):
            _DIGESTS[key] = found
            return found
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if memo is not None:
        write(memo, digest)
    _DIGESTS[key] = digest
    return digest


def tree_files(folder: Path) -> list[Path]:
    """Every file under ``folder``, found by walking it, in a fixed order: all but what Python and
    editors leave beside the sources (``__pycache__``, ``*.pyc``, hidden names such as an editor's
    swap file), which no code reads."""
    out = []
    for where, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        out += [Path(where) / f for f in sorted(files) if not f.startswith(".") and not f.endswith((".pyc", ".pyo"))]
    return out


def tree_digest(folder: Path, cache: Path | None = None) -> str:
    """sha256 of every file under ``folder`` (:func:`tree_files`): each one's path below it and its
    bytes, so an added, removed, renamed or edited file changes it. With ``cache``, each file's
    digest is remembered by its :func:`stamp` (:func:`file_digest`): a results folder."""
    h = hashlib.sha256()
    for path in tree_files(folder):
        rel = path.relative_to(folder).as_posix()
        data = file_digest(path, cache) if cache is not None else hashlib.sha256(path.read_bytes()).hexdigest()
        h.update(f"{rel}\0{data}\0".encode())
    return h.hexdigest()


def installed() -> str:
    """Every distribution installed where this process imports from, by name and version (their
    ``*.dist-info`` folders: listed, not read), and Python's version: jinja2, numpy, pandas,
    Markdown, mkdocs, Material, pygments and whatever else renders, with no list to keep."""
    found = sorted(name for entry in sys.path if os.path.isdir(entry) for name in os.listdir(entry)
                   if name.endswith((".dist-info", ".egg-info")))
    return "\n".join([sys.version, *found])


def code_folders() -> list[Path]:
    """The packages whose code makes what the build cache keeps: the publishing side (benchsite,
    whose core layer this module is: every module, template and data file such as ``peaks.csv``,
    in any subpackage) and the harness package it reads results with (``benchkit``: the schema,
    the layout, the archive, the verdict rules)."""
    harness = importlib.util.find_spec("benchkit")  # where it would import from: nothing is imported
    return [Path(__file__).resolve().parents[1], Path(harness.origin).resolve().parent]


@functools.cache
def code_version() -> str:
    """The one code version every entry of the build cache is keyed on, besides its inputs: every
    file of :func:`code_folders`, found by walking them (so a module moved into a subpackage, a new
    template or a new data file is in it without being listed), and :func:`installed`. Any edit
    anywhere in those packages makes every entry afresh: a warm build after it equals a cold one
    (``tests/test_code_version.py``). Computed once per process, from the code it runs."""
    h = hashlib.sha256(installed().encode())
    for folder in code_folders():
        h.update(f"{folder.name}\0{tree_digest(folder)}\0".encode())
    return h.hexdigest()


_PROJECT: list[Path] = [REPO]  # the folder whose .cache/bench is the default: the site being built


def use_project(root: Path) -> None:
    """Keep the build cache under ``root/.cache/bench`` (the folder of the mkdocs.yml being built:
    the plugins call this first), not beside wherever the package is installed."""
    _PROJECT[0] = Path(root)


def cache_dir() -> Path:
    """``BENCH_CACHE`` (tests, the scaling benchmark), else ``.cache/bench`` in the project being
    built (:func:`use_project`; this checkout until a build says otherwise)."""
    return _cache_dir(os.environ.get("BENCH_CACHE") or "", _PROJECT[0])


@functools.lru_cache(maxsize=8)
def _cache_dir(chosen: str, project: Path) -> Path:  # one Path per setting: a build asks thousands of times
    return Path(chosen or project / ".cache" / "bench")


_TEMP_NAMES = itertools.count()  # this process's temp files: with its pid, a name no other process makes


def store_bytes(path: Path, data: bytes) -> None:
    """``data`` written to ``path`` through a temp file and a rename: two builds at once never
    read half a file. (A cold build writes thousands of entries: the folder is made only when the
    temp file cannot be, and the temp file is named by this process, not drawn by ``tempfile``.)"""
    tmp = path.parent / f".tmp-{os.getpid()}-{next(_TEMP_NAMES)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(tmp, flags, 0o600)
    except FileNotFoundError:  # the folder's first entry
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, flags, 0o600)
    except FileExistsError:  # left by a process of the same id that died mid-write
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        tmp = Path(name)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def entry(kind: str, key: str) -> Path:
    """Where :func:`cached` keeps the value of ``kind`` made from ``key``, under today's code."""
    return cache_dir() / kind / f"{hashlib.sha256((key + code_version()).encode()).hexdigest()}.pkl"


def cached(kind: str, key: str, make: Callable[[], object]) -> object:
    """``make()``, kept under ``.cache/bench/<kind>/`` by ``key`` (a hash of everything it is made
    from) and :func:`code_version`: a warm build reads a session's table and page, never parses them."""
    stored = entry(kind, key)
    found = read(stored)
    if found is not None:
        return found
    value = make()
    write(stored, value)
    return value
