"""The publishing side: results CSVs in, HTML / Markdown / SVG out.

Plain modules with no mkdocs import; ``docs/.hooks/bench.py`` is the thin glue.
The walk from a marker to its HTML is in CONTRIBUTING.md ("How the site is built").
"""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
