"""benchsite/views/roofline.py and its vendor table: pure computations on synthetic data."""

import csv
import math
import re

import pandas as pd
import pytest

from benchsite.views import axes, roofline


def test_every_vendor_row_names_its_source():
    with roofline.PEAKS_CSV.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    for row in rows:
        assert row["source"].strip(), row
        assert "http" in row["source"], row  # a document a reader can open
        assert float(row["peak_flops"]) > 0 and float(row["peak_bytes_per_s"]) > 0
    assert len(roofline.vendor_peaks()) == len(rows)


def test_a_row_without_a_source_is_refused(tmp_path):
    bad = tmp_path / "peaks.csv"
    bad.write_text(",".join(roofline.PEAK_COLUMNS) + "\nTPU v9,bfloat16,1e15,1e12,,\n")
    with pytest.raises(ValueError, match="without a source"):
        roofline.vendor_peaks(bad)


def test_unknown_hardware_gets_no_vendor_peak():
    assert roofline.vendor_peak("cpu", "float32") is None
    assert roofline.vendor_peak("NVIDIA H200", "bfloat16") is not None


@pytest.mark.parametrize("sizes, ratios, want", [
    ([10, 100], [4.0, 0.25], 31.62),  # log-midway: sqrt(10 * 100)
    ([10, 100, 1000], [4.0, 2.0, 0.5], 316.2),
    ([10, 100], [0.5, 0.2], 0.0),  # faster from the start
])
def test_crossing_interpolates_in_log_size_and_log_ratio(sizes, ratios, want):
    assert roofline.crossing(sizes, ratios) == pytest.approx(want, rel=1e-3)


def test_no_crossing_is_none():
    assert roofline.crossing([10, 100], [3.0, 2.0]) is None


def _rows(runs, variant, n_to_time, **extra):
    return [{"run": run, "variant": variant, "p_n": n, "time_s": t * (1 + 0.01 * run), **extra}
            for run in runs for n, t in n_to_time.items()]


def test_crossover_per_run_and_its_text():
    frame = pd.DataFrame(_rows(range(3), "jit", {16: 4e-6, 4096: 5e-6, 1 << 20: 1e-4})
                         + _rows(range(3), "numpy", {16: 1e-6, 4096: 5e-6, 1 << 20: 4e-4}))
    found = roofline.crossover(frame, "jit", "numpy")
    assert set(found.per_run) == {0, 1, 2}
    assert all(v == pytest.approx(4096, rel=1e-6) for v in found.per_run.values())
    assert found.text() == "n ≈ 4100 [4100..4100]"


def _peak_frame():
    rows = []
    for run in range(3):
        # compute probe: 2e9 flops in 10 ms = 200 GFLOP/s; memory probe: 1e9 bytes in 0.1 s = 10 GB/s
        rows.append({"run": run, "variant": "float32", "dtype": "float32", "p_probe": "compute", "p_op": "matmul",
                     "p_n": 1024, "time_s": 0.01, "flops": 2e9, "bytes_moved": 1.2e7, "params": "a",
                     "device_kind": "cpu"})
        rows.append({"run": run, "variant": "float32", "dtype": "float32", "p_probe": "memory", "p_op": "scale",
                     "p_n": 1, "time_s": 0.1, "flops": 1.25e8, "bytes_moved": 1e9, "params": "b",
                     "device_kind": "cpu"})
        # a workload at intensity 1 FLOP/byte reaching 5 GFLOP/s: memory-bound, half the roofline (10 GFLOP/s)
        rows.append({"run": run, "variant": "float32", "dtype": "float32", "p_probe": "workload", "p_op": "w",
                     "p_n": 8, "time_s": 1e-3, "flops": 5e6, "bytes_moved": 5e6, "params": "c",
                     "device_kind": "cpu"})
    return pd.DataFrame(rows)


def test_ceilings_and_placing_a_workload():
    frame = _peak_frame()
    c = roofline.ceilings(frame)
    assert c.compute["float32"].median() == pytest.approx(2e11)
    assert c.memory.median() == pytest.approx(1e10)
    points = {p.label: p for p in roofline.placed(frame, c, ["op", "n"])}
    w = points["op=w, n=8"]
    assert w.intensity == pytest.approx(1.0)
    assert w.bound == "memory"
    assert w.of_ceiling.median == pytest.approx(0.5)
    assert w.vendor is None and w.of_vendor is None  # cpu: no vendor figure, no guess
    assert points["op=matmul, n=1024"].of_ceiling.median == pytest.approx(1.0)
    assert points["op=matmul, n=1024"].bound == "compute"


