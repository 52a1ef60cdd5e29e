"""A prose edit (a script's FIGURE caption, its module docstring) is not a code change
(benchsite/model/caption_edits.csv, staleness.py): each declared edit is checked against git history,
so the ledger cannot excuse an edit to what a script measures."""

from __future__ import annotations

import ast
import csv
import hashlib
import subprocess

import pandas as pd
import pytest

from benchsite.model.staleness import CAPTION_EDITS, CodeHash, caption_aliases, stale_reason
from conftest import REPO


def _versions(script: str) -> dict[str, bytes]:
    """sha256 -> bytes of every committed version of ``script``, and of the working tree's."""
    commits = subprocess.run(["git", "log", "--format=%H", "--", script], cwd=REPO, capture_output=True,
                             text=True, check=True).stdout.split()
    out = {}
    for commit in commits:
        data = subprocess.run(["git", "show", f"{commit}:{script}"], cwd=REPO, capture_output=True).stdout
        out[hashlib.sha256(data).hexdigest()] = data
    data = (REPO / script).read_bytes()
    out[hashlib.sha256(data).hexdigest()] = data
    return out


def _split(source: bytes) -> tuple[str, dict, str]:
    """The text before the ``FIGURE = {...}`` assignment less the module docstring's literal (cut at
    its exact offsets: whatever shares its lines is still compared), the text after it, and its dict
    without the caption: what a prose edit leaves as it was."""
    text = source.decode("utf-8")
    body = ast.parse(text).body
    node = next(n for n in body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "FIGURE")
    lines = text.split("\n")
    before = "\n".join(lines[:node.lineno - 1])
    doc = body[0] if body and isinstance(body[0], ast.Expr) else None
    if doc is not None and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str) \
            and doc.end_lineno < node.lineno:
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line.encode("utf-8")) + 1)  # ast's columns count UTF-8 bytes
        raw = "\n".join(lines).encode("utf-8")
        start = offsets[doc.lineno - 1] + doc.col_offset
        end = offsets[doc.end_lineno - 1] + doc.end_col_offset
        before = (raw[:start] + b"<docstring>" + raw[end:offsets[node.lineno - 1]]).decode("utf-8")
    figure = ast.literal_eval(node.value)
    figure.pop("caption", None)
    return before, figure, "\n".join(lines[node.end_lineno:])


def _docstring(source: bytes) -> str:
    body = ast.parse(source.decode("utf-8")).body
    return ast.get_docstring(ast.Module(body=body[:1], type_ignores=[]), clean=False) or ""


def same_but_prose(older: bytes, newer: bytes) -> bool:
    """Whether two versions of a figure script differ in the FIGURE caption and the module docstring
    alone: neither reads ``__doc__`` (which would make the docstring more than prose), and neither
    docstring holds a snippet marker (``--8<--``: it would move what the page shows as the code)."""
    return (b"__doc__" not in older + newer and not any("--8<--" in _docstring(s) for s in (older, newer))
            and _split(older) == _split(newer))


def ledger() -> list[dict]:
    with CAPTION_EDITS.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("row", ledger(), ids=lambda r: r["script"])
def test_each_declared_prose_edit_changed_the_prose_alone(row):
    found = _versions(row["script"])
    if row["measured_sha256"] not in found:
        pytest.fail(f"{row['script']}: no version in git history has sha256 {row['measured_sha256']}")
    assert row["current_sha256"] in found, row
    assert same_but_prose(found[row["measured_sha256"]], found[row["current_sha256"]]), row["script"]
    assert row["why"].strip()


def test_results_of_the_earlier_script_are_current_only_through_the_ledger(tmp_path):
    ledger_file = tmp_path / "edits.csv"
    ledger_file.write_text("script,measured_sha256,current_sha256,why\n"
                           "bench_scripts/x.py,aaa,bbb,caption\nbench_scripts/x.py,bbb,ccc,caption again\n"
                           "bench_scripts/y.py,zzz,ccc,another script\n")
    aliases = caption_aliases("bench_scripts/x.py", "ccc", ledger_file)
    assert aliases == ("aaa", "bbb")  # sorted: the same in every process
    frame = pd.DataFrame({"script_sha256": ["aaa", "aaa"], "harness_sha256": ["h", "h"]})
    assert stale_reason(frame, CodeHash("ccc", "h", aliases)) == ""
    assert stale_reason(frame, CodeHash("ccc", "h")) == "the script changed after these results were recorded"
    assert "harness" in stale_reason(frame, CodeHash("ccc", "h2", aliases))


def test_only_the_caption_and_the_module_docstring_count_as_prose():
    script = (REPO / "bench_scripts" / "aa_calibration.py").read_bytes()
    docstring_edited = script.replace(b"(an A/A test)", b"(an A/A test, reworded)", 1)
    caption_edited = script.replace(b"A and B are two separately", b"A and B: two separately", 1)
    assert docstring_edited != script and caption_edited != script
    assert same_but_prose(script, docstring_edited) and same_but_prose(script, caption_edited)
    for code_edit in (script.replace(b'"budget_s": 3.8', b'"budget_s": 3.9', 1),  # FIGURE, not its caption
                      script.replace(b"import jax\n", b"import jax  # a comment is code too\n", 1),
                      script.replace(b'"""\n\nFIGURE', b'"""\n\nDOC = __doc__\nFIGURE', 1)):
        assert code_edit != script and not same_but_prose(script, code_edit)
    assert not same_but_prose(script, docstring_edited + b"\nprint(__doc__)\n")
    # Code that shares the docstring's lines, before or after it, is code; so is a snippet marker in it.
    first, closing = script.index(b'"""'), script.index(b'"""\n\nFIGURE')
    for code_edit in (script[:closing] + b'"""; import os; os.environ["XLA_FLAGS"] = "x"' + script[closing + 3:],
                      b"#!/usr/bin/env python3\n" + script,
                      script[:first] + b"import os; " + script[first:],
                      script[:closing] + b"# --8<-- [start:measure]\n" + script[closing:]):
        assert not same_but_prose(script, code_edit), code_edit[:200]


@pytest.mark.slow
def test_a_cite_block_says_when_the_script_changed_only_in_its_prose(built_site):
    from conftest import REFERENCE

    edited = {row["script"].split("/")[-1][:-3] for row in ledger()}
    for stem in edited:
        fig = "fig-" + stem.replace("_", "-")
        page = (built_site / "bench" / fig / REFERENCE / "index.html").read_text(encoding="utf-8")
        assert "current; only its FIGURE caption or module docstring was edited since, sha256 now" in page, fig
    untouched = (built_site / "bench" / "fig-dispatch-vs-completion" / REFERENCE / "index.html").read_text()
    assert "was edited since" not in untouched and "(current)" in untouched
