"""The two caching hooks (benchsite/build/plugin.py for the pages it generates, render_cache.py for the
chapters) key their entries on one digest of the site's set-up and count reports by one rule
(benchsite/build/sitesetup.py): a change that shapes a page makes every cached page afresh, whichever
hook kept it, and a page that reported anything is kept by neither. The generated pages'
writer also gives each page its own anchors (links into it are checked against them)."""

import io
import logging
import sys
from types import SimpleNamespace

import pytest
from mkdocs.exceptions import PluginError
from mkdocs.utils import CountHandler

from benchsite.build import sitesetup
from conftest import load_hook


@pytest.fixture
def config(tmp_path):
    return {"markdown_extensions": ["toc"], "mdx_configs": {}, "validation": {"links": {"not_found": 30}},
            "use_directory_urls": True, "site_url": "", "repo_url": "", "docs_dir": "docs",
            "config_file_path": str(tmp_path / "mkdocs.yml"), "plugins": {}}


@pytest.fixture
def quiet_level():
    logger = logging.getLogger("mkdocs")
    level = logger.level
    yield logger
    logger.setLevel(level)


def test_everything_that_shapes_a_page_is_in_the_digest(config, tmp_path):
    hook = tmp_path / "hook.py"
    hook.write_text("x = 1\n")
    base = sitesetup.digest(config, hook)
    assert sitesetup.digest(dict(config), hook) == base  # the same set-up, the same key
    changed = {
        "validation": {"links": {"not_found": 20}},
        "use_directory_urls": False,
        "markdown_extensions": ["toc", "tables"],
        "mdx_configs": {"toc": {"permalink": True}},
        "site_url": "https://example.org/",
        "plugins": {"mkdocs-jupyter": SimpleNamespace(config={"theme": "dark"})},
    }
    for name, value in changed.items():
        assert sitesetup.digest(dict(config, **{name: value}), hook) != base, name
    hook.write_text("x = 2\n")
    assert sitesetup.digest(config, hook) != base, "a hook's code"


def test_a_copy_of_the_project_elsewhere_has_the_same_digest(config, tmp_path):
    """mkdocs makes docs_dir absolute: the digest names it, and the hooks, from the project's folder,
    so a copy (a test's, another checkout) finds the entries the original made. Its pages' own
    keys hold their content (tests/test_docs_reads.py builds such a copy warm, then edits it)."""
    def project(root, docs="docs"):
        (root / "hooks").mkdir(parents=True, exist_ok=True)
        (root / "hooks" / "h.py").write_text("x = 1\n")
        return dict(config, config_file_path=str(root / "mkdocs.yml"), docs_dir=str(root / docs),
                    hooks={"h.py": SimpleNamespace(__file__=str(root / "hooks" / "h.py"))})

    here = sitesetup.digest(project(tmp_path / "one"))
    assert sitesetup.digest(project(tmp_path / "two" / "deeper")) == here
    assert sitesetup.digest(project(tmp_path / "three", docs="pages")) != here  # another docs folder
    other = project(tmp_path / "four")
    (tmp_path / "four" / "hooks" / "h.py").write_text("x = 2\n")
    assert sitesetup.digest(other) != here  # the hook's code


def test_a_hook_that_config_lists_is_in_the_digest(config, tmp_path):
    other = tmp_path / "other.py"
    other.write_text("y = 1\n")
    listed = dict(config, hooks={"other.py": SimpleNamespace(__file__=str(other))})
    before = sitesetup.digest(listed)
    other.write_text("y = 2\n")
    assert sitesetup.digest(listed) != before


def test_quiet_and_verbose_builds_get_their_own_digest(config, quiet_level):
    digests = []
    for level in (logging.INFO, logging.ERROR, logging.DEBUG, logging.INFO):
        quiet_level.setLevel(level)
        digests.append(sitesetup.digest(config))
    assert len(set(digests[:3])) == 3 and digests[0] == digests[3]


