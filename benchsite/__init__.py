"""The publishing side: results CSVs in, HTML / Markdown / SVG out.

Plain modules with no mkdocs import; ``docs/.hooks/bench.py`` is the thin glue.
"""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The schema module lives with the measuring side, which must run without this
# package; both read the one definition.
sys.path.insert(0, str(REPO / "bench_scripts"))
