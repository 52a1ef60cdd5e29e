"""What a :class:`~benchkit.Bench` session or ``python -m benchkit compare`` prints: a short
Markdown block to paste into a pull request, computed from the rows of the results file it
wrote (so the block and the CSV cannot disagree).

Per function: the median of its run medians, the range of the run medians, the compiles
counted inside its timed windows. Per function after the first (the baseline): the median
of the per-run ratios to the baseline, their range, the paired verdict and the equivalence
verdict at the caller's margin (:mod:`benchkit.verdicts`, the rules the site uses).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import verdicts


def seconds(t: float) -> str:
    """A duration with three significant digits in a unit that fits: 812 ns, 4.31 µs, 12.0 ms, 1.52 s."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(t) >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


@dataclass
class Line:
    """One function (variant) of the session."""

    variant: str
    boundary: str
    runs: dict[int, float]  # run -> median time_s of its samples
    samples: int
    compiles: int  # inside timed windows, every sample of every run

    @property
    def median(self) -> float:
        return statistics.median(self.runs.values())


@dataclass
class Comparison:
    """A function against the baseline, paired by run."""

    variant: str
    baseline: str
    ratios: list[float]  # per run: variant / baseline
    verdict: verdicts.Verdict
    same: verdicts.Equivalence

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    def direction(self) -> str:
        """The verdict as a sentence about the two functions."""
        if not self.verdict.is_result:
            return f"{verdicts.NOT_YET} ({self.verdict.reason})"
        word = "slower" if self.verdict.ratio > 1 else "faster"
        return (f"`{self.variant}` {word} than `{self.baseline}`: {verdicts.RESULT} "
                f"({self.verdict.reason})")


@dataclass
class Report:
    name: str
    path: Path
    lines: list[Line]
    comparisons: list[Comparison]
    provenance: dict[str, str]
    runs: int
    margin: float
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_rows(cls, rows: list[dict[str, str]], path: Path, *, margin: float = 0.10,
                  baseline: str | None = None, order: Sequence[str] = ()) -> Report:
        """The report of a results file's rows (as :func:`benchkit.results.read_rows` returns them).
        ``order``: the variants in the order to list them (the order they were added; the rows
        are in the order they were measured, shuffled); any others follow as first recorded.
        ``baseline``: the variant the others are compared with (default: the first listed)."""
        verdicts.check_margin(margin)
        times: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
        compiles: dict[str, int] = defaultdict(int)
        boundary: dict[str, str] = {}
        seen: list[str] = []
        for row in rows:
            v = row["variant"]
            if v not in boundary:
                seen.append(v)
                boundary[v] = row["boundary"]
            times[v][int(row["run"])].append(float(row["time_s"]))
            compiles[v] += int(row["compiles"])
        order = [v for v in [*order, *seen] if v in boundary]
        order = list(dict.fromkeys(order))
        lines = [Line(v, boundary[v], {r: statistics.median(ts) for r, ts in sorted(times[v].items())},
                      sum(len(ts) for ts in times[v].values()), compiles[v]) for v in order]
        whole = [line for line in lines if ":" not in line.variant]  # first-call stages are parts
        base = next((line for line in whole if line.variant == baseline), whole[0] if whole else None)
        comparisons = []
        for line in whole:
            if base is None or line is base or line.boundary != base.boundary:
                continue
            runs = sorted(set(line.runs) & set(base.runs))
            a = [line.runs[r] for r in runs]
            b = [base.runs[r] for r in runs]
            comparisons.append(Comparison(line.variant, base.variant, [x / y for x, y in zip(a, b)],
                                          verdicts.paired_verdict(a, b), verdicts.paired_equivalence(a, b, margin)))
        first = rows[0] if rows else {}
        keys = ("figure_id", "machine", "session_id", "git_commit", "git_dirty", "jax_version", "jaxlib_version",
                "numpy_version", "python_version", "platform", "device_kind", "cpu_model", "script_path",
                "harness_sha256")
        runs = len({row["run"] for row in rows})
        name = path.stem
        return cls(name, path, lines, comparisons, {k: first.get(k, "") for k in keys}, runs, margin)

    def markdown(self) -> str:
        """The block to paste into a review."""
        p = self.provenance
        bounds = sorted({line.boundary for line in self.lines})
        out = [f"#### benchkit: `{self.name}`", "",
               f"Boundary `{', '.join(bounds)}`, {self.runs} runs (each its own process, the functions "
               f"interleaved in every run), on `{p['machine']}`.", "",
               "| function | median per call | run medians (min–max) | compiles in timed windows | samples |",
               "|---|---:|---:|---:|---:|"]
        for line in self.lines:
            lo, hi = min(line.runs.values()), max(line.runs.values())
            out.append(f"| `{line.variant}` | {seconds(line.median)} | {seconds(lo)}–{seconds(hi)} | "
                       f"{line.compiles} | {line.samples} |")
        if self.comparisons:
            margin = verdicts.margin_text(self.margin)
            out += ["", f"| compared | ratio (median of per-run ratios) | per-run ratios (min–max) | "
                        f"paired verdict | equivalence ({margin}) |", "|---|---:|---:|---|---|"]
            for c in self.comparisons:
                same = c.same.text if c.same.low == c.same.low else f"{c.same.text} ({c.same.reason})"
                out.append(f"| `{c.variant}` / `{c.baseline}` | {c.ratio:.3g}× | {min(c.ratios):.3g}–"
                           f"{max(c.ratios):.3g}× | {c.direction()} | {same} |")
        dirty = " with uncommitted changes" if p["git_dirty"].lower() == "true" else ""
        commit = p["git_commit"][:12] if p["git_commit"] not in ("", "unknown") else "no git commit"
        device = p["device_kind"] if p["platform"] != "cpu" else p["cpu_model"]
        out += ["", f"jax {p['jax_version']} (jaxlib {p['jaxlib_version']}), numpy {p['numpy_version']}, "
                    f"Python {p['python_version']}, {p['platform']} ({device}); `{p['script_path']}` at "
                    f"{commit}{dirty}; session `{p['session_id']}`. Every sample: `{self.path}`."]
        if self.comparisons:
            out += ["", "A paired verdict needs enough runs to agree in direction (a sign test) and a difference "
                    "above the noise floor; \"not a result yet\" means these runs cannot tell, not that there is "
                    "no difference. \"The same\" is the equivalence verdict, at the margin shown."]
        return "\n".join(out)