def test_both_hooks_key_their_pages_on_the_same_set_up(config, quiet_level, monkeypatch, tmp_path):
    """What a -q build keeps must not be served to a normal build: the generated pages' key used
    to leave out the log level (and the validation levels, the URL style, the plugins)."""
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    bench, render_cache = load_hook("plugin", monkeypatch), load_hook("render_cache", monkeypatch)
    codes = []
    for level in (logging.INFO, logging.ERROR):
        quiet_level.setLevel(level)
        render_cache.on_config(config)
        code = bench._Writer.code_of(config).decode()
        assert render_cache.STATE["setup"] in code
        codes.append(code)
    assert codes[0] != codes[1]
    assert bench._Writer.code_of(dict(config, use_directory_urls=False)) != bench._Writer.code_of(config)


def test_a_warning_the_log_level_drops_is_kept_for_a_strict_build(quiet_level, monkeypatch):
    """-q sets the mkdocs logger to ERROR (mkdocs/__main__.py): a warning never reaches the handler
    that strict mode counts with, so sitesetup.warn keeps it and the bench hook fails the build."""
    monkeypatch.setattr(sitesetup, "UNCOUNTED", [])
    log = logging.getLogger("mkdocs.plugins.bench")
    quiet_level.setLevel(logging.INFO)
    sitesetup.warn(log, "heard.csv:2: bad")
    assert sitesetup.uncounted_failure() is None  # mkdocs' strict mode counts this one itself
    quiet_level.setLevel(logging.ERROR)
    sitesetup.warn(log, "unheard.csv:5: column 'time_s' is nan")
    assert sitesetup.UNCOUNTED == ["unheard.csv:5: column 'time_s' is nan"]
    assert "unheard.csv:5: column 'time_s' is nan" in sitesetup.uncounted_failure()


@pytest.fixture
def cli_logger(monkeypatch):
    """The mkdocs logger as the command line sets it up (mkdocs/__main__.py, State): a stream of its
    own that does not propagate, at INFO; put back as it was afterwards."""
    logger = logging.getLogger("mkdocs")
    saved = logger.level, logger.propagate, list(logger.handlers)
    stream = io.StringIO()
    logger.handlers[:] = [logging.StreamHandler(stream)]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    monkeypatch.setattr(sitesetup, "UNCOUNTED", [])
    yield logger, stream
    logger.setLevel(saved[0])
    logger.propagate = saved[1]
    logger.handlers[:] = saved[2]


def log_a_build(logger: logging.Logger) -> list[tuple[str, int]]:
    """What mkdocs' strict mode counts (commands/build.py: a CountHandler at WARNING on the logger)
    while mkdocs and a plugin log at every level."""
    counter = CountHandler()
    counter.setLevel(logging.WARNING)
    logger.addHandler(counter)
    try:
        logging.getLogger("mkdocs.structure.pages").debug("reading a page")
        logging.getLogger("mkdocs.commands.build").info("building")
        logging.getLogger("mkdocs.structure.pages").warning("Doc file 'a.md' contains a link 'gone.md'")
        logging.getLogger("mkdocs.plugins.x").warning("x: a damaged input")
        logging.getLogger("mkdocs.plugins.x").error("x: an error")
    finally:
        logger.removeHandler(counter)
    return counter.get_counts()


@pytest.mark.parametrize("level, printed", [
    (logging.ERROR, ["x: an error"]),  # -q
    (logging.INFO, ["building", "Doc file 'a.md' contains a link 'gone.md'", "x: a damaged input", "x: an error"]),
    (logging.DEBUG, ["reading a page", "building", "Doc file 'a.md' contains a link 'gone.md'",
                     "x: a damaged input", "x: an error"]),  # -v
])
def test_strict_counts_every_warning_at_every_log_level_and_prints_what_it_printed(cli_logger, level, printed):
    """-q sets the mkdocs logger to ERROR, so mkdocs' strict counter never heard a warning
    (mkdocs build --strict -q passed on a broken link). count_hidden_warnings lets the warnings
    through to the counter, prints what the level printed, and keeps the hidden ones to name."""
    logger, stream = cli_logger
    logger.setLevel(level)
    sitesetup.count_hidden_warnings()
    sitesetup.count_hidden_warnings()  # once is enough (mkdocs serve starts once, builds many times)
    assert log_a_build(logger) == [("ERROR", 1), ("WARNING", 2)]
    assert stream.getvalue().splitlines() == printed
    hidden = ["Doc file 'a.md' contains a link 'gone.md'", "x: a damaged input"] if level > logging.WARNING else []
    assert sitesetup.UNCOUNTED == hidden
    failure = sitesetup.uncounted_failure()
    assert (failure is None) == (not hidden)
    assert all(message in failure for message in hidden)


