"""The site's MkDocs plugin (:class:`BenchPlugin`, ``plugins: - bench``): load the results
once, generate the /bench pages, expand bench markers, ship the CSVs.

The work is in the layers below (model, views, pages: no MkDocs import there); this module
wires them into MkDocs' events, and :mod:`.mkdocs_private` holds the private MkDocs names it
cannot do without. A build's state is one :class:`Build`,
made afresh in ``on_config`` (``mkdocs serve`` rebuilds in the same process).

The pages that number figures x machines (and x sessions), /bench/<fig>/<machine>/ and
/bench/<fig>/<machine>/<session>/, are not mkdocs pages: mkdocs would run a fresh Markdown
instance, the search indexer and the whole Material template for each (about 45 ms a page,
minutes at a hundred machines). They are registered as files (so links to them, from any
page, resolve and are checked as before), and ``on_post_build`` writes them: their Markdown
through one Markdown instance with mkdocs' own link rewriting, put into a shell rendered once
by the theme (header, nav, assets) with the title, canonical URL and table of contents swapped.
A session's page has a lighter shell of its own (``session_shell.html``: no navigation, no table
of contents, no search box), its whitespace compacted.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import logging
import os
import posixpath
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import markdown
from markupsafe import Markup
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import get_toc
from mkdocs.utils import get_relative_url
from mkdocs.utils import meta as md_meta

from benchkit import layout
from benchsite.build import mkdocs_private, notebook, parallel, render_cache, sitedir, sitesetup
from benchsite.build.buildcache import BuildCache
from benchsite.core import cachefile, urls
from benchsite.core.cachefile import cache_dir
from benchsite.model import catalog as _catalog
from benchsite.model import cells, load
from benchsite.pages import history, markers, pages
from benchsite.pages.docsread import Docs, view_key
from benchsite.views import render, roofline

log = logging.getLogger("mkdocs.plugins.bench")


class DirectPage(File):
    """A generated page that mkdocs links to but does not build: ``on_post_build`` writes it."""

    def __init__(self, src_uri: str, text: str, config, make: Callable[[markers.Context], str] | None = None) -> None:
        name = posixpath.splitext(src_uri)[0]
        super().__init__(src_uri, None, config["site_dir"], config["use_directory_urls"],
                         dest_uri=f"{name}/index.html" if config["use_directory_urls"] else f"{name}.html",
                         inclusion=InclusionLevel.NOT_IN_NAV)
        self.text = text  # the page's fixed Markdown: front matter and title (pages.Generated)
        self.make = make  # the rest, made from the model when the page is written (pages.Generated)
        self.cache_key: str | None = None  # _Writer.key, once computed (on_nav)
        self.anchor_ids: set[str] | None = None  # once written
        self.links_to_anchors: dict = {}  # File -> {anchor: link}, once written

    @functools.cached_property
    def source(self) -> tuple[str, dict]:
        """The page's Markdown and its front matter, as mkdocs would split them."""
        return front_matter(self.text)

    def is_documentation_page(self) -> bool:
        return False

    def is_static_page(self) -> bool:
        return False

    def is_media_file(self) -> bool:
        return False

    def copy_file(self, dirty: bool = False) -> None:
        pass  # written by on_post_build


class Download(File):
    """A results file as the site serves it (a CSV gzip-compressed, a trace as it is): written only
    where the file there does not already hold its bytes (the last build's, taken back in on_env)."""

    def copy_file(self, dirty: bool = False) -> None:
        sitedir.write_if_changed(self.content_bytes, self.abs_dest_path)


def front_matter(text: str) -> tuple[str, dict]:
    """``mkdocs.utils.meta.get_data``, parsing each distinct YAML block once: thousands of generated
    pages share two."""
    found = md_meta.YAML_RE.match(text)
    data = _yaml_block(found.group(0)) if found else None
    if data is None:
        return md_meta.get_data(text)
    return text[found.end():].lstrip("\n"), copy.deepcopy(data)  # each page its own, as get_data gives


@functools.lru_cache(maxsize=64)
def _yaml_block(block: str) -> dict | None:
    _, data = md_meta.get_data(block)
    return data if data else None


BENCH_PAGES = urls.BENCH_PAGES  # the generated pages' folder under docs/ and the site


def direct(uri: str) -> bool:
    """Machine pages (bench/<fig>/<machine>.md), session pages (bench/<fig>/<machine>/<session>.md)
    and what changed per machine (bench/changes/<machine>.md): all but the index and figure pages."""
    parts = uri.split("/")
    return len(parts) >= 3 and parts[0] == BENCH_PAGES and parts[-1] != "index.md"


@dataclass
class Build:
    catalog: _catalog.Catalog
    strict_stale: bool
    claims_fatal: bool = True  # a false claim on the reference machine fails the build (not BENCH_CLAIMS=report)
    cache: BuildCache = field(default_factory=BuildCache)
    markdown: Callable[[str], str] | None = None
    warned: set[str] = field(default_factory=set)
    problems: int = 0  # reports so far, repeats included (a page that had one is not cached)
    direct: list[DirectPage] = field(default_factory=list)
    files: Files | None = None
    nav: object = None
    env: object = None
    state: str | None = None  # _state, once computed
    docs_now: dict[str, str] = field(default_factory=dict)  # reads under docs/ as they are now (_reads_hold)
    old_site: sitedir.Removal | None = None  # the last build's pages, being removed (on_pre_build)

    def warn_once(self, message: str) -> None:
        # A bad file shows on the index, its figure page, its chapter and in prose: say so once.
        # A warning fails a strict build (with this message, no traceback), at any log level
        # (sitesetup.warn; on_post_build); a lenient one goes on.
        self.problems += 1
        if message not in self.warned:
            self.warned.add(message)
            sitesetup.warn(log, message)


BUILD: list[Build] = []  # the current build, replaced by each on_config


