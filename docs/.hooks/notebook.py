"""MkDocs glue: a notebook page keeps only the part of mkdocs-jupyter's inlined stylesheet it
uses (benchsite/notebook_page.py says why; the stored outputs are not touched). Pruning parses
a large stylesheet, so the result is kept under the build cache by the page and the pruning code."""

import hashlib
from pathlib import Path

from benchsite import cachefile, notebook_page
from benchsite.buildcache import cache_dir


def on_post_page(output: str, page, config) -> str:
    if not page.file.src_uri.endswith(".ipynb"):
        return output
    code = Path(notebook_page.__file__).read_bytes() + notebook_page.tinycss2.__version__.encode()
    digest = hashlib.sha256(code + output.encode()).hexdigest()
    stored = cache_dir() / "notebook" / f"{digest}.pkl"
    found = cachefile.read(stored)
    if isinstance(found, str):
        return found
    pruned = notebook_page.prune_page(output)
    cachefile.write(stored, pruned)
    return pruned
