"""Every claim of the site checked against one machine's results, outside a site build:
``make claims [RESULTS=folder] [MACHINE=label]``, and the end of ``make bench``.

A claim (``benchsite/views/claims.py``) is checked by the build on the machine the prose quotes; this
module runs the same evaluation for any results folder and machine, without building a page, and
adds what a build does not show: how many runs bear the claim out on their own
(:func:`claims.support`). That is how a claim is audited before it is written: one that holds in
only some runs on some machine is a sentence about noise, and is rewritten.

    python -m benchsite.pages.claimcheck [--results DIR] [--machine LABEL] [--failed] [--strict]

Exit status: 0, or 1 with ``--strict`` when a claim does not hold; 2 when the results or a claim
cannot be read (the message names the file and line).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from benchsite import REPO
from benchsite.model.catalog import Catalog, Unavailable, local_machine, results_dir
from benchsite.model.claim_syntax import ClaimError, split
from benchsite.model.figures import CLAIM, Figure
from benchsite.pages.docsread import Docs
from benchsite.views.claims import evaluate, plain, readable, support

DOCS = REPO / "docs"


@dataclass(frozen=True)
class Found:
    """One claim as written: where, its figure, its condition and its words."""

    where: str  # page:line, or script:line for a caption
    spec: str
    words: str


@dataclass(frozen=True)
class Checked:
    found: Found
    fig_id: str
    machine: str
    state: str  # "true", "false", "expected" or "unavailable"
    measured: str
    support: tuple[int, int] | None  # runs that bear it out alone, of how many


def found_claims(docs: Path | Docs | None, figures: Iterable[Figure]) -> Iterator[Found]:
    """Every claim in the chapters (page:line) and in the captions of ``figures`` (script:line: the
    figure scripts' figures, as the catalog read them, :func:`scripts`); a build hands in its page's
    ``Docs``, which records the chapters read."""
    docs = Docs(docs) if isinstance(docs, Path) else docs
    for page in docs.names("*.md") if docs else ():
        for number, spec, words in docs.view(page, claims_in):
            yield Found(f"{docs.name}/{page}:{number}", spec, words)
    for fig in sorted(figures, key=lambda f: f.id):
        for match in CLAIM.finditer(fig.caption_src):
            yield Found(f"{fig.script_rel}:{fig.line}", match.group(1), plain(match.group(2)))


def scripts(cat: Catalog) -> list[Figure]:
    """The figure scripts' figures of a catalog (not the comparisons its results folder holds)."""
    return [fig for fig in cat.figures.values() if fig.compare is None]


def claims_in(text: str | None) -> tuple[tuple[int, str, str], ...]:
    """A page's claims outside fenced code: (line, claim, its words)."""
    found, in_fence = [], False
    for number, line in enumerate((text or "").split("\n"), 1):
        if re.match(r"\s*(```|~~~)", line):
            in_fence = not in_fence
        for match in () if in_fence else CLAIM.finditer(line):
            found.append((number, match.group(1), plain(match.group(2))))
    return tuple(found)


def declared_machine(config: Path = REPO / "mkdocs.yml") -> str | None:
    """``extra.bench.machine`` of mkdocs.yml: the site's reference machine."""
    class Loader(yaml.SafeLoader):
        pass
    Loader.add_multi_constructor("", lambda loader, tag, node: None)  # !ENV and the like
    data = yaml.load(config.read_text(encoding="utf-8"), Loader=Loader) or {}
    return ((data.get("extra") or {}).get("bench") or {}).get("machine")


def check(cat: Catalog, machine: str | None, claims: Sequence[Found]) -> list[Checked]:
    """Each claim on ``machine`` (default: the machine the prose would quote for its figure)."""
    out = []
    for found in claims:
        try:
            fig_id, on, expr = split(found.spec)
        except ClaimError as err:
            raise ClaimError(f"{found.where}: {err}") from None
        if fig_id not in cat.figures:
            raise ClaimError(f"{found.where}: no figure script defines {fig_id}")
        try:
            on_machine = machine or cat.prose_machine(fig_id)
            tab, reference = cat.table(fig_id, on_machine), cat.reference_table(fig_id, on_machine)
        except Unavailable as err:
            out.append(Checked(found, fig_id, machine or "-", "unavailable", str(err), None))
            continue
        try:
            outcome = evaluate(tab, expr, on)
            runs = support(tab, expr) if outcome.state != "expected" else None
        except ClaimError as err:
            if (machine is not None and machine != cat.prose_machine(fig_id)) or readable(reference, expr, on):
                # Another machine's folder may lack a cell the reference has (an older session, a
                # figure that changed since): the claim cannot be read there.
                out.append(Checked(found, fig_id, on_machine, "unavailable", str(err), None))
                continue
            raise ClaimError(f"{found.where}: bench:claim {found.spec.strip()}: {err}") from None
        out.append(Checked(found, fig_id, on_machine, outcome.state, outcome.measured, runs))
    return out


def report(checked: Sequence[Checked], failed_only: bool = False) -> str:
    """A Markdown table: where, figure, held or not, runs that bear it out alone, the values read."""
    rows = [c for c in checked if not failed_only or c.state in ("false", "unavailable")]
    lines = ["| where | figure | on | held | runs alone | claim | measured |", "|---|---|---|---|---|---|---|"]
    for c in rows:
        runs = f"{c.support[0]} of {c.support[1]}" if c.support else "n/a"
        held = {"true": "yes", "false": "**no**", "expected": "not checked (platform)"}.get(c.state, c.state)
        cells = [c.found.where, c.fig_id, c.machine, held, runs, c.found.words[:90], c.measured]
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    return "\n".join(lines)


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="make claims", description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", help="results folder (default: results/, or BENCH_RESULTS)")
    parser.add_argument("--machine", help="machine label (default: whose numbers the prose quotes)")
    parser.add_argument("--failed", action="store_true", help="list only the claims that did not hold")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a claim does not hold")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    results = results_dir(args.results)
    if not results.is_dir():
        print(f"make claims: no results folder {results}", file=sys.stderr)
        return 2
    declared = declared_machine()
    cat = Catalog.build(results, preferred=local_machine(results) or declared, declared=declared)
    if args.machine and args.machine not in cat.all_machines():
        print(f"make claims: no machine {args.machine} in {results} "
              f"(there: {', '.join(cat.all_machines()) or 'none'})", file=sys.stderr)
        return 2
    try:
        checked = check(cat, args.machine, list(found_claims(DOCS, scripts(cat))))
    except ClaimError as err:
        print(f"make claims: {err}", file=sys.stderr)
        return 2
    bad = [c for c in checked if c.state in ("false", "unavailable")]
    machines = sorted({c.machine for c in checked if c.machine != "-"})
    print(f"{len(checked)} claims checked against {results} on {', '.join(machines) or 'no machine'} "
          f"(reference machine: {declared or 'none declared'}): {len(bad)} did not hold or could not be checked.")
    if checked and (bad or not args.failed):
        print(report(checked, failed_only=args.failed))
    return 1 if args.strict and bad else 0


if __name__ == "__main__":
    sys.exit(main())
