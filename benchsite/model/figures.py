"""Figure metadata, read from each script's ``FIGURE`` literal without importing it
(importing would import jax; the site build never measures)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, fields
from pathlib import Path

from benchkit.layout import figure_scripts
from benchkit.schema import figure_id_for
from benchsite import BENCH_DIR
from benchsite.model import claim_syntax
from benchsite.model.metrics import METRICS

REQUIRED_KEYS = ("title", "caption", "chapter", "variants")
# A checked claim (benchsite/views/claims.py): <!-- bench:claim fig-id CONDITION -->words<!-- /bench:claim -->
CLAIM = re.compile(r"<!--\s*bench:claim\s(.*?)-->(.*?)<!--\s*/bench:claim\s*-->")
HEADLINE_STATS = ("median", "ratio")


class FigureError(ValueError):
    """A figure script whose metadata cannot be read; the message names file and line."""


@dataclass(frozen=True)
class Version:
    """One version of the code a comparison measured, as recorded when it ran."""

    variant: str  # its label in the results file
    target: str  # what the command was given: ``[revision:]path:function``
    revision: str  # the git revision it was read at ("" for the file as it was on disk)
    path: str  # the file, relative to the repository it was run in
    sha256: str  # of that file's text
    source: str  # the whole file's text


@dataclass(frozen=True)
class Recorded:
    """What a comparison's side file says beyond the figure's fields."""

    file: str  # the side file this was read from
    command: str
    boundary: str
    margin: float  # the equivalence verdict's margin, a fraction
    args: str
    versions: tuple[Version, ...]
    made_by: str = "benchkit compare"  # what wrote it: the command, or a Bench script ("benchkit Bench")

    def measured(self) -> tuple:
        """What decides the numbers: two side files that agree on it describe one comparison."""
        return (self.boundary, self.margin, self.args, tuple((v.variant, v.sha256) for v in self.versions))


@dataclass(frozen=True)
class Figure:
    id: str
    stem: str
    script: Path
    title: str
    caption: str  # plain text: any claim reduced to its words (what /bench pages and cite blocks show)
    chapter: str
    variants: tuple[str, ...]
    group_by: tuple[str, ...] = ()
    ratio: tuple[str, str] | None = None
    # False when the ratio is a part over its whole (a gap's share of a step): shown, never
    # given a verdict, since the part is smaller than the whole by construction.
    ratio_verdict: bool = True
    code_sections: tuple[str, ...] = ("measure",)
    # The one number the /bench index quotes: (key, value) pairs of ``stat``
    # (median | ratio), ``variant`` and group_by params; empty = the default choice.
    headline: tuple[tuple[str, str], ...] = ()
    caption_src: str = ""  # the caption as written, claims included (chapter pages check them)
    line: int = 1  # the line of ``FIGURE =`` in the script, for messages
    extra: dict = field(default_factory=dict)
    # A comparison ``benchkit compare`` made (benchsite/model/comparisons.py): no script in bench_scripts/,
    # its code the recorded source of each version, never stale against this checkout.
    compare: Recorded | None = None

    def __repr__(self) -> str:
        """Every field, the script named as its project names it (``script_rel``), not where the
        project lies: cache keys hold this, and a copy of the project elsewhere (a test's, another
        checkout) then finds the entries the original made. The script's content is in the keys
        through its hash (``Catalog.current_sha``), as after an edit in place."""
        shown = (f"{f.name}={self.script_rel if f.name == 'script' else getattr(self, f.name)!r}"
                 for f in fields(self) if f.repr)
        return f"{type(self).__name__}({', '.join(shown)})"

    @property
    def script_rel(self) -> str:
        """``bench_scripts/<stem>.py``: the path snippets include and the cite block shows,
        from the root of whichever checkout holds the script."""
        in_bench = self.script.parent.name == BENCH_DIR.name
        return f"{BENCH_DIR.name}/{self.script.name}" if in_bench else self.script.name


def _figure_literal(script: Path) -> tuple[dict, int]:
    tree = ast.parse(script.read_text(encoding="utf-8"), filename=str(script))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FIGURE" for t in node.targets):
            try:
                return ast.literal_eval(node.value), node.lineno
            except ValueError:
                raise FigureError(f"{script}:{node.lineno}: FIGURE must be a literal dict") from None
    raise FigureError(f"{script}:1: no top-level FIGURE = {{...}} found")


def _headline(meta: dict, where: str) -> tuple[tuple[str, str], ...]:
    """The optional ``"headline": {"stat": "ratio", "n": 1024}`` key, checked against the figure."""
    spec = meta.get("headline", {})
    if not isinstance(spec, dict):
        raise FigureError(f"{where}: FIGURE headline must be a dict such as {{'stat': 'ratio', 'n': 1024}}")
    allowed = {"stat", "variant", "a", "b", *meta.get("group_by", ())}
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise FigureError(f"{where}: FIGURE headline has unknown key(s) {', '.join(unknown)} "
                          f"(allowed: {', '.join(sorted(allowed))})")
    if spec.get("stat", "median") not in HEADLINE_STATS:
        raise FigureError(f"{where}: FIGURE headline stat must be one of {', '.join(HEADLINE_STATS)}")
    if ("a" in spec) != ("b" in spec) or (("a" in spec) and spec.get("stat") != "ratio"):
        raise FigureError(f"{where}: FIGURE headline names a ratio of two variants with stat 'ratio', a and b")
    if spec.get("stat") == "ratio" and not (meta.get("ratio") or "a" in spec):
        raise FigureError(f"{where}: FIGURE headline stat 'ratio' needs a FIGURE ratio (or a and b)")
    for key in ("variant", "a", "b"):
        if key in spec and spec[key] not in meta["variants"]:
            raise FigureError(f"{where}: FIGURE headline {key} {spec[key]!r} is not one of its variants")
    return tuple(sorted((str(k), str(v)) for k, v in spec.items()))


def _check_claims(caption: str, where: str) -> None:
    """Every claim in a caption must be readable (whether it holds is the build's question)."""
    if "bench:claim" in CLAIM.sub("", caption):
        raise FigureError(f"{where}: FIGURE caption has a bench:claim without its <!-- /bench:claim -->")
    for spec, _ in CLAIM.findall(caption):
        try:
            claim_syntax.split(spec)
        except ValueError as err:
            raise FigureError(f"{where}: FIGURE caption: {err}") from None


def read_figure(script: Path) -> Figure:
    meta, line = _figure_literal(script)
    missing = [k for k in REQUIRED_KEYS if k not in meta]
    if missing:
        raise FigureError(f"{script}:{line}: FIGURE lacks {', '.join(missing)}")
    ratio = meta.get("ratio")
    if ratio is not None and (len(ratio) != 2 or any(r not in meta["variants"] for r in ratio)):
        raise FigureError(f"{script}:{line}: FIGURE ratio must name two of its variants")
    unknown = [m for m in meta.get("metrics", ()) if m not in METRICS]
    if unknown:
        raise FigureError(f"{script}:{line}: FIGURE metrics {unknown} unknown (known: {', '.join(METRICS)})")
    headline = _headline(meta, f"{script}:{line}")
    known = set(Figure.__dataclass_fields__) - {"id", "stem", "script", "extra", "line"}
    _check_claims(meta["caption"], f"{script}:{line}")
    return Figure(
        id=figure_id_for(script.stem), stem=script.stem, script=script,
        title=meta["title"], caption=CLAIM.sub(r"\2", meta["caption"]), chapter=meta["chapter"],
        variants=tuple(meta["variants"]), group_by=tuple(meta.get("group_by", ())),
        ratio=tuple(ratio) if ratio else None, ratio_verdict=bool(meta.get("ratio_verdict", True)),
        code_sections=tuple(meta.get("code_sections", ("measure",))),
        headline=headline, caption_src=meta["caption"], line=line,
        extra={k: v for k, v in meta.items() if k not in known},
    )


def all_figures(bench_dir: Path = BENCH_DIR) -> dict[str, Figure]:
    """Every figure script's metadata, by figure id."""
    return {f.id: f for f in map(read_figure, figure_scripts(bench_dir))}
