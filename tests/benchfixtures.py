"""Small results folders with times the tests choose, for the publishing side."""

from __future__ import annotations

from pathlib import Path

from benchsite.figures import Figure
from harness import results
from test_results import make_row


def demo_figure(tmp_path: Path, **overrides) -> Figure:
    script = tmp_path / "demo.py"
    if not script.exists():
        script.write_text("FIGURE = {}\n")
    fields = dict(id="fig-demo", stem="demo", script=script, title="Demo | figure", caption="A & B",
                  chapter="chapter.md", variants=("fast", "slow"), group_by=("n",), ratio=("slow", "fast"))
    fields.update(overrides)
    return Figure(**fields)


def write_machine(root: Path, machine: str, scale: float = 1.0, runs: int = 3, sizes=(8, 16),
                  spread: float = 0.01, sha: str = "x" * 64, stem: str = "demo", fig_id: str = "fig-demo",
                  variants=(("fast", 1e-5), ("slow", 1e-3))) -> Path:
    """``runs`` runs of every variant at every size; run r is ``1 + spread * r`` slower."""
    rows = [make_row(run=r, sample=s, variant=v, time_s=t * scale * n / 8 * (1 + spread * r),
                     params=f"n={n}", machine=machine, figure_id=fig_id, script_sha256=sha,
                     timestamp_utc="2026-02-03T04:05:06Z", git_commit="0123456789abcdef0123",
                     jax_version="0.10.2", script_path=f"bench_scripts/{stem}.py")
            for n in sizes for r in range(runs) for s in range(4) for v, t in variants]
    path = root / machine / f"{stem}.csv"
    results.write_atomic(path, results.to_csv_text(rows))
    return path
