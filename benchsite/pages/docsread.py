"""The chapters under ``docs/`` as a page's markers read them, each read recorded.

Chapters quote each other: the verdict count counts the verdicts every chapter quotes, a figure's
/bench page takes its chapter's title, the page after ``make bench`` checks every chapter's claims.
Every such read goes through one :class:`Docs` (the pages' ``Context.docs``), which records what
it handed out: a file's sha256 (``-`` for a file that is not there), a listing's names, or what a
named function of a file's text returned (:meth:`Docs.view`: the verdicts a chapter quotes, not
every byte of it, so a new sentence elsewhere in it changes nothing that page showed). The
build keeps a page's expansion with that record and serves it again only while every recorded
value is still what it was (``benchsite/build/plugin.py``, ``_expand``): an edit to one chapter
expands again the pages that read it, and no others, with no list of who reads what kept by hand.
``tests/test_docs_reads.py`` holds the package to it (no module reads under ``docs/`` around it).
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

MISSING = "-"  # the recorded digest of a file that is not there


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Docs:
    """Reads under one ``docs/`` folder; ``reads`` is what was read (key -> digest), in order."""

    def __init__(self, root: Path) -> None:
        self._root = Path(root)
        self.reads: dict[str, str] = {}

    @property
    def name(self) -> str:
        """The folder's name, as messages name a page in it (``docs/verdicts.md:12``)."""
        return self._root.name

    def text(self, rel: str) -> str | None:
        """The file ``rel`` (a path below the folder) as text, or None when there is no such file."""
        return self._record(f"file:{rel}")

    def view(self, rel: str, of: Callable[[str | None], T]) -> T:
        """``of(text)`` of the file ``rel`` (None when there is no such file), recorded by what it
        returned: ``of`` is a function of the text alone, named at a module's top level (``now``
        calls it again), whose result's ``repr`` says all it found."""
        _named(of)
        return self._record(view_key(rel, of))

    def names(self, pattern: str = "*.md") -> list[str]:
        """Every file below the folder whose name matches ``pattern`` (``Path.rglob``), as paths
        below it, in the order of their ``Path`` (``sorted(folder.rglob(pattern))``)."""
        return self._record(f"glob:{pattern}")

    def now(self, key: str, file_digest: Callable[[Path], str] = _sha256) -> str:
        """What recorded ``key`` would record now (not recorded): ``file_digest`` hashes a file's
        bytes (the build passes ``cachefile.file_digest``, which remembers them by the file's stamp)."""
        return self._read(key, file_digest)[0]

    def _record(self, key: str):
        value, result = self._read(key)
        self.reads[key] = value
        return result

    def _read(self, key: str, file_digest: Callable[[Path], str] | None = None) -> tuple[str, object]:
        """(what ``key`` records, what the reader hands out) as the folder is now; with
        ``file_digest``, a file is hashed by it and not read."""
        kind, _, what = key.partition(":")
        if kind == "file":
            path = self._root / what
            if not path.is_file():
                return MISSING, None
            if file_digest is not None:
                return file_digest(path), None
            data = path.read_bytes()
            return hashlib.sha256(data).hexdigest(), _text(data)  # as ``Path.read_text`` gives it
        if kind == "view":
            module, qualname, rel = what.split(":", 2)
            path = self._root / rel
            result = _named_function(module, qualname)(_text(path.read_bytes()) if path.is_file() else None)
            return _value(result), result
        if kind == "glob":
            found = [p.relative_to(self._root).as_posix() for p in sorted(self._root.rglob(what)) if p.is_file()]
            return _listing(found), found
        raise ValueError(f"not a recorded read: {key!r}")


def view_key(rel: str, of: Callable) -> str:
    """How :meth:`Docs.view` records ``of`` of the file ``rel`` (the build names such a read when
    it keys a page by hand)."""
    return f"view:{of.__module__}:{of.__qualname__}:{rel}"


def _text(data: bytes) -> str:
    """A file's bytes as ``Path.read_text`` gives them: UTF-8, universal newlines."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def _value(result: object) -> str:
    return hashlib.sha256(repr(result).encode()).hexdigest()


def _named_function(module: str, qualname: str) -> Callable:
    found: object = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found  # type: ignore[return-value]


def _named(of: Callable) -> None:
    try:
        same = _named_function(of.__module__, of.__qualname__) is of
    except (AttributeError, ImportError):
        same = False
    if not same:
        raise ValueError(f"Docs.view needs a function named at a module's top level, not {of!r}")


def _listing(names: list[str]) -> str:
    return hashlib.sha256("\0".join(names).encode()).hexdigest()
