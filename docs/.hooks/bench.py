"""MkDocs glue: load the results once, generate the /bench pages, expand bench
markers, ship the CSVs.

The work is in ``benchsite`` (no mkdocs import there); this file only wires it in.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.utils import get_relative_url

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchsite import buildcache, markers, pages  # noqa: E402
from benchsite import catalog as _catalog  # noqa: E402

log = logging.getLogger("mkdocs.plugins.bench")
STATE: dict = {}


def on_config(config):
    extra = config.get("extra", {}).get("bench", {})
    results = _catalog.results_dir(extra.get("results"))
    preferred = _catalog.preferred_machine(results, extra.get("machine"))
    cat = _catalog.Catalog.build(results, preferred=preferred)
    STATE.update(catalog=cat, strict_stale=os.environ.get("BENCH_STRICT") == "1", warned=set())
    buildcache.forget()
    for fig_id, machine in cat.stale():
        # Strict fails on what the prose quotes: the reference machine. A contributed folder
        # measured with older code stays on the site, marked stale on every page that shows it.
        _report_stale(fig_id, machine, fatal=machine == cat.prose_machine_or_none(fig_id))
    for orphan in cat.orphans:
        log.warning(f"{orphan.path}: no script bench_scripts/{orphan.stem}.py for these results")
    return config


def _report_stale(fig_id: str, machine: str, fatal: bool = True) -> None:
    message = (f"{fig_id} on {machine} is stale: its script or the harness changed after the results "
               "were recorded (make bench refreshes it)")
    (log.warning if STATE["strict_stale"] and fatal else log.info)(message)


def _warn_once(message: str) -> None:
    # A bad file shows on the index, its figure page and its chapter: say so once.
    if message not in STATE["warned"]:
        STATE["warned"].add(message)
        log.warning(message)


def on_files(files: Files, config) -> Files:
    """Every results file is downloadable at results/<machine>/<name>; the /bench
    pages are generated (only the index is in the nav: the rest are reached from it)."""
    results: Path = STATE["catalog"].results
    for path in sorted(results.glob("*/*")):
        if path.is_file() and not path.name.startswith("."):
            uri = f"results/{path.parent.name}/{path.name}"
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    for uri, text in pages.generated_pages(STATE["catalog"]).items():
        inclusion = InclusionLevel.UNDEFINED if uri == pages.INDEX_SRC else InclusionLevel.NOT_IN_NAV
        files.append(File.generated(config, uri, content=text, inclusion=inclusion))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    ctx = markers.Context(
        catalog=STATE["catalog"],
        page=f"docs/{page.file.src_uri}",
        link=lambda target: get_relative_url(target, page.url or "."),
        on_problem=_warn_once,
        src_uri=page.file.src_uri,
        docs_dir=Path(config["docs_dir"]),
        site_url=config.get("site_url") or "",
    )
    return markers.expand(markdown, ctx)


def on_post_page(output: str, page, config) -> str:
    """Charts go in last, after Markdown and the search index have seen the page."""
    return buildcache.fill(output)
