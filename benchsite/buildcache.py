"""Rendered charts and machine panels, made once per distinct input and kept under
``.cache/bench/`` between builds.

A chart costs matplotlib about half a second and a machine panel a tenth of a
second of pandas; a site with a hundred machines would redo hundreds of them on
every build although only a new folder changed. Each key is a hash of exactly
what the output is made from (the samples, the figure's metadata, the script's
current hash, the link it carries, the code that draws it and the library
versions), so a changed CSV or changed rendering code makes it afresh and
nothing stale is ever served.

A page carries a placeholder comment for each chart while it goes through
Markdown and the search indexer, and :func:`fill` puts the SVG into the finished
HTML: a chart is about half a megabyte of tags that both would parse for nothing.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

import matplotlib
import pandas as pd

from . import REPO, chart, render
from .figures import Figure

PACKAGE = Path(__file__).resolve().parent
DRAWN_FROM = ["machine", "variant", "run", "time_s"]  # plus the figure's p_<group_by> columns
PLACEHOLDER = re.compile(r"<!--bench-chart:([0-9a-f]{64})-->")
_memory: dict[str, str] = {}  # this build's outputs: a chart is on a figure page and a machine page


def cache_dir() -> Path:
    """``BENCH_CACHE`` (tests, the scaling benchmark), else ``.cache/bench``."""
    return Path(os.environ.get("BENCH_CACHE") or REPO / ".cache" / "bench")


@functools.cache
def _code_version(kind: str) -> bytes:
    # A chart depends on the drawing code only; a panel on every module it goes through.
    files = [Path(chart.__file__), Path(render.__file__)] if kind == "chart" else sorted(PACKAGE.glob("*.py"))
    blob = b"".join(f.read_bytes() for f in files) + matplotlib.__version__.encode() + pd.__version__.encode()
    return hashlib.sha256(blob).digest()


def _store(path: Path, text: str) -> None:
    # Temp file + rename: two builds at once never read half a file.
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def _cached(kind: str, key: str, make: Callable[[], str]) -> str:
    if key not in _memory:
        path = cache_dir() / kind / f"{key}.html"
        if path.is_file():
            _memory[key] = path.read_text(encoding="utf-8")
        else:
            _memory[key] = make()
            try:
                _store(path, _memory[key])
            except OSError:
                pass  # a read-only checkout still builds; it just makes it again next time
    return _memory[key]


def forget() -> None:
    """Drop the in-memory copies (``mkdocs serve`` rebuilds in one process)."""
    _memory.clear()


def chart_key(frame: pd.DataFrame, fig: Figure) -> str:
    cols = DRAWN_FROM + [f"p_{k}" for k in fig.group_by]
    digest = hashlib.sha256(_code_version("chart"))
    digest.update(repr((fig.title, fig.group_by, fig.variants)).encode())
    digest.update(pd.util.hash_pandas_object(frame[cols], index=False).values.tobytes())
    return digest.hexdigest()


def chart_placeholder(frame: pd.DataFrame, fig: Figure) -> str:
    """Makes (or finds) the chart now; the page carries only its key until :func:`fill`."""
    key = chart_key(frame, fig)
    _cached("chart", key, lambda: render.panel_chart(frame, fig))
    return f"<!--bench-chart:{key}-->"


def fill(html: str) -> str:
    """Every chart placeholder in a finished page replaced by its SVG."""
    if "<!--bench-chart:" not in html:
        return html
    return PLACEHOLDER.sub(lambda m: _memory[m.group(1)], html)


def machine_panel(frame: pd.DataFrame, fig: Figure, current_sha: str, csv_url: str, source: Path) -> str:
    """render.machine_panel, with its chart as a placeholder, from the cache when the
    results file (``source``), the figure and the code are what they were."""
    svg = chart_placeholder(frame, fig)
    digest = hashlib.sha256(_code_version("panel"))
    digest.update(hashlib.sha256(source.read_bytes()).digest())
    digest.update(repr((fig, current_sha, csv_url, svg)).encode())
    return _cached("panel", digest.hexdigest(), lambda: render.machine_panel(frame, fig, current_sha, csv_url, svg))
