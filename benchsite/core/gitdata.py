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
import tempfile
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
    return data_history(root, results)[0]


def data_history(root: Path, results: Path) -> tuple[dict[str, str], dict[str, tuple[int, ...]], tuple[str, ...]]:
    """:func:`data_commits`; every path under ``results`` that git's history holds (changed,
    removed or not) -> the commits that changed it, as indices into the third: every commit that
    changed the folder, newest first (``git log``'s order). One ``git log`` and one ``git status``."""
    try:
        folder = results.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return {}, {}, ()
    log = _git(root, "log", "--format=%H", "--name-only", "--", folder)
    status = _git(root, "status", "--porcelain", "--untracked-files=all", "--", folder)
    if log is None or status is None:
        return {}, {}, ()
    changed = {line[3:].strip().strip('"') for line in status.splitlines() if len(line) > 3}
    history: dict[str, list[int]] = {}
    commits: list[str] = []
    for line in log.splitlines():
        if SHA.fullmatch(line):
            commits.append(line)
        elif line and commits:
            history.setdefault(line, []).append(len(commits) - 1)
    last = {path: commits[at[0]] for path, at in history.items() if path not in changed and (root / path).is_file()}
    return last, {path: tuple(at) for path, at in history.items()}, tuple(commits)


def holding(root: Path, asked: list[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
    """Which of ``asked`` (commit, path, text) hold the text in that path at that commit (a results
    file, a session id): one ``git cat-file --batch`` for them all."""
    if not asked:
        return set()
    with tempfile.TemporaryFile() as request:  # stdin a file, stdout the only pipe: read in one go
        request.write("".join(f"{c}:{path}\n" for c, path, _ in asked).encode())
        request.seek(0)
        try:
            with subprocess.Popen(["git", "cat-file", "--batch"], cwd=root, stdin=request, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL) as proc:
                out = proc.stdout.read()  # one read into one buffer (communicate polls 32 KB at a time)
        except OSError:
            return set()
    at, found = 0, set()
    for item in asked:
        end = out.find(b"\n", at)
        if end < 0:
            break
        header = out[at:end].split()
        if len(header) != 3 or header[1] != b"blob":  # "<object> missing"
            at = end + 1
            continue
        at = end + 1 + int(header[2]) + 1
        if out.find(item[2].encode(), end + 1, at - 1) >= 0:
            found.add(item)
    return found
