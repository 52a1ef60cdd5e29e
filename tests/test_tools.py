"""Every script in tools/ runs: each is imported and its main() run on a tiny fixture, so a tool
cannot rot silently (tools/verdict_replication.py once crashed on a helper that had moved). A new
tool without a case here fails the first test."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from benchfixtures import write_machine
from conftest import REFERENCE, REPO

TOOLS = sorted((REPO / "tools").glob("*.py"))
CASES = {"archive_session", "site_scaling", "verdict_replication"}  # one test each, below


def tool(name: str):
    """A tools/ script as a module (they are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"tool_{name}", REPO / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_tool_has_a_case_here():
    assert {p.stem for p in TOOLS} == CASES


def committed(tmp_path: Path, name: str, stems: tuple[str, ...]) -> Path:
    """A results folder of a few committed files of the reference machine."""
    folder = tmp_path / name / REFERENCE
    folder.mkdir(parents=True)
    for stem in stems:
        shutil.copy(REPO / "results" / REFERENCE / f"{stem}.csv", folder / f"{stem}.csv")
    return folder


def test_verdict_replication_reports_two_folders(tmp_path, capsys):
    stems = ("harness_vs_peers", "block_placement")  # verdicts in a table and quoted in the prose
    a, b = committed(tmp_path, "a", stems), committed(tmp_path, "b", stems)
    assert tool("verdict_replication").main([str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "fig-block-placement" in out and "within figures," in out
    assert "across the two sessions (unpaired rule, every table cell): 0 of" in out  # the same files


def test_verdict_replication_refuses_a_bad_folder(tmp_path, capsys):
    bad = tmp_path / "bad" / REFERENCE
    bad.mkdir(parents=True)
    (bad / "block_placement.csv").write_text("not,a\nresults,file\n")
    assert tool("verdict_replication").main([str(bad), str(bad)]) == 2
    assert "block_placement.csv" in capsys.readouterr().err


def test_archive_session_keeps_a_session(tmp_path, capsys):
    results = tmp_path / "results"
    write_machine(results, "cpu-a", runs=2)
    assert tool("archive_session").main(["--results", str(results)]) == 0
    assert list((results / "cpu-a" / "sessions").rglob("*")), "nothing kept"
    assert tool("archive_session").main(["--results", str(results)]) == 0  # twice changes nothing
    assert capsys.readouterr().out.splitlines()[-1] == "0 bytes written"


def test_site_scaling_runs_its_steps(tmp_path, monkeypatch, capsys):
    """Its builds are mkdocs builds (a minute each): faked here; the copying, relabelling, the
    fresh checkout the workflow starts from, the size report and the budget table are real (a
    budget at 100 folders is not judged at 2)."""
    scaling = tool("site_scaling")
    repo = tmp_path / "repo"
    write_machine(repo / "results", "cpu-a", runs=2)
    monkeypatch.setattr(scaling, "REPO", repo)
    built = []

    def fake_build(results: Path, cache: Path, out: Path):
        built.append(sorted(p.name for p in results.iterdir()))
        (out / "bench").mkdir(parents=True, exist_ok=True)
        (out / "index.html").write_text("<html><article>x</article></html>")
        cache.mkdir(exist_ok=True)
        return 1.0, "the rest 1.0 s", ["pairs: 1 job"]

    monkeypatch.setattr(scaling, "build", fake_build)
    monkeypatch.setattr(scaling, "author_loop", lambda results, cache, work: 2.5)
    scaling.main(["--machines", "2"])
    out = capsys.readouterr().out
    assert "committed results" in out and "2 more folders" in out and "cold workers, pairs: 1 job" in out
    budgets = {line.split("  ")[0]: line for line in out.splitlines()[-len(scaling.BUDGETS):]}
    assert budgets["committed results: cold build"].endswith("1.0 s  met")
    assert budgets["committed results: one chapter edited, built again in-process"].endswith("2.5 s  NOT MET")
    assert budgets["100 more folders: cold build"].endswith("not checked (run with --machines 100)")
    assert built[0] == ["cpu-a"] and built[-1] == ["cpu-a", "synthetic-000", "synthetic-001"]
    assert scaling.relabel("machine,x\ncpu-a,1\n", "m") == "machine,x\nm,1\n"


def test_site_scaling_counts_what_one_session_adds(tmp_path):
    """The per-session cost is the largest (machine, session) total of session pages and the
    downloads under that session, not the whole site."""
    scaling = tool("site_scaling")
    for sid, size in (("s1", 300_000), ("s2", 500_000)):
        for fig in ("fig-a", "fig-b"):
            page = tmp_path / "bench" / fig / "cpu-a" / sid / "index.html"
            page.parent.mkdir(parents=True)
            page.write_bytes(b"x" * size)
    kept = tmp_path / "results" / "cpu-a" / "sessions" / "s1" / "a.csv.gz"
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"x" * 50_000)
    (tmp_path / "bench" / "fig-a" / "cpu-a" / "index.html").write_bytes(b"x" * 9_000_000)  # a machine page
    assert scaling.per_session_mb(tmp_path) == 1.0
