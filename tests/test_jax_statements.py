"""What the pages state about JAX's own behaviour holds for the installed jax (issue 37).

Two sentences were wrong: asynchronous-dispatch said `np.asarray(y)` copies the data (on the CPU
backend it returns a view of the buffer; only from an accelerator does it copy), and
dtypes-and-precision said asking for float64 without x64 "silently" gives float32 (an explicit
dtype warns; only implicit conversion is silent). Each statement is checked against jax here, so a
jax upgrade that changes the behaviour fails this test instead of leaving the prose wrong.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from conftest import REPO

DOCS = REPO / "docs"


def prose(name: str) -> str:
    return re.sub(r"\s+", " ", (DOCS / name).read_text())


def caught(fn) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(w.message) for w in seen if issubclass(w.category, UserWarning)]


def test_float64_without_x64_warns_when_asked_for_by_name_and_is_silent_when_implicit():
    import jax
    import jax.numpy as jnp

    if jax.config.jax_enable_x64:
        pytest.skip("x64 is on in this process")
    for explicit in (lambda: jnp.array([1.0, 2.0], dtype=jnp.float64),
                     lambda: jnp.zeros(3, dtype=jnp.float64),
                     lambda: jnp.ones(3).astype(jnp.float64)):
        out, said = caught(explicit)
        assert out.dtype == jnp.float32
        assert any("Explicitly requested dtype float64" in m and "truncated to dtype float32" in m
                   for m in said), said
    for implicit in (lambda: jnp.asarray(np.ones(3)), lambda: jax.device_put(np.ones(3)),
                     lambda: jnp.array(1.5)):
        out, said = caught(implicit)
        assert out.dtype == jnp.float32 and said == []
    assert np.array([1.0]).dtype == np.float64 and np.zeros(3).dtype == np.float64
    assert jnp.array([1.0]).dtype == jnp.float32 and jnp.zeros(3).dtype == jnp.float32


def test_dtype_page_says_which_request_warns_and_names_both_defaults():
    text = prose("diagnosing/dtypes-and-precision.md")
    assert "silently gives float32" not in text
    assert "UserWarning" in text and "Explicitly requested dtype float64" in text
    assert "NumPy's default floating type is float64" in text
    assert "without a word" in text  # the implicit case


def test_np_asarray_of_a_cpu_array_is_a_view_and_np_array_a_copy():
    import jax
    import jax.numpy as jnp

    y = jax.device_put(jnp.arange(1024, dtype=jnp.float32) * 2, jax.devices("cpu")[0])
    address = y.unsafe_buffer_pointer()
    view = np.asarray(y)
    assert view.__array_interface__["data"][0] == address and not view.flags.owndata
    assert np.array(y).__array_interface__["data"][0] != address


def test_dispatch_page_does_not_say_np_asarray_always_copies():
    text = prose("asynchronous-dispatch.md")
    assert "copies the data into a NumPy array" not in text
    item = text[text.index("- `np.asarray(y)`"):text.index("- `y.item()`")]
    assert "waits" in item and "view" in item and "device to host" in item
    assert "how-good-is-this-number.md#reading-on-the-host" in item


CPU_CLIENT_FACTS = """
import jax, jax.numpy as jnp
from jax.extend.backend import clear_backends

tiny, big = jax.jit(lambda x: x + 1), jax.jit(lambda x: x @ x)
transpose = jax.jit(lambda x: x.T)
cost = lambda f, x: f.lower(x).compile().cost_analysis()
x, m = jnp.ones(999), jnp.ones((512, 512))
assert isinstance(cost(tiny, x), dict) and cost(tiny, x)["flops"] == 999
assert cost(big, m)["flops"] == 2 * 512**3 and "flops" not in cost(transpose, m)
assert all(tiny(x).is_ready() for _ in range(20))  # under the threshold: ran before returning
assert all(transpose(m).is_ready() for _ in range(5))  # no flops, so inline too
client = jax.devices()[0].client
jax.config.update("jax_cpu_enable_async_dispatch", False)
assert jax.devices()[0].client is client  # read only when a client is created
clear_backends()
m = jnp.ones((512, 512))
assert jax.devices()[0].client is not client
assert all(big(m).is_ready() for _ in range(5))  # the new client runs even a large matmul inline
"""


@pytest.mark.slow
def test_the_cpu_client_runs_cheap_programs_inline_and_reads_the_async_option_when_created():
    """asynchronous-dispatch.md#cpu-threshold: cost_analysis() is a dict with "flops" (none for a
    transpose); a program under 1000 flops returns ready; the option needs a new client. In a
    subprocess: clearing the backends here would disturb the rest of the test session."""
    import os
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", CPU_CLIENT_FACTS], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, JAX_PLATFORMS="cpu"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = prose("asynchronous-dispatch.md")
    assert "under 1000 floating-point operations" in text and "clear_backends()" in text
    assert "jax_cpu_enable_async_dispatch" in text
