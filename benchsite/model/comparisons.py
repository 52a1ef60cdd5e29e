"""A comparison ``python -m benchkit compare`` made: its results file read as a figure.

``compare`` writes an ordinary results file, ``results/<machine>/<stem>.csv`` (two variants, one
per version of the code, measured interleaved in every run), and beside it the side file
``<stem>.compare.json`` that says what was compared. No figure script has that stem, so without the
side file the CSV is an orphan; with it, the catalog makes the figure from the side file
(:func:`read`): its title, its variants and ratio, a caption made from the facts (the command, the
boundary, the margin), and the recorded source of each version, which the pages show as the code
that produced it. Its results are never stale or current against ``bench_scripts/``: the code they
describe is the recorded source, not a file of this checkout.

The side file's format (``"format": 1``)::

    {"format": 1, "title": "...", "command": "python -m benchkit compare ...",
     "boundary": "completed", "margin": 0.1, "args": "jnp.ones(1_000_000)", "ratio": ["b", "a"],
     "versions": [{"variant": "a", "target": "examples/scale.py:scale_v1", "revision": "",
                   "path": "examples/scale.py", "sha256": "<hex>", "source": "<the file's text>"}, ...]}

``revision`` is empty for a file as it was on disk; ``ratio`` is [candidate, baseline].
A side file that cannot be read, or that does not describe its results file, is an error naming
the side file and a line, shown like any damaged results file.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd

from benchkit import layout
from benchkit.bench import SIDE_FORMAT as JSON_FORMAT
from benchkit.bench import SIDE_NAME
from benchkit.schema import figure_id_for
from benchsite.model.figures import Figure, Recorded, Version
from benchsite.model.load import ResultsError

# results/<machine>/<stem>.compare.json (layout.side_file) and its format, as the command writes them;
# format 1: the first (title, command, boundary, margin, args, ratio, versions)
SIDE, FORMAT = SIDE_NAME, JSON_FORMAT
CHAPTER = "time-your-own-code.md"  # the chapter that teaches the command
CHAPTER_ANCHOR = "compare"  # its section on the command: where a comparison's "in its chapter" links
# What writes a side file: the compare command, or a Bench script (whose functions are the versions).
MADE_BY = ("benchkit compare", "benchkit Bench")
BOUNDARIES = ("dispatch", "completed", "loop")  # what compare can time
LABEL = re.compile(r"[a-z0-9][a-z0-9._-]*")  # a version's label: a slug
VERSION_KEYS = ("variant", "target", "revision", "path", "sha256", "source")


class ComparisonError(ResultsError):
    """A ``.compare.json`` that cannot be read or does not match its results; names file and line."""


def side_file(results: Path, machine: str, stem: str) -> Path:
    return layout.side_file(results, machine, stem, SIDE)


def _line(text: str, key: str) -> int:
    """The line of ``"key":`` in the side file's text (1 when it is not there)."""
    found = re.search(rf'"{re.escape(key)}"\s*:', text)
    return text[:found.start()].count("\n") + 1 if found else 1


