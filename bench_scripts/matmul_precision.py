"""fig-matmul-precision: a float32 matmul at each ``precision`` setting.

``default``, ``high`` and ``highest`` are passed to the matmul itself, so the
process-wide ``jax_default_matmul_precision`` (a provenance column) stays as it
was. A fourth variant rounds both operands to bfloat16 and accumulates in
float32: one pass of bfloat16 products, the kind of arithmetic an accelerator
may use for a float32 matmul at its default precision. Each variant's error is
measured against a float64 NumPy product of the same float32 inputs, and the
precision the compiler was handed is read back from the lowered program.
"""

FIGURE = {
    "budget_s": 2.8,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Matmul precision: time and error of a float32 matmul per precision setting",
    "caption": (
        "The precision gate: before comparing float32 results, check that the precision "
        "setting gives the error you think it does on this backend. Where the settings differ "
        "in error, the default is not a float32 matmul; where their errors are the same, the "
        "backend ignores the setting, <!-- bench:claim fig-matmul-precision 0.9 < metric('error', 'default', n='last') / metric('error', 'highest', n='last') < 1.1 -->as this one did at the larger size<!-- /bench:claim -->. "  # noqa: E501
        "A time verdict of not a result yet would not show that the settings cost the same."
    ),
    "chapter": "diagnosing/dtypes-and-precision.md",
    "group_by": ["n"],
    "variants": ["default", "high", "highest", "bf16-operands"],
    "metrics": ["error", "flop_rate"],
    "headline": {"stat": "ratio", "a": "default", "b": "highest", "n": 1024},
}

# --8<-- [start:measure]
import re

import jax
import jax.numpy as jnp
import numpy as np

from benchkit import Interleaved, Recorder, check_close, figure_main

PRECISIONS = {"default": None, "high": "high", "highest": "highest"}


def matmul_at(precision: str | None):
    return jax.jit(lambda a, b: jnp.matmul(a, b, precision=precision))


@jax.jit
def bf16_operands(a: jax.Array, b: jax.Array) -> jax.Array:
    return jnp.matmul(a.astype(jnp.bfloat16), b.astype(jnp.bfloat16),
                      preferred_element_type=jnp.float32)


def precision_in_program(fn, a: jax.Array, b: jax.Array) -> str:
    """What the lowered program asks of the dot: e.g. ``precision = [HIGH, HIGH]``."""
    found = re.search(r"precision = \[([A-Z_, ]+)\]", fn.lower(a, b).as_text())
    return f"lowered dot precision: {found.group(1) if found else 'DEFAULT (no attribute)'}"


def sizes(rec: Recorder) -> list[int]:
    if rec.config.smoke:
        return [64]
    return [256, 1024] + ([4096] if rec.config.accelerator else [])


def measure_size(cells: Interleaved, n: int, rng: np.random.Generator) -> None:
    host_a, host_b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    a, b = jax.device_put(host_a).block_until_ready(), jax.device_put(host_b).block_until_ready()
    want = host_a.astype(np.float64) @ host_b.astype(np.float64)
    scale = float(np.max(np.abs(want)))
    fns = {name: matmul_at(p) for name, p in PRECISIONS.items()} | {"bf16-operands": bf16_operands}
    for name, fn in fns.items():
        # Loose enough for one bfloat16 pass: the gate is the error recorded, not this check.
        err = check_close(fn(a, b), want, rtol=0.0, atol=3e-2 * scale, what=f"{name} matmul n={n}")
        cells.collect(name, "completed", fn, (a, b), dtype="float32", shape=f"{n}x{n}",
                      params={"n": n}, max_rel_error=err, flops=float(2 * n**3),
                      bytes_moved=float(3 * n * n * 4),  # a, b and the output once each: the least traffic
                      detail=precision_in_program(fn, a, b))


def measure(rec: Recorder) -> None:
    rng = np.random.default_rng(0)
    with rec.interleaved() as cells:  # every (precision, size) sampled in shuffled rounds
        for n in sizes(rec):
            measure_size(cells, n, rng)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
