"""Whether results still describe today's code: the one stale rule.

A figure's numbers depend on its script and on the harness; each results row
records the sha256 of both as they were when it was measured.

One exception, declared and tested: an edit to a script's prose (its FIGURE caption, its words
and the claims in them, or its module docstring) changes the file's hash but not what it
measures. ``caption_edits.csv`` lists such edits, one row each (the script, the sha256 its
results recorded, the sha256 after the edit, and why); results recorded with the first count as
current for the second. ``tests/test_caption_edits.py`` checks every row against git history:
the two versions of the script differ in the caption and the module docstring alone, and neither
reads ``__doc__``.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from benchkit.provenance import sha256_file

CAPTION_EDITS = Path(__file__).with_name("caption_edits.csv")


@dataclass(frozen=True)
class CodeHash:
    script: str
    harness: str
    # Earlier hashes of the script, its prose edited since: sorted, so that the repr the build's cache
    # keys hold is the same in every process (a set's order follows the process's string hashing).
    script_aliases: tuple[str, ...] = ()


def caption_aliases(script_rel: str, current: str, ledger: Path = CAPTION_EDITS) -> tuple[str, ...]:
    """The script hashes that differ from ``current`` only by prose edits (followed back through
    several edits), from the ledger."""
    with ledger.open(newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["script"] == script_rel]
    found, frontier = set(), {current}
    while frontier:
        older = {r["measured_sha256"] for r in rows if r["current_sha256"] in frontier} - found
        found |= older
        frontier = older
    return tuple(sorted(found))


def code_hash(script: Path, script_rel: str, harness: str, has_script: bool = True) -> CodeHash:
    """Today's hashes of what a figure's numbers depend on: its script (with the hashes its caption
    edits replaced, :func:`caption_aliases`) and the harness (``harness``, hashed once per build by
    the caller). A comparison has no script here (``has_script`` false): its code is in the figure."""
    if not has_script:
        return CodeHash("", harness)
    sha = sha256_file(script)
    return CodeHash(sha, harness, caption_aliases(script_rel, sha))


def stale_reason(frame: pd.DataFrame, current: CodeHash) -> str:
    """Why these results no longer describe today's code ("" when they do). A file
    from before the harness was hashed (schema 1: ``unknown``) counts as stale."""
    if set(frame["harness_sha256"].tolist()) == {"unknown"}:  # a list's set: quicker than the Series'
        return "these results are in results format 1, which recorded no harness hash"
    changed = [what for what, col, now in (("script", "script_sha256", {current.script, *current.script_aliases}),
                                           ("harness", "harness_sha256", {current.harness}))
               if not set(frame[col].tolist()) <= now]
    return (" and ".join(f"the {w}" for w in changed) + " changed after these results were recorded"
            if changed else "")