def test_vendor_percent_where_the_device_kind_is_on_record():
    frame = _peak_frame().assign(device_kind="NVIDIA H200")
    c = roofline.ceilings(frame)
    (w,) = [p for p in roofline.placed(frame, c, ["op", "n"]) if p.label == "op=w, n=8"]
    assert w.vendor is not None
    assert w.of_vendor.median == pytest.approx(5e9 / min(w.vendor.flops, w.vendor.bytes_per_s * 1.0))


def test_table_and_chart_render():
    frame = _peak_frame()
    c = roofline.ceilings(frame)
    points = roofline.placed(frame, c, ["op", "n"])
    html = roofline.placed_table(points, "synthetic")
    assert "% of measured ceiling" in html and "% of vendor peak" not in html
    drawn = str(roofline.roofline_svg(points, c, "synthetic <b>"))
    assert drawn.count("<circle") == len(roofline.LAYOUTS) * len(points)  # one dot a workload, in each layout
    assert drawn.count('stroke-dasharray="6 4"') == 0  # cpu: no vendor roof drawn
    assert 'fill="currentColor"' in drawn and "<b>" not in drawn and "synthetic &lt;b&gt;" in drawn


def test_the_chart_draws_a_vendor_roof_only_where_the_device_kind_is_on_record():
    frame = _peak_frame().assign(device_kind="NVIDIA H200")
    c = roofline.ceilings(frame)
    drawn = str(roofline.roofline_svg(roofline.placed(frame, c, ["op", "n"]), c, "h200"))
    assert drawn.count('stroke-dasharray="6 4"') == len(roofline.LAYOUTS) and "vendor roofline, float32" in drawn


def _copy_rows(n_runs=3):
    # a copy that moves 1e8 bytes in 20 ms a run: 5 GB/s, half the 10 GB/s memory ceiling; no FLOPs
    return pd.DataFrame([{"run": run, "variant": "copy", "dtype": "float32", "p_n": 1, "time_s": 0.02,
                          "flops": float("nan"), "bytes_moved": 1e8, "params": "n=1", "device_kind": "cpu",
                          "figure_id": "fig-other", "session_id": "s"} for run in range(n_runs)])


def test_a_row_that_only_moves_bytes_is_set_against_the_memory_ceiling():
    c = roofline.ceilings(_peak_frame())
    (p,) = roofline.placed(_copy_rows(), c, ["n"], paired=False)
    assert p.flop_rate is None and p.intensity == 0.0 and p.bound == "memory"
    assert p.of_ceiling.median == pytest.approx(0.5)
    html = str(roofline.placed_table([p], "synthetic", paired=False))
    assert "moves bytes only" in html and "50 %" in html


def test_panel_section_says_when_the_machine_has_no_ceilings_and_is_empty_without_bytes():
    rows = _copy_rows()
    missing = roofline.panel_section(rows, None, ["n"], "fig-other on m", "../peak/")
    assert "No fig-machine-peak results on this machine" in missing and 'href="../peak/"' in missing
    assert roofline.panel_section(rows.assign(bytes_moved=float("nan")), None, ["n"], "x", "l") == ""
    peak = _peak_frame().assign(figure_id="fig-machine-peak", session_id="s")
    shown = roofline.panel_section(rows, peak, ["n"], "fig-other on m", "l")
    assert "% of measured ceiling" in shown and "<circle" not in shown  # a table; the chart is the peak figure's
    own = roofline.panel_section(peak, peak, ["op", "n"], "fig-machine-peak on m", "l", chart=True)
    assert own.count("<circle") == 3 * len(roofline.LAYOUTS)  # three workloads, in each layout
    assert "each run&#39;s rate is set against that run&#39;s ceilings" in own


def test_rows_and_ceilings_from_different_sessions_are_said_to_be():
    import pandas as pd

    from benchsite.views import roofline

    same = pd.DataFrame({"session_id": ["s1", "s1"]})
    other = pd.DataFrame({"session_id": ["s2"]})
    assert roofline.session_note(same, same) == ""
    note = roofline.session_note(same, other)
    assert "session s1" in note and "session s2" in note and "not that a ceiling was beaten" in note


