"""Rendered charts and machine panels, made once per distinct input and kept under
``.cache/bench/`` between builds.

A chart costs a few milliseconds (``chart.py``) and a machine panel a tenth of a
second of pandas; a site with a hundred machines would redo thousands of them on
every build although only a new folder changed. Each key is a hash of exactly
what the output is made from (the samples, the figure's metadata, the script's
current hash, the link it carries) and of the one code version (every file of the
package and the installed libraries: ``cachefile.code_version``), so a changed CSV
or any changed code makes it afresh and nothing stale is ever served.

A page carries a placeholder comment for each chart while it goes through
Markdown and the search indexer, and :func:`fill` puts the SVG into the finished
HTML: a chart is thousands of path segments that both would parse for nothing.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchsite.core import cachefile
from benchsite.core.cachefile import cache_dir, store_bytes
from benchsite.core.urls import SITE_LINK
from benchsite.model.table import Table
from benchsite.views import chart, render

# A chart, or a block of finished HTML (a machine's panel, a comparison, highlighted code), by key.
PLACEHOLDER = re.compile(r"<!--bench-(?:chart|html):([0-9a-f]{64})-->")


def chart_key(tab: Table) -> str:
    """What a chart is drawn from, hashed: the arguments the drawing function gets
    (``chart.table_input``: each row's label and its samples' ``chart.COLUMNS``, the
    variants, the title), and the code (``cachefile.code_version``). Hashed once per table
    object: a chapter, the figure's page and the machine page each ask it of the same table."""
    memo = tab.__dict__  # a frozen dataclass: not through setattr (Table.metric keeps its own so)
    if "_chart_key" not in memo:
        memo["_chart_key"] = _chart_key(tab)
    return memo["_chart_key"]


def _chart_key(tab: Table) -> str:
    """The table's whole frame in ``chart.COLUMNS`` (and its index) hashed once, and each
    row's label and the index of its samples: every row's samples in those columns follow from
    them (``table_input`` selects them so), without a frame made a row for each key."""
    digest = hashlib.sha256(cachefile.code_version().encode())
    digest.update(repr((list(tab.variants), chart.table_title(tab))).encode())
    frame = tab.frame
    columns = list(chart.COLUMNS)
    digest.update(repr((columns, [str(frame[c].dtype) for c in columns], len(frame))).encode())
    digest.update(_values(frame.index.to_numpy()))
    for column in columns:
        digest.update(_values(frame[column].to_numpy()))
    for row in tab.rows:
        index = row.samples.index.to_numpy()
        digest.update(repr((row.label, str(index.dtype), len(index))).encode())
        digest.update(_values(index))
    return digest.hexdigest()


def _values(values: np.ndarray) -> bytes:
    """A column's values as bytes that tell any two columns apart (with their dtype and length,
    hashed beside them): a numeric column's own bytes, any other its values' reprs (Python
    objects: never their addresses). Twice as quick as ``pd.util.hash_pandas_object``, and no
    64-bit hash of each value to collide."""
    if values.dtype.kind in "biufcmM":
        return np.ascontiguousarray(values).tobytes()
    return repr(values.tolist()).encode()


