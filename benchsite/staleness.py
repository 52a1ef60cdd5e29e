"""Whether results still describe today's code: the one stale rule.

A figure's numbers depend on its script and on the harness; each results row
records the sha256 of both as they were when it was measured.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class CodeHash:
    script: str
    harness: str


def stale_reason(frame: pd.DataFrame, current: CodeHash) -> str:
    """Why these results no longer describe today's code ("" when they do). A file
    from before the harness was hashed (schema 1: ``unknown``) counts as stale."""
    if set(frame["harness_sha256"]) == {"unknown"}:
        return "these results are in results format 1, which recorded no harness hash"
    changed = [what for what, col, now in (("script", "script_sha256", current.script),
                                           ("harness", "harness_sha256", current.harness))
               if set(frame[col]) != {now}]
    return (" and ".join(f"the {w}" for w in changed) + " changed after these results were recorded"
            if changed else "")