def test_variants_that_are_not_dtypes_name_their_rows_and_a_dispatch_rate_is_flagged():
    c = roofline.ceilings(_peak_frame())
    rows = pd.concat([_copy_rows().assign(variant="blocked", boundary="completed", flops=1e8),
                      _copy_rows().assign(variant="naive", boundary="dispatch", flops=1e8, time_s=1e-5)])
    labels = {p.label.split(":")[0]: p.label for p in roofline.placed(rows, c, ["n"], paired=False)}
    assert set(labels) == {"blocked", "naive"}
    assert "never reached" in labels["naive"] and "never reached" not in labels["blocked"]
    naive = next(p for p in roofline.placed(rows, c, ["n"], paired=False) if p.label.startswith("naive"))
    assert naive.of_ceiling is None and naive.flop_rate is not None  # its rate is shown, no share of a roof


def _dot(x, y):
    return (x - 5, y - 5, x + 5, y + 5)


def test_a_label_keeps_off_other_workloads_dots_and_a_far_one_gets_a_leader_line():
    """In a crowd of dots a label went to the first spot that overlapped nothing, which could be
    4 units above another workload's dot, with nothing to say whose it was (the roofline's
    'matmul n=1024' sat over the float64 dot). A spot within NEAR of another dot now counts as
    covering it, and a label whose text ends more than LEADER_FROM from its dot has a line to it."""
    x, y, width = 300.0, 200.0, 60.0
    crowd = [_dot(x, y), _dot(x + 30, y + 14), _dot(x - 30, y + 14), _dot(x + 30, y - 10), _dot(x - 30, y - 10)]
    labels: list = []
    _, ty, _, leader, _ = roofline._place_label(x, y, width, [], labels, crowd)
    box = labels[-1]
    for other in crowd[1:]:  # no other dot within NEAR of the label
        assert box[2] + roofline.NEAR < other[0] or other[2] < box[0] - roofline.NEAR \
            or box[3] + roofline.NEAR < other[1] or other[3] < box[1] - roofline.NEAR, (box, other)
    assert abs(ty - y) > 30 and leader is not None  # pushed away from its dot: drawn to it
    lx, ly = leader
    assert lx in (box[0], box[2]) and box[1] <= ly <= box[3]
    # Alone, the first spot, beside the dot at its height, and no leader.
    labels = []
    assert roofline._place_label(x, y, width, [], labels, [_dot(x, y)]) == (x + 8, y + 4, "start", None, 0)


def test_the_chart_draws_a_leader_for_each_label_whose_text_ends_away_from_its_dot():
    frame = _peak_frame()
    c = roofline.ceilings(frame)
    drawn = str(roofline.roofline_svg(roofline.placed(frame, c, ["op", "n"]), c, "synthetic"))
    marks = re.findall(r"<g><title>.*?</g>", drawn, re.S)
    assert marks and all(('stroke-opacity=".6"' in m) == (_end_distance(m) > roofline.LEADER_FROM) for m in marks)


def _end_distance(mark: str) -> float:
    """How far a workload's label's text ends from its dot (the end nearer the dot)."""
    cx, cy = map(float, re.search(r'<circle cx="([^"]+)" cy="([^"]+)"', mark).groups())
    tx, ty = map(float, re.search(r'<text x="([^"]+)" y="([^"]+)"', mark).groups())
    return math.hypot(tx - cx, min(max(cy, ty - roofline.FONT + 2), ty + 1) - cy)


def test_the_chart_is_drawn_wide_for_a_desktop_and_narrow_for_a_phone():
    """At 390 px the one 680-unit drawing scrolled sideways in its box, so a phone showed only the
    memory roof. Two drawings now, each placing its own labels inside its own plot: the wide one as
    before, and a 400-unit one (y ticks as bare SI prefixes, the y title saying FLOP/s)."""
    frame = _peak_frame()
    c = roofline.ceilings(frame)
    drawn = str(roofline.roofline_svg(roofline.placed(frame, c, ["op", "n"]), c, "synthetic"))
    svgs = dict(re.findall(r'<svg class="bench-svg bench-roofline-(\w+)".*?viewBox="0 0 (\d+) \d+"', drawn))
    assert svgs == {"wide": "680", "narrow": "400"}
    wide, narrow = re.findall(r'<svg class="bench-svg bench-roofline.*?</svg>', drawn, re.S)
    assert "FLOP/s</text>" in wide and re.search(r">1 G</text>", narrow) and "GFLOP/s</text>" not in narrow
    for svg, lay in ((wide, roofline.WIDE), (narrow, roofline.NARROW)):
        for tx, anchor, text in re.findall(r'<text x="([\d.]+)" y="[\d.]+" text-anchor="(start|end)">([^<]+)<', svg):
            width = axes.text_width(text, lay.font)
            left = float(tx) if anchor == "start" else float(tx) - width
            assert lay.left < left and left + width < lay.w - lay.right, (lay.name, text)


