"""Which machine's executed lesson a page shows, and the notebook the page is rendered from.

``make lesson`` (``docs/lessons/execute.py``) never rewrites ``docs/lessons/*.ipynb``: it writes
the executed notebook into the machine's results, ``results/<machine>/lessons/<name>.ipynb``
(results/README.md, "The executed lesson"). The notebook in ``docs/`` holds the source cells
only. The page shows the outputs of one machine, chosen in this order:

1. the machine the prose quotes (``catalog.preferred_machine``: ``BENCH_MACHINE``, the last local
   ``make bench``, else the site's configured machine);
2. the site's reference machine (``extra.bench.machine``);
3. any other machine, by name,

taking the first copy that is whole (every code cell executed, no error output) and was executed
from the code cells the notebook has now (outputs depend only on the code; a prose edit does not
make a copy stale). The page is then the source's cells with that copy's outputs, plus a note
under the title naming the machine, and saying why it is not the first choice when it is not.
When no copy fits, the page shows the first whole copy as it was executed (its own, older code)
and says so (``stale``: like a stale figure, it fails a ``BENCH_STRICT=1`` build and is logged at
info level otherwise), or the source without outputs when there is no whole copy at all. A damaged
copy, or none at all, is a ``problem`` naming the file, never a traceback: a warning, so that
``mkdocs build --strict`` fails on it and a lenient build (``mkdocs serve``) shows the page with
the note saying what is missing.

JSON only (no nbformat): the plugin imports this at every build, converting or not. What the
conversion joins as text (each cell's source, each output's text and data) is checked here, so a
damaged copy is named and skipped; the rest of the notebook format's schema is checked by nbconvert
when it converts: the plugin names the copy when that fails (``lesson_plugin``), with a warning
as for a damaged copy, and converts the next choice instead (``choose``'s ``refused``).
"""

from __future__ import annotations

import copy
import hashlib
import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

LESSONS_DIR = "lessons"  # results/<machine>/lessons/<notebook>.ipynb
NOTE_CLASS = "lesson-whose"  # the note's class (bench.css), and how a test finds it


def executed_path(results: Path, machine: str, name: str) -> Path:
    """``results/<machine>/lessons/<name>``: where ``make lesson`` on that machine stores its run."""
    return results / machine / LESSONS_DIR / name


def executed_copies(results: Path, name: str = "*.ipynb") -> list[Path]:
    """Every stored executed lesson, sorted (for the build's cache keys)."""
    return sorted(results.glob(f"*/{LESSONS_DIR}/{name}")) if results.is_dir() else []


class Damaged(ValueError):
    """An executed copy that cannot be shown; the message names the file and what is wrong."""


def _text(source: str | list[str]) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def code_sources(nb: dict) -> list[str]:
    return [_text(c.get("source", "")) for c in nb["cells"] if c.get("cell_type") == "code"]


def code_digest(nb: dict) -> str:
    """sha256 of the code cells, in order: what a copy's outputs depend on."""
    return hashlib.sha256("\0".join(code_sources(nb)).encode()).hexdigest()


def read_notebook(path: Path) -> dict:
    """A notebook as JSON, checked for the little this module relies on."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:  # ValueError: JSON's, or a number
        # of more digits than Python reads; RecursionError: nested past Python's limit
        raise Damaged(f"{path}: not a readable notebook ({type(err).__name__}: {err})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list) or not all(
            isinstance(c, dict) and c.get("cell_type") in ("code", "markdown", "raw") for c in nb["cells"]):
        raise Damaged(f"{path}: not a notebook (no list of cells with a cell_type each)")
    for index, cell in enumerate(nb["cells"], start=1):
        if not _lines(cell.get("source", "")):
            raise Damaged(f"{path}: cell {index}'s source is not text (a string or a list of strings)")
    metadata = nb.get("metadata", {})
    if not isinstance(metadata, dict) or not isinstance(metadata.get("bench", {}), dict):
        raise Damaged(f"{path}: its metadata (or metadata.bench) is not an object")
    return nb


def _lines(value: object) -> bool:
    """A notebook's multi-line text: a string, or a list of strings."""
    return isinstance(value, str) or isinstance(value, list) and all(isinstance(v, str) for v in value)


