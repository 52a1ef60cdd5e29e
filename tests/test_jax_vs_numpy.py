"""fig-jax-vs-numpy: one smoke worker run; every size has its variants, checked first."""

import pytest

from benchfixtures import run_worker
from conftest import REPO

SCRIPT = REPO / "bench_scripts" / "jax_vs_numpy.py"
WANT = {"axpy": {"numpy", "jnp", "jit"}, "matmul": {"numpy", "jnp", "jit"}}


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return run_worker(SCRIPT, tmp_path_factory.mktemp("jvn"))


@pytest.mark.slow
def test_every_op_and_size_has_its_variants(rows):
    cells = {}
    for r in rows:
        cells.setdefault((r["p"]["op"], r["p"]["n"]), set()).add(r["variant"])
    assert {op for op, _ in cells} == set(WANT)
    assert all(seen == WANT[op] for (op, _), seen in cells.items()), cells


@pytest.mark.slow
def test_samples_are_completed_warm_and_checked(rows):
    assert {r["boundary"] for r in rows} == {"completed"}
    assert all(r["compiles"] == "0" for r in rows)  # warm: the per-shape compiles came before
    assert all(float(r["max_rel_error"]) < 1e-4 for r in rows)