def on_config(config):
    extra = config.get("extra", {}).get("bench", {})
    root = Path(config["config_file_path"]).resolve().parent  # the checkout being built
    cachefile.use_project(root)  # its .cache/bench, wherever the package is installed
    results = _catalog.results_dir(extra.get("results"), root)
    preferred = _catalog.preferred_machine(results, extra.get("machine"))
    # Every core compresses and validates results files, then makes table models, histories and
    # charts, into the build cache; the build below reads them from there (benchsite/build/parallel.py).
    frames = cache_dir() / "frames"
    _warm("results files", [parallel.Job(functools.partial(_warm_file, file, frames),
                                         parallel.key("file", _stat(file.path)), "results file")
                            for file in layout.discover(results)])
    cat = _catalog.Catalog.build(results, preferred=preferred, bench_dir=root / layout.BENCH_DIR_NAME, cache=frames,
                                 declared=extra.get("machine"))
    _warm("figure x machine pairs", [parallel.Job(functools.partial(_warm_pair, cat, fig_id, machine),
                                                  _pair_key(cat, fig_id, machine), "figure x machine pair")
                                     for fig_id, machine in sorted(cat.frames)])
    site_markdown = markdown.Markdown(extensions=config["markdown_extensions"],
                                      extension_configs=config["mdx_configs"])
    build = Build(cat, os.environ.get("BENCH_STRICT") == "1", claims_fatal=os.environ.get("BENCH_CLAIMS") != "report",
                  markdown=functools.partial(_site_markdown, site_markdown, sitesetup.digest(config),
                                             render_cache.snippet_bases(config)))
    BUILD[:] = [build]
    sitesetup.UNCOUNTED.clear()
    for fig_id, machine in cat.stale():
        # Strict fails on what the prose quotes: the reference machine. A contributed folder
        # measured with older code stays on the site, marked stale on every page that shows it.
        fatal = build.strict_stale and machine == cat.reference(fig_id)
        (functools.partial(sitesetup.warn, log) if fatal else log.info)(
            f"{fig_id} on {machine} is stale: its script or the harness changed after the results "
            "were recorded (make bench refreshes it)")
    for orphan in cat.orphans:
        sitesetup.warn(log, f"{orphan.path}: no script bench_scripts/{orphan.stem}.py for these results")
    return config


# Where a conversion's reports go: mkdocs' own, and Python-Markdown's (logging.getLogger("MARKDOWN"),
# not under "mkdocs": printed by logging's last resort, never kept from a reader). pymdownx logs
# nothing: it raises, or warns through warnings.warn (mkdocs' showwarning: mkdocs.__main__, info).
MARKDOWN_LOGGERS = ("mkdocs", "MARKDOWN")


def _site_markdown(md: markdown.Markdown, setup: str, bases: list[str], text: str) -> str:
    """``text`` through the site's Markdown (``Context.markdown``: a figure script's code, as snippet
    lines, for ``pages.code_html``), kept under the build cache by the text, the files its snippet
    lines include (``render_cache.snippets``, looked up under the snippets extension's ``bases``) and
    the site's set-up (``sitesetup.digest``: the Markdown extensions, the code version). A figure's
    chapter and its /bench page are often made in different workers, which each highlighted the
    script: 16 of the 29 twice in a cold build here. A conversion that reported anything
    (``sitesetup.Reports`` on ``MARKDOWN_LOGGERS``) is not kept: it reports again on every build."""
    included = render_cache.snippets(text, bases)
    if included is None:  # a snippet block: what it includes cannot be named from the text
        return md.reset().convert(text)
    stored = cachefile.entry("markdown", f"{setup}\0{included}\0{text}")
    found = cachefile.read(stored)
    if isinstance(found, str):
        return found
    with sitesetup.reporting(*MARKDOWN_LOGGERS) as reports:
        html = md.reset().convert(text)
    if not reports.count:
        cachefile.write(stored, html)
    return html


def _warm(what: str, jobs: list[parallel.Job]) -> None:
    """``parallel.warm``, and one line saying how long it took: where a cold build's time goes
    (``tools/site_scaling.py`` reads these lines and shows each step)."""
    todo = len(parallel.pending(jobs))
    start = time.perf_counter()
    spent: dict[str, list[float]] = {}
    ran = parallel.warm(jobs, spent)
    how = (f"on {min(parallel.workers(), todo)} workers" if ran else "(done by an earlier build)" if not todo
           else "(not warmed: the build makes them itself)")
    log.info(f"bench: warmed {what}: {ran} of {len(jobs)} jobs {how} in {time.perf_counter() - start:.1f} s")
    if spent:  # what the workers' time went on (the step's seconds times the workers, less idling)
        log.info(f"bench: worker time on {what}: " + " · ".join(
            f"{kind} {sum(seconds):.1f} s ({len(seconds)}, {1000 * sum(seconds) / len(seconds):.0f} ms each)"
            for kind, seconds in sorted(spent.items(), key=lambda item: -sum(item[1]))))


def _stat(path: Path) -> str:
    """A file as a warming job's key sees it: by ``cachefile.stamp``, the rule the file digests
    use, so a changed file is warmed again (the build's own cache keys hash contents; this only
    decides whether warming is worth starting)."""
    try:
        return cachefile.stamp(path)
    except OSError:
        return f"{os.path.abspath(path)}\0-"


def _warm_file(file: layout.ResultFile, frames: Path) -> None:
    """In a worker: a results file's download compressed (``on_files`` serves it) and the file
    validated (a bad file raises here, and the build reports it)."""
    BuildCache().compressed(file.path)
    load.load(file, frames)


# How many results files' frames a warming worker keeps read between jobs before it forgets them and
# all it derived (``Catalog.trim``): above the committed results' 55, whose pages ask for most of them
# in each worker (at the catalog's default of 48 each worker forgot and read back about 40 of them
# in a cold build), while a hundred machine folders are still read a hundred at a time, not all
# (55 frames with their tables and histories: about 115 MB in a worker).
WORKER_FRAMES = 100


