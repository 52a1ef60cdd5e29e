"""The render cache (the bench plugin's page events call it): what mkdocs makes of a page's
Markdown (its HTML, contents, title and anchors) and what the search indexer makes of that HTML,
kept under the build cache between builds.

A warm build of the site spent most of its time here: Markdown, code highlighting and the
search indexer's HTML parser over the same chapters as last time. Each entry's key is a hash of
everything the result is made from, so a changed input makes it afresh:

- the Markdown after the bench markers are expanded (so every results file a marker read);
- the files a ``--8<--`` snippet line names (a page with the multi-line snippet form is not
  kept: the names are not on one line);
- the page's URL, every file of the site and its URL (links are resolved and checked against
  them);
- the site's set-up, as ``benchsite/build/sitesetup.py`` hashes it for both caching hooks: Markdown
  extensions, validation levels, URLs, plugin settings, the hooks' code, Python's version and
  the versions of everything that renders, and how much mkdocs logs (``-q`` silences the reports
  that keep a page out of the cache, ``-v`` makes mkdocs skip recording a page's links to
  anchors), so such builds keep their own entries.

A page whose rendering reported anything (a broken link, a missing anchor, any warning:
``sitesetup.Reports``) is rendered, and reports it, on every build. This runs after the bench
plugin's markers (they fill the Markdown first) and after every other plugin (mkdocs-jupyter has replaced
a notebook page's rendering by then, and that replacement is what gets kept)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from benchsite.build import mkdocs_private, sitesetup
from benchsite.core import cachefile
from benchsite.core.cachefile import cache_dir

# What a render may change on a page; anything else changed means the result is not kept.
KEPT = mkdocs_private.RENDER_ATTRIBUTES
SNIPPET = re.compile(r"""-{1,}8<-{1,}[ \t]+(?:"((?:\\"|[^"\n\r])+?)"|'((?:\\'|[^'\n\r])+?)')""")  # as pymdownx.snippets
SNIPPET_BLOCK = re.compile(r"^\s*-{1,}8<-{1,}\s*$", re.M)

STATE: dict[str, str] = {}  # this build's set-up digest ("setup") and files digest ("files")


def on_config(config):
    STATE.clear()
    STATE["setup"] = sitesetup.digest(config)
    return config


def on_files(files, config):
    listing = "\n".join(sorted(f"{f.src_uri}\0{f.dest_uri}\0{f.url}\0{f.inclusion}" for f in files))
    STATE["files"] = hashlib.sha256(listing.encode()).hexdigest()
    return files


def on_pre_build(config):
    for plugin in config["plugins"].values():
        index = mkdocs_private.material_search_index(plugin)  # MkDocs' own search: not kept
        if index is not None and not getattr(index, "bench_cached", False):
            index.add_entry_from_context = _cached_entries(index, index.add_entry_from_context)
            index.bench_cached = True


def on_pre_page(page, config, files):
    page.render = _cached_render(page, page.render)
    return page


def snippet_bases(config) -> list[str]:
    """The folders (or files) ``pymdownx.snippets`` looks in for a snippet line's file, in its order:
    its ``base_path`` setting (default ``["."]``), each relative to the directory mkdocs runs in."""
    base = ((config.get("mdx_configs") or {}).get("pymdownx.snippets") or {}).get("base_path", ["."])
    return [base] if isinstance(base, str) else list(base)


def snippets(markdown: str, bases: list[str] | None = None) -> str | None:
    """The digests of the files a page's snippet lines include, and of the files those include,
    or None when they cannot all be named from the text alone. A name is looked up under each of
    ``bases`` (:func:`snippet_bases`; the directory mkdocs runs in when None), as the snippets
    extension looks it up, and every candidate's digest counts: whichever it includes, an edit
    to it changes the result."""
    bases = ["."] if bases is None else bases
    parts, todo, seen = [], [markdown], set()
    while todo:
        text = todo.pop()
        if SNIPPET_BLOCK.search(text):
            return None
        for name in sorted({(a or b).strip() for a, b in SNIPPET.findall(text)} - seen):
            seen.add(name)
            digests = []
            for base in bases:
                # A base that is a file is found by its own name (pymdownx.snippets: get_snippet_path).
                path = Path(base) if Path(base).is_file() else Path(base, re.sub(r":[^/\\]*$", "", name))
                data = path.read_bytes() if path.is_file() else None
                digests.append("-" if data is None else hashlib.sha256(data).hexdigest())
                if data is not None:
                    todo.append(data.decode("utf-8", errors="replace"))
            parts.append("\0".join([name, *digests]))
    return "\n".join(parts)


def _cached_render(page, render):
    def cached(config, files) -> None:
        included = snippets(page.markdown or "", snippet_bases(config))
        key = None
        if included is not None and "files" in STATE:
            key = hashlib.sha256("\0".join([STATE["setup"], STATE["files"], page.file.src_uri, page.url,
                                            repr(page.meta), included, page.markdown]).encode()).hexdigest()
        stored = cache_dir() / "rendered" / f"{key}.pkl" if key else None
        found = cachefile.read(stored) if stored else None
        if isinstance(found, dict) and _restore(page, found, files):
            return
        before = dict(vars(page))
        with sitesetup.reporting() as logged:
            render(config, files)
        changed = {k: v for k, v in vars(page).items() if k not in before or before[k] is not v}
        if stored and not logged.count and set(changed) <= KEPT:
            links = changed.get("links_to_anchors")
            if links is not None:
                changed["links_to_anchors"] = {target.src_uri: found for target, found in links.items()}
            cachefile.write(stored, changed)

    return cached


def _restore(page, found: dict, files) -> bool:
    links = found.get("links_to_anchors")
    if links is not None:
        targets = {src: files.get_file_from_path(src) for src in links}
        if not all(targets.values()):
            return False
        found = dict(found, links_to_anchors={targets[src]: anchors for src, anchors in links.items()})
    for name, value in found.items():
        setattr(page, name, value)
    return True


def _cached_entries(index, add):
    """The search index's entries for a page, by the page's HTML, contents, URL, title and
    metadata and the index's settings."""
    def cached(page) -> None:
        toc = "".join(str(item) for item in page.toc)  # every entry's title and anchor, nested
        key = hashlib.sha256("\0".join([STATE.get("setup", ""), repr(sorted(index.config.items(), key=str)),
                                        page.url, str(page.title), repr(page.meta), toc,
                                        page.content or ""]).encode()).hexdigest()
        stored = cache_dir() / "search" / f"{key}.pkl"
        found = cachefile.read(stored)
        if isinstance(found, list):
            index.entries.extend(found)
            return
        start = len(index.entries)
        add(page)
        cachefile.write(stored, index.entries[start:])

    return cached