def test_a_quiet_build_gets_the_default_builds_key_once_its_warnings_count(cli_logger, config):
    """Quiet, it hears what a default build hears, so it may share that build's cached pages."""
    logger, _ = cli_logger
    default = sitesetup.digest(config)
    logger.setLevel(logging.ERROR)
    assert sitesetup.digest(config) != default  # -q alone heard no report
    sitesetup.count_hidden_warnings()
    assert sitesetup.digest(config) == default


def test_without_it_a_quiet_strict_build_counts_no_warning(cli_logger):
    """The trap itself (mkdocs 1.6): what the test above guards against."""
    logger, _ = cli_logger
    logger.setLevel(logging.ERROR)
    assert log_a_build(logger) == [("ERROR", 1)]


def test_a_warning_through_warn_is_kept_once(cli_logger):
    logger, stream = cli_logger
    logger.setLevel(logging.ERROR)
    sitesetup.count_hidden_warnings()
    sitesetup.warn(logging.getLogger("mkdocs.plugins.bench"), "bad.csv:3: column 'time_s' is nan")
    assert sitesetup.UNCOUNTED == ["bad.csv:3: column 'time_s' is nan"]
    assert stream.getvalue() == ""


def test_reports_are_warnings_and_mkdocs_link_reports_at_any_level():
    reports = sitesetup.Reports()
    logger = logging.getLogger("mkdocs")
    logger.addHandler(reports)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        logging.getLogger("mkdocs.plugins.bench").info("drawing charts")  # a plugin at work: not a report
        assert reports.count == 0
        logging.getLogger("mkdocs.structure.pages").info("a link to a missing page")  # validation: info
        logging.getLogger("mkdocs.plugins.bench").warning("a damaged results file")
        assert reports.count == 2
    finally:
        logger.removeHandler(reports)
        logger.setLevel(level)


@pytest.mark.parametrize("report, makes", [(False, 1), (True, 2)])
def test_the_bench_hook_keeps_no_expansion_that_reported_a_link(report, makes, monkeypatch, tmp_path, quiet_level):
    """The chapters' markers are expanded once and kept, unless the expansion logged a report,
    including a link report at the level validation: sets (info here): then it is made, and
    reports, again on the next build. The old counter heard warnings only."""
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    bench = load_hook("plugin", monkeypatch)
    calls = []

    def expand(text, ctx):
        calls.append(text)
        if report:
            logging.getLogger("mkdocs.structure.pages").info("a link to a page that is not there")
        return text

    monkeypatch.setattr(bench, "_state", lambda build, config: "state")
    monkeypatch.setattr(bench, "_context", lambda *args: None)
    monkeypatch.setattr(bench.markers, "expand", expand)
    quiet_level.setLevel(logging.INFO)
    build = SimpleNamespace(cache=SimpleNamespace(blocks_in=lambda text: {}, restore=lambda blocks: None), problems=0,
                            docs_now={})
    for _ in range(2):
        assert bench._expand(build, {"docs_dir": str(tmp_path)}, "a page", "a.md", "a/") == "a page"
    assert len(calls) == makes


@pytest.fixture
def writer(monkeypatch, tmp_path):
    """The bench hook's writer of generated pages, on a two-page site, markers left as they are."""
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import File, Files

    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    bench = load_hook("plugin", monkeypatch)
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n")
    cfg = MkDocsConfig(config_file_path=str(tmp_path / "mkdocs.yml"))
    cfg.load_dict({"site_name": "t", "docs_dir": str(tmp_path / "docs"), "site_dir": str(tmp_path / "site"),
                   "markdown_extensions": ["toc"]})
    assert not cfg.validate()[0]
    pages = [bench.DirectPage(f"bench/fig-x/{m}.md", "", cfg) for m in ("one", "two")]
    files = Files([File("index.md", cfg["docs_dir"], cfg["site_dir"], True), *pages])
    docs = bench.Docs(tmp_path / "docs")
    monkeypatch.setattr(bench, "_context", lambda *args: SimpleNamespace(docs=docs, page="docs/page",
                                                                        on_problem=lambda m: None))
    monkeypatch.setattr(bench.markers, "expand", lambda text, ctx: text)
    catalog = SimpleNamespace(figures={"fig-x": SimpleNamespace(chapter="chapter.md")})
    build = SimpleNamespace(files=files, problems=0, cache=SimpleNamespace(fill=lambda html, link: html),
                            catalog=catalog)
    return bench._Writer(build, cfg), pages