def _pair_key(cat: _catalog.Catalog, fig_id: str, machine: str) -> str:
    fig = cat.figures[fig_id]
    kept = cat.kept(machine, fig.stem)
    ref = cat.reference(fig_id)  # the pair's comparison is with the reference machine's results
    return parallel.key("pair", repr(fig), repr(cat.current_sha(fig_id)), machine, _stat(cat.csv_path(fig_id, machine)),
                        ref, _stat(cat.csv_path(fig_id, ref)) if ref else "-",
                        *(_stat(p) for pair in sorted(kept.values()) for p in pair))  # parallel.key adds the code


def _warm_pair(cat: _catalog.Catalog, fig_id: str, machine: str) -> None:
    """In a worker: what every page showing one figure on one machine starts from, and what the
    build asks of every pair before any page (its stale reason, its list of sessions), so that a
    page listing every machine reads a summary of each, not its samples."""
    try:
        cat.summary(fig_id, machine)  # what the index and the figure's machines table show
        BuildCache().chart_placeholder(cat.table(fig_id, machine))  # drawn and stored
        history.session_ids(cat, cat.figures[fig_id], machine)
        ref = cat.reference(fig_id)
        if ref is not None and ref != machine:  # the machine page's comparison, counted on the figure page
            cells.of_machines(cat, fig_id, machine, ref)
    finally:
        cat.trim(WORKER_FRAMES)


DIRTY = [False]  # mkdocs says at start-up whether this is a --dirty build (or serve --dirtyreload)
SERVING = [False]  # and whether it serves the site (a temporary folder, rebuilt on every change)
# The folders this plugin fills with thousands of files: the /bench pages and the downloads (every
# results file is served under results/: benchkit.layout.published_files).
REUSED = (BENCH_PAGES, "results")


def on_startup(command: str, dirty: bool) -> None:
    DIRTY[0], SERVING[0] = dirty, command == "serve"
    sitesetup.count_hidden_warnings()  # strict counts mkdocs' warnings under -q too (on_post_build names them)


def on_pre_build(config) -> None:
    """The last build's pages are moved aside and removed while this one runs (benchsite/build/sitedir.py);
    mkdocs would remove them one by one before building. A dirty build keeps them, as asked. The
    /bench pages and the downloads are set aside to be taken back (``on_env``), where each file
    that still holds the right bytes is left as it is (``sitedir.write_if_changed``)."""
    if not DIRTY[0]:
        build = BUILD[0]
        build.old_site = sitedir.set_aside(Path(config["site_dir"]), keep=() if SERVING[0] else REUSED)
        if build.old_site is not None and build.old_site.folders:
            log.info(f"bench: removing the last build's site while this one runs ({build.old_site.folders[-1].name})")


def on_build_error(error) -> None:
    if BUILD:
        _finish_removal(BUILD[0])


def _finish_removal(build: Build) -> None:
    """Wait for the last build's site to be gone; a folder that could not be removed is named (a
    deploy would publish it), where mkdocs' own clean would have left it without a word."""
    for folder in sitedir.finish(build.old_site):
        sitesetup.warn(log, f"{folder}: the last build's site could not be removed from here; remove it by hand")
    build.old_site = None


def on_files(files: Files, config) -> Files:
    """Every results file is downloadable at results/<machine>/<name> (a CSV gzip-compressed,
    at <name>.gz); the /bench pages are generated (only the index is in the nav)."""
    build = BUILD[0]
    for uri, path in layout.published_files(build.catalog.results):
        if path.suffix == layout.CSV_SUFFIX:
            files.append(Download.generated(config, uri, content=build.cache.compressed(path)))
        else:
            files.append(Download.generated(config, uri, abs_src_path=str(path)))
    for uri, page in pages.generated_pages(build.catalog).items():
        if direct(uri):
            build.direct.append(DirectPage(uri, page.text, config, page.make))
            files.append(build.direct[-1])
            continue
        inclusion = InclusionLevel.UNDEFINED if uri == urls.INDEX_SRC else InclusionLevel.NOT_IN_NAV
        files.append(File.generated(config, uri, content=page.text, inclusion=inclusion))
    build.files = files
    return files


def on_nav(nav, config, files):
    """The last step before mkdocs reads pages: every core reads and renders mkdocs' pages (their
    markers expanded) and makes the bodies of the written ones, into the build cache, first
    (benchsite/build/parallel.py)."""
    build = BUILD[0]
    build.nav = nav
    for file in files.documentation_pages():
        _check_text(file)
    writer = _Writer(build, config)
    state = _state(build, config)  # here, not once in each worker

    def source_job(f: File) -> parallel.Job:
        return _SourceJob(functools.partial(_warm_source, build, config, f), _source_key(build, config, f, state),
                          "/bench page" if f.src_uri.startswith(BENCH_PAGES + "/") else "chapter",
                          rekey=functools.partial(_source_key, build, config, f, state))

    kept = cachefile.names(writer.bodies)
    # A machine's pages one after another in one worker, its changes page first: each reads every
    # figure's sessions on the machine, which the pages after it find in that worker's catalog.
    groups = []
    for file in sorted(build.direct, key=lambda f: _direct_machine(f.src_uri)):
        text, _ = file.source
        key = file.cache_key = writer.key(file, text)
        if key and writer.stored(key).name not in kept:
            groups.append(parallel.Job(functools.partial(_warm_direct, build, config, file, text, key),
                                       kind=_direct_kind(file.src_uri), group=_direct_machine(file.src_uri)))
    _warm("pages", _longest_first(files.documentation_pages(), groups, source_job))
    return nav


