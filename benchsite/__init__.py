"""The publishing side: results CSVs in, HTML / Markdown / SVG out.

Plain modules with no mkdocs import; ``benchsite/build/plugin.py`` is the thin glue.
The walk from a marker to its HTML is in CONTRIBUTING.md ("How the site is built").
"""

from pathlib import Path

# This project's checkout: the publishing side belongs to it (benchkit, the harness, is a
# package of its own and derives no place from where its files are).
REPO = Path(__file__).resolve().parents[1]
BENCH_DIR = REPO / "bench_scripts"  # the figure scripts
RESULTS_DIR = REPO / "results"
