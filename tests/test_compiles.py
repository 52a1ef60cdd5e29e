"""Compiles inside a window are counted through jax.monitoring."""

import logging

import jax
import jax.numpy as jnp

from benchkit import compiles


def test_a_new_specialisation_compiles_once_and_a_repeat_does_not():
    f = jax.jit(lambda x: x * 2 + 1)
    x = jnp.ones((3,))
    with compiles.count() as first:
        f(x).block_until_ready()
    with compiles.count() as repeat:
        f(x).block_until_ready()
    with compiles.count() as new_shape:
        f(jnp.ones((4,))).block_until_ready()
    assert first.n >= 1
    assert repeat.n == 0
    assert new_shape.n >= 1
    assert any("lambda" in name for name in new_shape.names)


def test_compile_log_keeps_the_explanation_of_a_cache_miss():
    def doubled(x):
        return x * 2

    f = jax.jit(doubled)
    f(jnp.ones((3,))).block_until_ready()
    with compiles.compile_log() as log:
        f(jnp.ones((5,))).block_until_ready()
    assert any("f32[5]" in text and "f32[3]" in text for text in log.explanations)
    assert any("doubled" in line for line in log.lines)  # jax_log_compiles' own lines too


def test_compile_log_is_silent_for_a_warm_call_and_restores_everything():
    f = jax.jit(lambda x: x - 1)
    x = jnp.ones((2,))
    f(x).block_until_ready()
    handlers = list(logging.getLogger("jax").handlers)
    with compiles.compile_log() as log:
        f(x).block_until_ready()
    assert log.lines == [] and log.explanations == []
    assert logging.getLogger("jax").handlers == handlers
    assert not jax.config.jax_log_compiles and not jax.config.jax_explain_cache_misses


def test_tidy_makes_a_log_line_fit_to_publish(tmp_path):
    text = f"<lambda> id=140677349395648 defined at {tmp_path}/bench_scripts/x.py:81"
    assert compiles.tidy(text, tmp_path) == "<lambda> id=… defined at bench_scripts/x.py:81"
