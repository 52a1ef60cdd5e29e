"""The previous build's site, removed while the next build runs.

Before it builds, mkdocs empties the site folder (``mkdocs.utils.clean_directory``: every entry
but the hidden ones, one file at a time). A site of a hundred machine folders is thousands of
folders, and removing them (``rm -rf``: 1.8 s on a two-core machine) came before any page was
made. :func:`set_aside` moves those entries (one rename each, on the same file system) into one
hidden folder inside the site folder, which mkdocs then leaves alone, and starts a separate
process that removes it while the build goes on; :func:`finish` waits for that process and
returns what could not be removed, which the bench plugin names in a warning (a deploy would publish
it). Hidden entries (a ``.git`` of a gh-pages checkout) are left where they are, as mkdocs
leaves them.

The folders a build fills with thousands of small files (the /bench pages and the results
downloads) are not removed but taken back: :func:`set_aside` moves them into a second hidden
folder that the removal leaves alone, and :func:`take_back` puts them back once the build knows
every file it will write, removing every file and folder that is not to be rewritten. A writer
then compares (:func:`write_if_changed`) and leaves a file that already holds its bytes. On this
machine, creating a folder and a file cost about a millisecond together, where reading a
file back costs a tenth of that: a warm rebuild of a hundred machine folders made 5,500 of each.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

PREFIX = ".old-site-being-removed-"  # hidden: mkdocs' clean_directory skips it
_REMOVE = "import shutil, sys\nfor path in sys.argv[1:]:\n    shutil.rmtree(path, ignore_errors=True)\n"


@dataclass
class Removal:
    folders: list[Path]  # what is being removed
    process: subprocess.Popen | None  # None: nothing started (finish removes them itself)
    kept: Path | None = None  # the entries set aside to be taken back (take_back), not removed


def set_aside(site_dir: Path, keep: Collection[str] = ()) -> Removal | None:
    """The site folder's entries moved aside and being removed (with any left by a build that was
    stopped before it finished), or None when there is nothing to remove. From the first entry that
    cannot be moved on, the entries stay where they are, for mkdocs to remove as it always does.
    The folders named in ``keep`` go into a hidden folder of their own, for :func:`take_back` (a
    link or a file of that name is removed with the rest: a link could lead out of the site)."""
    try:
        entries = sorted(site_dir.iterdir())
    except OSError:  # no site folder yet (or not one we can list: mkdocs will say so)
        return None
    folders = [p for p in entries if p.name.startswith(PREFIX) and p.is_dir()]
    visible = [p for p in entries if not p.name.startswith(".")]
    kept = None
    keep = {p.name for p in visible if p.name in keep and p.is_dir() and not p.is_symlink()}
    if visible:
        try:
            trash = Path(tempfile.mkdtemp(prefix=PREFIX, dir=site_dir))
        except OSError:
            trash = None
        if trash is not None:
            folders.append(trash)
            if keep:
                try:
                    kept = Path(tempfile.mkdtemp(prefix=PREFIX, dir=site_dir))
                except OSError:
                    kept = None  # removed with the rest, and written again
            for path in visible:
                try:
                    os.rename(path, (kept if kept is not None and path.name in keep else trash) / path.name)
                except OSError:
                    break  # the rest is mkdocs' to remove
    if not folders and kept is None:
        return None
    process = None
    if sys.executable:  # (an embedded interpreter may not know its own program)
        try:
            process = subprocess.Popen([sys.executable, "-c", _REMOVE, *map(str, folders)], stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, ValueError):
            process = None
    return Removal(folders, process, kept)


def take_back(removal: Removal | None, site_dir: Path, reuse: Collection[str]) -> list[str]:
    """The entries set aside to keep put back into ``site_dir``, holding only the files at the
    paths in ``reuse`` (absolute, as ``os.path.normpath`` writes them) and the folders above them:
    every other file and folder is removed now, before the build writes anything, so the site
    ends as a build into an empty folder would leave it. Whoever writes a path in ``reuse`` must
    compare before writing (:func:`write_if_changed`); every other file is written afresh. An
    entry whose name the build has taken meanwhile stays aside, and :func:`finish` removes it.
    Returns the entries put back that could not be cleared (a file that cannot be removed): they
    may hold the last build's files, and the caller says so."""
    if removal is None or removal.kept is None:
        return []
    reuse = set(reuse)
    folders: set[str] = set()  # every folder above a file to reuse
    for path in reuse:
        folder = os.path.dirname(path)
        while folder not in folders:
            folders.add(folder)
            folder = os.path.dirname(folder)
    try:
        entries = sorted(os.listdir(removal.kept))
    except OSError:
        return []
    left = []
    for entry in entries:
        target = os.path.normpath(os.path.join(site_dir, entry))
        if os.path.lexists(target):
            continue
        try:
            os.rename(os.path.join(removal.kept, entry), target)
        except OSError:
            continue  # left aside: removed with the rest, and written afresh
        try:
            _prune(target, reuse, folders)
        except OSError:
            _remove(target)  # what could not be sorted is not kept
            if os.path.lexists(target):
                left.append(target)
    return left


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except OSError:
            pass


def _prune(top: str, reuse: set[str], folders: set[str]) -> None:
    """``top`` (a real folder) holding only the files in ``reuse`` and the ``folders`` above them,
    each folder with the mode a new one gets (``os.makedirs``: 0o777 less the umask), as a build
    into an empty folder would leave them. Links are removed, never followed."""
    if top not in folders:
        shutil.rmtree(top)
        return
    mode = 0o777 & ~_umask()
    stack = [top]
    while stack:
        folder = stack.pop()
        if stat.S_IMODE(os.lstat(folder).st_mode) != mode:
            os.chmod(folder, mode)
        with os.scandir(folder) as found:
            entries = list(found)
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.path in folders:
                    stack.append(entry.path)
                else:
                    shutil.rmtree(entry.path)
            elif entry.path not in reuse or entry.is_symlink():
                os.unlink(entry.path)


@functools.cache
def _umask() -> int:
    mask = os.umask(0o022)  # the only way to read it is to set it: put back at once
    os.umask(mask)
    return mask


def write_if_changed(content: bytes, path: str) -> bool:
    """``content`` written to ``path`` unless the file there holds exactly those bytes already,
    with the mode a new file gets (0o666 less the umask): then nothing is written (False). A
    changed file is replaced by a new one, never rewritten in place, so a hard link to the old one
    elsewhere keeps the old bytes."""
    there = True
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        fd, there = None, False
    except OSError:
        fd = None  # a link (not followed), or not readable: replaced
    if fd is not None:
        try:
            st = os.fstat(fd)
            same = (stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o666 & ~_umask()
                    and st.st_size == len(content) and _read(fd, len(content)) == content)
        finally:
            os.close(fd)
        if same:
            return False
    if there:
        os.unlink(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(content)
    return True


def _read(fd: int, size: int) -> bytes:
    parts, left = [], size
    while left > 0:
        part = os.read(fd, left)
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def finish(removal: Removal | None) -> list[Path]:
    """Wait for the removal; whatever it left (it could not start, or failed) is removed here, and
    what was set aside to keep and not taken back. Returns the folders still there after that (a
    file that cannot be removed): the caller says so."""
    if removal is None:
        return []
    if removal.process is not None:
        removal.process.wait()
    folders = [*removal.folders, *([removal.kept] if removal.kept is not None else [])]
    for folder in folders:
        if os.path.lexists(folder):
            shutil.rmtree(folder, ignore_errors=True)
    return [folder for folder in folders if os.path.lexists(folder)]