def _placed_in_pandas(frame, c, keys, peaks=None, paired=True):
    """roofline.placed as it was written in pandas (before its numbers were taken in plain values):
    what the test below holds the current one equal to, to the bit."""
    def rates(rows, columns):
        medians = rows.groupby("run")[[*columns, "time_s"]].median()
        return {col: (medians[col] / medians["time_s"]).dropna() for col in columns}

    def against(rate, ceiling, paired):
        if paired:
            return (rate / ceiling.reindex(rate.index).fillna(float(ceiling.median()))).dropna()
        return (rate / float(ceiling.median())).dropna()

    out = []
    rows_with = frame[frame["bytes_moved"].notna() & (frame["bytes_moved"] > 0)]
    for (_variant, _params), rows in rows_with.groupby(["variant", "params"], sort=False):
        flops = rows["flops"].dropna()
        computes = not flops.empty and float(flops.median()) > 0
        nbytes = float(rows["bytes_moved"].median())
        intensity = float(flops.median()) / nbytes if computes else 0.0
        found = rates(rows, ["flops", "bytes_moved"] if computes else ["bytes_moved"])
        rate = found["flops"] if computes else pd.Series(dtype=float)
        brate = found["bytes_moved"]
        dtype = str(rows["dtype"].iloc[0])
        peak = c.compute.get(dtype)
        of_ceiling, bound = None, ""
        if not computes and not c.memory.empty:
            per_run = against(brate, c.memory, paired)
            of_ceiling, bound = (roofline.stats.summarize(per_run) if not per_run.empty else None), "memory"
        elif peak is not None and not peak.empty and not c.memory.empty:
            attain = pd.concat([peak, c.memory * intensity], axis=1).min(axis=1)
            per_run = against(rate, attain, paired)
            of_ceiling = roofline.stats.summarize(per_run) if not per_run.empty else None
            bound = "memory" if c.memory.median() * intensity < peak.median() else "compute"
        vendor = roofline.vendor_peak(str(rows["device_kind"].iloc[0]), dtype, peaks)
        of_vendor = None
        if vendor is not None:
            of_vendor = roofline.stats.summarize(rate / min(vendor.flops, vendor.bytes_per_s * intensity)) \
                if computes else roofline.stats.summarize(brate / vendor.bytes_per_s)
        first = rows.iloc[0]
        label = ", ".join(f"{k}={first[f'p_{k}']}" for k in keys if f"p_{k}" in rows) or str(_variant)
        if str(_variant) != dtype and label != str(_variant):
            label = f"{_variant}: {label}"
        if "boundary" in rows and set(rows["boundary"]) == {"dispatch"}:
            label += " (a dispatch time: the work had not finished, so this rate was never reached)"
            of_ceiling = of_vendor = None
        key = (intensity, str(_variant), *(roofline.sort_key(rows[f"p_{k}"].iloc[0]) for k in keys if f"p_{k}" in rows))
        out.append((key, roofline.Placed(label, dtype, intensity, roofline.stats.summarize(rate) if computes else None,
                                         roofline.stats.summarize(brate), of_ceiling, bound, of_vendor, vendor)))
    return [p for _, p in sorted(out, key=lambda item: item[0])]


def _same(a, b) -> bool:
    """Placed lists equal to the bit, NaN equal to NaN (a Summary's values may hold NaN)."""
    return repr(a) == repr(b)


