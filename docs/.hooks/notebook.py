"""MkDocs glue: a notebook page keeps only the part of mkdocs-jupyter's inlined stylesheet it
uses (benchsite/notebook_page.py says why; the stored outputs are not touched)."""

from benchsite.notebook_page import prune_page


def on_post_page(output: str, page, config) -> str:
    return prune_page(output) if page.file.src_uri.endswith(".ipynb") else output