def _longest_first(sources: list[File], groups: list[parallel.Job],
                   source_job: Callable[[File], parallel.Job]) -> list[parallel.Job]:
    """The pages' jobs in the order the workers take them, the longest first, so that the last to
    finish is a short one and no worker waits long on the other at the end: a notebook's
    (converting it is the longest job: 1.6 s of CPU here), then each machine's group of written
    pages (its changes, machine and session pages: 1.2-1.5 s here, more than any chapter), then the
    other mkdocs pages in mkdocs' file order. (With the groups last, one worker was left alone with
    the last group for up to its length.)"""
    notebook = [f.src_uri.endswith(".ipynb") for f in sources]
    return ([source_job(f) for f, nb in zip(sources, notebook) if nb] + groups
            + [source_job(f) for f, nb in zip(sources, notebook) if not nb])


def _check_text(file: File) -> None:
    """A page that is not UTF-8 text stops the build with its name, line and byte (mkdocs reads
    pages as UTF-8; unchecked, the first read of it ended the build in a traceback)."""
    try:
        _ = file.content_string  # as mkdocs reads it: UTF-8, strict
    except UnicodeDecodeError as err:
        line = err.object[:err.start].count(b"\n") + 1
        raise PluginError(f"docs/{file.src_uri}:{line}: not UTF-8 text (byte {err.object[err.start]:#04x} at offset "
                          f"{err.start}); save the page as UTF-8") from None


def _direct_machine(src_uri: str) -> str:
    """The machine slug of a written page: bench/changes/<machine>.md, bench/<fig>/<machine>[/<session>].md."""
    return src_uri.split("/")[2].removesuffix(".md")


def _direct_kind(src_uri: str) -> str:
    if src_uri.startswith(urls.CHANGES_DIR + "/"):
        return "changes page"
    return "session page" if src_uri.count("/") == 3 else "machine page"  # bench/<fig>/<machine>[/<session>].md


def on_env(env, config, files):
    """The last moment before mkdocs writes anything: the last build's /bench pages and downloads
    are taken back, all but the files this build writes through ``sitedir.write_if_changed``."""
    build = BUILD[0]
    build.env = env
    # mkdocs makes a new Jinja environment for every build, which compiles the theme's templates
    # again (a quarter of a warm build in one process, as mkdocs serve rebuilds). Jinja keeps their
    # code instead, by each template's name and source; the folder is the site's set-up's
    # (sitesetup.digest: Jinja's, the theme's and every library's version, the plugins' settings).
    compiled = cache_dir() / "jinja" / sitesetup.digest(config)
    compiled.mkdir(parents=True, exist_ok=True)
    env.bytecode_cache = jinja2.FileSystemBytecodeCache(str(compiled))
    reuse = {f.abs_dest_path for f in files if isinstance(f, DirectPage | Download) and f.inclusion.is_included()}
    for path in sitedir.take_back(build.old_site, Path(config["site_dir"]), reuse):
        sitesetup.warn(log, f"{path}: the last build's files here could not all be removed; remove them by hand")
    return env


def _warm_source(build: Build, config, file: File) -> None:
    """In a worker: what mkdocs will make of one of its pages, into the build cache. The page is
    read and rendered as the build reads it (``_populate_page``: every plugin's events, this plugin's
    markers, ``render_cache.py`` keeping the render, mkdocs-jupyter converting a notebook), and the
    search indexer's entries for it are made (kept by ``render_cache.py`` too). The build then finds
    them; this worker's copy of the page and of the index is thrown away with the worker."""
    try:
        page = file.page if file.page is not None else Page(None, file, config)  # as the build does
        mkdocs_private.populate_page(page, config, build.files)
        for plugin in config["plugins"].values():
            index = getattr(plugin, "search_index", None)
            if getattr(index, "bench_cached", False):
                index.add_entry_from_context(page)
    finally:
        build.catalog.trim(WORKER_FRAMES)


_WORKER_WRITER: list[_Writer] = []  # one per worker process (made there, after the fork)


def _warm_direct(build: Build, config, file: DirectPage, text: str, key: str) -> None:
    """In a worker: a written page's body, kept under the build cache by ``render``."""
    if not _WORKER_WRITER:
        _WORKER_WRITER.append(_Writer(build, config))
    try:
        _WORKER_WRITER[0].render(file, text, key)
    finally:
        build.catalog.trim(WORKER_FRAMES)


def _context(build: Build, config, src_uri: str, url: str, first_line: int = 1,
             docs: Docs | None = None) -> markers.Context:
    return markers.Context(
        catalog=build.catalog,
        page=f"docs/{src_uri}",
        link=lambda target: get_relative_url(target, url or "."),
        on_problem=build.warn_once,
        src_uri=src_uri,
        docs=docs if docs is not None else Docs(Path(config["docs_dir"])),
        site_url=config.get("site_url") or "",
        repo_url=config.get("repo_url") or "",
        cache=build.cache,
        markdown=build.markdown,
        claims_fatal=build.claims_fatal,
        first_line=first_line,
    )


def on_page_markdown(markdown: str, page, config, files) -> str:
    try:
        return _expand(BUILD[0], config, markdown, page.file.src_uri, page.url, _first_line(page, markdown))
    except markers.MarkerError as err:  # MkDocs reports a BuildError as its message, not a traceback
        raise PluginError(str(err)) from None


def _first_line(page, markdown: str) -> int:
    """The source file's line number of ``markdown``'s first line: mkdocs hands plugins the page
    without its front matter (and the blank lines after it), and a marker's message names the
    file's line."""
    if not page.meta:
        return 1
    source = page.file.content_string
    return source[:len(source) - len(markdown)].count("\n") + 1 if source.endswith(markdown) else 1


def _expand(build: Build, config, markdown: str, src_uri: str, url: str, first_line: int = 1) -> str:
    """A page's markers expanded, from the build cache when the page, every input outside
    ``docs/`` a marker can read (``_state``) and the code are what they were, every file under
    ``docs/`` the last expansion read (recorded by ``Docs``) still holds what it read, and the
    last expansion reported nothing."""
    state = _state(build, config)
    stored = cache_dir() / "expanded" / f"{parallel.key(state, src_uri, url, markdown)}.pkl"
    found = cachefile.read(stored)
    if isinstance(found, dict) and _reads_hold(build, config, found.get("reads")):
        build.cache.restore(found["blocks"])
        return found["text"]
    problems = build.problems
    docs = Docs(Path(config["docs_dir"]))
    with sitesetup.reporting() as warnings:
        text = markers.expand(markdown, _context(build, config, src_uri, url, first_line, docs))
    if not warnings.count and build.problems == problems:
        cachefile.write(stored, {"text": text, "blocks": build.cache.blocks_in(text), "reads": docs.reads})
        cachefile.write(_reads_record(state, src_uri), docs.reads)
    return text


