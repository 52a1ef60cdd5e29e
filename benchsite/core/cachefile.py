"""One cache entry on disk: a pickle written atomically (temp file + rename, so two builds at
once never read half a file) and read back, or ``None`` when it is missing or damaged."""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
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
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
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
    st = path.stat()
    return f"{os.path.abspath(path)}\0{st.st_size}\0{st.st_ino}\0{st.st_mtime_ns}\0{st.st_ctime_ns}"


def file_digest(path: Path, cache: Path | None) -> str:
    """sha256 of a file's bytes, remembered under ``cache`` by its :func:`stamp`. A warm build of
    a hundred machine folders reads gigabytes of results once per change, not once per build."""
    key = stamp(path)
    if key in _DIGESTS:  # this process has hashed these bytes (a build asks for a file many times)
        return _DIGESTS[key]
    memo = None
    if cache is not None:
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


@functools.cache
def code_version() -> str:
    """What every cached table, session, panel and page depends on besides its inputs: every
    file of the benchsite package (modules, templates, data), found by walking it, and the libraries that compute and
    render them (jinja2, numpy, pandas)."""
    import jinja2
    import numpy
    import pandas

    package = Path(__file__).resolve().parents[1]
    files = sorted(f for f in package.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    versions = f"{jinja2.__version__}\0{numpy.__version__}\0{pandas.__version__}".encode()
    return hashlib.sha256(b"".join(f.read_bytes() for f in files) + versions).hexdigest()


def cache_dir() -> Path:
    """``BENCH_CACHE`` (tests, the scaling benchmark), else ``.cache/bench``."""
    return _cache_dir(os.environ.get("BENCH_CACHE") or "")


@functools.lru_cache(maxsize=8)
def _cache_dir(chosen: str) -> Path:  # one Path per setting: a build asks tens of thousands of times
    return Path(chosen or REPO / ".cache" / "bench")


def store_bytes(path: Path, data: bytes) -> None:
    """``data`` written to ``path`` through a temp file and a rename: two builds at once never
    read half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def cached(kind: str, key: str, make: Callable[[], object]) -> object:
    """``make()``, kept under ``.cache/bench/<kind>/`` by ``key`` (a hash of everything it is made
    from) and :func:`code_version`: a warm build reads a session's table and page, never parses them."""
    stored = cache_dir() / kind / f"{hashlib.sha256((key + code_version()).encode()).hexdigest()}.pkl"
    found = read(stored)
    if found is not None:
        return found
    value = make()
    write(stored, value)
    return value
