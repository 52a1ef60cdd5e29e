"""A page's expansion is kept by what its markers read under docs/ (benchsite/pages/docsread.py):
every read goes through the page's ``Docs``, an edit to a file it read makes it again, an edit to
any other file does not, and no module reads under docs/ around the recorder."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchsite.build.plugin import direct
from benchsite.pages import docsread, markers, pages
from benchsite.pages.docsread import Docs
from conftest import REPO, committed_build, load_hook


def test_each_read_is_recorded_and_now_says_whether_it_still_holds(tmp_path):
    (tmp_path / "a.md").write_text("# A\r\nsome text\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.md").write_text("<!-- bench:value fig-x stat=verdict -->\n")
    docs = Docs(tmp_path)
    assert docs.text("a.md") == "# A\nsome text\n"  # as read_text gives it
    assert docs.text("gone.md") is None
    assert docs.names("*.md") == ["a.md", "sub/b.md"]
    assert docs.view("sub/b.md", markers.quoted_verdicts_in) == 1
    assert list(docs.reads) == ["file:a.md", "file:gone.md", "glob:*.md",
                                "view:benchsite.pages.markers:quoted_verdicts_in:sub/b.md"]
    assert docs.reads["file:gone.md"] == docsread.MISSING
    assert all(docs.now(key) == value for key, value in docs.reads.items())

    (tmp_path / "sub" / "b.md").write_text("A sentence more.\n<!-- bench:value fig-x stat=verdict -->\n")
    assert all(docs.now(key) == value for key, value in docs.reads.items())  # still one verdict quoted
    (tmp_path / "a.md").write_text("# A\n")
    (tmp_path / "gone.md").write_text("here now\n")
    (tmp_path / "c.md").write_text("")
    (tmp_path / "sub" / "b.md").write_text("no verdict\n")
    assert [key for key, value in docs.reads.items() if docs.now(key) != value] == list(docs.reads)


def test_a_view_is_a_function_named_at_a_module_top_level(tmp_path):
    """``now`` finds the function again by its name, so a lambda or a local function is refused."""
    with pytest.raises(ValueError, match="named at a module's top level"):
        Docs(tmp_path).view("a.md", lambda text: text)


def test_a_chapters_facts_are_what_chapter_link_read_of_it():
    text = "# Title\n\n<!-- bench:figure fig-b -->\n<!-- bench:figure <!--bench:figure fig-a -->\n"
    assert pages.chapter_facts(text) == (True, "Title", ("<!--bench:figure", "fig-a", "fig-b"))
    assert pages.chapter_facts("") == pages.chapter_facts(None) == (False, None, ())


@pytest.fixture
def plugin(monkeypatch, tmp_path):
    """The plugin's ``_expand`` on a docs folder of three chapters, the markers replaced by a fake
    that reads what the real read sites read (the quoted verdicts of every chapter; a figure's
    chapter) and counts the expansions, by page."""
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    bench = load_hook("plugin", monkeypatch)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "quoting.md").write_text("# Quoting\n<!-- bench:value fig-a stat=verdict -->\n")
    (docs / "figures.md").write_text("# Figures\n<!-- bench:figure fig-a -->\n")
    (docs / "other.md").write_text("# Other\n")
    made = []
    fig = SimpleNamespace(id="fig-a", chapter="figures.md", compare=None)

    def expand(markdown, ctx):
        made.append(ctx.src_uri)
        if "verdict-count" in markdown:
            return str(markers._quoted_verdicts(ctx))
        if "figure-page" in markdown:
            return pages.chapter_link(fig, ctx) or "-"
        return markdown

    monkeypatch.setattr(bench, "_state", lambda build, config: "state")
    monkeypatch.setattr(bench.markers, "expand", expand)
    build = SimpleNamespace(cache=SimpleNamespace(blocks_in=lambda text: {}, restore=lambda blocks: None), problems=0,
                            catalog=SimpleNamespace(cache=tmp_path / "digests"), on_problem=None)

    def one_build() -> dict[str, str]:
        build.docs_now = {}  # a new build looks at docs/ afresh
        build.warn_once = lambda message: None
        monkeypatch.setattr(bench, "_context", lambda build, config, src, url, first, d: SimpleNamespace(
            src_uri=src, docs=d, link=lambda target: target))
        config = {"docs_dir": str(docs)}
        return {src: bench._expand(build, config, text, src, src.removesuffix(".md") + "/")
                for src, text in (("verdicts.md", "verdict-count"), ("bench/fig-a.md", "figure-page"),
                                  ("other.md", "# Other\n"))}

    return SimpleNamespace(build=one_build, made=made, docs=docs)


def test_an_edit_to_a_chapter_a_page_quotes_makes_that_page_again(plugin):
    assert plugin.build() == {"verdicts.md": "1", "bench/fig-a.md": "[Figures](../figures.md#fig-a)",
                              "other.md": "# Other\n"}
    plugin.made.clear()
    assert plugin.build()["verdicts.md"] == "1" and plugin.made == []  # nothing changed: all kept
    (plugin.docs / "other.md").write_text("# Other\n<!-- bench:value fig-b stat=verdict -->\n")
    assert plugin.build()["verdicts.md"] == "2"
    assert plugin.made == ["verdicts.md"]  # other.md's own text is the page's, the same here
    plugin.made.clear()
    (plugin.docs / "figures.md").write_text("# Figures, renamed\n<!-- bench:figure fig-a -->\n")
    assert plugin.build()["bench/fig-a.md"] == "[Figures, renamed](../figures.md#fig-a)"
    assert plugin.made == ["bench/fig-a.md"]
    plugin.made.clear()
    (plugin.docs / "new.md").write_text("<!-- bench:value fig-c stat=verdict -->\n")  # a new chapter
    assert plugin.build()["verdicts.md"] == "3" and plugin.made == ["verdicts.md"]


def test_an_edit_that_changes_nothing_a_page_read_keeps_its_expansion(plugin):
    plugin.build()
    plugin.made.clear()
    # A sentence more in each chapter: no verdict quoted, no title or figure changed.
    for name in ("quoting.md", "figures.md", "other.md"):
        path = plugin.docs / name
        path.write_text(path.read_text() + "\nOne more sentence, as an author would add.\n")
    plugin.build()
    assert plugin.made == []


# --- no module reads under docs/ around the recorder -------------------------------------------

BELOW_BUILD = ("core", "model", "views", "pages")


def test_no_module_below_the_build_names_the_docs_folder_but_the_recorder():
    """Below the build, the docs folder is known only to ``Docs`` (its ``_root``): no module reads a
    ``docs_dir`` (the Context's is an init-only argument, turned into its ``Docs``) or another's
    ``_root``. ``claimcheck.DOCS`` (make claims, outside a build) is handed to ``Docs`` too."""
    found = []
    for layer in BELOW_BUILD:
        for path in sorted((REPO / "benchsite" / layer).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and node.attr in ("docs_dir", "_root") \
                        and path.name != "docsread.py":
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: .{node.attr}")
                if isinstance(node, ast.Name) and node.id == "DOCS" and isinstance(node.ctx, ast.Load):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: DOCS")
    # make claims (claimcheck.main) is the one use of DOCS: found_claims makes it a Docs.
    assert [re.sub(r":\d+:", ":", f) for f in found] == ["benchsite/pages/claimcheck.py: DOCS"], found


# Two builds in one process (as mkdocs serve rebuilds) of a copy of docs/ and mkdocs.yml, with the
# committed results and the session's build cache, then three edits, each built again: which pages'
# markers were expanded or bodies made in each build (from every process: warming workers too), and whether any
# file or folder under docs/ was opened while markers were expanded other than through Docs (an
# audit hook: sys.addaudithook, the "open" and "os.scandir" events).
EDITS = r"""
import json, os, sys, threading
from pathlib import Path
from mkdocs.commands.build import build
from mkdocs.config import load_config
from benchsite.build import plugin
from benchsite.pages import docsread, markers

config_file, site, log = sys.argv[1], sys.argv[2], sys.argv[3]
docs = os.path.realpath(Path(config_file).parent / "docs")
state = threading.local()

def note(line):
    with open(log, "a", encoding="utf-8") as fh:  # one write: workers append too
        fh.write(line + "\n")

def hook(event, args):
    if event in ("open", "os.scandir", "os.listdir") and getattr(state, "expanding", False) \
            and not getattr(state, "recording", False) and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.path.realpath(os.fsdecode(args[0]))
        if path == docs or path.startswith(docs + os.sep):
            note("AROUND " + path)

sys.addaudithook(hook)

def recording(method):
    def wrapped(*args, **kwargs):
        before, state.recording = getattr(state, "recording", False), True
        try:
            return method(*args, **kwargs)
        finally:
            state.recording = before
    return wrapped

for name in ("text", "view", "names", "now"):
    setattr(docsread.Docs, name, recording(getattr(docsread.Docs, name)))
def expanding(real, page):  # real noted as the expansion of the page page(*args) names, its reads audited
    def wrapped(*args):
        note("EXPANDED " + page(*args))
        state.expanding = True
        try:
            return real(*args)
        finally:
            state.expanding = False
    return wrapped

markers.expand = expanding(markers.expand, lambda markdown, ctx: ctx.src_uri)
# a page the plugin writes itself is made from the model, not expanded
plugin._Writer.made = staticmethod(expanding(plugin._Writer.made, lambda file, ctx: file.src_uri))
edits = json.loads(sys.argv[4])
for number, edit in enumerate([None, *edits]):
    if edit is not None:
        path = Path(config_file).parent / "docs" / edit[0]
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(edit[1], edit[2]) if edit[1] else text + edit[2], encoding="utf-8")
    note(f"BUILD {number}")
    build(load_config(config_file=config_file, site_dir=f"{site}-{number}", strict=True))
