"""The previous build's site, removed while the next build runs.

Before it builds, mkdocs empties the site folder (``mkdocs.utils.clean_directory``: every entry
but the hidden ones, one file at a time). A site of a hundred machine folders is thousands of
folders, and removing them (``rm -rf``: 1.8 s on a two-core machine) came before any page was
made. :func:`set_aside` moves those entries (one rename each, on the same file system) into one
hidden folder inside the site folder, which mkdocs then leaves alone, and starts a separate
process that removes it while the build goes on; :func:`finish` waits for that process and
returns what could not be removed, which the hook names in a warning (a deploy would publish
it). Hidden entries (a ``.git`` of a gh-pages checkout) are left where they are, as mkdocs
leaves them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

PREFIX = ".old-site-being-removed-"  # hidden: mkdocs' clean_directory skips it
_REMOVE = "import shutil, sys\nfor path in sys.argv[1:]:\n    shutil.rmtree(path, ignore_errors=True)\n"


@dataclass
class Removal:
    folders: list[Path]  # what is being removed
    process: subprocess.Popen | None  # None: nothing started (finish removes them itself)


def set_aside(site_dir: Path) -> Removal | None:
    """The site folder's entries moved aside and being removed (with any left by a build that was
    stopped before it finished), or None when there is nothing to remove. From the first entry that
    cannot be moved on, the entries stay where they are, for mkdocs to remove as it always does."""
    try:
        entries = sorted(site_dir.iterdir())
    except OSError:  # no site folder yet (or not one we can list: mkdocs will say so)
        return None
    folders = [p for p in entries if p.name.startswith(PREFIX) and p.is_dir()]
    visible = [p for p in entries if not p.name.startswith(".")]
    if visible:
        try:
            trash = Path(tempfile.mkdtemp(prefix=PREFIX, dir=site_dir))
        except OSError:
            trash = None
        if trash is not None:
            folders.append(trash)
            for path in visible:
                try:
                    os.rename(path, trash / path.name)
                except OSError:
                    break  # the rest is mkdocs' to remove
    if not folders:
        return None
    process = None
    if sys.executable:  # (an embedded interpreter may not know its own program)
        try:
            process = subprocess.Popen([sys.executable, "-c", _REMOVE, *map(str, folders)], stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, ValueError):
            process = None
    return Removal(folders, process)


def finish(removal: Removal | None) -> list[Path]:
    """Wait for the removal; whatever it left (it could not start, or failed) is removed here.
    Returns the folders still there after that (a file that cannot be removed): the caller says so."""
    if removal is None:
        return []
    if removal.process is not None:
        removal.process.wait()
    for folder in removal.folders:
        if os.path.lexists(folder):
            shutil.rmtree(folder, ignore_errors=True)
    return [folder for folder in removal.folders if os.path.lexists(folder)]
