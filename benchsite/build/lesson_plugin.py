"""mkdocs-jupyter, with nbconvert and jupytext imported only when they are used.

mkdocs-jupyter's plugin module imports nbconvert (through its ``convert`` module) and jupytext
at its top: more than a second of every build here, warm or cold, before any page is read. The
site converts one notebook, and a warm build does not convert it at all (the render cache,
``benchsite/build/render_cache.py``, keeps what the conversion made). jupytext is used only to look
into Markdown files for notebooks, which ``ignore: ["*.md"]`` turns off.

So this module puts a stand-in for each of those two modules in place before mkdocs-jupyter's
plugin module imports them, and publishes that plugin unchanged under the name
``bench-notebooks`` (``pyproject.toml`` registers it; ``mkdocs.yml`` lists it with
mkdocs-jupyter's own options). The first attribute read on a stand-in imports the real module,
and from then on the stand-in hands out the real module's attributes: a build that converts the
notebook imports nbconvert at that moment, as it would otherwise have at start.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import logging
import os
import re
import sys
from pathlib import Path
from types import ModuleType

DEFERRED = ("mkdocs_jupyter.convert", "jupytext")  # what mkdocs_jupyter.plugin imports at its top
# Set while a deferred module is imported. nbconvert's NbConvertApp (which mkdocs-jupyter imports)
# lists the exporters in its help text when its class is made: it loads every exporter's entry
# point and makes an instance of each, a third of nbconvert's import (0.4 s of CPU here). With
# this variable nbconvert lists their names only (``nbconvert.exporters.base.get_export_names``,
# its only use); nothing converted depends on that text.
IMPORT_ENV = {"NBCONVERT_DISABLE_CONFIG_EXPORTERS": "1"}


class Deferred(ModuleType):
    """A module that is imported on the first read of one of its attributes."""

    def __getattr__(self, attr: str):  # called only for what the stand-in itself lacks
        real = self.__dict__.get("_real")
        if real is None:
            if sys.modules.get(self.__name__) is self:
                del sys.modules[self.__name__]
            # Said at debug level (mkdocs -v): a cold build converts the notebook in a warming
            # worker, so its own log never says this (tests/test_warm_build.py checks both ways).
            log = logging.getLogger("mkdocs.plugins.bench-notebooks")
            log.debug(f"importing {self.__name__} to convert a notebook")
            with _environ(IMPORT_ENV):
                real = self.__dict__["_real"] = importlib.import_module(self.__name__)
        return getattr(real, attr)


@contextlib.contextmanager
def _environ(settings: dict[str, str]):
    """``os.environ`` with ``settings`` for the block (a variable already set is left as it is)."""
    added = [name for name in settings if name not in os.environ]
    os.environ.update({name: settings[name] for name in added})
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def defer(name: str) -> ModuleType:
    """``name`` as a stand-in in ``sys.modules`` (or the module itself, if already imported)."""
    if name in sys.modules:
        return sys.modules[name]
    parent, _, child = name.rpartition(".")
    stand_in = sys.modules[name] = Deferred(name)
    if parent:
        setattr(importlib.import_module(parent), child, stand_in)  # ``from . import convert`` reads it
    return stand_in


for _name in DEFERRED:
    defer(_name)

from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs_jupyter.plugin import Plugin as JupyterPlugin  # noqa: E402 - after the stand-ins are in place

from benchsite.build import sitesetup  # noqa: E402
from benchsite.core import cachefile  # noqa: E402
from benchsite.core.cachefile import cache_dir  # noqa: E402
from benchsite.model import catalog  # noqa: E402
from benchsite.pages import lesson_outputs  # noqa: E402

__all__ = ["DEFERRED", "IMPORT_ENV", "Deferred", "Plugin", "defer"]

log = logging.getLogger("mkdocs.plugins.bench-notebooks")


class Redirected:
    """A page's file, but for where its source is read from (what mkdocs-jupyter converts)."""

    def __init__(self, file, abs_src_path: str) -> None:
        self._file, self.abs_src_path = file, abs_src_path

    def __getattr__(self, item):
        return getattr(self._file, item)


def _where(err: Exception, text: str) -> str:
    """Where nbformat's validation error is, as " (cell N, code cell M['outputs'][0]...)": its index
    counts the converted notebook's cells (the docs/ source's), and the copy's code cells are the same
    ones in the same order; "" when the error says no cell."""
    found = re.search(r"On instance\['cells'\]\[(\d+)\](.*?):?$", str(err), re.M)
    try:
        cells = json.loads(text)["cells"][: int(found.group(1)) + 1] if found else []
    except (ValueError, KeyError, TypeError, RecursionError):
        cells = []
    if not cells:
        return ""
    code = sum(isinstance(c, dict) and c.get("cell_type") == "code" for c in cells)
    kind = cells[-1].get("cell_type") if isinstance(cells[-1], dict) else None
    return f" (cell {len(cells)}{f', code cell {code}' if kind == 'code' else f', a {kind} cell'}{found.group(2)})"


