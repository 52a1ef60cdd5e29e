"""fig-time-your-own-code: one smoke worker run, the three functions measured alike and checked,
and what the chapter says about them: twice does the work of once two times, and once-again is
the very same function jitted again (it shares once's compiled program: no compile of its own)."""

import re

import pytest

from benchfixtures import figure_literal, run_worker
from conftest import REPO

SCRIPT = REPO / "bench_scripts" / "time_your_own_code.py"
CHAPTER = REPO / "docs" / "time-your-own-code.md"


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return run_worker(SCRIPT, tmp_path_factory.mktemp("yours"))


@pytest.mark.slow
def test_the_three_functions_are_measured_alike_warm_and_checked(rows):
    columns = {}
    for r in rows:
        columns.setdefault(r["variant"], set()).add((r["boundary"], r["dtype"], r["shape"], r["params"]))
    assert set(columns) == {"once", "twice", "once-again"}
    assert len({frozenset(c) for c in columns.values()}) == 1  # nothing but the function differs
    assert {r["boundary"] for r in rows} == {"completed"}
    assert all(r["compiles"] == "0" for r in rows)  # every function compiled before the clock
    assert all(float(r["max_rel_error"]) < 1e-5 for r in rows)


@pytest.mark.slow
def test_the_functions_are_interleaved_not_one_block_each(rows):
    order = [r["variant"] for r in sorted(rows, key=lambda r: int(r["seq"]))]
    switches = sum(a != b for a, b in zip(order, order[1:]))
    assert switches > 2  # three blocks one after another would switch twice


def test_once_again_is_the_same_function_and_shares_its_compiled_program():
    import jax
    import jax.numpy as jnp
    from time_your_own_code import functions, sin_once, sin_twice

    from benchkit import compiles

    fns = functions()
    x = jnp.linspace(-3.0, 3.0, 64, dtype=jnp.float32)
    with compiles.count() as first:
        fns["once"][0](x).block_until_ready()
    with compiles.count() as again:
        fns["once-again"][0](x).block_until_ready()
    assert first.n == 1 and again.n == 0  # the chapter's A/A pair: one executable, two jit wrappers
    assert fns["once"][0] is not fns["once-again"][0]
    assert jax.jit(sin_twice).lower(x).as_text().count("sine") == 2 * jax.jit(sin_once).lower(x).as_text().count("sine")


def test_figure_declares_what_the_chapter_quotes():
    fig = figure_literal(SCRIPT)
    assert fig["variants"] == ["once", "twice", "once-again"] and fig["ratio"] == ["twice", "once"]
    assert fig["chapter"] == CHAPTER.name
    text = CHAPTER.read_text(encoding="utf-8")
    assert "<!-- bench:figure fig-time-your-own-code -->" in text
    claims = re.findall(r"<!-- bench:claim fig-time-your-own-code (.*?) -->", text)
    assert any("slower(" in c and "twice" in c for c in claims), claims


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def test_the_chapters_five_lines_are_the_packages_own_example():
    """The chapter and benchkit's README (what pip shows) teach one example, not two that drift."""
    readme = (REPO / "bench_scripts" / "benchkit" / "README.md").read_text(encoding="utf-8")
    (chapter_example, *_) = python_blocks(CHAPTER.read_text(encoding="utf-8"))
    assert chapter_example == python_blocks(readme)[0]
    assert len(chapter_example.strip().splitlines()) == 5