"""

QUOTED = "\nAnd once more: <!-- bench:value fig-time-your-own-code stat=verdict -->.\n"
TITLE = ("asynchronous-dispatch.md", "\n# Asynchronous dispatch\n", "\n# Asynchronous dispatch, renamed\n")


def _quoted_count(site: Path) -> int:
    text = (site / "verdicts" / "index.html").read_text(encoding="utf-8")
    found = re.search(r"the chapters quote\s*(?:<[^>]*>\s*)*(\d+)", text)
    assert found, "no quoted verdict count on the verdicts page"
    return int(found.group(1))


@pytest.mark.slow
def test_a_warm_build_in_one_process_expands_again_only_what_read_the_edit(tmp_path):
    """Build, then: a sentence appended to a chapter with figures (only it is expanded again; its
    figures' pages read its title and the figures it embeds, which did not change); a quoted verdict
    added to the home page (the verdicts page counts it: expanded again, and it shows one more);
    the chapter's title changed (its figures' /bench pages name it: expanded again, the new title)."""
    work = tmp_path / "work"
    shutil.copytree(REPO / "docs", work / "docs")
    shutil.copy(REPO / "mkdocs.yml", work / "mkdocs.yml")
    # A copy, not a link: every page's key holds every file under bench_scripts/, and another test
    # running beside this one (make wheel's build/ folder there) would change it between builds.
    shutil.copytree(REPO / "bench_scripts", work / "bench_scripts",
                    ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    env |= {"BENCH_RESULTS": str(REPO / "results"), "BENCH_CACHE": str(committed_build()[2]), "BENCH_JOBS": "2",
            "NO_MKDOCS_2_WARNING": "1"}
    edits = [["asynchronous-dispatch.md", "", "\nOne more sentence, as an author would add.\n"],
             ["index.md", "", QUOTED], list(TITLE)]
    log = tmp_path / "log"
    proc = subprocess.run([sys.executable, "-c", EDITS, str(work / "mkdocs.yml"), str(tmp_path / "site"), str(log),
                           json.dumps(edits)], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = log.read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if line.startswith("AROUND ")] == []
    builds: list[set[str]] = []
    for line in lines:
        if line.startswith("BUILD "):
            builds.append(set())
        elif line.startswith("EXPANDED "):
            builds[-1].add(line.removeprefix("EXPANDED "))
    assert len(builds) == 4 and "verdicts.md" in builds[0]
    # The machine and session pages the plugin writes itself are kept by _Writer.key, by what they
    # read of their figure's chapter (its title, its figures), as _expand keeps a figure's page.
    assert builds[1] == {"asynchronous-dispatch.md"}
    assert any(direct(src) and src.startswith("bench/fig-pytree-block/") for src in builds[3])
    assert builds[2] == {"index.md", "verdicts.md"}
    figure_pages = {f"bench/fig-{name}/index.md" for name in (
        "cpu-dispatch-threshold", "host-device-overlap", "implicit-sync", "naive-vs-blocked", "pytree-block")}
    assert builds[3] >= figure_pages | {"asynchronous-dispatch.md"}
    assert not builds[3] & {"index.md", "verdicts.md", "what-the-clock-caught.md"}
    sites = [tmp_path / f"site-{n}" for n in range(4)]
    assert _quoted_count(sites[2]) == _quoted_count(sites[1]) + 1
    figure_page = (sites[3] / "bench" / "fig-pytree-block" / "index.html").read_text(encoding="utf-8")
    assert "Asynchronous dispatch, renamed" in figure_page
