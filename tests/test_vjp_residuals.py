"""fig-vjp-residuals: the analytic count, the naming of residuals, and one smoke worker run
checked against its FIGURE and against the count (within the tolerance the page states)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import vjp_residuals as vr

from benchfixtures import figure_literal, run_worker
from conftest import REPO

SCRIPT = REPO / "bench_scripts" / "vjp_residuals.py"
TOLERANCE = 0.01  # the page's stated tolerance: residual bytes within 1 % of the analytic count


def test_analytic_count():
    # plain: two arrays per tanh layer plus the loss's error term; by hand, one per layer
    assert vr.predicted_residual_bytes(8, 16, 3, remat=False) == (4 * 8 * (6 * 16 + vr.OUT),
                                                                  4 * 8 * (3 * 16 + vr.OUT))
    # remat: only the checkpointed stack's output and the error term
    assert vr.predicted_residual_bytes(8, 16, 3, remat=True) == (4 * 8 * (16 + vr.OUT),) * 2


@pytest.mark.parametrize("remat", [False, True])
def test_the_arrays_jax_vjp_keeps_match_the_count_and_have_names(remat):
    rng = np.random.default_rng(0)
    host = vr.make_params(rng, 16, 2)
    x = rng.standard_normal((8, 16), dtype=np.float32)
    y = rng.standard_normal((8, vr.OUT), dtype=np.float32)
    args = jax.device_put((host, x, y))
    _, backward = jax.vjp(jax.jit(vr.make_loss(remat)), *args)
    saved = vr.residual_arrays(backward, args)
    assert sum(a.nbytes for a in saved) == vr.predicted_residual_bytes(8, 16, 2, remat)[0]
    names = vr.identify(saved, host, x, y)
    assert "unknown" not in names, names
    assert names.startswith(f"{len(saved)} arrays: ")
    assert ("1-h1" in names) is (not remat)


def _figure() -> dict:
    return figure_literal(SCRIPT)


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("vjp")
    rows = run_worker(SCRIPT, tmp)
    return rows


@pytest.mark.slow
def test_every_mode_has_step_times_and_residual_bytes(rows):
    fig = _figure()
    for variant in fig["variants"]:
        cell = [r for r in rows if r["variant"] == variant]
        assert cell and all(float(r["time_s"]) > 0 and float(r["size_bytes"]) > 0 for r in cell), variant
        assert float(max(r["max_rel_error"] for r in cell)) < 1e-3  # the NumPy gradient check ran
    plain = {float(r["size_bytes"]) for r in rows if r["variant"] == "plain"}
    remat = {float(r["size_bytes"]) for r in rows if r["variant"] == "remat"}
    assert min(plain) > max(remat)


@pytest.mark.slow
def test_residual_bytes_agree_across_sources_and_with_the_count(rows):
    for mode in vr.MODES:
        cell = {r["p"]["source"]: r for r in rows if r["variant"] == "residual" and r["p"]["mode"] == mode}
        assert set(cell) == {"profile", "live-arrays", "closure"}
        sizes = {float(r["size_bytes"]) for r in cell.values()}
        assert len(sizes) == 1, (mode, sizes)  # the profile, the census and the closure agree
        for r in cell.values():
            assert float(r["max_rel_error"]) <= TOLERANCE
            assert abs(float(r["size_bytes"]) - int(r["p"]["predicted"])) <= TOLERANCE * int(r["p"]["predicted"])
        assert "unknown" not in cell["closure"]["detail"]


@pytest.mark.slow
def test_memory_stages_are_recorded_from_both_sources(rows):
    for mode in vr.MODES:
        got = {(r["p"]["stage"], r["p"]["source"]): float(r["size_bytes"])
               for r in rows if r["variant"] == "memory" and r["p"]["mode"] == mode}
        assert set(got) == {(s, src) for s in vr.STAGES for src in ("profile", "live-arrays")}
        for stage in vr.STAGES:
            assert got[(stage, "profile")] == got[(stage, "live-arrays")]
        assert got[("after-vjp", "profile")] > got[("before", "profile")]