def _state(build: Build, config) -> str:
    """Everything a page's markers can read outside ``docs/``, hashed once per build: the site's
    set-up (the one code version in it), whose numbers the pages quote, every figure's metadata,
    code hashes and the state of each of its results files, the commits that hold the data, and
    the content of every file under the results folder and ``bench_scripts/``, found by walking
    them: a new kind of file there is in the key without being named here. What a page reads
    under ``docs/`` (chapters quote each other) is recorded as it is read and checked by
    ``_reads_hold``: an edit to one chapter makes again only the pages that read it."""
    if build.state is None:
        cat = build.catalog
        h = hashlib.sha256(_Writer.code_of(config))
        h.update(f"{cat.results}\0{cat.preferred}\0{cat.declared}\0{build.claims_fatal}\0".encode())
        for fig_id in sorted(cat.figures):  # a cite block links the data at the commit that holds it
            for machine in cat.machines(fig_id):
                h.update(repr(cat.data_commit(fig_id, machine)).encode())
        for fig_id, fig in sorted(cat.figures.items()):
            h.update(f"{fig!r}\0{cat.current_sha(fig_id)!r}\0".encode())
            for machine in cat.machines(fig_id):
                h.update(f"{machine}\0{cat.problem(fig_id, machine) or '-'}\0".encode())
        for name, folder in (("results", cat.results), ("bench_scripts", cat.bench_dir)):
            # every results, side, kept-session and lesson file; every script and the harness
            h.update(f"{name}\0{_folder_digest(cat, folder)}\0".encode())
        build.state = h.hexdigest()
    return build.state


def _reads_hold(build: Build, config, reads: object) -> bool:
    """Whether every read under ``docs/`` that an expansion recorded (``Docs.reads``: a file's
    digest, a listing's names, what a named function found in a file) would read the same now;
    each is looked at once per build."""
    if not isinstance(reads, dict):
        return False
    for key, value in reads.items():
        if key not in build.docs_now:
            digest = functools.partial(cachefile.file_digest, cache=build.catalog.cache)
            build.docs_now[key] = Docs(Path(config["docs_dir"])).now(key, digest)
        if build.docs_now[key] != value:
            return False
    return True


def _reads_record(state: str, src_uri: str) -> Path:
    """Where a page's last kept expansion says what it read under ``docs/`` (its warming job's key)."""
    return cache_dir() / "expanded-reads" / f"{parallel.key(state, src_uri)}.pkl"


def _source_key(build: Build, config, file: File, state: str) -> str:
    """A mkdocs page's warming job's key: the page, ``_state`` and what its last kept expansion
    read under ``docs/`` as it is now (a page never expanded, or whose expansion was not kept,
    is warmed again)."""
    reads = cachefile.read(_reads_record(state, file.src_uri))
    now = repr(sorted(reads.items())) if isinstance(reads, dict) and _reads_hold(build, config, reads) else "-"
    return parallel.key("source", file.src_uri, file.content_string, state, now)


@dataclass(frozen=True)
class _SourceJob(parallel.Job):
    """A page's warming job, marked done under the key its inputs have after it ran: the
    expansion it made recorded what it read."""

    rekey: Callable[[], str] | None = None

    @property
    def done_file(self) -> Path | None:
        return cache_dir() / "warmed" / self.rekey() if self.rekey else super().done_file


def _folder_digest(cat: _catalog.Catalog, folder: Path) -> str:
    """``cachefile.tree_digest`` of a folder (every file's path and content), once per build."""
    return cat.memo(("folder-digest", str(folder)),
                    lambda: cachefile.tree_digest(folder, cat.cache) if folder.is_dir() else "-")


def on_post_page(output: str, page, config) -> str:
    """Charts go in last, after Markdown and the search index have seen the page."""
    return BUILD[0].cache.fill(output, lambda target: get_relative_url(target, page.url or "."))


# --- the pages mkdocs does not build --------------------------------------------------------

# The body carries "<h1" so that the theme does not add a heading of its own (the page has one).
SHELL_TITLE, SHELL_URL, SHELL_TOC = "BENCHSHELLTITLE", "BENCHSHELLURL/", "BENCHSHELLTOC"
SHELL_BODY = "<!--<h1-->BENCHSHELLBODY"
TOC_TEMPLATE = '{% import "partials/language.html" as lang with context %}{% include "partials/toc.html" %}'
# A session's permalink page has a lighter layout of its own (issue 38's size decision): no navigation,
# no table of contents (session_shell.html, an extension of the theme's main.html).
SESSION_SHELL = Path(__file__).with_name("session_shell.html")
CANONICAL = '<link rel="canonical" href="\0url">\n'


