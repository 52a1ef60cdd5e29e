"""fig-transfer-cost: one smoke worker run; the four endings, checked, bytes only where a copy moved them."""

import pytest

from benchfixtures import run_worker
from conftest import REPO

SCRIPT = REPO / "bench_scripts" / "transfer_cost.py"
VARIANTS = {"block", "asarray", "asarray-ready", "copy-ready"}


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return run_worker(SCRIPT, tmp_path_factory.mktemp("transfer"))


@pytest.mark.slow
def test_every_size_has_the_four_endings_completed_warm_and_checked(rows):
    by_size = {}
    for r in rows:
        by_size.setdefault(r["p"]["n"], set()).add(r["variant"])
    assert by_size and all(seen == VARIANTS for seen in by_size.values()), by_size
    assert {r["boundary"] for r in rows} == {"completed"}
    assert all(r["compiles"] == "0" for r in rows)
    assert all(float(r["max_rel_error"]) < 1e-6 for r in rows)


@pytest.mark.slow
def test_bytes_are_recorded_only_where_a_copy_moved_them(rows):
    for r in rows:
        size = str(8.0 * int(r["p"]["n"]))  # a copy reads and writes the output's 4n bytes
        asarray_copied = "np.asarray made a copy" in r["detail"]
        want = {"block": "", "copy-ready": size}.get(r["variant"], size if asarray_copied else "")
        assert r["bytes_moved"] == want, r


@pytest.mark.slow
def test_the_detail_says_what_each_conversion_did(rows):
    for r in rows:
        first, second = r["detail"].split("; ")
        assert first in {"np.asarray returned a view of the device buffer (no copy)", "np.asarray made a copy"}
        assert second in {"np.array shared the buffer", "np.array made a copy"}
