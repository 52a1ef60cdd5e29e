"""fig-first-use-costs: one smoke worker run; compiles, cache state and cache hits as claimed."""

import pytest

from benchfixtures import run_worker
from conftest import REPO

SCRIPT = REPO / "bench_scripts" / "first_use_costs.py"


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return run_worker(SCRIPT, tmp_path_factory.mktemp("first"))


def _part(rows, part, variant):
    found = [r for r in rows if r["p"]["part"] == part and r["variant"] == variant]
    assert found, (part, variant)
    return found


@pytest.mark.slow
def test_eager_first_use_compiles_and_the_second_call_does_not(rows):
    assert all(int(r["compiles"]) >= 1 for r in _part(rows, "eager-first-use", "cold"))
    assert all(r["compiles"] == "0" for r in _part(rows, "eager-first-use", "warm"))


@pytest.mark.slow
def test_the_cache_rows_record_their_own_cache_and_the_warm_call_hits_it(rows):
    for variant in ("cold", "warm"):
        for r in _part(rows, "mlp-first-call", variant):
            assert r["compilation_cache"].startswith("on:"), r["compilation_cache"]
    assert all(r["cache_hits"] == "0" for r in _part(rows, "mlp-first-call", "cold"))
    assert all(int(r["cache_hits"]) >= 1 for r in _part(rows, "mlp-first-call", "warm"))


@pytest.mark.slow
def test_every_other_row_ran_with_the_cache_off(rows):
    others = [r for r in rows if r["p"]["part"] != "mlp-first-call"]
    assert others and {r["compilation_cache"] for r in others} == {"off"}
    assert all(r["cache_hits"] == "0" for r in others)


@pytest.mark.slow
def test_timeit_variants_are_all_there(rows):
    assert {r["variant"] for r in rows if r["p"]["part"] == "timeit"} == {"timeit", "timeit-block", "harness"}
    assert {r["boundary"] for r in _part(rows, "timeit", "timeit")} == {"dispatch"}