class _Writer:
    """One Markdown instance with mkdocs' own link rewriting and anchor collection, and one theme
    shell per page depth (relative links to assets and the nav depend on it)."""

    def __init__(self, build: Build, config) -> None:
        from mkdocs.commands.build import get_context

        self.build, self.config, self.get_context = build, config, get_context
        self.md = markdown.Markdown(extensions=config["markdown_extensions"], extension_configs=config["mdx_configs"])
        self.processors = mkdocs_private.PageProcessors(self.md, build.files, config)
        self.doc_files = build.files.documentation_pages()
        self.shells: dict[tuple, tuple[str, dict]] = {}
        self.shell_digests: dict[int, str] = {}  # by id() of a shell in self.shells (kept alive there)

    @functools.cached_property
    def toc_template(self):
        return self.build.env.from_string(TOC_TEMPLATE)  # the theme's: there once on_env has run

    def _page(self, file: File, title: str, meta: dict, toc) -> Page:
        page = Page(title, file, self.config)
        page.meta, page.toc, page.content = meta, toc, SHELL_BODY
        return page

    def _context(self, page: Page) -> dict:
        return self.get_context(self.build.nav, self.doc_files, self.config, page)

    def shell(self, file: DirectPage, meta: dict) -> tuple[str, dict]:
        light = _direct_kind(file.src_uri) == "session page"
        depth = (file.url.count("/"), repr(meta), light)
        if depth not in self.shells:
            toc = get_toc([{"level": 1, "id": "BENCHSHELLANCHOR", "name": SHELL_TITLE, "html": SHELL_TITLE,
                            "children": [{"level": 2, "id": "x", "name": "x", "html": "x", "children": []}]}])
            page = self._page(file, SHELL_TITLE, meta, toc)
            page.canonical_url = SHELL_URL
            context = self._context(page)
            if light:
                html = self.session_template.render(context)
                if html.count(SHELL_BODY) != 1 or 'data-md-type="navigation"' in html or 'data-md-type="toc"' in html:
                    raise PluginError("bench: the session pages' layout (session_shell.html) could not be used "
                                       "as their shell")
                html = compact(html)
            else:
                html = self.build.env.get_template(meta.get("template", "main.html")).render(context)
                toc_html = self.toc_template.render(context)
                if html.count(toc_html) != 1 or html.count(SHELL_BODY) != 1:
                    raise PluginError("bench: the theme's page could not be used as a shell for generated pages")
                html = html.replace(toc_html, SHELL_TOC)
            html = html.replace("#BENCHSHELLANCHOR", "#\0anchor")
            self.shells[depth] = (html.replace(SHELL_URL, "\0url"), context)
        return self.shells[depth]

    @functools.cached_property
    def session_template(self):
        return self.build.env.from_string(SESSION_SHELL.read_text(encoding="utf-8"))  # the theme's env: on_env ran

    def finished(self, file: DirectPage) -> Path | None:
        """Where the finished page is kept (``page-html``): by its body's key and the shell around
        it; None for a page that is not kept."""
        text, meta = file.source
        key = file.cache_key if file.cache_key is not None else self.key(file, text)
        if not key:
            return None
        shell, _ = self.shell(file, meta)
        shell_digest = self.shell_digests.setdefault(id(shell), hashlib.sha256(shell.encode()).hexdigest())
        return self.finished_dir / f"{parallel.key(key, file.src_uri, shell_digest)}.pkl"

    @property
    def finished_dir(self) -> Path:
        return cache_dir() / "page-html"

    def write(self, file: DirectPage) -> None:
        sitedir.write_if_changed(self.page_html(file), file.abs_dest_path)

    def page_html(self, file: DirectPage) -> bytes:
        """The finished page: read back when its body and the shell around it are what they were
        (``finished``: thousands of these pages at a hundred machine folders, read as bytes), else
        finished here, and kept when its body was (it reported nothing)."""
        text, meta = file.source
        key = file.cache_key if file.cache_key is not None else self.key(file, text)
        shell, context = self.shell(file, meta)
        done = self.finished(file)
        finished = cachefile.read(done) if done else None
        if isinstance(finished, dict) and self._links_resolve(file, finished):
            self._page(file, finished["title"], meta, get_toc([]))  # the sitemap reads its URL and date
            return finished["html"]
        found = cachefile.read(self.stored(key)) if key else None
        if not (isinstance(found, dict) and self._links_resolve(file, found)):
            found = self.render(file, text, key)
            self._links_resolve(file, found)
        html = self.finish(file, meta, found, shell, context)
        if done and self.stored(key).is_file():  # its body was kept: it reported nothing
            cachefile.write(done, {"html": html, "title": file.page.title, "targets": found["targets"],
                                   "anchor_ids": found["anchor_ids"], "anchor_links": found["anchor_links"]})
        return html

    def _links_resolve(self, file: DirectPage, found: dict) -> bool:
        """Whether every page this one links to is still in the site; if so, its anchors and
        links are recorded for the anchor check (``_check_anchors``)."""
        by_src = self.build.files.src_uris  # targets are normalised already: one lookup each
        if not all(t in by_src for t in found["targets"]):
            return False
        file.anchor_ids = found["anchor_ids"]
        file.links_to_anchors = {by_src.get(t): links for t, links in found["anchor_links"].items()}
        return True

    def finish(self, file: DirectPage, meta: dict, found: dict, shell: str, context: dict) -> bytes:
        """The page: its body in the theme's shell, with its title, canonical URL and contents."""
        toc = get_toc(found["toc_tokens"])
        first = next(iter(toc), None)
        title = found["title"] or posixpath.basename(file.url.rstrip("/"))
        page = self._page(file, title, meta, toc)
        if SHELL_TOC in shell:
            shell = shell.replace(SHELL_TOC, self.toc_template.render(dict(context, page=page)))
        elif not page.canonical_url:  # the lighter layout names no canonical URL where there is none
            shell = shell.replace(CANONICAL, "")
        html = (shell.replace("\0url", page.canonical_url or "")
                .replace("#\0anchor", f"#{first.id}" if first else "#")
                .replace(f"<title>{SHELL_TITLE}", f"<title>{Markup(title).striptags()}")  # as the theme does
                .replace(SHELL_TITLE, title))
        return html.replace(SHELL_BODY, found["body"]).encode("utf-8", errors="xmlcharrefreplace")

    def render(self, file: DirectPage, text: str, key: str | None) -> dict:
        """The page's body, its Markdown made from the model (``file.make``), kept under the build cache
        when nothing was reported while making it (a page with a problem is made, and reports it, every time)."""
        problems = self.build.problems
        with sitesetup.reporting() as warnings:
            ctx = _context(self.build, self.config, file.src_uri, file.url)
            expanded = markers.expand(text, ctx) if file.make is None else f"{text}{self.made(file, ctx)}\n"
            self.check_reads(file, ctx.docs.reads)
            self.processors.start(file)
            body = self.build.cache.fill(self.md.reset().convert(expanded),
                                         lambda target: get_relative_url(target, file.url or "."))
        here = posixpath.dirname(file.src_uri)
        targets = sorted({posixpath.normpath(posixpath.join(here, t)) for t in LINK.findall(expanded)})
        title, anchor_ids, links_to_anchors = self.processors.found()
        found = {"body": body, "title": title, "toc_tokens": getattr(self.md, "toc_tokens", []),
                 "anchor_ids": anchor_ids,
                 "anchor_links": {f.src_uri: links for f, links in links_to_anchors.items()},
                 "targets": targets}
        if key and not warnings.count and self.build.problems == problems:
            cachefile.write(self.stored(key), found)
        return found

    @staticmethod
    def made(file: DirectPage, ctx: markers.Context) -> str:
        """``file.make(ctx)``; data it cannot read is said on the page and reported (a strict build
        fails on it), as a marker's would be; a page that cannot be made stops the build, naming it."""
        try:
            return file.make(ctx)
        except _catalog.Unavailable as err:
            ctx.on_problem(str(err))
            return render.error_box(file.src_uri.split("/")[1], str(err))
        except (KeyError, ValueError) as err:
            raise PluginError(f"{ctx.page}: {err}") from None

    @property
    def bodies(self) -> Path:
        return cache_dir() / "page"

    def stored(self, key: str) -> Path:
        return self.bodies / f"{key}.pkl"

    def key(self, file: DirectPage, text: str) -> str | None:
        """Everything a machine or session page is made from: the results files of the machine, of
        the reference machine and of the machine's ceilings, the machine's kept sessions, the
        figure's chapter, the code (benchsite, this plugin, the Markdown set-up), the site's URLs."""
        cat = self.build.catalog
        parts = file.src_uri.removesuffix(".md").split("/")
        if file.src_uri.startswith(urls.CHANGES_DIR + "/"):
            return self.changes_key(file, text, parts[-1])
        fig = cat.figures.get(parts[1])
        machine = cat.by_slug(parts[1]).get(parts[2]) if fig else None
        if machine is None:
            return None
        # The machine page and every session page of a pair share all but their text: hashed once.
        pair = cat.memo(("page-key", fig.id, machine), lambda: self.pair_digest(fig, machine))
        # A session's page links its data at the commit that holds it (where there is a repository address).
        data = (cat.session_data_commit(fig.id, machine, parts[3])
                if len(parts) == 4 and urls.public_base(self.config.get("repo_url") or "") else None)
        return hashlib.sha256(f"{pair}\0{file.src_uri}\0{text}\0{data!r}".encode()).hexdigest()

    def covered_reads(self, file: DirectPage) -> set[str]:
        """What a written page may read under ``docs/``: what :meth:`key` hashes (a machine or
        session page: its figure's chapter's facts; a changes page: nothing)."""
        parts = file.src_uri.removesuffix(".md").split("/")
        fig = self.build.catalog.figures.get(parts[1]) if len(parts) > 2 else None
        if fig is None or file.src_uri.startswith(urls.CHANGES_DIR + "/"):
            return set()
        return {view_key(fig.chapter, pages.chapter_facts)}

    def check_reads(self, file: DirectPage, reads: dict[str, str]) -> None:
        """A written page's body is kept by :meth:`key`, which names what it reads of ``docs/`` by
        hand (the page is made before the key could record it): a read the key does not cover
        would serve the page stale after that file changed, so it stops the build instead."""
        extra = sorted(set(reads) - self.covered_reads(file))
        if extra:
            raise PluginError(f"docs/{file.src_uri}: made from reads under docs/ that its cache key does not "
                              f"cover: {', '.join(extra)} (add them to _Writer.key and covered_reads)")

    def pair_digest(self, fig, machine: str) -> str:
        """The part of :meth:`key` that is the same for every page of one figure on one machine
        (not the warming job's ``_pair_key``, which stamps files rather than hashing them): the
        figure, the machine's and the reference machine's whole folders (its results file, its
        ceilings, its kept sessions, its side files and whatever else lies there, found by
        walking them), and what the pages read of the figure's chapter (``pages.chapter_facts``)."""
        cat = self.build.catalog

        def state(fig_id: str, m: str | None) -> str:
            if m is None or fig_id not in cat.figures or m not in cat.machines(fig_id):
                return "-"
            return cat.problem(fig_id, m) or "-"

        h = hashlib.sha256(self.code)
        ref = cat.reference(fig.id)
        for value in (repr(fig), repr(cat.current_sha(fig.id)), str(cat.results), machine, cat.role(machine),
                      repr(cat.data_commit(fig.id, machine)), state(fig.id, machine), ref, state(fig.id, ref),
                      state(roofline.CEILING_FIGURE, machine)):
            h.update(f"{value}\0".encode())
        for owner in sorted({machine, ref or machine}):
            h.update(f"{owner}\0{_folder_digest(cat, cat.results / owner)}\0".encode())
        docs = Docs(Path(self.config["docs_dir"]))  # what the pages read of the chapter: its title, its figures
        h.update(cat.memo(("chapter", fig.chapter), lambda: repr(docs.view(fig.chapter, pages.chapter_facts)).encode()))
        return h.hexdigest()

    def changes_key(self, file: DirectPage, text: str, slug: str) -> str | None:
        """A machine's changes page: every figure, and the machine's whole folder (its results
        files and kept sessions, found by walking it)."""
        cat = self.build.catalog
        machine = cat.by_slug().get(slug)
        if machine is None:
            return None
        h = hashlib.sha256(self.code)
        h.update(f"{file.src_uri}\0{text}\0{cat.results}\0{machine}\0".encode())
        h.update(f"{_folder_digest(cat, cat.results / machine)}\0".encode())
        for fig_id, fig in sorted(cat.figures.items()):
            state = "-" if machine not in cat.machines(fig_id) else cat.problem(fig_id, machine) or "+"
            h.update(f"{fig!r}\0{cat.current_sha(fig_id)!r}\0{state}\0".encode())
        return h.hexdigest()

    @functools.cached_property
    def code(self) -> bytes:
        return self.code_of(self.config)

    @staticmethod
    def code_of(config) -> bytes:
        """The site's set-up (``sitesetup.digest``: the one code version, the hooks, the Markdown
        set-up, validation levels, URLs, how much mkdocs logs)."""
        return sitesetup.digest(config).encode()