class BuildCache:
    """One build's charts and panels: from memory, else from disk, else made and stored."""

    def __init__(self) -> None:
        self._memory: dict[str, str] = {}  # a chart is on a chapter, a figure page and a machine page

    def _cached(self, kind: str, key: str, make: Callable[[], str]) -> str:
        if key not in self._memory:
            path = cache_dir() / kind / f"{key}.html"
            if path.is_file():
                self._memory[key] = path.read_text(encoding="utf-8")
            else:
                self._memory[key] = make()
                try:
                    store_bytes(path, self._memory[key].encode("utf-8"))
                except OSError:
                    pass  # a read-only checkout still builds; it just makes it again next time
        return self._memory[key]

    def compressed(self, path: Path) -> bytes:
        """A results file gzip-compressed for download (the same bytes for the same file)."""
        digest = cachefile.file_digest(path, cache_dir() / "frames")  # shared with the loader's
        key = hashlib.sha256(f"{digest}\0{cachefile.code_version()}".encode()).hexdigest()  # compresslevel is code
        stored = cache_dir() / "gzip" / f"{key}.gz"
        try:
            return stored.read_bytes()
        except OSError:
            pass  # not made yet (or unreadable): made again
        packed = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
        try:
            store_bytes(stored, packed)
        except OSError:
            pass
        return packed

    def chart_placeholder(self, tab: Table) -> str:
        """Makes (or finds) the chart now; the page carries only its key until :meth:`fill`."""
        key = chart_key(tab)
        self._cached("chart", key, lambda: chart.table_chart(tab))
        return f"<!--bench-chart:{key}-->"

    def fill(self, html: str, link: Callable[[str], str]) -> str:
        """Every placeholder in a finished page replaced by its chart or HTML block (a block
        may hold a chart's placeholder, so this repeats until none is left), then every
        :func:`urls.site_link` by ``link`` of its path: the URL relative to this page."""
        for _ in range(4):
            if "<!--bench-" not in html:
                break
            html = PLACEHOLDER.sub(lambda m: self._memory[m.group(1)], html)
        return SITE_LINK.sub(lambda m: link(m.group(1)), html) if "<!--bench-link:" in html else html

    def blocks_in(self, text: str) -> dict[str, str]:
        """Every chart and block ``text`` holds a placeholder for, with those inside them: what a
        cached page needs put back (:meth:`restore`) for :meth:`fill` to find them."""
        out: dict[str, str] = {}
        todo = PLACEHOLDER.findall(text)
        while todo:
            key = todo.pop()
            if key not in out:
                out[key] = self._memory[key]
                todo += PLACEHOLDER.findall(out[key])
        return out

    def restore(self, blocks: dict[str, str]) -> None:
        self._memory.update(blocks)

    def stash(self, html: str) -> str:
        """A placeholder for a block of finished HTML, filled in by :meth:`fill`. Markdown, the
        search indexer and the link checker then pass over a one-line comment, not the
        tables and tags of a machine's results, on pages that can number thousands."""
        key = hashlib.sha256(html.encode()).hexdigest()
        self._memory[key] = html
        return f"<!--bench-html:{key}-->"

    def html_block(self, *parts: str) -> str:
        """Raw HTML as one block that Markdown never parses: a figure's div, stashed (the
        placeholder on a line of its own)."""
        block = "<div class=\"bench-figure\">\n" + "\n".join(p for p in parts if p) + "\n</div>"
        return f"\n{self.stash(block)}\n"

    def block(self, kind: str, key: str, make: Callable[[], str]) -> str:
        """A block of finished HTML made from ``key`` (everything it depends on besides the
        code) and the code of every module and template, from the cache when it has it."""
        digest = hashlib.sha256(cachefile.code_version().encode())
        digest.update(f"{kind}\n{key}".encode())
        return self._cached(kind, digest.hexdigest(), make)

    def machine_panel(self, tab: Table, csv_url: str, rule_url: str, source: str, ceiling: str = "") -> str:
        """render.machine_panel, with its chart as a placeholder, from the cache when the
        results file (``source``: its sha256), the figure, the stale reason, the links, the ceiling
        section (``ceiling``: finished HTML or its placeholder) and the code are what they were.
        With :func:`urls.site_link` links, every page that shows the panel shares one."""
        svg = self.chart_placeholder(tab)
        digest = hashlib.sha256(cachefile.code_version().encode())
        digest.update(source.encode())
        digest.update(repr((tab.fig, tab.stale, csv_url, rule_url, svg, ceiling)).encode())
        return self._cached("panel", digest.hexdigest(),
                            lambda: str(render.machine_panel(tab, csv_url, rule_url, svg, ceiling)))
