"""fig-harness-vs-peers: one smoke worker run, its rows checked against the FIGURE."""

import csv
import os
import subprocess
import sys

import pytest

from benchfixtures import figure_literal, run_worker
from conftest import REPO

SCRIPT = REPO / "bench_scripts" / "harness_vs_peers.py"
WORKLOADS = {("add", "16"), ("matmul", "32"), ("matmul", "64")}  # the --smoke sizes


def _figure() -> dict:
    return figure_literal(SCRIPT)


def _params(text: str) -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in text.split(";") if pair)


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("peers")
    rows = run_worker(SCRIPT, tmp)
    return rows


def _not_measured(rows) -> str:
    notes = {r["detail"] for r in rows if r["p"]["quantity"] == "wall"}
    assert len(notes) == 1, notes  # one statement of which methods ran, on every wall row
    (note,) = notes
    assert note.startswith("measured: ") and "; not measured: " in note
    return note.split("; not measured: ", 1)[1]


@pytest.mark.slow
def test_every_workload_and_method_is_measured_or_marked_not_measured(rows):
    fig = _figure()
    not_measured = _not_measured(rows)
    for quantity in ("per-call", "wall"):
        for op, n in WORKLOADS:
            cell = [r for r in rows if r["p"] == {"quantity": quantity, "n": n, "op": op}]
            seen = {r["variant"] for r in cell}
            assert seen <= set(fig["variants"])
            for method in fig["variants"]:
                if method in seen:
                    continue
                assert method not in ("harness", "bare-loop", "bare-loop-warm", "bare-loop-kept", "timeit"), \
                    (quantity, op, n, method)
                assert f"{method} (" in not_measured, (quantity, op, n, method, not_measured)


@pytest.mark.slow
def test_times_are_positive_and_the_reference_check_ran(rows):
    assert rows
    for r in rows:
        assert float(r["time_s"]) > 0, r
        assert int(r["calls"]) >= 1
        assert r["max_rel_error"] != "" and 0 <= float(r["max_rel_error"]) < 1e-3, r


@pytest.mark.slow
def test_boundaries_and_params_match_the_figure(rows):
    fig = _figure()
    for r in rows:
        assert set(r["p"]) == set(fig["group_by"])
        want = "completed" if r["p"]["quantity"] == "per-call" else "wall"
        assert r["boundary"] == want, r
    wall = [r for r in rows if r["p"]["quantity"] == "wall"]
    rounds = {(r["variant"], r["p"]["n"], r["p"]["op"]) for r in wall}
    # one wall time per method and share: every in-process method took a share in each round
    assert len(wall) > len(rounds)
    assert fig["ratio"] == ["harness", "bare-loop"]
    assert fig["headline"]["quantity"] == "per-call"


@pytest.mark.slow
def test_methods_alternate_between_rounds(rows):
    # Rows are written in measuring order; each round visits the methods in a shuffled order,
    # so the orders of the rounds are not all the same.
    orders = []
    for op, n in WORKLOADS:
        wall = [r["variant"] for r in rows if r["p"] == {"quantity": "wall", "n": n, "op": op}]
        m = len(set(wall))
        assert m >= 3 and len(wall) % m == 0
        orders += [tuple(wall[i:i + m]) for i in range(0, len(wall), m)]
    assert all(len(set(o)) == len(o) for o in orders)  # each method once per round
    assert len(set(orders)) > 1


@pytest.mark.slow
def test_a_missing_peer_is_reported_not_measured(tmp_path):
    # Shadow both peers with packages whose import fails, as on a machine without them.
    for name in ("pyperf", "pytest_benchmark"):
        (tmp_path / "hide" / name).mkdir(parents=True)
        (tmp_path / "hide" / name / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    out = tmp_path / "x.csv"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "hide")}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--worker", "--smoke", "--out", str(out),
                           "--artifacts", str(tmp_path / "a")],
                          cwd=REPO, capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with out.open(newline="", encoding="utf-8") as fh:
        found = list(csv.DictReader(fh))
    for row in found:
        row["p"] = _params(row["params"])
    assert {r["variant"] for r in found} == {"harness", "bare-loop", "bare-loop-warm", "bare-loop-kept", "timeit"}
    assert _not_measured(found) == "pytest-benchmark (not installed), pyperf (not installed)"


def test_the_kept_bare_loop_frees_its_output_after_the_clock_stops():
    """bare-loop-kept times the harness's completed interval: the output is freed after the second
    clock read; the as-written bare loop frees it inside, when its statement ends."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("harness_vs_peers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    events = []

    class Out:
        def block_until_ready(self):
            events.append("ready")
            return self

        def __del__(self):
            events.append("freed")

    def clock():
        events.append("clock")
        return float(len(events))

    module.time.perf_counter, real = clock, module.time.perf_counter
    try:
        rec = type("R", (), {"config": type("C", (), {"min_samples": 1})()})()
        events.clear()
        module.bare_loop_kept(lambda x: Out(), None, 0.0, rec)
        last = events[len(events) - 1 - events[::-1].index("ready"):]
        assert last[:3] == ["ready", "clock", "freed"], events
        events.clear()
        module.bare_loop(lambda x: Out(), None, 0.0, rec)
        last = events[len(events) - 1 - events[::-1].index("ready"):]
        assert last[:3] == ["ready", "freed", "clock"], events
    finally:
        module.time.perf_counter = real