def _output_problem(output: dict) -> str | None:
    """What is wrong with the text of one output that the conversion joins (the schema lets a list of
    anything through as a media type's data, and the conversion then fails on it), or None."""
    kind = output["output_type"]
    if kind == "stream" and not _lines(output.get("text")):
        return "a stream's text is not text"
    if kind in ("display_data", "execute_result"):
        data = output.get("data")
        if not isinstance(data, dict):
            return f"{kind} has no data object"
        bad = [mime for mime, value in data.items() if not mime.endswith("json") and not _lines(value)]
        if bad:
            return f"{kind}'s {bad[0]} is not text"
    return None


def read_executed(path: Path) -> dict:
    """An executed copy, refused when a code cell did not run or recorded an error, or when an
    output's text is not text."""
    nb = read_notebook(path)
    for index, cell in enumerate(nb["cells"], start=1):
        if cell["cell_type"] != "code":
            continue
        count, outputs = cell.get("execution_count"), cell.get("outputs", [])
        if count is None or count == 0:
            if not _text(cell.get("source", "")).strip():
                continue  # a blank code cell: the runner skips it, so it has no count
            raise Damaged(f"{path}: cell {index} was not executed (an incomplete run; make lesson writes whole runs)")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise Damaged(f"{path}: cell {index}'s execution_count is not a number: {count!r:.40}")
        if not isinstance(outputs, list) or not all(isinstance(o, dict) and isinstance(o.get("output_type"), str)
                                                    for o in outputs):
            raise Damaged(f"{path}: cell {index}'s outputs are not a list of outputs, each with an output_type")
        for number, output in enumerate(outputs, start=1):
            if (why := _output_problem(output)) is not None:
                raise Damaged(f"{path}: cell {index}, output {number}: {why}")
        errors = [o for o in outputs if o.get("output_type") == "error"]
        if errors:
            first = errors[0]
            raise Damaged(f"{path}: cell {index} recorded an error: {first.get('ename')}: {first.get('evalue')}")
    return nb


def strip_outputs(nb: dict) -> dict:
    """The notebook with no outputs and no execution counts (what ``docs/`` keeps)."""
    out = copy.deepcopy(nb)
    for cell in out["cells"]:
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return out


def merge(source: dict, executed: dict) -> dict:
    """The source's cells with ``executed``'s outputs: their code cells must be the same, in order."""
    if code_sources(source) != code_sources(executed):
        raise ValueError("the executed copy's code cells differ from the source's")
    out = copy.deepcopy(source)
    ran = iter([c for c in executed["cells"] if c.get("cell_type") == "code"])
    for cell in out["cells"]:
        if cell.get("cell_type") == "code":
            done = next(ran)
            cell["outputs"] = copy.deepcopy(done.get("outputs", []))
            cell["execution_count"] = done.get("execution_count")
    out.setdefault("metadata", {})["bench"] = executed.get("metadata", {}).get("bench", {})
    return out


@dataclass
class Choice:
    """What the page shows: ``notebook`` (to render), whose outputs, and what to say about it."""

    notebook: dict
    machine: str | None  # whose outputs; None: none shown
    current: bool  # executed from the code the notebook has now
    notes: list[str] = field(default_factory=list)  # why the first choice is not shown (HTML)
    problems: list[str] = field(default_factory=list)  # damaged or missing copies: warnings
    stale: list[str] = field(default_factory=list)  # only older code's outputs to show


def no_paths(text: str) -> str:
    """``text`` with each absolute path cut to its file's name: what the page's note may say of a
    reason it did not write (no host paths)."""
    return re.sub(r"(?<![\w.])/(?:[^\s'\"():,/]+/)+([^\s'\"():,/]+)", r"\1", text)


def _role(machine: str, preferred: str | None, reference: str | None) -> str:
    if machine == reference and machine == preferred:
        return "the site's reference machine, whose numbers the prose quotes"
    if machine == reference:
        return "the site's reference machine"
    if machine == preferred:
        return "the machine measured locally, whose numbers the prose quotes"
    return "a contributed machine"


