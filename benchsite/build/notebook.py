"""The bench plugin's notebook step: a notebook page keeps only the part of mkdocs-jupyter's
inlined stylesheet it uses (benchsite/build/notebook_page.py says why; the stored outputs are not
touched).

The stylesheets are in the page's content (the converted notebook), scoped to its
``.jupyter-wrapper``, so the content is pruned, as mkdocs hands it over after rendering. That
makes it part of what a warming worker does with the page (``benchsite/build/plugin.py``,
``_warm_source``), where parsing the 590 KB stylesheet no longer holds up the build's one
process; the search index reads the pruned content too. The result is kept under the build
cache by the content and the one code version (``cachefile.code_version``: the pruning code and
tinycss2's version among it), so the build finds what the worker made. The same step gives each
SVG output its alternative text (``notebook_page.describe_images``)."""

import hashlib

from benchsite.build import notebook_page
from benchsite.core import cachefile
from benchsite.core.cachefile import cache_dir


def on_page_content(html: str, page, config, files) -> str:
    if not page.file.src_uri.endswith(".ipynb"):
        return html
    digest = hashlib.sha256(cachefile.code_version().encode() + html.encode()).hexdigest()
    stored = cache_dir() / "notebook" / f"{digest}.pkl"
    found = cachefile.read(stored)
    if isinstance(found, str):
        return found
    pruned = notebook_page.prune_page(notebook_page.describe_images(html))
    cachefile.write(stored, pruned)
    return pruned
