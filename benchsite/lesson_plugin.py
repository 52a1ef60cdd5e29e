"""mkdocs-jupyter, with nbconvert and jupytext imported only when they are used.

mkdocs-jupyter's plugin module imports nbconvert (through its ``convert`` module) and jupytext
at its top: more than a second of every build here, warm or cold, before any page is read. The
site converts one notebook, and a warm build does not convert it at all (the render cache,
``docs/.hooks/render_cache.py``, keeps what the conversion made). jupytext is used only to look
into Markdown files for notebooks, which ``ignore: ["*.md"]`` turns off.

So this module puts a stand-in for each of those two modules in place before mkdocs-jupyter's
plugin module imports them, and publishes that plugin unchanged under the name
``bench-notebooks`` (``pyproject.toml`` registers it; ``mkdocs.yml`` lists it with
mkdocs-jupyter's own options). The first attribute read on a stand-in imports the real module,
and from then on the stand-in hands out the real module's attributes: a build that converts the
notebook imports nbconvert at that moment, as it would otherwise have at start.
"""

from __future__ import annotations

import importlib
import logging
import sys
from types import ModuleType

DEFERRED = ("mkdocs_jupyter.convert", "jupytext")  # what mkdocs_jupyter.plugin imports at its top


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
            real = self.__dict__["_real"] = importlib.import_module(self.__name__)
        return getattr(real, attr)


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

from mkdocs_jupyter.plugin import Plugin  # noqa: E402 - after the stand-ins are in place

__all__ = ["DEFERRED", "Deferred", "Plugin", "defer"]
