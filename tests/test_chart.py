"""Charts of every sample (benchsite/views/chart.py): what the reader sees, and what the tooltip reads back."""

import html
import math
import re

import numpy as np
import pandas as pd
import pytest

from benchsite.model.figures import Figure
from benchsite.model.table import Table
from benchsite.views import chart

PANEL = re.compile(r"<svg class=\"bench-svg bench-panel\"(.*?)</svg>", re.S)
UNIT = r"(s|ms|µs|ns)"
SEGMENT = re.compile(r"([Mm])(-?\d+(?:\.\d+)?) ?(-?\d+(?:\.\d+)?)h0")  # as docs/assets/bench-chart.js


def rows(times, variants=("v",), runs=3, boundary="completed") -> pd.DataFrame:
    """Every (variant, run) gets every time in ``times``, in sample order."""
    return pd.DataFrame([{"variant": v, "run": r, "sample": s, "boundary": boundary, "time_s": t}
                         for v in variants for r in range(runs) for s, t in enumerate(times)])


def panels_of(svg: str) -> list[str]:
    return PANEL.findall(svg)


def texts(panel: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", panel)]


def ticks(panel: str) -> list[str]:
    block = re.search(r'<g text-anchor="end">(.*?)</g>', panel).group(1)
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", block)]


def axis(panel: str) -> tuple[str, float, float, float, float]:
    kind, *numbers = re.search(r'data-axis="([^"]*)"', panel).group(1).split()
    return (kind, *map(float, numbers))


def decoded(panel: str) -> dict[tuple[str, str], list[float]]:
    """(variant, run) -> every dot's time, read back as the tooltip does."""
    kind, low, high, top, bottom = axis(panel)
    out = {}
    for variant, body in re.findall(r'<g data-variant="([^"]*)">(.*?)</g>', panel, re.S):
        for run, d in re.findall(r'<path data-run="([^"]*)"[^>]* d="([^"]*)"', body):
            x = y = 0.0
            values = []
            for cmd, a, b in SEGMENT.findall(d):
                x, y = (float(a), float(b)) if cmd == "M" else (x + float(a), y + float(b))
                frac = (bottom - y) / (bottom - top)
                values.append(10 ** (math.log10(low) + frac * math.log10(high / low)) if kind == "log"
                              else low + frac * (high - low))
            out[(html.unescape(variant), run)] = values
    return out


def test_panel_titles_match_their_data_whatever_the_row_order(tmp_path):
    fig = Figure(id="fig-demo", stem="demo", script=tmp_path / "demo.py", title="Demo", caption="c",
                 chapter="index.md", variants=("v",), group_by=("n",))
    data = [{"variant": "v", "run": r, "sample": 0, "boundary": "completed", "time_s": t * (1 + 0.01 * r), "p_n": n}
            for n, t in (("1024", 2.0), ("128", 3e-6)) for r in range(3)]  # n=1024 comes first
    svg = chart.table_chart(Table.of(pd.DataFrame(data).assign(machine="m"), fig))
    small, large = panels_of(svg)
    assert "n=128" in texts(small) and "n=1024" in texts(large)  # numeric order of the table
    assert any(t.endswith("µs") for t in ticks(small)) and not any(t.endswith(" s") for t in ticks(small))
    assert any(t.endswith(" s") for t in ticks(large))
    assert 'fill="currentColor"' in svg and 'role="img"' in svg and "<image" not in svg


@pytest.mark.parametrize("index", ["positions", "shuffled labels"])
def test_a_tables_chart_is_drawn_from_each_rows_own_samples(tmp_path, index):
    """``table_input`` cuts each row's samples from the table frame's columns by the row's place in
    it (positions for a loaded file's frame, looked up for any other index): the chart is the one
    drawn from each row's own samples as a frame of ``chart.COLUMNS``, and a row's arrays are those
    columns' values, row for row."""
    fig = Figure(id="fig-demo", stem="demo", script=tmp_path / "demo.py", title="Demo", caption="c",
                 chapter="index.md", variants=("a", "b"), group_by=("n",))
    rng = np.random.default_rng(5)
    data = pd.DataFrame([{"variant": v, "run": r, "sample": s, "boundary": "completed", "p_n": n,
                          "time_s": float(rng.lognormal(-7, 1)), "machine": "m"}
                         for n in ("8", "64", "16") for v in ("b", "a", "other") for r in range(3) for s in range(4)])
    data = data.sample(frac=1, random_state=3)  # rows of every table row and variant interleaved
    if index == "positions":
        data = data.reset_index(drop=True)
    else:
        data.index = rng.permutation(len(data)) * 7 + 100
    tab = Table.of(data, fig)
    panels, variants, title = chart.table_input(tab)
    assert [label for label, _ in panels] == [row.label for row in tab.rows] == ["n=8", "n=16", "n=64"]
    for (_, got), row in zip(panels, tab.rows):
        want = row.samples[list(chart.COLUMNS)]
        assert list(got) == list(chart.COLUMNS)
        for col in chart.COLUMNS:
            assert got[col].tolist() == want[col].tolist(), col
    frames = [(row.label, row.samples[list(chart.COLUMNS)]) for row in tab.rows]
    assert chart.table_chart(tab) == chart.sample_chart(frames, variants, title)


def test_a_spread_over_a_decade_is_log_in_every_panel():
    svg = chart.sample_chart([("a", rows([1e-3, 1.1e-3])), ("b", rows([1e-5, 1.2e-5]))], ["v"], "t")
    assert [axis(p)[0] for p in panels_of(svg)] == ["log", "log"]  # each panel alone spans 1.2x
    for panel in panels_of(svg):
        assert len(ticks(panel)) >= 2 and "log scale" in panel


def test_a_narrow_spread_is_linear_from_zero():
    svg = chart.sample_chart([("a", rows([1e-3, 2e-3])), ("b", rows([1.5e-3, 1.9e-3]))], ["v"], "t")
    for panel in panels_of(svg):
        kind, low, high, *_ = axis(panel)
        assert (kind, low) == ("lin", 0.0) and high >= 1.9e-3
        assert re.fullmatch(rf"0 {UNIT}", ticks(panel)[0]) and "linear from 0" in panel


@pytest.mark.parametrize("boundary, label", [("completed", "time per call"), ("loop", "time per call (loop mean)"),
                                             ("wall", "wall time")])
def test_every_axis_label_says_what_the_time_is_and_carries_its_unit(boundary, label):
    svg = chart.sample_chart([("", rows([2e-3, 3e-3, 4e-3], boundary=boundary))], ["v"], "Fig on m")
    (panel,) = panels_of(svg)
    assert all(re.fullmatch(rf"\d[\d.]* {UNIT}", t) for t in ticks(panel)), ticks(panel)
    assert f"{label}, linear from 0" in texts(panel)
    assert f'aria-label="Fig on m: {label}, linear from 0' in panel


def test_mixed_boundaries_are_just_time():
    mixed = pd.concat([rows([1e-3], boundary="wall"), rows([2e-3], variants=("w",), boundary="completed")])
    (panel,) = panels_of(chart.sample_chart([("", mixed)], ["v", "w"], "t"))
    assert "time, linear from 0" in texts(panel)


def test_every_sample_is_a_dot_and_reads_back_as_its_time():
    rng = np.random.default_rng(0)
    times = list(np.exp(rng.uniform(np.log(1e-6), np.log(1e-2), 50)))
    data = rows(times, variants=("a", "b"), runs=4)
    (panel,) = panels_of(chart.sample_chart([("", data)], ["a", "b"], "t"))
    assert sum(len(v) for v in decoded(panel).values()) == len(data)
    for (variant, run), values in decoded(panel).items():
        assert np.allclose(values, times, rtol=5e-3), (variant, run)  # the tooltip's value is the sample's


def test_same_data_same_bytes_whatever_the_row_order():
    data = rows([1e-3, 2e-3, 5e-3, 3e-3], variants=("a", "b"), runs=3)
    one = chart.sample_chart([("n=1", data)], ["a", "b"], "t")
    assert chart.sample_chart([("n=1", data)], ["a", "b"], "t") == one
    assert chart.sample_chart([("n=1", data.sample(frac=1, random_state=1))], ["a", "b"], "t") == one


def test_text_from_the_data_is_escaped():
    hostile = '<script>alert("x")</script>'
    title = f'"><img src=x>{hostile}'
    svg = chart.sample_chart([(f"n={hostile}", rows([1e-3], variants=(hostile,)))], [hostile], title)
    assert "<script" not in svg and "<img" not in svg
    assert "&lt;script&gt;" in svg and "&#34;&gt;&lt;img" in svg
    assert html.unescape(re.search(r'data-variant="([^"]*)"', svg).group(1)) == hostile


def test_every_run_has_its_own_colour():
    runs = 10
    svg = chart.sample_chart([("", rows([1e-3, 2e-3], runs=runs))], ["v"], "t")
    colours = re.findall(r'<path data-run="\d+" stroke="(#[0-9A-Fa-f]{6})"', svg)
    assert len(colours) == runs and len(set(colours)) == runs
    assert len(set(chart.PALETTE)) == len(chart.PALETTE) >= 10
    assert re.findall(r"run (\d+)</span>", svg) == [str(r) for r in range(runs)]  # the legend


def test_a_runs_colour_is_the_same_in_every_variant():
    """A run's dots take its legend colour (its place among the runs) in every variant, also in a
    variant that lacks a run: the colour follows the run, not the path's place in the panel."""
    frame = rows([1e-3, 2e-3], variants=("a", "b", "c"), runs=4)
    frame = frame[~((frame["variant"] == "b") & (frame["run"] == 0))]
    svg = chart.sample_chart([("", frame)], ["a", "b", "c"], "t")
    drawn = re.findall(r'<path data-run="(\d+)"(?: data-samples="[^"]*")? stroke="(#[0-9A-Fa-f]{6})"', svg)
    assert len(drawn) == 3 * 4 - 1
    assert all(colour == chart.PALETTE[int(run)] for run, colour in drawn)

def test_the_tooltip_has_what_it_reads():
    svg = chart.sample_chart([("a", rows([1e-3, 3e-3], variants=("x", "y")))], ["x", "y"], "t")
    (panel,) = panels_of(svg)
    assert re.search(r'data-axis="(log|lin) [\d.e+-]+ [\d.e+-]+ [\d.]+ [\d.]+"', panel)
    assert re.findall(r'data-variant="([^"]*)"', panel) == ["x", "y"]
    assert len(re.findall(r'<path data-run="\d+"', panel)) == 6
    assert "data-samples" not in panel  # samples 0, 1, 2...: the index is the segment's position
    gappy = rows([1e-3, 3e-3]).assign(sample=lambda f: f["sample"] * 5)
    assert 'data-samples="0 5"' in chart.sample_chart([("", gappy)], ["v"], "t")


def test_the_chart_stays_small():
    times = list(np.exp(np.random.default_rng(1).uniform(np.log(1e-5), np.log(1e-2), 5000 // 18)))
    data = rows(times, variants=("a", "b"), runs=9)
    svg = chart.sample_chart([("n=1", data)], ["a", "b"], "t")
    assert len(svg.encode()) < 11 * len(data) + 8000  # about nine bytes a dot, plus the axes


def test_variants_a_machine_did_not_measure_are_named_not_drawn_as_empty_columns(tmp_path):
    """fig-machine-peak declares bfloat16 and float16, which its script measures only on an
    accelerator: on a CPU its tables had two columns of dashes and its charts two empty slots, as
    if the measurement had failed. A machine's table and chart show the variants it measured, in
    the figure's order, and its meta line names the others."""
    from benchsite.views.render import table

    fig = Figure(id="fig-demo", stem="demo", script=tmp_path / "demo.py", title="Demo", caption="c",
                 chapter="index.md", variants=("float32", "bfloat16", "float64"), group_by=("n",))
    data = [{"variant": v, "run": r, "sample": 0, "boundary": "completed", "time_s": 1e-3 * (1 + 0.01 * r),
             "p_n": "64"} for v in ("float64", "float32") for r in range(3)]
    tab = Table.of(pd.DataFrame(data).assign(machine="m"), fig)
    assert tab.variants == ("float32", "float64") and tab.unmeasured == ("bfloat16",)
    head = re.findall(r"<th[^>]*>([^<]*)</th>", str(table(tab)))
    assert head == ["n", "float32", "float64"]
    names = [t for t in texts(panels_of(chart.table_chart(tab))[0]) if t in fig.variants]
    assert names == ["float32", "float64"]
    # A table with no sample of any variant keeps them all (its cells say none was measured).
    empty = Table.of(pd.DataFrame(data).assign(machine="m", variant="other"), fig)
    assert empty.variants == fig.variants and empty.unmeasured == ()


def test_cells_are_pandas_groupby_indices_and_medians_to_the_bit():
    """``chart._cells`` (numpy) gives what ``groupby(["variant", "run"], sort=False)`` gave the chart:
    each cell's positions, and its median time to the bit (odd and even counts, ties, one sample)."""
    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(1, 80))
        frame = pd.DataFrame({"variant": rng.choice(["a", "b", "c d"], n), "run": rng.integers(0, 5, n),
                              "time_s": np.round(rng.lognormal(-8, 1, n), int(rng.integers(3, 12)))})
        cells, medians = chart._cells(frame["variant"].to_numpy(), frame["run"].to_numpy(),
                                      frame["time_s"].to_numpy())
        by_cell = frame.groupby(["variant", "run"], sort=False)
        want = by_cell["time_s"].median().to_dict()
        assert {k: v.tolist() for k, v in cells.items()} == {k: v.tolist() for k, v in by_cell.indices.items()}
        assert repr(medians) == repr({k: want[k] for k in medians}) and medians.keys() == want.keys()


def test_each_runs_path_is_dot_path_of_its_own_dots():
    """``chart.marks`` draws every run of a variant in one go; each run's path is still what
    ``dot_path`` gives of that run's dots alone (x: its strip's centre plus ``_jitter`` of its count,
    y: its times), on random panels with runs of one sample, of many, and missing."""
    rng = np.random.default_rng(11)
    for _ in range(40):
        n = int(rng.integers(1, 120))
        frame = pd.DataFrame({"variant": rng.choice(["a", "b"], n), "run": rng.integers(0, 6, n),
                              "sample": rng.permutation(n), "boundary": "completed",
                              "time_s": rng.lognormal(-8, 1.5, n)})
        variants, runs = ["a", "b"], sorted(set(frame["run"].tolist()))
        ax = chart.axes.time_axis(float(frame["time_s"].min()), float(frame["time_s"].max()), True)
        measured = chart.Measured([20.0, 20.0], 40, [30.0])
        fr = chart.frame("", variants, 30.0, measured, len(runs))

        def y_of(seconds, fr=fr, ax=ax):
            return fr.bottom - ax.frac(np.asarray(seconds, dtype=float)) * chart.PLOT_H

        groups, _, _, _ = chart.marks(frame, variants, runs, fr, y_of)
        order = np.argsort(frame["sample"].to_numpy(), kind="stable")
        ys = y_of(frame["time_s"].to_numpy()[order])
        cells, _ = chart._cells(frame["variant"].to_numpy()[order], frame["run"].to_numpy()[order],
                                frame["time_s"].to_numpy()[order])
        for group in groups:
            i = variants.index(group["variant"])
            drawn = re.findall(r' d="([^"]*)"', str(group["paths"]))
            want = []
            for j, run in enumerate(runs):
                if (group["variant"], run) in cells:
                    at = cells[(group["variant"], run)]
                    centre = fr.left + fr.slot * i + fr.slot * 0.08 + fr.strip * (j + 0.5)
                    xs = np.rint(centre + chart._jitter(len(at)) * fr.strip * 0.8)
                    want.append(chart.dot_path(xs, ys[at]))
            assert drawn == want
