"""What the site's two caches of pages share: the site's set-up that every cached page is keyed on,
and the rule for what counts as a report about a page.

``benchsite/build/plugin.py`` keeps the bodies of the pages it generates and
``benchsite/build/render_cache.py`` keeps what mkdocs renders from the chapters. Both must make a
page afresh when anything about the site that shapes it changes, and both must refuse to keep a
page whose rendering reported something (so that it reports it again on the next build). Each
used to spell those rules itself, and they had drifted: the generated pages' key left out the
validation levels, the URL style, the plugins' settings and how much mkdocs logs (a ``-q`` build,
which hears no warnings, could keep a body that a normal build then served without its
warning), and their counter left out link reports at the level ``validation:`` sets.

Both the bench plugin and the lesson plugin report a damaged input through :func:`warn`, so that a
strict build fails on it whatever the log level (``mkdocs build --strict -q`` passed before), and
:func:`count_hidden_warnings` does the same for every warning mkdocs or a plugin logs (a broken
link, a missing anchor, a nav entry to a missing page).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from benchsite.core import cachefile


def digest(config, *hooks: Path) -> str:
    """sha256 of the site's set-up as a cached page sees it: the one code version
    (``cachefile.code_version``: every file of the package, every installed library's version,
    Python's), every hook's code (``hooks``, the caller's own file, and those ``config`` lists), the
    Markdown extensions and their settings, the validation levels, the URL style, the site and
    repository URLs, the docs folder, the plugins' settings, and how much mkdocs logs (``-q``
    hides the reports that keep a page out of a cache, ``-v`` makes mkdocs skip recording links
    to anchors). The docs folder and the hooks are named relative to the project's folder."""
    files = {Path(p).resolve() for p in hooks}
    files |= {Path(m.__file__).resolve() for m in (config.get("hooks") or {}).values()
              if getattr(m, "__file__", None)}
    plugins = {name: sorted(getattr(plugin, "config", {}).items(), key=str)  # e.g. how the notebook renders
               for name, plugin in (config.get("plugins") or {}).items()}
    setup = (cachefile.code_version(),
             [(_from_project(config, f), f.read_bytes().decode("utf-8", errors="replace")) for f in sorted(files)],
             config["markdown_extensions"], config["mdx_configs"],
             repr(config.get("validation")), config.get("use_directory_urls"), config.get("site_url"),
             config.get("repo_url"), _from_project(config, config.get("docs_dir")), repr(plugins),
             logging.getLogger("mkdocs.structure.pages").getEffectiveLevel())
    return hashlib.sha256(repr(setup).encode()).hexdigest()


def _from_project(config, path) -> str | None:
    """``path`` as the project names it: relative to the folder of its ``mkdocs.yml`` (mkdocs makes
    ``docs_dir`` absolute), so that a copy of the project elsewhere (a test's, a second checkout)
    has the set-up the original has and finds the entries it made. No entry depends on where the
    project lies: a page's key holds what it is made from by content (its Markdown, what it read
    under ``docs/``, the files its snippets name, the results and scripts), so a copy whose content
    differs gets entries of its own."""
    if path is None or not config.get("config_file_path"):
        return None if path is None else str(path)
    return os.path.relpath(Path(path).resolve(), Path(config["config_file_path"]).resolve().parent)


class Reports(logging.Handler):
    """Counts what mkdocs would show a reader about a page while it is made: any warning, and
    mkdocs' own link and anchor reports at whatever level ``validation:`` sets (a plugin saying
    what it is doing, at info level, is not a report about the page). Attach it to the
    ``mkdocs`` logger around one page; a page with ``count`` above zero is not kept."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING or record.name.startswith("mkdocs.structure"):
            self.count += 1


@contextlib.contextmanager
def reporting(*loggers: str) -> Iterator[Reports]:
    """A :class:`Reports` on ``loggers`` (mkdocs' when none is named) while the block runs: what a
    kept page, expansion or conversion must not have reported."""
    reports, names = Reports(), loggers or ("mkdocs",)
    for name in names:
        logging.getLogger(name).addHandler(reports)
    try:
        yield reports
    finally:
        for name in names:
            logging.getLogger(name).removeHandler(reports)


# --- strict, whatever the log level ---------------------------------------------------------

# This build's warnings that the log level kept from the reader (-q): sitesetup.warn's own, and
# every other warning of the mkdocs logger once count_hidden_warnings is on. Emptied by the bench
# bench plugin's on_config; the plugin fails a strict build with them, on_post_build, so that a strict -q
# build says what it failed on.
UNCOUNTED: list[str] = []


def _mkdocs_record(record: logging.LogRecord) -> bool:
    return record.name == "mkdocs" or record.name.startswith("mkdocs.")


class _StillHidden(logging.Filter):
    """On a handler that printed the mkdocs logger's records: drops those below the level the
    command line chose, as the logger's own level did (so nothing printed changes)."""

    def __init__(self, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= self.level or not _mkdocs_record(record)


class _KeepHidden(logging.Handler):
    """On the mkdocs logger: keeps each warning that :class:`_StillHidden` keeps from the reader."""

    def __init__(self, level: int) -> None:
        super().__init__(logging.WARNING)
        self.hidden_below = level

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < self.hidden_below:
            UNCOUNTED.append(record.getMessage())


def count_hidden_warnings() -> None:
    """Let mkdocs' strict mode count every warning whatever the log level, printing what it printed.

    mkdocs counts warnings for ``strict`` with a handler that ``build`` puts on the ``mkdocs``
    logger (``utils.CountHandler``), and ``-q`` sets that logger's level to ERROR
    (``mkdocs/__main__.py``): a warning logged under it (a broken link, a missing anchor, a
    plugin's) is dropped before any handler sees it, and ``mkdocs build --strict -q`` passed where
    ``--strict`` failed. Here the logger is let down to INFO, mkdocs' default, and each handler
    that was printing its records (mkdocs' own stream; any handler it propagates to) gets a filter
    that still drops what the old level dropped: the counter then hears every warning, and nothing
    printed changes. A quiet build is then the default build, printed less (the same reports keep
    the same pages out of the caches, and :func:`digest` gives it the same key). The hidden
    warnings are kept in :data:`UNCOUNTED` so that a failing strict build can say what they were.
    Call it once mkdocs has set its level (the bench plugin's ``on_startup``); it does nothing where
    warnings pass already (the default level, ``-v``) and when it is on already."""
    logger = logging.getLogger("mkdocs")
    level = logger.getEffectiveLevel()
    if level <= logging.WARNING or any(isinstance(h, _KeepHidden) for h in logger.handlers):
        return
    hidden = _StillHidden(level)
    printer: logging.Logger | None = logger
    while printer is not None:  # every handler a record of the mkdocs logger reaches (Logger.callHandlers)
        for handler in printer.handlers:
            handler.addFilter(hidden)
        printer = printer.parent if printer.propagate else None
    logger.addHandler(_KeepHidden(level))
    logger.setLevel(logging.INFO)


def warn(logger: logging.Logger, message: str) -> None:
    """``logger.warning(message)``, for a problem that must fail a strict build (a damaged input).
    mkdocs counts warnings for ``strict`` with a handler on its ``mkdocs`` logger, and ``-q`` sets
    that logger to ERROR: a warning is then dropped before any handler sees it, and ``mkdocs build
    --strict -q`` passes. Such a warning is kept in :data:`UNCOUNTED` instead."""
    if not logger.isEnabledFor(logging.WARNING):
        UNCOUNTED.append(message)
    logger.warning(message)


def uncounted_failure() -> str | None:
    """What a strict build must fail with when warnings went uncounted, or None."""
    if not UNCOUNTED:
        return None
    listed = "\n".join(f"  {m}" for m in dict.fromkeys(UNCOUNTED))
    return (f"{len(UNCOUNTED)} warning(s) in strict mode, not shown at this log level "
            f"(-q hides warnings; strict counts them all the same):\n{listed}")
