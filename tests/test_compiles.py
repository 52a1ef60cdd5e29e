"""Compiles inside a window are counted through jax.monitoring."""

import jax
import jax.numpy as jnp

from harness import compiles


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
