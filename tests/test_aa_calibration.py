"""fig-aa-calibration: one smoke worker run; every (op, n) has both copies, measured alike and checked."""

import pytest

from benchfixtures import figure_literal, run_worker
from conftest import REPO

SCRIPT = REPO / "bench_scripts" / "aa_calibration.py"


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return run_worker(SCRIPT, tmp_path_factory.mktemp("aa"))


@pytest.mark.slow
def test_every_pair_has_both_copies_with_the_same_columns(rows):
    cells = {}
    for r in rows:
        cells.setdefault((r["p"]["op"], r["p"]["n"]), {}).setdefault(r["variant"], set()).add(
            (r["boundary"], r["dtype"], r["shape"], r["params"]))
    assert {op for op, _ in cells} == {"elementwise", "matmul"}
    for pair, by_variant in cells.items():
        assert set(by_variant) == {"A", "B"}, pair
        assert by_variant["A"] == by_variant["B"], pair  # nothing but the name tells them apart


@pytest.mark.slow
def test_samples_are_completed_warm_and_checked(rows):
    assert {r["boundary"] for r in rows} == {"completed"}
    assert all(r["compiles"] == "0" for r in rows)  # both copies compiled before the clock
    assert all(float(r["max_rel_error"]) < 1e-4 for r in rows)


def test_figure_declares_the_pair_the_page_counts():
    fig = figure_literal(SCRIPT)
    assert fig["variants"] == ["A", "B"] and fig["ratio"] == ["A", "B"]
    assert fig["chapter"] == "verdicts.md"
    text = (REPO / "docs" / "verdicts.md").read_text(encoding="utf-8")
    assert "<!-- bench:figure fig-aa-calibration -->" in text and "<!-- bench:aa-rates fig-aa-calibration -->" in text


def test_copies_that_compile_differently_are_refused():
    import jax
    import jax.numpy as jnp
    from aa_calibration import fresh_copy, same_program

    same_program(fresh_copy("matmul"), fresh_copy("matmul"), jnp.ones((8, 8)))  # two copies, one program
    with pytest.raises(AssertionError, match="not an A/A test"):
        same_program(fresh_copy("elementwise"), jax.jit(lambda v: v * 3.0), jnp.ones(8))
