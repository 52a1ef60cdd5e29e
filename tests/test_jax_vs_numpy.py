"""fig-jax-vs-numpy: one smoke worker run; every size has its variants, checked first."""

import pytest

from benchfixtures import run_worker
from conftest import REPO

SCRIPT = REPO / "bench_scripts" / "jax_vs_numpy.py"
WANT = {"axpy": {"numpy", "jnp", "jit"}, "matmul": {"numpy", "jnp", "jit"},
        "to-host": {"block", "asarray", "copy-only"}}


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return run_worker(SCRIPT, tmp_path_factory.mktemp("jvn"))


def test_every_op_and_size_has_its_variants(rows):
    cells = {}
    for r in rows:
        cells.setdefault((r["p"]["op"], r["p"]["n"]), set()).add(r["variant"])
    assert {op for op, _ in cells} == set(WANT)
    assert all(seen == WANT[op] for (op, _), seen in cells.items()), cells


def test_samples_are_completed_warm_and_checked(rows):
    assert {r["boundary"] for r in rows} == {"completed"}
    assert all(r["compiles"] == "0" for r in rows)  # warm: the per-shape compiles came before
    assert all(float(r["max_rel_error"]) < 1e-4 for r in rows)


def test_to_host_rows_carry_bytes_only_where_a_copy_moved_them(rows):
    host = [r for r in rows if r["p"]["op"] == "to-host"]
    assert {r["detail"] for r in host} <= {"np.asarray returned a view of the device buffer (no copy)",
                                           "np.asarray made a copy"}
    for r in host:
        copied = r["variant"] != "block" and r["detail"] == "np.asarray made a copy"
        assert r["bytes_moved"] == (str(4.0 * int(r["p"]["n"])) if copied else ""), r  # no rate from nothing
