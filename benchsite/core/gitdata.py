"""Which commit holds a results file as it is: the link a cite block gives to the data at its commit.

A results row records the commit of the code that measured it (``git_commit``), and the file is
committed after it is measured, so that commit holds the code, not the data. The commit to link
is the last one that changed the file, and only while the file in the checkout is that commit's:
a file with uncommitted changes (a reader's own ``make bench``) or outside git has none. Two git
calls per build, whatever the number of files (``git log --name-only`` over ``results/``, and
``git status`` of it); no git, or a checkout without that history, gives no links.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

SHA = re.compile(r"[0-9a-f]{40}")


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def data_commits(root: Path, results: Path) -> dict[str, str]:
    """Path (relative to ``root``, posix) -> the last commit that changed it, for every file under
    ``results`` that git tracks unchanged; {} outside a git checkout or for a folder outside it."""
    try:
        folder = results.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return {}
    log = _git(root, "log", "--format=%H", "--name-only", "--", folder)
    status = _git(root, "status", "--porcelain", "--untracked-files=all", "--", folder)
    if log is None or status is None:
        return {}
    changed = {line[3:].strip().strip('"') for line in status.splitlines() if len(line) > 3}
    out: dict[str, str] = {}
    commit = None
    for line in log.splitlines():
        if SHA.fullmatch(line):
            commit = line
        elif line and commit and line not in out:
            out[line] = commit
    return {path: sha for path, sha in out.items() if path not in changed and (root / path).is_file()}
