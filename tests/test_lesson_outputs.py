"""Which machine's executed lesson the page shows (benchsite/pages/lesson_outputs.py), and what the
plugin logs about it: the machine the prose quotes, else the reference, else any other; only a
run of today's code cells; a damaged copy is a message naming the file, never a traceback."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchsite.build.lesson_plugin import Plugin
from benchsite.pages import lesson_outputs as lo

NAME = "lesson.ipynb"


def notebook(code: list[str], prose: str = "# Title", outputs: str | None = None) -> dict:
    cells = [{"cell_type": "markdown", "id": "t", "metadata": {}, "source": prose}]
    for i, src in enumerate(code, start=1):
        out = [] if outputs is None else [{"name": "stdout", "output_type": "stream", "text": f"{outputs} {i}\n"}]
        cells.append({"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": src,
                      "execution_count": i if outputs is not None else None, "outputs": out})
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def write(path: Path, nb: dict | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nb if isinstance(nb, str) else json.dumps(nb))
    return path


@pytest.fixture
def tree(tmp_path):
    source = write(tmp_path / "docs" / "lessons" / NAME, notebook(["a = 1", "print(a)"]))
    results = tmp_path / "results"
    return SimpleNamespace(source=source, results=results,
                           put=lambda machine, nb: write(lo.executed_path(results, machine, NAME), nb))


def outputs(choice: lo.Choice) -> list[str]:
    return [o["text"] for c in choice.notebook["cells"] if c["cell_type"] == "code" for o in c["outputs"]]


def note(choice: lo.Choice) -> str:
    title = choice.notebook["cells"][0]["source"]
    assert title.startswith("# ") and lo.NOTE_CLASS in title.split("\n")[2]  # right under the title
    return title


def test_the_machine_the_prose_quotes_comes_first(tree):
    tree.put("ref", notebook(["a = 1", "print(a)"], outputs="ref"))
    tree.put("mine", notebook(["a = 1", "print(a)"], outputs="mine"))
    shown = lo.choose(tree.source, tree.results, preferred="mine", reference="ref")
    assert (shown.machine, shown.current, shown.problems, shown.stale) == ("mine", True, [], [])
    assert outputs(shown) == ["mine 1\n", "mine 2\n"]
    assert "<code>mine</code>" in note(shown) and "measured locally" in note(shown)


def test_without_a_local_run_the_reference_machines_is_shown_and_the_note_says_why(tree):
    tree.put("ref", notebook(["a = 1", "print(a)"], outputs="ref"))
    shown = lo.choose(tree.source, tree.results, preferred="mine", reference="ref")
    assert shown.machine == "ref" and outputs(shown) == ["ref 1\n", "ref 2\n"]
    assert "reference machine" in note(shown) and "<code>mine</code> has no executed copy" in note(shown)


def test_a_prose_edit_keeps_a_run_current_and_the_page_shows_todays_prose(tree):
    tree.put("ref", notebook(["a = 1", "print(a)"], prose="# Old title", outputs="ref"))
    shown = lo.choose(tree.source, tree.results, preferred="ref", reference="ref")
    assert shown.current and shown.notebook["cells"][0]["source"].startswith("# Title\n")


def test_a_run_of_older_code_gives_way_to_a_current_one_elsewhere(tree):
    tree.put("ref", notebook(["a = 0", "print(a)"], outputs="ref"))
    tree.put("other", notebook(["a = 1", "print(a)"], outputs="other"))
    shown = lo.choose(tree.source, tree.results, preferred="ref", reference="ref")
    assert (shown.machine, shown.current, shown.stale) == ("other", True, [])
    assert "contributed machine" in note(shown) and "earlier version of the code cells" in note(shown)


def test_only_older_code_is_shown_as_it_ran_and_said_so(tree):
    tree.put("ref", notebook(["a = 0", "print(a)"], outputs="ref"))
    shown = lo.choose(tree.source, tree.results, preferred="ref", reference="ref")
    assert (shown.machine, shown.current, shown.problems) == ("ref", False, [])
    assert shown.stale and "make lesson" in shown.stale[0]
    code = [c["source"] for c in shown.notebook["cells"] if c["cell_type"] == "code"]
    assert code == ["a = 0", "print(a)"]  # the code those outputs came from, not today's
    assert "earlier version of this notebook" in note(shown) and "admonition warning" in note(shown)
    assert "its text as well as its code cells, not today's" in note(shown)  # the whole copy is shown, prose too


@pytest.mark.parametrize("damage, why", [
    ("{ not json", "not a readable notebook"),
    ('{"cells": 3}', "not a notebook"),
    (json.dumps(notebook(["a = 1", "print(a)"])), "cell 2 was not executed"),
])
def test_a_damaged_copy_is_named_and_skipped(tree, damage, why):
    path = tree.put("mine", damage)
    tree.put("ref", notebook(["a = 1", "print(a)"], outputs="ref"))
    shown = lo.choose(tree.source, tree.results, preferred="mine", reference="ref")
    assert shown.machine == "ref"
    assert len(shown.problems) == 1 and shown.problems[0].startswith(f"{path}: {why}")
    assert f"results/mine/lessons/{NAME}: {why}" in note(shown)
    assert str(tree.results) not in note(shown), "a host path on the page"


def _display(nb: dict) -> dict:
    """``nb`` with its second code cell's output a picture (what the lesson's charts are)."""
    nb["cells"][2]["outputs"] = [{"output_type": "display_data", "metadata": {},
                                  "data": {"image/svg+xml": ["<svg>", "</svg>"], "text/plain": "<Figure>"}}]
    return nb


def _set(path: tuple, value):
    def damage(nb: dict) -> dict:
        holder = nb
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] = value
        return nb
    return damage


# Damage that crashed the choice, or that the conversion (nbconvert, through mkdocs-jupyter) stopped the
# build on with a traceback naming no file (text that is not text): a damaged copy, named, another shown.
@pytest.mark.parametrize("damage, why", [
    (_set(("cells", 2, "outputs", 0, "data", "image/svg+xml", 1), [1]),
     "cell 3, output 1: display_data's image/svg+xml"),
    (_set(("cells", 1, "outputs", 0, "text"), None), "cell 2, output 1: a stream's text is not text"),
    (_set(("cells", 1, "outputs"), 3), "cell 2's outputs are not a list of outputs"),
    (_set(("cells", 1, "execution_count"), "x"), "cell 2's execution_count is not a number"),
    (_set(("cells", 1, "source"), ["a", 1]), "cell 2's source is not text"),
    (_set(("metadata",), {"bench": []}), "its metadata (or metadata.bench) is not an object"),
])
def test_a_copy_the_conversion_would_stop_on_is_named_and_skipped(tree, damage, why):
    path = tree.put("mine", damage(_display(notebook(["a = 1", "print(a)"], outputs="mine"))))
    tree.put("ref", notebook(["a = 1", "print(a)"], outputs="ref"))
    shown = lo.choose(tree.source, tree.results, preferred="mine", reference="ref")
    assert shown.machine == "ref" and len(shown.problems) == 1
    assert shown.problems[0].startswith(f"{path}: {why}"), shown.problems[0]


@pytest.mark.parametrize("text, why", [
    ('{"cells": [], "x": ' + "1" * 5000 + "}", "not a readable notebook (ValueError: "),  # past int's digit limit
    ("[" * 100_000 + "]" * 100_000, "not a readable notebook (RecursionError: "),
])
def test_json_python_cannot_read_is_a_damaged_copy(tree, text, why):
    path = tree.put("mine", text)
    tree.put("ref", notebook(["a = 1", "print(a)"], outputs="ref"))
    shown = lo.choose(tree.source, tree.results, preferred="mine", reference="ref")
    assert shown.machine == "ref" and shown.problems[0].startswith(f"{path}: {why}")


def test_a_blank_code_cell_needs_no_execution_count(tree):
    """The notebook runner skips a code cell with no code: a whole run leaves it without a count."""
    source = notebook(["a = 1", "", "print(a)"])
    tree.source.write_text(json.dumps(source))
    ran = notebook(["a = 1", "", "print(a)"], outputs="mine")
    ran["cells"][2]["execution_count"], ran["cells"][2]["outputs"] = None, []
    tree.put("mine", ran)
    shown = lo.choose(tree.source, tree.results, preferred="mine", reference="ref")
    assert shown.machine == "mine" and shown.problems == []


def test_a_whole_copy_with_a_picture_is_shown(tree):
    tree.put("mine", _display(notebook(["a = 1", "print(a)"], outputs="mine")))
    shown = lo.choose(tree.source, tree.results, preferred="mine", reference="ref")
    assert shown.machine == "mine" and shown.problems == []


def _converted_by_nbconvert(page) -> None:
    """What mkdocs-jupyter does with the page's notebook: nbconvert's HTML export of it."""
    import nbformat
    from nbconvert import HTMLExporter

    HTMLExporter().from_notebook_node(nbformat.reads(page.markdown, as_version=4))


def _converting(tree, monkeypatch, caplog):
    """The plugin with its conversion wrapped around nbconvert's HTML export (what mkdocs-jupyter does),
    and a page for the tree's lesson: ``run()`` chooses and converts it as a build does, and returns the
    notebook converted last and the warnings logged."""
    from mkdocs_jupyter.plugin import Plugin as JupyterPlugin

    monkeypatch.setattr(JupyterPlugin, "on_pre_page", lambda self, page, config, files: page)
    monkeypatch.setattr(Plugin, "should_include", lambda self, file: True)
    plugin, page = plugin_for(tree), page_for(tree)
    page.render = lambda config, files: _converted_by_nbconvert(page)
    page = plugin.on_pre_page(page, {}, None)  # wraps the conversion

    def run() -> tuple[dict, list[str]]:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="mkdocs.plugins.bench-notebooks"):
            page.markdown = plugin.on_page_markdown("", page, {}, None)
            page.render({}, None)
        return json.loads(page.markdown), [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    return run


@pytest.mark.parametrize("current, damage, why", [
    # the schema, which lesson_outputs leaves to nbconvert
    (True, _set(("cells", 2, "outputs", 0, "metadata"), -1),
     "-1 is not of type 'object' (cell 3, code cell 2['outputs'][0]['metadata'])"),
    # a stale copy is shown whole, as it ran: what nbconvert stops on there is named too
    (False, _set(("cells", 2, "metadata"), [1]), "TypeError: "),
])
def test_a_copy_nbconvert_refuses_is_named_and_the_next_copy_shown(tree, monkeypatch, caplog, current, damage, why):
    """The rest of the notebook is nbconvert's to check when it converts: its refusal is a warning
    naming the docs/ source and the copy whose outputs the page shows (a strict build fails on it), and
    the page shows the next copy, with a note saying why the first is not shown, as for a damaged copy."""
    copy = damage(_display(notebook(["a = 1" if current else "a = 0", "print(a)"], outputs="ref")))
    path = tree.put("ref", copy)
    tree.put("other", notebook(["a = 1" if current else "a = 0", "print(a)"], outputs="other"))  # as old as ref's
    shown, warnings = _converting(tree, monkeypatch, caplog)()
    assert warnings[0].startswith(f"{tree.source} with the outputs of {path}: cannot be converted: {why}"), warnings
    assert len(warnings) == 1, warnings  # nothing else is amiss
    assert [o["text"] for c in shown["cells"] if c["cell_type"] == "code" for o in c["outputs"]] == \
        ["other 1\n", "other 2\n"]
    said = shown["cells"][0]["source"]
    assert "<code>other</code>" in said and "The copy from <code>ref</code> (the site's reference machine, whose " \
        "numbers the prose quotes) cannot be shown: the notebook converter refused it" in said
    assert str(tree.results) not in said and str(tree.source) not in said  # no host paths on a page


def test_with_no_other_copy_the_lesson_is_shown_without_outputs_and_says_why(tree, monkeypatch, caplog):
    path = tree.put("ref", _set(("cells", 2, "outputs", 0, "metadata"), -1)(
        _display(notebook(["a = 1", "print(a)"], outputs="ref"))))
    shown, warnings = _converting(tree, monkeypatch, caplog)()
    assert warnings[0].startswith(f"{tree.source} with the outputs of {path}: cannot be converted: "), warnings
    assert warnings[1] == (f"{tree.source}: no executed copy under {tree.results}/<machine>/lessons/{NAME} can be "
                           "shown: the page shows the source without outputs (run make lesson)")
    assert all(c["outputs"] == [] for c in shown["cells"] if c["cell_type"] == "code")
    assert "No outputs" in shown["cells"][0]["source"] and "refused it" in shown["cells"][0]["source"]


@pytest.mark.parametrize("stale_other", [False, True])
def test_a_source_nbconvert_refuses_stops_the_build_naming_it(tree, monkeypatch, caplog, stale_other):
    """When the docs/ source is what nbconvert refuses, no copy is blamed for it and no other is shown
    instead (a stale copy, shown whole as it ran, would convert): the source is named, the build stops."""
    from mkdocs.exceptions import PluginError

    source = json.loads(tree.source.read_text())
    source["cells"][0]["metadata"] = -1  # its markdown cell: lesson_outputs reads no metadata
    tree.source.write_text(json.dumps(source))
    tree.put("ref", notebook(["a = 1", "print(a)"], outputs="ref"))
    if stale_other:
        tree.put("other", notebook(["a = 0", "print(a)"], outputs="other"))
    run = _converting(tree, monkeypatch, caplog)
    with pytest.raises(PluginError) as err:
        run()
    assert str(err.value).startswith(f"{tree.source}: cannot be converted: "), err  # the source alone, no copy
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == []  # no copy blamed


def test_a_page_names_no_host_path():
    said = lo.no_paths("FileNotFoundError: [Errno 2] No such file: '/home/me/site/.cache/bench/lesson/f1.ipynb' (x)")
    assert said == "FileNotFoundError: [Errno 2] No such file: 'f1.ipynb' (x)"
    kept = "-1 is not of type 'object' (cell 15, code cell 7['outputs'][0]['metadata']) at 1/2"
    assert lo.no_paths(kept) == kept


def test_an_error_output_makes_a_copy_damaged(tree):
    nb = notebook(["a = 1", "print(a)"], outputs="x")
    nb["cells"][2]["outputs"] = [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                                  "traceback": []}]
    path = tree.put("ref", nb)
    shown = lo.choose(tree.source, tree.results, preferred="ref", reference="ref")
    assert shown.machine is None
    assert shown.problems[0] == f"{path}: cell 3 recorded an error: ZeroDivisionError: division by zero"


def test_no_copy_at_all_shows_the_source_without_outputs_and_says_so(tree):
    shown = lo.choose(tree.source, tree.results, preferred="ref", reference="ref")
    assert shown.machine is None and outputs(shown) == []
    assert shown.problems and str(tree.source) in shown.problems[0]
    assert "No outputs" in note(shown)


def test_merge_refuses_different_code():
    with pytest.raises(ValueError, match="code cells differ"):
        lo.merge(notebook(["a = 1"]), notebook(["a = 2"], outputs="x"))


def plugin_for(tree) -> Plugin:
    plugin = Plugin()
    plugin.load_config({"include": ["lessons/*.ipynb"], "ignore": ["*.md"], "execute": False})
    plugin.results, plugin.reference, plugin.preferred = tree.results, "ref", "ref"
    return plugin


def page_for(tree):
    return SimpleNamespace(file=SimpleNamespace(abs_src_path=str(tree.source), src_uri=f"lessons/{NAME}"))


def test_the_plugin_renders_the_chosen_notebook_and_logs_a_damaged_copy_as_a_warning(tree, caplog):
    tree.put("ref", "{ not json")
    with caplog.at_level(logging.INFO, logger="mkdocs.plugins.bench-notebooks"):
        text = plugin_for(tree).on_page_markdown("", page_for(tree), {}, None)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("results/ref/lessons/lesson.ipynb: not a readable notebook" in w for w in warnings), warnings
    assert lo.NOTE_CLASS in json.loads(text)["cells"][0]["source"]


@pytest.mark.parametrize("strict, level", [("1", logging.WARNING), ("", logging.INFO)])
def test_older_code_only_fails_a_strict_build_as_a_stale_figure_does(tree, caplog, monkeypatch, strict, level):
    monkeypatch.setenv("BENCH_STRICT", strict)
    tree.put("ref", notebook(["a = 0", "print(a)"], outputs="ref"))
    with caplog.at_level(logging.INFO, logger="mkdocs.plugins.bench-notebooks"):
        plugin_for(tree).on_page_markdown("", page_for(tree), {}, None)
    found = [r for r in caplog.records if "no executed copy matches" in r.getMessage()]
    assert [r.levelno for r in found] == [level]


def test_the_plugin_quotes_the_machine_the_chapters_quote(tree, monkeypatch):
    """catalog.preferred_machine: BENCH_MACHINE, else the last local make bench, else the site's machine."""
    (tree.results / "mine").mkdir(parents=True)
    config = {"config_file_path": str(tree.results.parent / "mkdocs.yml"),
              "extra": {"bench": {"results": str(tree.results), "machine": "ref"}}}
    monkeypatch.delenv("BENCH_MACHINE", raising=False)
    monkeypatch.delenv("BENCH_RESULTS", raising=False)
    plugin = Plugin()
    plugin.on_config(config)
    assert (plugin.preferred, plugin.reference) == ("ref", "ref")
    write(tree.results.parent / ".bench" / "last_machine", "mine")
    plugin.on_config(config)
    assert (plugin.preferred, plugin.reference) == ("mine", "ref")
