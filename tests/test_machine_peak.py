"""fig-machine-peak: one smoke worker run; every row carries the counts the roofline needs."""


import pytest

from benchfixtures import run_worker
from conftest import REPO

SCRIPT = REPO / "bench_scripts" / "machine_peak.py"




@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return run_worker(SCRIPT, tmp_path_factory.mktemp("peak"))


@pytest.mark.slow
def test_probes_and_workloads_are_all_there(rows):
    seen = {(r["p"]["probe"], r["p"]["op"]) for r in rows}
    assert {("compute", "matmul"), ("memory", "axpy"), ("workload", "matmul"),
            ("workload", "axpy"), ("workload", "mlp-step")} <= seen


@pytest.mark.slow
def test_every_row_has_positive_flops_and_bytes_and_says_where_they_came_from(rows):
    for r in rows:
        assert float(r["flops"]) > 0 and float(r["bytes_moved"]) > 0, r["params"]
        assert "flops: " in r["detail"] and "bytes: " in r["detail"], r["detail"]
        assert "used" in r["detail"]


@pytest.mark.slow
def test_matmul_flops_match_the_analytic_count(rows):
    for r in rows:
        if r["p"]["op"] == "matmul":
            n = int(r["p"]["n"])
            assert float(r["flops"]) == pytest.approx(2 * n**3, rel=0.25)


@pytest.mark.slow
def test_rows_are_completed_warm_samples(rows):
    assert {r["boundary"] for r in rows} == {"completed"}
    assert all(r["compiles"] == "0" for r in rows)