def choose(source_path: Path, results: Path, preferred: str | None, reference: str | None,
           refused: dict[str, str] | None = None) -> Choice:
    """The executed copy to show with the notebook at ``source_path`` (see the module's docstring).
    ``refused``: machines whose copy the conversion refused, with why (the plugin has warned about
    each), skipped as a damaged copy is and named in the note."""
    refused = refused or {}
    source = read_notebook(source_path)  # the source itself unreadable: mkdocs-jupyter fails on it anyway
    name, digest = source_path.name, code_digest(source)
    order = [m for m in dict.fromkeys([preferred, reference]) if m]
    others = sorted(p.parent.parent.name for p in executed_copies(results, name))
    order += [m for m in others if m not in order]
    notes, problems, whole = [], [], []
    for machine in order:
        path = executed_path(results, machine, name)
        if not path.is_file():
            if machine in (preferred, reference):
                notes.append(f"<code>{html.escape(machine)}</code> has no executed copy "
                             f"(<code>make lesson</code> there writes one)")
            continue
        whose = f"The copy from <code>{html.escape(machine)}</code> ({_role(machine, preferred, reference)})"
        if machine in refused:
            notes.append(f"{whose} cannot be shown: {html.escape(no_paths(refused[machine]))}.")
            continue
        try:
            executed = read_executed(path)
        except Damaged as err:
            problems.append(str(err))
            why = str(err).replace(str(path), f"{results.name}/{machine}/{LESSONS_DIR}/{name}")  # no host paths
            notes.append(f"{whose} cannot be shown: {html.escape(why)}.")
            continue
        if code_digest(executed) == digest:
            return Choice(_with_note(merge(source, executed), machine, True, notes, preferred, reference),
                          machine, True, notes, problems)
        whole.append((machine, executed))
        notes.append(f"The run stored for <code>{html.escape(machine)}</code> was executed from an earlier version "
                     f"of the code cells (code sha256 <code>{code_digest(executed)[:12]}</code>, now "
                     f"<code>{digest[:12]}</code>): <code>make lesson</code> on that machine replaces it.")
    if whole:
        machine, executed = whole[0]
        stale = [f"{source_path}: no executed copy matches the notebook's code cells (sha256 {digest[:12]}); "
                 f"showing {executed_path(results, machine, name)}, executed from an earlier version: "
                 "run make lesson"]
        shown = copy.deepcopy(executed)
        return Choice(_with_note(shown, machine, False, notes, preferred, reference), machine, False, notes, problems,
                      stale)
    shown = " can be shown" if refused else ""
    problems.append(f"{source_path}: no executed copy under {results}/<machine>/{LESSONS_DIR}/{name}{shown}: "
                    "the page shows the source without outputs (run make lesson)")
    return Choice(_with_note(strip_outputs(source), None, False, notes, preferred, reference),
                  None, False, notes, problems)


def note_html(machine: str | None, current: bool, notes: list[str], preferred: str | None,
              reference: str | None, bench: dict | None = None) -> str:
    """The note under the lesson's title: whose outputs these are, and anything amiss."""
    bench = bench or {}
    if machine is None:
        head = "No outputs: no executed copy of this notebook can be shown."
    else:
        when = f", {html.escape(str(bench['executed_utc']))}" if bench.get("executed_utc") else ""
        smoke = " at the test suite's tiny <code>BENCH_SMOKE</code> sizes" if bench.get("smoke") else ""
        head = (f"Outputs on this page: executed on <strong><code>{html.escape(machine)}</code></strong>"
                f"{smoke} ({_role(machine, preferred, reference)}{when}).")
        if not current:
            head += (" <strong>These outputs come from an earlier version of this notebook</strong>: the page "
                     "shows that version as it ran, its text as well as its code cells, not today's (the "
                     "notebook it links for download is today's).")
        head += " Every number below comes from that run."
    body = "".join(f"<li>{n}</li>" for n in notes)
    more = f"<ul>{body}</ul>" if body else ""
    kind = "info" if machine and current else "warning"
    return (f'<div class="admonition {kind} {NOTE_CLASS}"><p class="admonition-title">Whose numbers</p>'
            f"<p>{head}</p>{more}</div>")


def _with_note(nb: dict, machine: str | None, current: bool, notes: list[str], preferred: str | None,
               reference: str | None) -> dict:
    """``nb`` with the note right under its title (the first cell's ``# `` line), else first."""
    note = note_html(machine, current, notes, preferred, reference, nb.get("metadata", {}).get("bench"))
    first = nb["cells"][0] if nb["cells"] else None
    if first is not None and first.get("cell_type") == "markdown":
        title, _, rest = _text(first.get("source", "")).partition("\n")
        if title.startswith("# "):
            first["source"] = f"{title}\n\n{note}\n\n{rest.lstrip(chr(10))}"
            return nb
    nb["cells"].insert(0, {"cell_type": "markdown", "id": "bench-whose-numbers", "metadata": {}, "source": note})
    return nb


def dumps(nb: dict) -> str:
    """A notebook as nbformat writes one (one-space indent, keys sorted)."""
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
