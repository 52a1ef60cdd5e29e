"""MkDocs glue: load the results once, expand bench markers, ship the CSVs.

The work is in ``benchsite`` (no mkdocs import there); this file only wires it in.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from mkdocs.structure.files import File, Files
from mkdocs.utils import get_relative_url

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchsite import catalog as _catalog  # noqa: E402
from benchsite import markers  # noqa: E402

log = logging.getLogger("mkdocs.plugins.bench")
STATE: dict = {}


def on_config(config):
    extra = config.get("extra", {}).get("bench", {})
    results = _catalog.results_dir(extra.get("results"))
    preferred = _catalog.preferred_machine(results, extra.get("machine"))
    cat = _catalog.Catalog.build(results, preferred=preferred)
    STATE.update(catalog=cat, strict_stale=os.environ.get("BENCH_STRICT") == "1")
    for key in cat.stale():
        _report_stale(*key)
    for orphan in cat.orphans:
        log.warning(f"{orphan.path}: no script bench_scripts/{orphan.stem}.py for these results")
    return config


def _report_stale(fig_id: str, machine: str) -> None:
    message = (f"{fig_id} on {machine} is stale: its script changed after the results were "
               "recorded (make bench refreshes it)")
    (log.warning if STATE["strict_stale"] else log.info)(message)


def on_files(files: Files, config) -> Files:
    """Every results file is downloadable from the site, at results/<machine>/<name>."""
    results: Path = STATE["catalog"].results
    for path in sorted(results.glob("*/*")):
        if path.is_file() and not path.name.startswith("."):
            uri = f"results/{path.parent.name}/{path.name}"
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    ctx = markers.Context(
        catalog=STATE["catalog"],
        page=f"docs/{page.file.src_uri}",
        link=lambda target: get_relative_url(target, page.url or "."),
        on_problem=log.warning,
    )
    return markers.expand(markdown, ctx)
