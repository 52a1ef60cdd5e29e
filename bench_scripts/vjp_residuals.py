"""fig-vjp-residuals: reverse mode's residuals, seen in device memory, and what remat trades.

For a tanh MLP of a few widths and depths, ``jax.vjp`` runs the forward pass
and returns a function that will run the backward pass; until that function
is gone, the intermediates the backward pass needs (the residuals) stay in
device memory. The script takes a device memory profile
(``jax.profiler.save_device_memory_profile``) and a census of
``jax.live_arrays()`` (a) before the forward pass, (b) after ``jax.vjp``
returns and (c) after the backward pass (its function deleted), and reads the
residual bytes as (b) minus (a) minus the forward output. It compares them
with the analytic count of saved activations, and with the arrays the
returned function actually holds. The same model with its hidden layers under
``jax.checkpoint`` (rematerialisation) saves less and recomputes the forward
pass in the backward: both training steps are timed, interleaved, so bytes
saved can be set against the extra step time.
"""

FIGURE = {
    "budget_s": 4.6,  # wall seconds of one run here (the 2-core reference); make bench names a run over it
    "title": "Reverse mode's residuals in memory, and what rematerialisation trades for them",
    "caption": (
        "First table: one training step (jitted value and gradient), with every activation stored "
        "(plain) and with the hidden layers under jax.checkpoint (remat); the ratio is remat over "
        "plain time. Second table: the residual bytes each variant holds between jax.vjp and the "
        "backward pass, read from device memory profiles taken before and after jax.vjp."
    ),
    "chapter": "diagnosing/gaps-and-residuals.md",
    "group_by": ["width", "depth"],
    "variants": ["plain", "remat"],
    "ratio": ["remat", "plain"],
    "headline": {"stat": "ratio", "width": 512, "depth": 4},
    "metrics": ["size"],
    "code_sections": ["model", "measure"],
}

# --8<-- [start:model]
import jax
import jax.numpy as jnp
import numpy as np

Params = list[tuple[jax.Array, jax.Array]]
OUT = 10  # outputs of the last (linear) layer


def hidden(params: Params, x: jax.Array) -> jax.Array:
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    return x


def make_loss(remat: bool):
    stack = jax.checkpoint(hidden) if remat else hidden  # remat: keep inputs, recompute the rest

    def loss(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
        w, b = params[-1]
        return jnp.mean((stack(params, x) @ w + b - y) ** 2)
    return loss


def predicted_residual_bytes(batch: int, width: int, depth: int, remat: bool,
                             itemsize: int = 4) -> tuple[int, int]:
    """The analytic count of residual bytes (the inputs are alive anyway), and the least
    backpropagation needs. JAX's rule for tanh linearises y = tanh(x) as g * (1 + y) * (1 - y)
    and keeps two arrays per layer: y, which is also the next layer's input, and 1 - y. By
    hand, y alone is enough. Both add the loss's error term. Under remat only the stack's
    output (the last layer's input) survives the forward pass."""
    per_layer, least = (0, 0) if remat else (2 * depth, depth)
    kept = 1 if remat else 0  # remat: the checkpointed stack's output
    return (itemsize * batch * ((per_layer + kept) * width + OUT),
            itemsize * batch * ((least + kept) * width + OUT))


# --8<-- [end:model]


# --8<-- [start:measure]
import tempfile
import time
from pathlib import Path

from benchkit import Recorder, Sample, check_close, figure_main, profiles

MODES = {"plain": False, "remat": True}
STAGES = ("before", "after-vjp", "after-backward")


def sizes(rec: Recorder) -> tuple[int, list[tuple[int, int]], int]:
    """batch, (width, depth) pairs (depth: hidden layers), samples per step cell at most:
    two widths at one depth, two depths at one width."""
    if rec.config.smoke:
        return 16, [(32, 2)], 5
    if rec.config.accelerator:
        return 1024, [(256, 2), (512, 2), (512, 4), (4096, 8)], 50  # the CPU's shapes, and a large one
    return 128, [(256, 2), (512, 2), (512, 4)], 12


def make_params(rng: np.random.Generator, width: int, depth: int) -> list:
    dims = [width] * (depth + 1) + [OUT]
    return [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), np.zeros(b, np.float32))
            for a, b in zip(dims[:-1], dims[1:])]


def numpy_grads(params: list, x: np.ndarray, y: np.ndarray) -> tuple[float, list]:
    """Loss and gradient by hand-written backpropagation in float64: the reference."""
    acts = [x]
    for w, b in params[:-1]:
        acts.append(np.tanh(acts[-1] @ w + b))
    w, b = params[-1]
    err = acts[-1] @ w + b - y
    d = 2 * err / err.size
    grads = [(acts[-1].T @ d, d.sum(axis=0))]
    d = d @ w.T
    for (w, _), a_in, a_out in zip(params[-2::-1], acts[-2::-1], acts[:0:-1]):
        d = d * (1 - a_out**2)
        grads.append((a_in.T @ d, d.sum(axis=0)))
        d = d @ w.T
    return float(np.mean(err**2)), grads[::-1]


def check_grads(got: list, want: list, what: str) -> float:
    errors = []
    for i, ((gw, gb), (ww, wb)) in enumerate(zip(got, want)):
        for name, g, w in (("w", gw, ww), ("b", gb, wb)):
            scale = float(np.max(np.abs(w)))
            errors.append(check_close(g, w, rtol=0.0, atol=2e-3 * scale, what=f"{what}: layer {i} {name}"))
    return max(errors)


