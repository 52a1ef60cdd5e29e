"""MkDocs glue: load the results once, generate the /bench pages, expand bench
markers, ship the CSVs.

The work is in ``benchsite`` (installed into the venv by ``make venv``; no mkdocs
import there); this file only wires it in. A build's state is one :class:`Build`,
made afresh in ``on_config`` (``mkdocs serve`` rebuilds in the same process).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import markdown
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.utils import get_relative_url

from benchkit import layout
from benchsite import catalog as _catalog
from benchsite import markers, pages
from benchsite.buildcache import BuildCache, cache_dir

log = logging.getLogger("mkdocs.plugins.bench")


@dataclass
class Build:
    catalog: _catalog.Catalog
    strict_stale: bool
    cache: BuildCache = field(default_factory=BuildCache)
    markdown: Callable[[str], str] | None = None
    warned: set[str] = field(default_factory=set)

    def warn_once(self, message: str) -> None:
        # A bad file shows on the index, its figure page, its chapter and in prose: say so once.
        # A warning fails a strict build (with this message, no traceback); a lenient one goes on.
        if message not in self.warned:
            self.warned.add(message)
            log.warning(message)


BUILD: list[Build] = []  # the current build, replaced by each on_config


def on_config(config):
    extra = config.get("extra", {}).get("bench", {})
    root = Path(config["config_file_path"]).resolve().parent  # the checkout being built
    results = _catalog.results_dir(extra.get("results"), root)
    preferred = _catalog.preferred_machine(results, extra.get("machine"))
    cat = _catalog.Catalog.build(results, preferred=preferred, bench_dir=root / layout.BENCH_DIR.name,
                                 cache=cache_dir() / "frames")
    site_markdown = markdown.Markdown(extensions=config["markdown_extensions"],
                                      extension_configs=config["mdx_configs"])
    build = Build(cat, os.environ.get("BENCH_STRICT") == "1",
                  markdown=lambda text: site_markdown.reset().convert(text))
    BUILD[:] = [build]
    for fig_id, machine in cat.stale():
        # Strict fails on what the prose quotes: the reference machine. A contributed folder
        # measured with older code stays on the site, marked stale on every page that shows it.
        fatal = build.strict_stale and machine == cat.reference(fig_id)
        (log.warning if fatal else log.info)(
            f"{fig_id} on {machine} is stale: its script or the harness changed after the results "
            "were recorded (make bench refreshes it)")
    for orphan in cat.orphans:
        log.warning(f"{orphan.path}: no script bench_scripts/{orphan.stem}.py for these results")
    drawn = build.cache.predraw(cat.tables())
    log.info(f"bench: {drawn} charts drawn")
    return config


def on_files(files: Files, config) -> Files:
    """Every results file is downloadable at results/<machine>/<name> (a CSV gzip-compressed,
    at <name>.gz); the /bench pages are generated (only the index is in the nav)."""
    build = BUILD[0]
    for uri, path in layout.published_files(build.catalog.results):
        if path.suffix == layout.CSV_SUFFIX:
            files.append(File.generated(config, uri, content=build.cache.compressed(path)))
        else:
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    for uri, text in pages.generated_pages(build.catalog).items():
        inclusion = InclusionLevel.UNDEFINED if uri == pages.INDEX_SRC else InclusionLevel.NOT_IN_NAV
        files.append(File.generated(config, uri, content=text, inclusion=inclusion))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    build = BUILD[0]
    ctx = markers.Context(
        catalog=build.catalog,
        page=f"docs/{page.file.src_uri}",
        link=lambda target: get_relative_url(target, page.url or "."),
        on_problem=build.warn_once,
        src_uri=page.file.src_uri,
        docs_dir=Path(config["docs_dir"]),
        site_url=config.get("site_url") or "",
        repo_url=config.get("repo_url") or "",
        cache=build.cache,
        markdown=build.markdown,
    )
    return markers.expand(markdown, ctx)


def on_post_page(output: str, page, config) -> str:
    """Charts go in last, after Markdown and the search index have seen the page."""
    return BUILD[0].cache.fill(output)