def test_a_generated_page_may_read_under_docs_only_what_its_key_covers(writer, tmp_path):
    """A written page's key names by hand what it reads of docs/ (its figure's chapter's facts):
    a page made from any other read there stops the build, naming the page and the read, rather
    than being kept under a key that would serve it stale once that file changed."""
    write, (one, two) = writer
    (tmp_path / "docs" / "chapter.md").write_text("# Chapter\n")
    (tmp_path / "docs" / "other.md").write_text("# Other\n")
    facts = sys.modules["plugin_under_test"].pages.chapter_facts
    one.make = lambda ctx: f"{ctx.docs.view('chapter.md', facts)!r}"
    write.render(one, "# One\n", None)  # what the key covers
    two.make = lambda ctx: ctx.docs.text("other.md") or ""
    with pytest.raises(PluginError, match=r"docs/bench/fig-x/two.md: .* file:other.md"):
        write.render(two, "# Two\n", None)


def test_a_generated_page_records_its_own_anchors_only(writer):
    """Links into a generated page are checked against the anchors it has: the writer renders
    page after page with one Markdown instance, and mkdocs' anchor collector adds to one set
    (the anchors of every earlier page were recorded as this one's, so a link to an anchor
    that only another page has passed the check)."""
    write, (one, two) = writer
    first = write.render(one, "# One\n\n## Only on one\n\n<div id=\"raw-one\"></div>\n", None)
    second = write.render(two, "# Two\n\n## Only on two\n", None)
    assert {"only-on-one", "raw-one"} <= first["anchor_ids"] and "only-on-two" not in first["anchor_ids"]
    assert {"only-on-two"} <= second["anchor_ids"] and not {"only-on-one", "raw-one"} & second["anchor_ids"]
    write.render(one, "# One\n\n<div id=\"raw-one\"></div>\n", None)
    assert write.render(two, "", None)["anchor_ids"] == set()  # Markdown runs no processor on a blank page


@pytest.mark.parametrize("report, kept", [(False, True), (True, False)])
def test_a_generated_page_that_reported_a_link_is_not_kept(report, kept, writer, monkeypatch, quiet_level):
    """The generated pages' bodies are kept under the build cache only when making them reported
    nothing, a link report at the level validation: sets included (info here): the same rule as
    the chapters' markers (``sitesetup.Reports``)."""
    write, (one, _) = writer
    quiet_level.setLevel(logging.INFO)

    def expand(text, ctx):
        if report:
            logging.getLogger("mkdocs.structure.pages").info("a link to a page that is not there")
        return text

    monkeypatch.setattr(sys.modules["plugin_under_test"].markers, "expand", expand)
    write.render(one, "# One\n", "the-key")
    assert write.stored("the-key").is_file() is kept



def test_reporting_counts_on_the_loggers_named_only_while_its_block_runs():
    """``sitesetup.reporting``: mkdocs' logger when none is named; its handler is gone after the block,
    also when the block raises (a kept page must not count what a later page reported)."""
    before = {name: list(logging.getLogger(name).handlers) for name in ("mkdocs", "MARKDOWN")}
    with sitesetup.reporting() as reports:
        logging.getLogger("mkdocs.plugins.bench").warning("a damaged results file")
        logging.getLogger("MARKDOWN").warning("not mkdocs' logger")
    assert reports.count == 1
    try:
        with sitesetup.reporting("mkdocs", "MARKDOWN") as both:
            logging.getLogger("MARKDOWN").warning("Python-Markdown's")
            raise RuntimeError("the block failed")
    except RuntimeError:
        pass
    assert both.count == 1
    logging.getLogger("mkdocs").warning("after the block")
    assert (reports.count, both.count) == (1, 1)
    assert {name: list(logging.getLogger(name).handlers) for name in before} == before
