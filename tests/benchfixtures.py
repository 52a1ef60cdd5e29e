"""Small results folders with times the tests choose, for the publishing side."""

from __future__ import annotations

import ast
import csv
import shutil
from pathlib import Path

import pytest

from benchkit import results
from benchsite.build.buildcache import BuildCache
from benchsite.model.figures import Figure
from benchsite.pages import pages
from benchsite.pages.markers import Context, expand
from conftest import smoke_run
from test_results import make_row


@pytest.fixture
def docs(tmp_path):
    """A docs folder whose one chapter embeds fig-demo (import it into a test module to use it)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "chapter.md").write_text("# The chapter\n\n<!-- bench:figure fig-demo -->\n")
    return folder


def render_page(cat, src, docs, problems=None):
    """A generated page's Markdown, made as the build makes it (an index or figure page's markers
    expanded, a written page made from the model), with its stashed blocks filled in."""
    ctx = Context(cat, f"docs/{src}", lambda target: "/" + target,
                  (problems if problems is not None else []).append, src_uri=src, docs_dir=docs, cache=BuildCache())
    # Blocks of finished HTML travel through Markdown as placeholders; the build fills them in after.
    page = pages.generated_pages(cat)[src]
    return ctx.cache.fill(expand(page.text, ctx) if page.make is None else page.markdown(ctx), ctx.link)


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


def figure_literal(script: Path) -> dict:
    """A figure script's ``FIGURE`` dict, read without importing the script."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "FIGURE")
    return ast.literal_eval(node.value)


def run_worker(script: Path, tmp: Path) -> list[dict]:
    """The rows of ``script`` run once at smoke sizes (through the runner, once a session:
    conftest.smoke_run) as dicts of strings, params parsed into ``p``; its side files are copied
    to ``tmp / "a"`` under their own names (``trace.json.gz``)."""
    proc, results = smoke_run(script)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    out = results / "smoke-test" / f"{script.stem}.csv"
    (tmp / "a").mkdir(parents=True, exist_ok=True)
    for side in out.parent.glob(f"{script.stem}.*"):
        if side != out:
            shutil.copy(side, tmp / "a" / side.name.removeprefix(f"{script.stem}."))
    with out.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row["p"] = dict(pair.split("=", 1) for pair in row["params"].split(";") if pair)
    return rows
