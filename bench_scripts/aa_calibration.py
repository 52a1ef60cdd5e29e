"""fig-aa-calibration: one computation registered as two variants, ``A`` and ``B`` (an A/A test).

Nothing differs between A and B but the name and the executable each is compiled
into, so every "a result" a verdict rule calls between them is a false positive,
provided two such executables run at the same speed: the calibration assumes
that and does not test it. Measured like every other figure: the
completed boundary, every (op, n, variant) cell warmed up and sampled in shuffled
rounds, R separate processes. Two operations over a ladder of sizes from a few
microseconds to about a millisecond on the reference CPU: an elementwise
``2*x + 1`` on n floats and an n x n matmul ``x @ x``, each size one A/A pair.

Which A/A: A and B are ``jax.jit`` of two distinct Python function objects with
one body. JAX caches traces by the function object and compiled programs by the
traced program object, so each copy is traced and compiled on its own: two
executables of one program (the script checks that their optimised program
texts are equal before timing). The same compiled function registered twice
would share one executable and one dispatch cache entry, and could hide a
difference that two variants with executables of their own have.

The page (docs/verdicts.md) counts, per verdict rule, how many pairs the rule
called "a result": the paired rule on A and B of the same runs, the unpaired
rule on A's earlier runs against B's later runs (benchsite/model/calibration.py).
"""

FIGURE = {
    "budget_s": 3.8,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "A/A calibration: one computation measured as two variants",
    "caption": (
        "A and B are two separately compiled copies of the same function, measured in the same "
        "runs like any two variants. If two such executables run at the same speed (the "
        "calibration's assumption, which it does not test), every difference between them is noise "
        "and every verdict of a result between them is a false positive. The verdicts page counts, "
        "per rule, the calls that are wrong on A/A data (a result, or for the equivalence rule a "
        "miss), beside the rate the simulation gives for each."
    ),
    "chapter": "verdicts.md",
    "group_by": ["op", "n"],
    "variants": ["A", "B"],
    "ratio": ["A", "B"],
    "headline": {"stat": "ratio", "op": "matmul", "n": 128},
}

# --8<-- [start:measure]
import jax
import numpy as np

from benchkit import Recorder, check_close, figure_main

SAMPLES = 30  # at most, per cell and run: 32 cells in about two seconds of timed work


def elementwise(x):
    return x * 2.0 + 1.0


def matmul(x):
    return x @ x


OPS = {"elementwise": elementwise, "matmul": matmul}


def fresh_copy(op: str):
    """A new function object with the op's body, jitted: its own trace and its own compile."""
    def copy(x):
        return OPS[op](x)

    return jax.jit(copy)


def ladder(rec: Recorder) -> dict[str, list[int]]:
    if rec.config.smoke:
        return {"elementwise": [16], "matmul": [8]}
    return {"elementwise": [16, 1 << 10, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 21, 1 << 22],
            "matmul": [8, 32, 64, 128, 192, 256, 320, 384]}


def same_program(a, b, x) -> None:
    """The two copies compile to one optimised program (module names aside), or nothing is timed."""
    text_a, text_b = [fn.lower(x).compile().as_text() for fn in (a, b)]  # one line: one source location
    if text_a != text_b:
        raise AssertionError("the A and B copies compiled to different programs: not an A/A test")


def measure(rec: Recorder) -> None:
    rng = np.random.default_rng(0)
    sizes = ladder(rec)
    tol = 3e-2 if rec.config.accelerator else 1e-4  # default-precision float32 matmuls on accelerators
    with rec.interleaved() as cells:  # every (op, n, variant) sampled in shuffled rounds
        for op, body in OPS.items():
            for n in sizes[op]:
                shape = (n,) if op == "elementwise" else (n, n)
                host = rng.standard_normal(shape, dtype=np.float32)
                x = jax.device_put(host).block_until_ready()
                want = body(host.astype(np.float64))
                a, b = fresh_copy(op), fresh_copy(op)
                same_program(a, b, x)
                for variant, fn in (("A", a), ("B", b)):
                    err = check_close(fn(x), want, rtol=0.0, atol=tol * np.abs(want).max(),
                                      what=f"{op} n={n} copy {variant}")
                    cells.collect(variant, "completed", fn, (x,), dtype="float32",
                                  shape="x".join(map(str, shape)), params={"op": op, "n": n},
                                  max_rel_error=err, maximum=SAMPLES)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
