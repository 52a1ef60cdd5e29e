"""fig-trace-gaps: the gap computation on synthetic traces whose timing the test sets, the
timeline drawn from them, and one smoke worker run checked against its FIGURE."""

from __future__ import annotations

import gzip
import json
import re

import pytest
import trace_gaps as tg

from benchfixtures import figure_literal, run_worker
from benchkit import Config, Recorder, profiles
from benchsite.views import timeline
from conftest import REPO

SCRIPT = REPO / "bench_scripts" / "trace_gaps.py"


def ev(name: str, ts: float, dur: float, tid: int = 1, **args) -> profiles.Event:
    return profiles.Event(name, ts, dur, 1, tid, args)


def op(name: str, ts: float, dur: float, run: int, tid: int = 2) -> profiles.Event:
    return ev(name, ts, dur, tid, hlo_op=name, hlo_module="jit_train_step", run_id=str(run))


def steps_at(starts: list[float], ops: list[tuple[str, float, float, int]]) -> list[profiles.Event]:
    """Ops (name, offset, dur, tid) repeated at each start, one run_id per start."""
    return [op(name, t + off, dur, run, tid) for run, t in enumerate(starts) for name, off, dur, tid in ops]


# --- the computation ------------------------------------------------------------------------


def test_union_counts_overlaps_once_and_keeps_holes():
    assert tg.union_length([]) == 0.0
    assert tg.union_length([(0, 10), (5, 12), (20, 25)]) == 17.0
    assert tg.union_length([(20, 25), (0, 10), (10, 12)]) == 17.0  # touching intervals merge


def test_device_steps_group_by_run_id_across_lanes():
    events = steps_at([0.0, 100.0], [("dot", 0.0, 30.0, 2), ("tanh", 10.0, 30.0, 3), ("add", 50.0, 10.0, 2)])
    steps = tg.device_steps(events)
    assert [s.run_id for s in steps] == ["0", "1"]
    first = steps[0]
    assert (first.start, first.end) == (0.0, 60.0)
    assert first.busy == 50.0  # [0, 40) on two lanes counted once, plus [50, 60)
    assert len(first.ops) == 3


def test_step_gaps_measure_period_and_idle_time_to_the_next_step():
    events = steps_at([0.0, 100.0, 250.0], [("dot", 0.0, 60.0, 2)])
    gaps = tg.step_gaps(tg.device_steps(events))
    assert [(g.period, g.gap) for g in gaps] == [(100.0, 40.0), (150.0, 90.0)]
    assert gaps[1].fraction == pytest.approx(0.6)


def test_without_run_id_a_step_starts_where_the_first_op_recurs():
    events = [ev(name, t + off, 10.0, 2, hlo_op=name, hlo_module="jit_step")
              for t in (0.0, 100.0) for name, off in (("dot", 0.0), ("tanh", 20.0))]
    steps = tg.device_steps(events)
    assert [(s.start, s.end, len(s.ops)) for s in steps] == [(0.0, 30.0, 2), (100.0, 130.0, 2)]


def test_part_of_reads_the_named_scope_from_op_name():
    assert tg.part_of("jit(train_step)/jvp(forward)/dot_general") == "forward"
    assert tg.part_of("jit(train_step)/transpose(jvp(forward))/dot_general") == "backward"
    assert tg.part_of("jit(train_step)/update/sub") == "update"
    assert tg.part_of("jit(train_step)/add") == "other"


def synthetic_trace() -> list[profiles.Event]:
    """One block per mode. host-bound: each host step prepares (40 µs), dispatches, reads the
    loss; device steps every 100 µs, busy 50 µs. run-ahead: device steps every 55 µs."""
    events = [ev("block", -50.0, 450.0, mode="host-bound"), ev("block", 1000.0, 300.0, mode="run-ahead")]
    for i, t in enumerate([0.0, 100.0, 200.0]):
        events += [ev("host-bound", t - 45, 100.0, step_num=str(i)), ev("prepare", t - 45, 40.0),
                   ev("PjitFunction(train_step)", t - 4, 4.0), ev("read-loss", t, 50.0)]
    events += steps_at([0.0, 100.0, 200.0], [("fwd", 0.0, 20.0, 2), ("bwd", 20.0, 30.0, 2)])
    for i, t in enumerate([1000.0, 1010.0, 1020.0]):
        events += [ev("run-ahead", t, 8.0, step_num=str(i)), ev("PjitFunction(train_step)", t + 1, 6.0)]
    more = steps_at([1005.0, 1060.0, 1115.0], [("fwd", 0.0, 20.0, 2), ("bwd", 20.0, 30.0, 2)])
    events += [op(e.name, e.ts, e.dur, int(e.args["run_id"]) + 10, e.tid) for e in more]
    return sorted(events, key=lambda e: (e.ts, -e.dur))


