"""Every figure's results on every machine, loaded once per site build."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from harness.provenance import harness_sha256, sha256_file
from harness.schema import figure_id_for

from . import REPO
from .figures import Figure, all_figures
from .load import ResultFile, ResultsError, discover, load


@dataclass
class Catalog:
    results: Path
    figures: dict[str, Figure]
    frames: dict[tuple[str, str], pd.DataFrame] = field(default_factory=dict)
    errors: dict[tuple[str, str], str] = field(default_factory=dict)
    orphans: list[ResultFile] = field(default_factory=list)
    preferred: str | None = None
    _sha: dict = field(default_factory=dict)

    @classmethod
    def build(cls, results: Path, figures: dict[str, Figure] | None = None,
              preferred: str | None = None) -> Catalog:
        cat = cls(results, figures if figures is not None else all_figures(), preferred=preferred)
        for file in discover(results):
            fig_id = figure_id_for(file.stem)
            if fig_id not in cat.figures:
                cat.orphans.append(file)
                continue
            try:
                cat.frames[(fig_id, file.machine)] = load(file)
            except ResultsError as err:
                cat.errors[(fig_id, file.machine)] = str(err)
        return cat

    def machines(self, fig_id: str) -> list[str]:
        """Machines with results (good or bad) for a figure; the preferred one first."""
        found = {m for f, m in (*self.frames, *self.errors) if f == fig_id}
        return sorted(found, key=lambda m: (m != self.preferred, m))

    def all_machines(self) -> list[str]:
        found = {m for _, m in (*self.frames, *self.errors)}
        return sorted(found, key=lambda m: (m != self.preferred, m))

    def prose_machine(self, fig_id: str) -> str:
        """Whose numbers the prose quotes: the preferred machine if it has this
        figure, else the first machine that does."""
        good = [m for m in self.machines(fig_id) if (fig_id, m) in self.frames]
        if not good:
            raise ResultsError(f"{fig_id}: no valid results in {self.results} on any machine")
        return good[0]

    def prose_machine_or_none(self, fig_id: str) -> str | None:
        good = [m for m in self.machines(fig_id) if (fig_id, m) in self.frames]
        return good[0] if good else None

    def current_sha(self, fig_id: str) -> CodeHash:
        """Today's hashes of what a figure's numbers depend on: its script and the harness."""
        if fig_id not in self._sha:
            self._sha[fig_id] = CodeHash(sha256_file(self.figures[fig_id].script), self.harness_sha)
        return self._sha[fig_id]

    @property
    def harness_sha(self) -> str:
        if "" not in self._sha:
            self._sha[""] = harness_sha256(REPO / "bench_scripts" / "harness")
        return self._sha[""]

    def stale(self) -> list[tuple[str, str]]:
        """(figure, machine) pairs measured with another script or harness than today's."""
        return sorted(key for key, frame in self.frames.items() if stale_reason(frame, self.current_sha(key[0])))


@dataclass(frozen=True)
class CodeHash:
    script: str
    harness: str


def stale_reason(frame: pd.DataFrame, current: CodeHash) -> str:
    """Why these results no longer describe today's code ("" when they do). A file
    from before the harness was hashed (schema 1: ``unknown``) counts as stale."""
    changed = [what for what, col, now in (("script", "script_sha256", current.script),
                                           ("harness", "harness_sha256", current.harness))
               if set(frame[col]) != {now}]
    return " and ".join(f"the {w}" for w in changed) + (" changed since" if changed else "")


def preferred_machine(results: Path, configured: str | None = None) -> str | None:
    """``BENCH_MACHINE``, else the machine the last local ``make bench`` measured,
    else the site's configured default."""
    if os.environ.get("BENCH_MACHINE"):
        return os.environ["BENCH_MACHINE"]
    last = results.resolve().parent / ".bench" / "last_machine"
    if last.is_file() and (results / last.read_text().strip()).is_dir():
        return last.read_text().strip()
    return configured


def results_dir(configured: str | None = None) -> Path:
    """``BENCH_RESULTS`` (a scratch folder), else the configured one, else results/."""
    chosen = os.environ.get("BENCH_RESULTS") or configured or "results"
    path = Path(chosen)
    return path if path.is_absolute() else REPO / path
