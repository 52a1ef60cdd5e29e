"""The render cache (benchsite/build/render_cache.py) keeps what mkdocs renders from a page and what the
search indexer makes of it. These tests drive it with fake pages whose renderer counts its calls:
the same inputs are rendered once, and every input the result depends on (the Markdown, a file a
snippet line names, the site's files, a page that linked to a file now gone) makes it again; a
render that reported something is never kept."""

import html
import importlib.util
import logging
import os
import re
import subprocess
from types import SimpleNamespace

import pytest

from conftest import REPO


@pytest.fixture
def hook(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # where snippet paths are found, as mkdocs' working directory
    path = REPO / "benchsite" / "build" / "render_cache.py"
    spec = importlib.util.spec_from_file_location("render_cache_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    config = {"markdown_extensions": ["toc"], "mdx_configs": {}, "validation": {"links": "warn"},
              "use_directory_urls": True, "site_url": "", "repo_url": "", "docs_dir": "docs",
              "config_file_path": str(tmp_path / "mkdocs.yml"), "plugins": {}}
    module.on_config(config)
    module.on_files(Files(["index.md", "other.md"]), config)
    return module


class File:
    def __init__(self, name):
        self.src_uri = self.dest_uri = self.url = name
        self.inclusion = "x"


class Files(list):
    def __init__(self, names):
        super().__init__(File(n) for n in names)

    def get_file_from_path(self, src):
        return next((f for f in self if f.src_uri == src), None)


class Page:
    def __init__(self, markdown, src="index.md"):
        self.file, self.url, self.meta, self.markdown = SimpleNamespace(src_uri=src), src, {}, markdown
        self.content, self.toc, self._title_from_render = None, [], None


class Renderer:
    """Stands in for mkdocs' Page.render: HTML from the Markdown, a link to other.md."""

    def __init__(self, files, warn=False):
        self.calls, self.files, self.warn = 0, files, warn

    def __call__(self, page):
        def render(config, files):
            self.calls += 1
            if self.warn:
                logging.getLogger("mkdocs.structure.pages").warning("a link to a missing page")
            page.content = f"<p>{page.markdown}</p>"
            page.present_anchor_ids = {"top"}
            page.links_to_anchors = {self.files.get_file_from_path("other.md"): {"part": "other.md#part"}}
        return render


def render_twice(hook, files, renderer, first, second):
    pages = []
    for markdown in (first, second):
        page = Page(markdown)
        hook._cached_render(page, renderer(page))({}, files)
        pages.append(page)
    return pages


def test_the_same_page_is_rendered_once_and_read_back_whole(hook):
    files = Files(["index.md", "other.md"])
    renderer = Renderer(files)
    one, two = render_twice(hook, files, renderer, "text", "text")
    assert renderer.calls == 1
    assert (two.content, two.present_anchor_ids) == (one.content, one.present_anchor_ids) == ("<p>text</p>", {"top"})
    assert two.links_to_anchors == {files.get_file_from_path("other.md"): {"part": "other.md#part"}}


def test_new_markdown_is_rendered_again(hook):
    files = Files(["index.md", "other.md"])
    renderer = Renderer(files)
    _, two = render_twice(hook, files, renderer, "text", "new text")
    assert renderer.calls == 2 and two.content == "<p>new text</p>"


def test_a_changed_snippet_file_is_rendered_again(hook, tmp_path):
    files = Files(["index.md", "other.md"])
    renderer = Renderer(files)
    (tmp_path / "code.py").write_text('x = 1\n--8<-- "more.py"\n')  # a snippet file can include another
    (tmp_path / "more.py").write_text("y = 1\n")
    markdown = '--8<-- "code.py:part"'
    render_twice(hook, files, renderer, markdown, markdown)
    assert renderer.calls == 1
    (tmp_path / "code.py").write_text('x = 2\n--8<-- "more.py"\n')
    render_twice(hook, files, renderer, markdown, markdown)
    assert renderer.calls == 2
    (tmp_path / "more.py").write_text("y = 2\n")
    render_twice(hook, files, renderer, markdown, markdown)
    assert renderer.calls == 3


def test_a_single_quoted_snippet_file_is_in_the_key_too(hook, tmp_path):
    files = Files(["index.md", "other.md"])
    renderer = Renderer(files)
    (tmp_path / "code.py").write_text("x = 1\n")
    markdown = "--8<-- 'code.py'"
    render_twice(hook, files, renderer, markdown, markdown)
    (tmp_path / "code.py").write_text("x = 2\n")
    render_twice(hook, files, renderer, markdown, markdown)
    assert renderer.calls == 2


def test_quiet_and_verbose_builds_keep_their_own_entries(hook, tmp_path):
    """-q silences the reports that keep a page out of the cache, and -v makes mkdocs skip
    recording links to anchors: neither kind of build may fill the entries a normal one reads."""
    config = {"markdown_extensions": [], "mdx_configs": {}, "validation": {}, "use_directory_urls": True,
              "docs_dir": "docs", "config_file_path": str(tmp_path / "mkdocs.yml"), "plugins": {}}
    logger, setups = logging.getLogger("mkdocs"), []
    level = logger.level
    try:
        for each in (logging.INFO, logging.ERROR, logging.DEBUG, logging.INFO):
            logger.setLevel(each)
            hook.on_config(config)
            setups.append(hook.STATE["setup"])
    finally:
        logger.setLevel(level)
    assert len(set(setups[:3])) == 3 and setups[0] == setups[3]


def test_the_multi_line_snippet_form_is_never_kept(hook):
    files = Files(["index.md", "other.md"])
    renderer = Renderer(files)
    render_twice(hook, files, renderer, "--8<--\ncode.py\n--8<--", "--8<--\ncode.py\n--8<--")
    assert renderer.calls == 2


def test_a_render_that_reported_something_is_made_and_reported_every_time(hook, caplog):
    files = Files(["index.md", "other.md"])
    renderer = Renderer(files, warn=True)
    with caplog.at_level(logging.WARNING):
        render_twice(hook, files, renderer, "text", "text")
    assert renderer.calls == 2
    assert [r.message for r in caplog.records].count("a link to a missing page") == 2


def test_a_page_whose_link_target_is_gone_is_rendered_again(hook):
    files = Files(["index.md", "other.md"])
    renderer = Renderer(files)
    render_twice(hook, files, renderer, "text", "text")
    fewer = Files(["index.md"])
    page = Page("text")
    hook._cached_render(page, renderer(page))({}, fewer)  # same key: the listing digest is per build
    assert renderer.calls == 2


def test_the_site_files_are_part_of_the_key(hook):
    files = Files(["index.md", "other.md"])
    renderer = Renderer(files)
    render_twice(hook, files, renderer, "text", "text")
    hook.on_files(Files(["index.md", "other.md", "new.md"]), {})
    page = Page("text")
    hook._cached_render(page, renderer(page))({}, files)
    assert renderer.calls == 2


def test_a_plugins_settings_are_part_of_the_key(hook, tmp_path):
    """mkdocs-jupyter renders the lesson by its own settings (theme, prompts, inputs shown)."""
    config = {"markdown_extensions": [], "mdx_configs": {}, "validation": {}, "use_directory_urls": True,
              "docs_dir": "docs", "config_file_path": str(tmp_path / "mkdocs.yml")}
    setups = []
    for theme in ("light", "dark", "light"):
        hook.on_config(dict(config, plugins={"mkdocs-jupyter": SimpleNamespace(config={"theme": theme})}))
        setups.append(hook.STATE["setup"])
    assert setups[0] != setups[1] and setups[0] == setups[2]


def test_search_entries_are_indexed_once_per_page_content(hook):
    index = SimpleNamespace(config={"lang": ["en"]}, entries=[])
    calls = []

    def add(page):
        calls.append(page.url)
        index.entries.append({"location": page.url, "title": page.title, "text": page.content})

    cached = hook._cached_entries(index, add)
    page = SimpleNamespace(url="a/", title="A", meta={}, toc=[], content="<p>one</p>")
    cached(page)
    cached(page)
    assert len(calls) == 1 and index.entries[0] == index.entries[1]
    cached(SimpleNamespace(url="a/", title="A", meta={}, toc=[], content="<p>two</p>"))
    assert len(calls) == 2 and index.entries[2]["text"] == "<p>two</p>"


def mkdocs_project(root):
    (root / "docs").mkdir(parents=True)
    (root / "code.py").write_text("# --8<-- [start:part]\nx = 1\n# --8<-- [end:part]\n")
    (root / "docs" / "index.md").write_text('# Home\n\nSee [the other page](other.md#nowhere).\n\n'
                                            '```python\n--8<-- "code.py:part"\n```\n')
    (root / "docs" / "other.md").write_text("# Other\n\nWords to find.\n")
    (root / "mkdocs.yml").write_text(
        "site_name: t\ntheme:\n  name: material\n  font: false\n"
        f"hooks:\n  - {REPO / 'benchsite' / 'build' / 'render_cache.py'}\n"  # the render cache alone
        "plugins:\n  - search\nvalidation:\n  anchors: warn\n"
        "markdown_extensions:\n  - pymdownx.superfences\n  - pymdownx.snippets:\n      base_path: ['.']\n"
        "      check_paths: true\n")


def mkdocs_build(root, out):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", BENCH_CACHE=str(root / "cache"))
    return subprocess.run([str(REPO / ".venv" / "bin" / "mkdocs"), "build", "-d", str(out)], cwd=root,
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.slow
def test_mkdocs_builds_with_the_cache_report_every_time_and_show_what_changed(tmp_path):
    """Through mkdocs itself: a warm build reports the broken anchor again, serves the same pages
    and search index as the cold one, and shows a snippet file edited in between."""
    root = tmp_path / "project"
    mkdocs_project(root)
    cold, warm = mkdocs_build(root, tmp_path / "one"), mkdocs_build(root, tmp_path / "two")
    for proc in (cold, warm):
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "does not contain an anchor '#nowhere'" in proc.stderr
    assert any((root / "cache" / "rendered").iterdir()) and any((root / "cache" / "search").iterdir())
    for name in ("index.html", "other/index.html", "search/search_index.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    (root / "code.py").write_text("# --8<-- [start:part]\nx = 2\n# --8<-- [end:part]\n")
    third = mkdocs_build(root, tmp_path / "three")
    assert third.returncode == 0, third.stderr[-2000:]
    assert "x = 2" in html.unescape(re.sub(r"<[^>]+>", "", (tmp_path / "three" / "index.html").read_text()))


def test_the_site_markdown_of_a_scripts_code_is_kept_until_what_it_includes_changes(tmp_path, monkeypatch):
    """``Context.markdown`` (a figure script's code for its chapter and its /bench page, often made in
    different workers) converts a text once, keyed by the files its snippet lines include and the set-up."""
    from benchsite.build import plugin

    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # where snippet paths are found, as mkdocs' working directory
    script, calls = tmp_path / "s.py", []
    script.write_text("x = 1\n")

    class Markdown:  # the site's Markdown: includes the snippet, counts its conversions
        def reset(self):
            return self

        def convert(self, text):
            calls.append(text)
            return f"<pre>{script.read_text()}</pre>"

    code = '```python\n--8<-- "s.py"\n```\n'
    here = ["."]  # the snippets extension's base_path (mkdocs.yml's)
    assert plugin._site_markdown(Markdown(), "set-up", here, code) == "<pre>x = 1\n</pre>"
    assert plugin._site_markdown(Markdown(), "set-up", here, code) == "<pre>x = 1\n</pre>" and len(calls) == 1  # kept
    script.write_text("x = 2\n")
    assert plugin._site_markdown(Markdown(), "set-up", here, code) == "<pre>x = 2\n</pre>" and len(calls) == 2
    plugin._site_markdown(Markdown(), "another set-up", here, code)
    assert len(calls) == 3
    block = "--8<--\ns.py\n--8<--\n"  # the block form: what it includes is not named on one line
    plugin._site_markdown(Markdown(), "set-up", here, block)
    plugin._site_markdown(Markdown(), "set-up", here, block)
    assert len(calls) == 5  # never kept


@pytest.mark.parametrize("logger", ["mkdocs.plugins.test", "MARKDOWN"])
def test_the_site_markdown_of_a_scripts_code_that_reported_anything_is_not_kept(tmp_path, monkeypatch, logger):
    """A conversion that logged a warning, under mkdocs or through Python-Markdown's own logger
    (``MARKDOWN``: its block parser's), is converted, and warns, again on the next build, as a page
    that reported anything is never kept (a strict warm build must fail where the cold one did).
    Nothing is left listening on either logger afterwards."""
    import logging

    from benchsite.build import plugin, sitesetup

    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.py").write_text("x = 1\n")
    calls, warn = [], [True]

    class Markdown:
        def reset(self):
            return self

        def convert(self, text):
            calls.append(text)
            if warn[0]:
                logging.getLogger(logger).warning("could not read s.py")
            return "<pre>x = 1</pre>"

    code = '```python\n--8<-- "s.py"\n```\n'
    for _ in range(2):
        assert plugin._site_markdown(Markdown(), "set-up", ["."], code) == "<pre>x = 1</pre>"
    assert len(calls) == 2  # reported: converted (and reported) each time
    warn[0] = False
    for _ in range(2):
        plugin._site_markdown(Markdown(), "set-up", ["."], code)
    assert len(calls) == 3  # quiet: kept after the first
    for name in ("mkdocs", "MARKDOWN"):
        assert not [h for h in logging.getLogger(name).handlers if isinstance(h, sitesetup.Reports)]


def test_a_snippet_under_another_base_path_is_kept_only_until_it_changes(tmp_path, monkeypatch):
    """pymdownx.snippets looks a snippet line's file up under its ``base_path``; the kept Markdown of a
    script's code, and a kept page, follow an edit to the file it found there, not to a file of that
    name in the directory mkdocs runs in (with base_path ["sub"] the old code block was served on)."""
    import markdown

    from benchsite.build import plugin, render_cache

    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    config = {"markdown_extensions": ["pymdownx.superfences", "pymdownx.snippets"],
              "mdx_configs": {"pymdownx.snippets": {"base_path": ["sub"], "check_paths": True}}}
    bases = render_cache.snippet_bases(config)
    md = markdown.Markdown(extensions=config["markdown_extensions"], extension_configs=config["mdx_configs"])
    (tmp_path / "sub").mkdir()
    script, code = tmp_path / "sub" / "s.py", '```python\n--8<-- "s.py"\n```\n'
    script.write_text("x = 1\n")
    assert "x</span> <span class=\"o\">=</span> <span class=\"mi\">1" in plugin._site_markdown(md, "s", bases, code)
    keyed = render_cache.snippets(code, bases)
    script.write_text("x = 2\n")
    assert render_cache.snippets(code, bases) != keyed  # the render cache's page key changes too
    assert "x</span> <span class=\"o\">=</span> <span class=\"mi\">2" in plugin._site_markdown(md, "s", bases, code)
    assert render_cache.snippet_bases({"mdx_configs": {}}) == ["."]  # the extension's default
