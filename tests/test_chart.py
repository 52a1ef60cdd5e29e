"""Charts: each panel's title sits over its own rows, whatever order the CSV has."""

import re

import pandas as pd

from benchsite.figures import Figure
from benchsite.render import panel_chart
from benchsite.table import Table


def test_panel_titles_match_their_data_whatever_the_row_order(tmp_path):
    fig = Figure(id="fig-demo", stem="demo", script=tmp_path / "demo.py", title="Demo", caption="c",
                 chapter="index.md", variants=("v",), group_by=("n",))
    rows = [{"variant": "v", "run": r, "time_s": t * (1 + 0.01 * r), "p_n": n}
            for n, t in (("1024", 2.0), ("128", 3e-6)) for r in range(3)]  # n=1024 comes first
    svg = panel_chart(Table.of(pd.DataFrame(rows).assign(machine="m"), fig))
    texts = [t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg) if t.strip()]
    first, second = texts.index("n=128"), texts.index("n=1024")
    assert first < second  # numeric order of the table
    panel_128, panel_1024 = texts[:first], texts[first:second]
    assert any(t.endswith("µs") for t in panel_128) and not any(t.endswith(" s") for t in panel_128)
    assert any(t.endswith(" s") for t in panel_1024)
    assert "currentColor" in svg and 'role="img"' in svg