def recorder() -> Recorder:
    return Recorder(Config(run=0, smoke=True, platform="cpu"))


def test_record_trace_rows_carry_each_modes_steps_and_labels():
    rec = recorder()
    parts = {"fwd": "forward", "bwd": "backward"}
    found = tg.record_trace(rec, synthetic_trace(), parts, 0, "4x4", 0.0)
    assert [(g.period, g.gap) for g in found["host-bound"]] == [(100.0, 50.0)] * 2
    assert [(g.period, g.gap) for g in found["run-ahead"]] == [(55.0, 5.0)] * 2

    def times(variant: str, **params) -> list[float]:
        want = ";".join(f"{k}={v}" for k, v in sorted(params.items()))
        return [r["time_s"] for r in rec.rows if r["variant"] == variant and r["params"] == want]

    assert times("gap", mode="host-bound") == pytest.approx([50e-6] * 2)
    assert times("step", mode="run-ahead") == pytest.approx([55e-6] * 2)
    assert times("busy", mode="run-ahead") == pytest.approx([50e-6] * 2)
    assert times("label", label="backward", lane="device", mode="host-bound") == pytest.approx([30e-6] * 2)
    assert times("label", label="prepare", lane="host", mode="host-bound") == pytest.approx([40e-6] * 3)
    assert times("label", label="dispatch", lane="host", mode="run-ahead") == pytest.approx([6e-6] * 3)
    assert times("label", label="read-loss", lane="host", mode="run-ahead") == []  # nothing waits run ahead
    assert all(r["boundary"] == "trace" for r in rec.rows)


def test_a_mode_without_gaps_is_an_error():
    events = [e for e in synthetic_trace() if not (e.name == "block" and e.args.get("mode") == "run-ahead")]
    with pytest.raises(RuntimeError, match="run-ahead"):
        tg.record_trace(recorder(), events, {}, 0, "4x4", 0.0)


def test_timeline_side_file_is_drawn_from_the_trace_events(tmp_path):
    events = synthetic_trace()
    gaps = tg.step_gaps(tg.device_steps([e for e in events if e.ts < 500]))
    doc = tg.timeline(gaps, events, {"fwd": "forward", "bwd": "backward"}, "host-bound")
    assert doc["step_us"] == 100.0 and doc["gap_us"] == 50.0
    assert doc["lanes"] == ["host", "compute 1"]
    kinds = {e[3] for e in doc["events"]}
    assert {"forward", "backward", "prepare", "read-loss", "dispatch", "step"} <= kinds
    path = tmp_path / "x.timeline.json"
    path.write_text(json.dumps({"steps": [doc]}))
    svg = timeline.svg(timeline.load(path), "t <&>")
    assert svg.startswith("<svg") and "t &lt;&amp;&gt;" in svg
    assert svg.count("<rect") >= len(doc["events"])


def _step(mode: str, events: list) -> dict:
    """A step drawn as trace_gaps.timeline draws it: its first operation at 25 µs (the next step's
    at 105 µs, the end of the gap), in a window that opened before it."""
    return {"mode": mode, "window_us": 120.0, "step_us": 80.0, "busy_us": 50.0, "gap_us": 30.0,
            "gap_at_us": [75.0, 105.0], "lanes": ["host", "compute 1"], "events": events}


# The drawn step's dispatch (lane 0) from 10 to 20 µs; its first operation at 25 µs; the next step's
# dispatch at 95 µs and its first operation at 105 µs.
CALL, NEXT_CALL = [0, 10.0, 10.0, "dispatch", "dispatch"], [0, 95.0, 5.0, "dispatch", "dispatch"]
OPS = [[1, 25.0, 5.0, "forward", "f"], [1, 40.0, 5.0, "backward", "b"], [1, 105.0, 5.0, "forward", "f"]]