class Plugin(JupyterPlugin):
    """mkdocs-jupyter, rendering a lesson with the outputs of one machine's executed copy.

    The notebook in docs/ holds source cells; ``make lesson`` stores each machine's run under
    ``results/<machine>/lessons/`` (``benchsite/pages/lesson_outputs.py`` chooses which the page shows
    and writes the note that says so). The chosen notebook becomes the page's Markdown, so the
    render cache (``benchsite/build/render_cache.py``) keys on exactly what is converted, and on the
    site's set-up (``sitesetup.digest``), which holds the one code version (this module and
    ``lesson_outputs`` among every file of the package); the render converts it from a file under
    the build cache instead of the docs/ file. The download link
    stays the docs/ source: the notebook a reader runs."""

    def on_config(self, config):
        extra = config.get("extra", {}).get("bench", {})
        root = Path(config["config_file_path"]).resolve().parent
        cachefile.use_project(root)  # the cache is the project's, wherever the package is installed
        self.results = catalog.results_dir(extra.get("results"), root)
        self.reference = extra.get("machine")
        self.preferred = catalog.preferred_machine(self.results, self.reference)
        return config

    def on_page_markdown(self, markdown, page, config, files):
        if not self.should_include(page.file):
            return markdown
        try:
            return self._chosen(page, Path(page.file.abs_src_path), {})
        except lesson_outputs.Damaged as err:  # the docs/ source itself
            sitesetup.warn(log, str(err))  # fails a strict build at any log level (the bench plugin)
            return markdown

    def _chosen(self, page, source: Path, refused: dict[str, str]) -> str:
        """The notebook the page converts (``lesson_outputs.choose``), with what is amiss logged once
        per page: a damaged or missing copy as a damaged results file, older code as a stale figure.
        ``page.bench_copy`` and ``page.bench_machine`` say whose outputs it shows, for the render."""
        chosen = lesson_outputs.choose(source, self.results, self.preferred, self.reference, refused)
        page.bench_machine = chosen.machine
        page.bench_copy = (lesson_outputs.executed_path(self.results, chosen.machine, source.name)
                           if chosen.machine is not None else None)
        said = page.__dict__.setdefault("bench_said", set())  # a second choice repeats the first's problems
        strict = os.environ.get("BENCH_STRICT") == "1"  # as a stale figure: the published build fails
        for problem in chosen.problems:
            if problem not in said:
                sitesetup.warn(log, problem)
        for stale in chosen.stale:
            if stale in said:
                continue
            if strict:
                sitesetup.warn(log, stale)
            else:
                log.info(stale)
        said.update(chosen.problems, chosen.stale)
        return lesson_outputs.dumps(chosen.notebook)

    def on_pre_page(self, page, config, files):
        page = super().on_pre_page(page, config, files)
        if not self.should_include(page.file):
            return page
        convert = page.render  # mkdocs-jupyter's: it reads page.file.abs_src_path when it runs

        def render(config, files) -> None:
            original, refused = page.file, {}
            source = Path(original.abs_src_path)

            def attempt(text: str) -> tuple[str, str] | None:
                """Converts ``text`` as the page's notebook (its Markdown, and the file mkdocs-jupyter
                reads): None, or what nbconvert stopped on and where."""
                path = cache_dir() / "lesson" / f"{hashlib.sha256(text.encode()).hexdigest()}.ipynb"
                if not path.is_file():
                    cachefile.store_bytes(path, text.encode())
                page.markdown, page.file = text, Redirected(original, str(path))
                try:
                    convert(config, files)
                    return None
                except Exception as err:  # noqa: BLE001 - whatever nbconvert stops on: named, never a traceback
                    why = getattr(err, "message", None) or f"{type(err).__name__}: {err}"
                    why = why if len(why) <= 200 else why[:200] + "…"  # a schema message may quote a whole output
                    return why, _where(err, text)
                finally:
                    page.file = original

            while (failed := attempt(page.markdown or "")) is not None:
                # What lesson_outputs does not check, nbconvert does (the notebook format's schema, and
                # the whole of a stale copy, shown as it ran): the page's notebook is the docs/ source's
                # cells with the copy's outputs, so both files are named.
                copy, machine = getattr(page, "bench_copy", None), getattr(page, "bench_machine", None)
                made = f"{source}" + (f" with the outputs of {copy}" if copy else "")
                message = f"{made}: cannot be converted: {failed[0]}{failed[1]}"
                if machine is None or machine in refused:
                    raise PluginError(message)
                # The copy's fault, or the source's (or this environment's)? The source alone, without
                # outputs, tells: if it is refused too, nothing else can be shown.
                bare = attempt(lesson_outputs.dumps(lesson_outputs.strip_outputs(lesson_outputs.read_notebook(source))))
                if bare is not None:
                    raise PluginError(f"{source}: cannot be converted: {bare[0]}{bare[1]}")
                # As a damaged copy: a warning (a strict build fails), and the page shows the next choice.
                sitesetup.warn(log, message)
                refused[machine] = f"the notebook converter refused it{failed[1]}: {failed[0]}"
                page.markdown = self._chosen(page, source, refused)

        page.render = render
        return page
