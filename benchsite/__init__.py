"""The publishing side: results CSVs in, HTML / Markdown / SVG out, as the MkDocs plugin
``bench`` (``build/plugin.py``).

Five layers, each importing only those below it: ``core``, ``model``, ``views``, ``pages``,
``build``; only ``build`` imports MkDocs. CONTRIBUTING.md ("The layers", "How the site is built")
draws them and the walk from a marker to its HTML.
"""

from pathlib import Path

# This project's checkout: the publishing side belongs to it (benchkit, the harness, is a
# package of its own and derives no place from where its files are).
REPO = Path(__file__).resolve().parents[1]
BENCH_DIR = REPO / "bench_scripts"  # the figure scripts
RESULTS_DIR = REPO / "results"