LINK = re.compile(r"\]\(([^()\s#]+\.md)(?:#[^()\s]*)?\)")  # Markdown links to other pages
BLANK = re.compile(r"[ \t]*\n\s*")


def compact(shell: str) -> str:
    """The theme's page with each run of whitespace that holds a line break made one line break: the
    same page to a browser (a shell has no ``<pre>``, and its scripts are one line each), about 4 KB
    less on every session page. Its body goes in afterwards, untouched."""
    if "<pre" in shell or "<textarea" in shell:
        raise PluginError("bench: a shell with preformatted text cannot be compacted")
    return BLANK.sub("\n", shell)


def on_post_build(config) -> None:
    build = BUILD[0]
    try:
        if build.direct:
            _write_direct(build, config)
    finally:
        _finish_removal(build)  # the build ends with nothing of the last one left, or says so
    # mkdocs fails a strict build after this event if its handler counted a warning; -q drops them
    # before it does (sitesetup.warn), so a damaged input would pass: fail here with them instead.
    failure = sitesetup.uncounted_failure() if config["strict"] else None
    if failure:
        raise PluginError(f"bench: {failure}")


def _write_direct(build: Build, config) -> None:
    """Every written page into the site. The pages no earlier build finished are first finished on
    every core (``_finish_direct``: a machine's pages one after another in one worker) into the
    build cache; this process then writes each from there, as a warm build does (a page that
    reported a problem is not kept: it is made here again, and reports it here)."""
    writer = _Writer(build, config)
    kept = cachefile.names(writer.finished_dir)
    unfinished = [file for file in build.direct if (done := writer.finished(file)) and done.name not in kept]
    _warm("written pages", [parallel.Job(functools.partial(_finish_direct, writer, file),
                                         kind=_direct_kind(file.src_uri), group=_direct_machine(file.src_uri))
                            for file in sorted(unfinished, key=lambda f: _direct_machine(f.src_uri))])
    for file in build.direct:
        writer.write(file)
    _check_anchors(build, config)
    # The sitemap lists every page, these included, in the order mkdocs would have.
    mkdocs_private.build_theme_template("sitemap.xml", build.env, _WithDirect(build.files), config, build.nav)