@pytest.mark.parametrize(("mode", "events", "said"), [
    ("host-bound", [CALL, NEXT_CALL, *OPS], "first operation began 5.00 µs after dispatch returned"),
    ("host-bound", [[0, 10.0, 20.0, "dispatch", "dispatch"], NEXT_CALL, *OPS],
     "first operation began while dispatch was open, 5.00 µs before it returned"),
    # the step's dispatch began before the window opened: it is still the one read, not the next step's
    ("host-bound", [[0, -30.0, 40.0, "dispatch", "dispatch"], NEXT_CALL, *OPS],
     "first operation began 15.0 µs after dispatch returned"),
    ("host-bound", [[0, -5.0, 3.0, "dispatch", "dispatch"], CALL, NEXT_CALL, *OPS],
     "first operation began 5.00 µs after dispatch returned"),  # the last dispatch before the step's operation
    ("run-ahead", [CALL, NEXT_CALL, *OPS], None),  # queued behind earlier dispatches
    ("host-bound", [CALL, NEXT_CALL, [1, 5.0, 10.0, "forward", "p"], *OPS], None),  # device busy at the call
    ("host-bound", [NEXT_CALL, *OPS], None),  # the step's dispatch is not in the window
    ("host-bound", [CALL, NEXT_CALL, *OPS[1:]], None),  # no operation where the step begins
])
def test_a_host_bound_panel_says_when_its_first_operation_began_against_its_dispatch(mode, events, said):
    step = _step(mode, events)
    assert timeline.dispatch_reading(step) == said
    svg = timeline.svg([step])
    head = "gap 30.0 µs of a 80.0 µs step"
    assert f"{head} · {said}</text>" in svg if said else f"{head}</text>" in svg


TIMELINE_JUNK = [None, "x", "", "1.5", [], {}, [1], [None] * 5, -1, True, 1e308, 5e-324, 10**40, 10**400]


def test_a_damaged_timeline_is_refused_naming_the_file_or_drawn(tmp_path):
    """Seeded random damage to a committed timeline side file (a field replaced by junk, or removed):
    each is refused with a TimelineError that names the file and the step, or drawn; never another
    exception (a list where a time goes crashed the build with a TypeError that named no file)."""
    import copy
    import random

    base = json.loads((REPO / "results" / "cpu-amd-epyc-f25m1-2c" / "trace_gaps.timeline.json").read_text())

    def places(value, at=()):
        yield at
        items = value.items() if isinstance(value, dict) else enumerate(value[:6]) if isinstance(value, list) else ()
        for key, inner in items:
            yield from places(inner, at + (key,))

    spots = list(places(base))[1:]
    rng = random.Random(20261206)
    path = tmp_path / "trace_gaps.timeline.json"
    seen = {"drawn": 0, "refused": 0}
    for _ in range(400):
        doc = copy.deepcopy(base)
        *parents, last = rng.choice(spots)
        holder = doc
        for key in parents:
            holder = holder[key]
        if rng.random() < 0.2:
            del holder[last]
        else:
            holder[last] = rng.choice(TIMELINE_JUNK)
        path.write_text(json.dumps(doc))
        try:
            drawn = timeline.html(path, "t", "u")
        except timeline.TimelineError as err:
            assert str(err).startswith(f"{path}: "), err
            seen["refused"] += 1
        else:
            assert not re.search(r'="[^"]*(?:nan|inf)|\binf s\b', drawn), drawn  # a drawing of numbers only
            seen["drawn"] += 1
    assert seen["refused"] > 100 and seen["drawn"] > 10, seen  # both kinds of outcome were exercised


@pytest.mark.parametrize(("field", "value", "says"), [
    ("step_us", [1], "step 1: 'step_us' is not a time"),
    ("gap_at_us", [1.0, None], "step 1: 'gap_at_us' is not two times"),
    ("lanes", "host", "step 1: 'lanes' is not a list of lane names"),
    ("events", [[None, 1.0, 1.0, "step", "step"]], "step 1: event 1 ('step') is on lane None, but there are"),
    ("events", [[0, float("nan"), 1.0, "step", "s"]], "step 1: event 1 ('s') has no start and length in µs"),
    ("gap_at_us", [1.0, 10**400], "step 1: 'gap_at_us' is not two times"),  # no float holds it
    ("window_us", 5e-324, "step 1: 'window_us' is 5e-324: a window to draw is at least"),
])
def test_a_damaged_timeline_field_is_named(tmp_path, field, value, says):
    doc = json.loads((REPO / "results" / "cpu-amd-epyc-f25m1-2c" / "trace_gaps.timeline.json").read_text())
    doc["steps"][0][field] = value
    path = tmp_path / "x.timeline.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(timeline.TimelineError) as err:
        timeline.load(path)
    assert str(err.value).startswith(f"{path}: {says}")


