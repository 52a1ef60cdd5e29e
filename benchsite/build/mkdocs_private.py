"""Every private name of MkDocs, and every inside of Material, the build uses, and nothing else:
no other module imports an underscore name of MkDocs or Material or reaches into Material's search
index (``tests/test_mkdocs_private.py`` checks that, and pins each object's source to the MkDocs
and Material versions in requirements.txt, so an upgrade that changes one fails a test instead
of a build quietly).

Why they cannot be avoided, each:

- ``_populate_page``: a warming worker reads and renders one of MkDocs' pages exactly as the
  build will (every plugin's page events), so that the build finds the result in its cache.
  MkDocs has no public call for "render this page now".
- ``_build_theme_template``: the sitemap is written again after the plugin writes the /bench
  pages MkDocs does not build, so that it lists them too.
- The four Markdown processors MkDocs registers on each page's Markdown: link rewriting (and its
  link and anchor checks), anchor collection and the title. The /bench pages the plugin writes
  itself (thousands at a hundred machines) go through one Markdown instance with the same
  processors, so their links are rewritten and checked as MkDocs checks its own.
- ``_title_from_render``: one of the attributes ``Page.render`` sets; the render cache keeps
  exactly what a render set (:data:`RENDER_ATTRIBUTES`).
- Material's search index (``SearchIndex.entries``, ``add_entry_from_context``): the render cache
  keeps a page's search entries (the indexer's HTML parsing was most of a warm build). Only
  Material's index is wrapped (:func:`material_search_index`); with MkDocs' own search plugin the
  entries are made afresh on every build, as MkDocs makes them.
"""

from __future__ import annotations

from material.plugins.search.plugin import SearchIndex as MaterialSearchIndex
from mkdocs.commands.build import _build_theme_template, _populate_page
from mkdocs.structure.pages import (
    _ExtractAnchorsTreeprocessor,
    _ExtractTitleTreeprocessor,
    _RawHTMLPreprocessor,
    _RelativePathTreeprocessor,
)

# The MkDocs and Material these names were read from (requirements.txt pins both).
PINNED = "1.6.1"
PINNED_MATERIAL = "9.8.2"
# What ``Page.render`` may set on a page: the render cache keeps these and nothing else.
RENDER_ATTRIBUTES = frozenset({"content", "toc", "_title_from_render", "title", "present_anchor_ids",
                               "links_to_anchors"})
# The private objects used here, for the test that pins their source.
USED = {"mkdocs.commands.build._populate_page": _populate_page,
        "mkdocs.commands.build._build_theme_template": _build_theme_template,
        "mkdocs.structure.pages._ExtractAnchorsTreeprocessor": _ExtractAnchorsTreeprocessor,
        "mkdocs.structure.pages._ExtractTitleTreeprocessor": _ExtractTitleTreeprocessor,
        "mkdocs.structure.pages._RawHTMLPreprocessor": _RawHTMLPreprocessor,
        "mkdocs.structure.pages._RelativePathTreeprocessor": _RelativePathTreeprocessor,
        "material.plugins.search.plugin.SearchIndex.__init__": MaterialSearchIndex.__init__,
        "material.plugins.search.plugin.SearchIndex.add_entry_from_context":
            MaterialSearchIndex.add_entry_from_context}


def material_search_index(plugin) -> MaterialSearchIndex | None:
    """``plugin``'s search index when it is Material's (whose ``entries`` list the render cache
    extends with a page's kept entries), else None: another search plugin's index is left alone."""
    index = getattr(plugin, "search_index", None)
    return index if isinstance(index, MaterialSearchIndex) else None


def populate_page(page, config, files) -> None:
    """One of MkDocs' pages read and rendered as the build renders it."""
    _populate_page(page, config, files)


def build_theme_template(name: str, env, files, config, nav) -> None:
    """The theme's ``name`` (the sitemap) written for ``files``, as the build writes it."""
    _build_theme_template(name, env, files, config, nav)


class PageProcessors:
    """MkDocs' link rewriting and checking, anchor collection and title extraction, registered on
    one Markdown instance that renders many pages: :meth:`start` before each page, then
    :meth:`found` after it."""

    def __init__(self, md, files, config) -> None:
        self.raw = _RawHTMLPreprocessor()
        self.raw._register(md)
        self.anchors = _ExtractAnchorsTreeprocessor(None, files, config)
        self.anchors._register(md)
        self.links = _RelativePathTreeprocessor(None, files, config)
        self.links._register(md)
        self.title = _ExtractTitleTreeprocessor()
        self.title._register(md)

    def start(self, file) -> None:
        self.links.file = self.anchors.file = file
        self.links.links_to_anchors = {}
        self.anchors.present_anchor_ids = set()  # this page's: MkDocs' processor adds to one set
        self.raw.present_anchor_ids = set()  # (Markdown runs no processor on a blank page)
        self.title.title = None

    def found(self) -> tuple[str | None, set[str], dict]:
        """The page's title (its first heading), its anchors, and its links to other pages'
        anchors (by target file)."""
        return (self.title.title, self.anchors.present_anchor_ids | self.raw.present_anchor_ids,
                self.links.links_to_anchors)