def _finish_direct(writer: _Writer, file: DirectPage) -> None:
    """In a worker: one written page finished (its body in the theme's shell, by the build's own
    writer and shells, inherited at the fork) and kept under the build cache."""
    try:
        writer.page_html(file)
    finally:
        writer.build.catalog.trim(WORKER_FRAMES)


class _WithDirect(Files):
    def documentation_pages(self, *, inclusion=InclusionLevel.is_included):
        return [f for f in self if (f.is_documentation_page() or isinstance(f, DirectPage)) and inclusion(f.inclusion)]


def _check_anchors(build: Build, config) -> None:
    """mkdocs checks anchors only into the pages it built and only from them: links into the
    written pages, from any page, and from them into mkdocs' pages are checked here, at the level
    ``validation: anchors:`` sets."""
    level = config.validation.links.anchors
    sources = [(f, f.page.links_to_anchors) for f in build.files.documentation_pages() if f.page is not None]
    sources += [(f, f.links_to_anchors) for f in build.direct]
    for source, links in sources:
        for target, found in (links or {}).items():
            if isinstance(target, DirectPage):
                present = target.anchor_ids
            elif isinstance(source, DirectPage) and target is not None and target.page is not None:
                present = target.page.present_anchor_ids
            else:
                continue  # mkdocs has checked it
            for anchor, link in found.items():
                if present is not None and anchor not in present:
                    log.log(level, f"Doc file '{source.src_uri}' contains a link '{link}', but the doc "
                                   f"'{target.src_uri}' does not contain an anchor '#{anchor}'.")


class BenchPlugin(BasePlugin):
    """The site's MkDocs plugin: ``plugins: - bench`` in mkdocs.yml, last in the list, so that its
    page events see what the other plugins made (mkdocs-jupyter's rendering of a notebook above
    all). Its events are this module's, then the notebook pruning's (:mod:`.notebook`), then the
    render cache's (:mod:`.render_cache`), in that order: the render cache keeps what the others
    made of a page."""

    def on_startup(self, *, command: str, dirty: bool) -> None:
        on_startup(command, dirty)

    def on_config(self, config):
        return render_cache.on_config(on_config(config))

    def on_pre_build(self, *, config) -> None:
        on_pre_build(config)
        render_cache.on_pre_build(config)

    def on_files(self, files: Files, *, config) -> Files:
        return render_cache.on_files(on_files(files, config), config)

    def on_nav(self, nav, *, config, files):
        return on_nav(nav, config, files)

    def on_env(self, env, *, config, files):
        return on_env(env, config, files)

    def on_pre_page(self, page, *, config, files):
        return render_cache.on_pre_page(page, config, files)

    def on_page_markdown(self, markdown: str, *, page, config, files) -> str:
        return on_page_markdown(markdown, page, config, files)

    def on_page_content(self, html: str, *, page, config, files) -> str:
        return notebook.on_page_content(html, page, config, files)

    def on_post_page(self, output: str, *, page, config) -> str:
        return on_post_page(output, page, config)

    def on_post_build(self, *, config) -> None:
        on_post_build(config)

    def on_build_error(self, *, error) -> None:
        on_build_error(error)