def snapshot(scratch: Path) -> tuple[dict[str, float], dict[str, float]]:
    """Bytes held now, by the memory profile and by jax.live_arrays(); seconds each took."""
    path = scratch / "memory.prof"
    t0 = time.perf_counter()
    jax.profiler.save_device_memory_profile(str(path))
    t1 = time.perf_counter()
    live = sum(a.nbytes for a in jax.live_arrays())
    t2 = time.perf_counter()
    held = profiles.pprof_totals(path.read_bytes()).totals.get(("space/bytes", "buffer"), 0)
    return {"profile": float(held), "live-arrays": float(live)}, {"profile": t1 - t0, "live-arrays": t2 - t1}


def residual_arrays(backward, inputs) -> list[jax.Array]:
    """The arrays the function jax.vjp returned holds, other than the inputs."""
    known = {id(a) for a in jax.tree_util.tree_leaves(inputs)}
    return [a for a in jax.tree_util.tree_leaves(backward)
            if isinstance(a, jax.Array) and id(a) not in known]


def identify(arrays: list[jax.Array], host: list, x: np.ndarray, y: np.ndarray) -> str:
    """Name each residual by its value: which NumPy-computed intermediate it equals."""
    acts, candidates = [x], {}
    for i, (w, b) in enumerate(host[:-1], 1):
        acts.append(np.tanh(acts[-1] @ w + b))
        candidates[f"h{i}"], candidates[f"1-h{i}"] = acts[-1], 1 - acts[-1]
        candidates[f"1-h{i}^2"] = 1 - acts[-1] ** 2  # tanh's derivative, as newer jax saves it
    w, b = host[-1]
    err = acts[-1] @ w + b - y
    candidates["out-y"], candidates["2(out-y)"] = err, 2 * err  # the square's derivative: 2 (out - y)
    names = []
    for a in arrays:
        got = np.asarray(a)
        unknown = f"unknown {a.dtype}[{','.join(map(str, a.shape))}]"
        names.append(next((n for n, c in candidates.items() if c.shape == got.shape
                           and np.allclose(got, c, rtol=1e-4, atol=1e-5)), unknown))
    return f"{len(arrays)} arrays: " + ", ".join(names)


def memory_sample(rec: Recorder, scratch: Path, loss, args: tuple, want: list, common: dict,
                  host: tuple, predicted: tuple[int, int]) -> tuple[float, float]:
    """Snapshots before the forward pass, after jax.vjp, after the backward pass.
    Returns the residual bytes read from the profile and the gradient check's error."""
    held, took = {}, {}
    held["before"], took["before"] = snapshot(scratch)
    t0 = time.perf_counter()
    out, backward = jax.vjp(loss, *args)
    jax.block_until_ready((out, backward))
    forward_s = time.perf_counter() - t0
    held["after-vjp"], took["after-vjp"] = snapshot(scratch)
    saved = residual_arrays(backward, args)
    closure = float(sum(a.nbytes for a in saved))
    detail = identify(saved, *host)
    del saved
    grads = jax.block_until_ready(backward(jnp.ones_like(out))[0])
    del backward  # the residuals go with it
    held["after-backward"], took["after-backward"] = snapshot(scratch)
    err = check_grads(grads, want, f"{common['params']} gradient")
    for stage in STAGES:
        for source in ("profile", "live-arrays"):
            rec.add("memory", "completed", [Sample(took[stage][source])], size_bytes=held[stage][source],
                    **{**common, "params": {**common["params"], "stage": stage, "source": source}})
    measured = {s: held["after-vjp"][s] - held["before"][s] - out.nbytes for s in ("profile", "live-arrays")}
    measured["closure"] = closure
    analytic, least = predicted
    for source, size in measured.items():
        rec.add("residual", "completed", [Sample(forward_s)], size_bytes=size,
                max_rel_error=abs(size - analytic) / analytic, detail=detail if source == "closure" else "",
                **{**common, "params": {**common["params"], "source": source, "predicted": analytic,
                                        "least": least}})
    return measured["profile"], err


def measure(rec: Recorder) -> None:
    batch, shapes, most = sizes(rec)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp, rec.interleaved() as cells:
        for width, depth in shapes:
            host = make_params(rng, width, depth)
            hx = rng.standard_normal((batch, width), dtype=np.float32)
            hy = rng.standard_normal((batch, OUT), dtype=np.float32)
            wide = [(w.astype(np.float64), b.astype(np.float64)) for w, b in host]
            _, want = numpy_grads(wide, hx.astype(np.float64), hy.astype(np.float64))
            args = jax.block_until_ready(jax.device_put((host, hx, hy)))
            for mode, remat in MODES.items():
                loss = jax.jit(make_loss(remat))
                jax.block_until_ready(jax.vjp(loss, *args)[1](jnp.float32(1.0)))  # compile both halves
                common = {"dtype": "float32", "shape": f"{batch}x{width}",
                          "params": {"width": width, "depth": depth, "mode": mode}}
                predicted = predicted_residual_bytes(batch, width, depth, remat)
                held, err = memory_sample(rec, Path(tmp), loss, args, want, common, (host, hx, hy), predicted)
                step = jax.jit(jax.value_and_grad(make_loss(remat)))  # the training step, timed below
                err = max(err, check_grads(step(*args)[1], want, f"{mode} step gradient"))
                cells.collect(mode, "completed", step, args, dtype="float32", shape=f"{batch}x{width}",
                              params={"width": width, "depth": depth}, calls=1, maximum=most,
                              max_rel_error=err, size_bytes=held)
# --8<-- [end:measure]


if __name__ == "__main__":
    figure_main(__file__, measure)
