"""One figure script = one ``measure(recorder)`` function plus ``figure_main``.

Run as ``python bench_scripts/<stem>.py`` it orchestrates R separate processes
(see ``runner``); each of those runs it again with ``--worker``, measures once,
and writes its rows, with provenance, to a staging file.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import provenance, timing
from .results import to_csv_text, write_atomic
from .schema import format_params

REPO = Path(__file__).resolve().parents[2]


class ReferenceMismatch(AssertionError):
    """The computation disagrees with its independent NumPy reference."""


@dataclass(frozen=True)
class Config:
    """How this process should measure."""

    run: int
    smoke: bool
    platform: str

    @property
    def budget_s(self) -> float:
        return 0.02 if self.smoke else timing.BUDGET_S

    @property
    def min_samples(self) -> int:
        return 3 if self.smoke else timing.MIN_SAMPLES

    @property
    def accelerator(self) -> bool:
        return self.platform != "cpu"


class Recorder:
    """Collects one process's samples as rows of the results schema."""

    def __init__(self, config: Config, artifacts: Path | None = None) -> None:
        self.config = config
        self.rows: list[dict[str, Any]] = []
        self._next_sample: dict[tuple, int] = defaultdict(int)
        self._artifacts = artifacts

    def artifact(self, name: str) -> Path:
        """Where to write a side file (a trace, a profile). The first run's
        side files are published beside the CSV as ``<stem>.<name>``."""
        if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name):
            raise ValueError(f"artifact name {name!r}: lower-case letters, digits, '.', '_', '-'")
        if self._artifacts is None:
            raise RuntimeError("this recorder has no artifact folder (not running as a worker)")
        self._artifacts.mkdir(parents=True, exist_ok=True)
        return self._artifacts / name

    def add(self, variant: str, boundary: str, samples: Iterable[timing.Sample], *,
            dtype: str, shape: str, params: dict[str, object] | None = None,
            **extra: object) -> None:
        """Record samples for one (variant, params); ``extra`` fills optional columns."""
        params_text = format_params(params or {})
        key = (variant, params_text)
        for s in samples:
            self.rows.append({"variant": variant, "boundary": boundary, "dtype": dtype,
                              "shape": shape, "params": params_text, "run": self.config.run,
                              "sample": self._next_sample[key], "calls": s.calls,
                              "compiles": s.compiles, "time_s": s.time_s, **extra})
            self._next_sample[key] += 1

    def collect(self, variant: str, boundary: str, fn: Callable, args: Sequence, *,
                dtype: str, shape: str, params: dict[str, object] | None = None,
                loop_calls: int = 50, **extra: object) -> list[timing.Sample]:
        """Warm up, time within this run's budget, record, and return the samples."""
        samples = timing.collect(boundary, fn, args, budget_s=self.config.budget_s,
                                 minimum=self.config.min_samples, loop_calls=loop_calls)
        self.add(variant, boundary, samples, dtype=dtype, shape=shape, params=params, **extra)
        return samples


# --8<-- [start:check]
def check_close(actual: Any, reference: Any, *, rtol: float, atol: float, what: str) -> float:
    """Compare with an independent NumPy result before any timing is trusted.

    Returns the largest absolute error relative to the largest reference value
    (a norm-wise error that stays meaningful where entries pass through zero);
    raises :class:`ReferenceMismatch`
    (which stops the script before it writes anything) when out of tolerance.
    """
    import numpy as np

    got = np.asarray(actual, dtype=np.float64)
    want = np.asarray(reference, dtype=np.float64)
    if got.shape != want.shape:
        raise ReferenceMismatch(f"{what}: shape {got.shape} != reference shape {want.shape}")
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        worst = float(np.max(np.abs(got - want)))
        raise ReferenceMismatch(f"{what}: differs from the NumPy reference by up to {worst:.3g} "
                                f"(rtol={rtol}, atol={atol}); not timing a wrong answer")
    scale = max(float(np.max(np.abs(want), initial=0.0)), np.finfo(np.float64).tiny)
    return float(np.max(np.abs(got - want), initial=0.0)) / scale
# --8<-- [end:check]


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Measure one figure (R runs unless --worker).")
    parser.add_argument("--worker", action="store_true", help="measure once, in this process")
    parser.add_argument("--run-index", type=int, default=0)
    parser.add_argument("--out", type=Path, help="worker: where to write this run's rows")
    parser.add_argument("--artifacts", type=Path, help="worker: folder for side files")
    parser.add_argument("--smoke", action="store_true", default=os.environ.get("BENCH_SMOKE") == "1",
                        help="tiny sizes and budgets, so the script is exercised quickly")
    parser.add_argument("--runs", type=int, help="orchestrator: number of processes (R)")
    parser.add_argument("--results", type=Path, help="orchestrator: results root folder")
    return parser.parse_args(argv)


# --8<-- [start:worker]
def run_worker(script: Path, measure: Callable[[Recorder], None], args: argparse.Namespace) -> int:
    fields = provenance.collect_all(script, REPO)
    config = Config(run=args.run_index, smoke=args.smoke, platform=str(fields["platform"]))
    recorder = Recorder(config, args.artifacts)
    try:
        measure(recorder)
    except ReferenceMismatch as err:
        print(f"{script.name}: reference check failed: {err}", file=sys.stderr)
        return 3
    if not recorder.rows:
        print(f"{script.name}: measure() recorded no samples", file=sys.stderr)
        return 4
    write_atomic(args.out, to_csv_text({**fields, **row} for row in recorder.rows))
    return 0
# --8<-- [end:worker]


def figure_main(script_file: str, measure: Callable[[Recorder], None],
                argv: Sequence[str] | None = None) -> None:
    """Entry point of every figure script."""
    script = Path(script_file).resolve()
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.worker:
        if args.out is None:
            sys.exit("--worker needs --out")
        sys.exit(run_worker(script, measure, args))
    from . import runner

    argv2 = ["--only", script.stem] + (["--smoke"] if args.smoke else [])
    argv2 += ["--runs", str(args.runs)] if args.runs else []
    argv2 += ["--results", str(args.results)] if args.results else []
    sys.exit(runner.main(argv2))