def _parse(path: Path) -> tuple[dict, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ComparisonError(f"{path}:1: cannot be read: {err}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ComparisonError(f"{path}:{err.lineno}: not valid JSON: {err.msg} (column {err.colno})") from None
    if not isinstance(data, dict):
        raise ComparisonError(f"{path}:1: a comparison's side file is one JSON object, not {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise ComparisonError(f"{path}:{_line(text, 'format')}: format {data.get('format')!r} is not one this site "
                              f"reads ({FORMAT}); rebuild the site with a newer benchsite, or run the comparison again")
    return data, text


def _text(data: dict, key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ComparisonError(f"{where}: {key!r} must be a string, not {value!r:.60}")
    return value


def _versions(data: dict, text: str, path: Path) -> tuple[Version, ...]:
    where = f"{path}:{_line(text, 'versions')}"
    found = data.get("versions")
    if not isinstance(found, list) or not found or not all(isinstance(v, dict) for v in found):
        raise ComparisonError(f"{where}: 'versions' must be a list of at least one object")
    versions = tuple(Version(**{k: _text(v, k, f"{where}: version {i}") for k in VERSION_KEYS})
                     for i, v in enumerate(found))
    labels = [v.variant for v in versions]
    bad = [label for label in labels if not LABEL.fullmatch(label)]
    if bad or len(set(labels)) != len(labels):
        raise ComparisonError(f"{where}: version labels must be distinct slugs ([a-z0-9][a-z0-9._-]*), "
                              f"not {', '.join(map(repr, bad or labels))}")
    return versions


def _recorded(data: dict, text: str, path: Path) -> Recorded:
    boundary = _text(data, "boundary", f"{path}:{_line(text, 'boundary')}")
    if boundary not in BOUNDARIES:
        raise ComparisonError(f"{path}:{_line(text, 'boundary')}: boundary {boundary!r} is not one of "
                              f"{', '.join(BOUNDARIES)}")
    margin = data.get("margin")
    if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 < margin < 1 or math.isnan(margin):
        raise ComparisonError(f"{path}:{_line(text, 'margin')}: margin must be a fraction between 0 and 1 "
                              f"(0.1 = ±10 %), not {margin!r}")
    made_by = data.get("made_by", MADE_BY[0])
    if made_by not in MADE_BY:
        raise ComparisonError(f"{path}:{_line(text, 'made_by')}: made_by {made_by!r} is not one of "
                              f"{', '.join(MADE_BY)}")
    return Recorded(str(path), _text(data, "command", f"{path}:{_line(text, 'command')}"), boundary,
                    float(margin), _text(data, "args", f"{path}:{_line(text, 'args')}"),
                    _versions(data, text, path), made_by)


def percent(margin: float) -> str:
    """A margin as the pages write it: 0.1 -> "10 %" (a setting the command was given)."""
    return f"{100 * margin:g} %"


def caption(rec: Recorded, ratio: tuple[str, str] | None) -> str:
    """What the figure says, from the recorded facts only (no number measured)."""
    by = {v.variant: v for v in rec.versions}
    named = "; ".join(f"{v.variant} is `{v.target}`" for v in rec.versions)
    args = f", each called with `{rec.args}`," if rec.args else ","
    said = (f"Made by `{rec.made_by}`: {named}{args} interleaved in every run (separate processes) and timed at "
            f"the {rec.boundary} boundary.")
    if ratio is not None:
        said += (f" The ratio is {ratio[0]} / {ratio[1]} (`{by[ratio[0]].target}` over `{by[ratio[1]].target}`), "
                 f"judged run by run by the paired rule; \"the same\" is the equivalence rule's call at "
                 f"±{percent(rec.margin)}.")
    return f"{said} Command: `{rec.command}`"


def read(path: Path, stem: str) -> Figure:
    """The figure a comparison's side file describes, or :class:`ComparisonError` naming the file."""
    data, text = _parse(path)
    title = _text(data, "title", f"{path}:{_line(text, 'title')}")
    rec = _recorded(data, text, path)
    variants = tuple(v.variant for v in rec.versions)
    ratio = data.get("ratio")  # null: no pair to compare (a Bench session of one function)
    if ratio is not None and not (isinstance(ratio, list) and len(ratio) == 2 and all(r in variants for r in ratio)
                                  and ratio[0] != ratio[1]):
        raise ComparisonError(f"{path}:{_line(text, 'ratio')}: 'ratio' must name two of the versions' labels "
                              f"({', '.join(variants)}), candidate first, or be null, not {ratio!r}")
    pair = (str(ratio[0]), str(ratio[1])) if ratio is not None else None
    return Figure(id=figure_id_for(stem), stem=stem, script=path, title=title or stem, caption=caption(rec, pair),
                  chapter=CHAPTER, variants=variants, ratio=pair, code_sections=(), compare=rec)


def unreadable(path: Path, stem: str) -> Figure:
    """A stand-in for a comparison whose side file is damaged: its pages show the error."""
    return Figure(id=figure_id_for(stem), stem=stem, script=path, title=stem, caption="", chapter=CHAPTER,
                  variants=(), code_sections=(), compare=Recorded(str(path), "", "", 0.0, "", ()))


def problem(frame: pd.DataFrame, fig: Figure, path: Path) -> str | None:
    """Why a machine's results do not match the side file beside them (None when they do)."""
    rec = fig.compare
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    measured = sorted({str(v) for v in frame["variant"].tolist()})
    if measured != sorted(fig.variants):
        return (f"{path}:{_line(text, 'versions')}: its versions ({', '.join(fig.variants)}) are not the variants "
                f"of its results file {path.name.removesuffix('.' + SIDE)}.csv ({', '.join(measured)})")
    bounds = sorted({str(v) for v in frame["boundary"].tolist()})
    if rec is not None and bounds != [rec.boundary]:
        return (f"{path}:{_line(text, 'boundary')}: boundary {rec.boundary!r}, but its results file was timed at "
                f"{', '.join(bounds)}")
    return None
