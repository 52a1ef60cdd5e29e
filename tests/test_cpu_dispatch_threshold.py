"""fig-cpu-dispatch-threshold: one smoke worker run; every program on both clients, its flop
estimate recorded and on the side of the threshold it was chosen for, and the inline client's
calls (and the cheap programs' on the default client) returned with their output ready."""

import pytest

from benchfixtures import figure_literal, run_worker
from conftest import REPO

SCRIPT = REPO / "bench_scripts" / "cpu_dispatch_threshold.py"
BOUNDARIES = ("dispatch", "completed", "loop")
THRESHOLD = 1000  # XLA's CPU client: a program estimated below this many flops runs inline


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return run_worker(SCRIPT, tmp_path_factory.mktemp("threshold"))


def _programs(rows):
    by = {}
    for r in rows:
        by.setdefault((r["p"]["op"], int(r["p"]["n"])), []).append(r)
    return by


@pytest.mark.slow
def test_every_program_has_all_six_columns_at_their_boundaries_warm_and_checked(rows):
    fig = figure_literal(SCRIPT)
    assert fig["variants"] == [*BOUNDARIES, *(f"inline-{b}" for b in BOUNDARIES)]
    for program, found in _programs(rows).items():
        assert {r["variant"] for r in found} == set(fig["variants"]), program
        for r in found:
            assert r["boundary"] == r["variant"].removeprefix("inline-"), r
    assert all(r["compiles"] == "0" for r in rows)
    assert all(float(r["max_rel_error"]) < 1e-5 for r in rows)


@pytest.mark.slow
def test_flops_are_the_compiled_programs_estimate_and_match_the_row_key(rows):
    expected = {"add": lambda n: n, "axpy": lambda n: 2 * n, "matmul": lambda n: 2 * n**3,
                "transpose": lambda n: 0}
    for (op, n), found in _programs(rows).items():
        assert {r["flops"] for r in found} == {str(expected[op](n))}, (op, n)
        assert {r["p"]["flops"] for r in found} == {str(expected[op](n))}, (op, n)


@pytest.mark.slow
def test_the_programs_lie_on_both_sides_of_the_threshold_in_pairs_one_step_apart(rows):
    flops = {program: int(found[0]["flops"]) for program, found in _programs(rows).items()}
    for below, above in ((("add", 999), ("add", 1000)), (("matmul", 7), ("matmul", 8)),
                         (("axpy", 16), ("axpy", 1024))):
        assert flops[below] < THRESHOLD <= flops[above], (below, above)
    assert flops[("add", 1)] < THRESHOLD  # the harness floor's near-empty call is a cheap one
    assert flops[("transpose", 256)] == 0  # 65536 elements moved, and cheap by this count


@pytest.mark.slow
def test_inline_calls_and_cheap_calls_return_with_their_output_ready(rows):
    for r in rows:
        if r["variant"].startswith("inline-") or int(r["flops"]) < THRESHOLD:
            assert r["detail"].endswith(": 20 of 20 calls"), r["detail"]
        else:  # handed off: ready only if the worker finished before the call came back
            assert r["detail"].startswith("output ready when the call returned: "), r["detail"]


@pytest.mark.slow
def test_each_client_was_measured_in_one_block_of_interleaved_cells(rows):
    """The two clients are not interleaved with each other: a new one replaces the old."""
    order = [r["variant"].startswith("inline-") for r in sorted(rows, key=lambda r: int(r["seq"]))]
    switches = sum(a != b for a, b in zip(order, order[1:]))
    assert switches == 1