def test_placing_workloads_gives_the_numbers_pandas_gave():
    """placed takes each workload's numbers in plain values: equal to the bit to the pandas code it
    replaced, on every committed figure with bytes moved against its machine's ceilings, paired and not,
    and on synthetic runs with holes (a run without FLOPs, ceilings missing a run or with a NaN, a
    workload with no FLOPs at all, an even number of samples a run)."""
    from conftest import committed_catalog

    cat = committed_catalog()
    checked = 0
    for fig_id, machine in sorted(cat.frames):
        frame = cat.frames[(fig_id, machine)]
        if not roofline.applies(frame) or (roofline.CEILING_FIGURE, machine) not in cat.frames:
            continue
        peak = cat.frames[(roofline.CEILING_FIGURE, machine)]
        c = roofline.ceilings(peak)
        keys = list(cat.figures[fig_id].group_by)
        for paired in (True, False):
            new, old = roofline.placed(frame, c, keys, paired=paired), _placed_in_pandas(frame, c, keys, paired=paired)
            assert new and _same(new, old), (fig_id, machine, paired)
            checked += 1
    assert checked >= 10

    frame = _peak_frame()
    extra = pd.DataFrame([
        # a fourth run, two samples (an even count), one of them without FLOPs; and a copy: bytes only
        {"run": 3, "variant": "float32", "dtype": "float32", "p_probe": "workload", "p_op": "w", "p_n": 8,
         "time_s": 2e-3, "flops": 5e6, "bytes_moved": 5e6, "params": "c", "device_kind": "NVIDIA H200"},
        {"run": 3, "variant": "float32", "dtype": "float32", "p_probe": "workload", "p_op": "w", "p_n": 8,
         "time_s": 1.5e-3, "flops": float("nan"), "bytes_moved": 4e6, "params": "c", "device_kind": "NVIDIA H200"},
        *({"run": run, "variant": "copy", "dtype": "bfloat16", "p_probe": "workload", "p_op": "copy", "p_n": 8,
           "time_s": 1e-3 * (1 + run), "flops": float("nan"), "bytes_moved": 8e6, "params": "d",
           "device_kind": "NVIDIA H200"} for run in range(4)),
    ])
    frame = pd.concat([frame, extra], ignore_index=True)
    c = roofline.ceilings(_peak_frame())
    holes = roofline.Ceilings({"float32": c.compute["float32"].drop(index=1),
                               "bfloat16": pd.Series([1e14, float("nan")], index=pd.Index([0, 2], name="run"))},
                              # two runs: an even count, whose median (a + b) / 2 is not a + (b - a) / 2
                              pd.Series([6243547661.068633, 19318432480.186214], index=pd.Index([0, 1], name="run")),
                              c.device_kind)
    for ceil in (c, holes):
        for paired in (True, False):
            new, old = roofline.placed(frame, ceil, ["op", "n"], paired=paired), \
                _placed_in_pandas(frame, ceil, ["op", "n"], paired=paired)
            assert len(new) == 4 and _same(new, old), (ceil, paired)


def test_counting_every_spot_at_once_counts_what_one_box_at_a_time_counts():
    """``_counts`` (every spot against the roofs' sampled boxes, at once) is the overlap rule of
    ``_hits``, box by box: on a coarse grid, so that edges touch and pads reach exactly."""
    import random

    import numpy as np

    rng = random.Random(7)

    def box():
        x, y = rng.randrange(0, 40) / 2, rng.randrange(0, 40) / 2
        return (x, y, x + rng.randrange(0, 12) / 2, y + rng.randrange(0, 12) / 2)

    for _ in range(200):
        boxes, fixed = [box() for _ in range(rng.randrange(1, 8))], [box() for _ in range(rng.randrange(0, 30))]
        for pad in (0, 1.5, roofline.NEAR):
            want = [roofline._hits(b, fixed, pad) for b in boxes]
            assert roofline._counts(np.array(boxes), fixed, pad).tolist() == want
            assert roofline._counts(np.array(boxes), np.array(fixed, dtype=float).reshape(-1, 4), pad).tolist() == want


def test_a_label_is_placed_the_same_whether_the_fixed_boxes_come_as_lists_or_arrays():
    import numpy as np

    x, y, width = 300.0, 200.0, 60.0
    crowd = [_dot(x, y), _dot(x + 30, y + 14), _dot(x - 30, y + 14), _dot(x + 30, y - 10), _dot(x - 30, y - 10)]
    roof = roofline._segment_boxes(200, 260, 420, 150, every=6)
    as_lists = roofline._place_label(x, y, width, roof, [], crowd, [])
    as_arrays = roofline._place_label(x, y, width, np.array(roof), [], np.array(crowd), [])
    assert as_lists == as_arrays and as_lists[1] != y + 4  # pushed off the first spot by the crowd, either way
