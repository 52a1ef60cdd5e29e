"""The lesson helpers: the diagram, the folds, the report's arithmetic, the chart."""

from __future__ import annotations

import re
import statistics
import xml.etree.ElementTree as ET

import interval_diagram
import lesson_kit
import pytest
from execute import first_error
from nbformat.v4 import new_code_cell, new_notebook, new_output

SVG_NS = "{http://www.w3.org/2000/svg}"


def stage(trace: float, lower: float, compile_: float, first: float) -> dict[str, float]:
    return {"trace": trace, "lower": lower, "compile": compile_, "first-execute": first}


def svg_texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG_NS}text")]


def test_diagram_is_well_formed_and_labels_every_interval() -> None:
    texts = svg_texts(interval_diagram.interval_diagram())
    panels = (interval_diagram.WARM, interval_diagram.FIRST)
    for iv in (iv for p in panels for iv in p.intervals):
        assert iv.label in texts
    assert any("clock starts" in t for t in texts)


def test_diagram_carries_no_numbers() -> None:
    # It illustrates order, not durations: a number in it would read as a measurement.
    assert not any(re.search(r"\d", t) for t in svg_texts(interval_diagram.interval_diagram()))


def test_diagram_boxes_stay_on_the_axis() -> None:
    for panel in (interval_diagram.WARM, interval_diagram.FIRST):
        spans = [(b.start, b.stop) for _, boxes in panel.lanes for b in boxes]
        spans += [(iv.start, iv.stop) for iv in panel.intervals]
        assert all(0 <= a < b <= 100 for a, b in spans)


def test_reveal_folds_the_real_source() -> None:
    html = lesson_kit.reveal(lesson_kit.ranges_overlap, "Answer <b>")
    assert html.startswith("<details") and html.endswith("</details>")
    assert "<summary>Answer &lt;b&gt;</summary>" in html
    assert "ranges_overlap" in html


def test_report_keeps_first_calls_and_warm_samples_apart() -> None:
    first = [stage(0.001, 0.002, 0.030, 0.004), stage(0.001, 0.002, 0.050, 0.006)]
    warm = [0.003, 0.001, 0.002]
    rows = {r.quantity: r for r in lesson_kit.report_rows(first, warm)}
    assert rows["T_warm"].median_s == pytest.approx(0.002)
    assert rows["T_warm"].samples == 3
    assert rows["T_compile"].median_s == pytest.approx(statistics.median([0.033, 0.053]))
    assert rows["first call"].high_s == pytest.approx(0.059)
    assert rows["first execute"].low_s == pytest.approx(0.004)
    model = rows["T_first (model)"]
    assert (model.low_s, model.high_s) == (pytest.approx(0.035), pytest.approx(0.055))


def test_report_refuses_an_empty_side() -> None:
    with pytest.raises(ValueError, match="first-call"):
        lesson_kit.report_rows([], [0.001])
    with pytest.raises(ValueError, match="warm"):
        lesson_kit.report_rows([stage(0, 0, 0, 0)], [])


def test_report_table_scales_to_milliseconds_only_for_display() -> None:
    row = lesson_kit.ReportRow("T_warm", "warm", 0.0012345, 0.001, 0.002, 3)
    (shown,) = lesson_kit.report_table([row])
    assert shown["median (ms)"] == pytest.approx(1.2345, abs=6e-4)
    assert shown["samples"] == 3


def test_quartiles_and_overlap() -> None:
    assert lesson_kit.quartiles([1.0, 2.0, 3.0, 4.0, 5.0]) == (2.0, 4.0)
    assert lesson_kit.quartiles([7.0]) == (7.0, 7.0)
    assert lesson_kit.ranges_overlap((1, 2), (2, 3))
    assert not lesson_kit.ranges_overlap((1, 2), (2.5, 3))


def test_report_chart_is_an_svg_with_both_panels() -> None:
    svg = lesson_kit.report_chart([stage(0.001, 0.002, 0.03, 0.004)], [0.002, 0.0021, 0.0019])
    assert ET.fromstring(svg).tag == f"{SVG_NS}svg"
    assert "first call, by stage" in svg and "warm calls, ready minus start" in svg


def test_first_error_points_at_the_cell() -> None:
    bad = new_code_cell("1 / 0")
    bad.outputs = [new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                              traceback=[])]
    nb = new_notebook(cells=[new_code_cell("x = 1"), bad])
    assert first_error(nb) == (2, "ZeroDivisionError: division by zero")
    assert first_error(new_notebook())[0] == 0


def test_judge_prints_the_sites_paired_verdict_with_the_ratio_and_its_spread():
    faster = lesson_kit.judge("a / b", [2.0, 2.1, 1.9, 2.0, 2.05], [1.0, 1.0, 1.0, 1.01, 0.99])
    first, ratio, rule = faster.split("\n")
    assert first == "a / b: a result"
    assert ratio.startswith("  ratio 2.000x (median of 5 rounds), rounds ranged 1.900x .. 2.100x")
    assert rule.startswith("  the rule (its runs are these rounds): median per-run ratio 2")
    same = lesson_kit.judge("a / a", [1.0, 1.01, 0.99, 1.0, 1.02], [1.01, 1.0, 1.0, 0.99, 1.0])
    assert same.split("\n")[0] == "a / a: not a result yet"