def test_a_timeline_nested_past_pythons_limit_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "x.timeline.json"
    path.write_text('{"steps": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(timeline.TimelineError, match="not a timeline side file .RecursionError"):
        timeline.load(path)


def test_a_damaged_timeline_on_a_page_is_a_box_and_a_warning_naming_the_file(tmp_path):
    """As with a bad results file: the page is built with an error box where the timeline would be,
    and the build is told (a strict build fails on the warning), instead of stopping every page."""
    from benchkit import results
    from benchsite.build.buildcache import BuildCache
    from benchsite.model.catalog import Catalog
    from benchsite.model.figures import Figure
    from benchsite.pages.markers import Context, expand
    from test_results import make_row

    script = tmp_path / "tg.py"
    script.write_text("FIGURE = {}\n")
    fig = Figure(id="fig-tg", stem="tg", script=script, title="t", caption="c", chapter="index.md",
                 variants=("a",), group_by=("n",))
    folder = tmp_path / "results" / "cpu-test-2c"
    rows = [make_row(run=r, sample=0, variant="a", params="n=1", figure_id="fig-tg", script_path="bench_scripts/tg.py",
                     script_sha256="x" * 64) for r in range(2)]
    results.write_atomic(folder / "tg.csv", results.to_csv_text(rows))
    doc = json.loads((REPO / "results" / "cpu-amd-epyc-f25m1-2c" / "trace_gaps.timeline.json").read_text())
    doc["steps"][0]["step_us"] = [1]
    (folder / "tg.timeline.json").write_text(json.dumps(doc))
    problems = []
    ctx = Context(Catalog.build(tmp_path / "results", {"fig-tg": fig}), "docs/page.md", lambda t: "../" + t,
                  problems.append, cache=BuildCache())
    html = expand("Some prose.\n\n<!-- bench:timeline fig-tg name=timeline.json -->", ctx)
    assert "fig-tg cannot be shown" in html and "<svg" not in html
    assert problems == [f"docs/page.md:3: bench:timeline fig-tg name=timeline.json: {folder / 'tg.timeline.json'}: "
                        "step 1: 'step_us' is not a time (a number from 0 to 1e+12 µs): [1]"]


def test_timeline_refuses_a_file_that_is_not_one(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"steps": [{"mode": "x"}]}')
    with pytest.raises(timeline.TimelineError, match="bad.json"):
        timeline.load(path)


# --- one smoke worker run ---------------------------------------------------------------------


def _figure() -> dict:
    return figure_literal(SCRIPT)


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gaps")
    rows = run_worker(SCRIPT, tmp)
    return rows, tmp / "a"


@pytest.mark.slow
def test_worker_records_every_mode_and_part(worker):
    rows, _ = worker
    fig = _figure()
    for mode in tg.MODES:
        for variant in fig["variants"]:
            cell = [r for r in rows if r["variant"] == variant and r["p"].get("mode") == mode]
            assert cell and all(r["boundary"] == "trace" and float(r["time_s"]) > 0 for r in cell), (mode, variant)
        assert [r for r in rows if r["variant"] == mode and r["boundary"] == "loop"], mode
        labels = {r["p"]["label"] for r in rows if r["variant"] == "label" and r["p"]["mode"] == mode}
        assert {"dispatch", "forward", "backward"} <= labels, labels
    hb = {r["p"]["label"] for r in rows if r["variant"] == "label" and r["p"]["mode"] == "host-bound"}
    assert {"prepare", "read-loss"} <= hb
    errors = {float(r["max_rel_error"]) for r in rows if r["max_rel_error"]}
    assert errors and max(errors) < 1e-3  # the NumPy check ran and passed


@pytest.mark.slow
def test_worker_publishes_a_small_trace_and_a_drawable_timeline(worker):
    rows, art = worker
    trace = art / "trace.json.gz"
    assert 0 < trace.stat().st_size <= 300_000
    assert json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    steps = timeline.load(art / "timeline.json")
    assert [s["mode"] for s in steps] == list(tg.MODES)
    assert all(s["gap_us"] > 0 and s["step_us"] > s["gap_us"] for s in steps)
    assert timeline.svg(steps).startswith("<svg")


def test_a_timeline_side_file_is_data_never_markup(tmp_path):
    """Every text of the side file (a mode, a lane, an event's name and kind) reaches the page
    escaped through templates/timeline_svg.html, as does the caption's file name and link."""
    doc = {"mode": "<b>m</b>", "window_us": 100.0, "step_us": 100.0, "busy_us": 50.0, "gap_us": 50.0,
           "gap_at_us": [50.0, 100.0], "lanes": ["host<script>", "compute \"1\""],
           "events": [[0, 0.0, 40.0, "step", "s"], [1, 5.0, 20.0, "<i>kind</i>", "op & <u>name</u>"]]}
    path = tmp_path / "x<y>.timeline.json"
    path.write_text(json.dumps({"steps": [doc]}))
    html = timeline.html(path, "title", 'a"b')
    for raw in ("<b>", "<script>", "<i>", "<u>", "x<y>", 'href="a"b"'):
        assert raw not in html, raw
    assert "&lt;b&gt;m&lt;/b&gt;" in html and "op &amp; &lt;u&gt;name&lt;/u&gt;" in html
    assert "&lt;i&gt;kind&lt;/i&gt;" in html and "x&lt;y&gt;.timeline.json" in html
