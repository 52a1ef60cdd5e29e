"""How the site build scales with machine folders (a benchmark of the build, not a figure).

Copies every committed results file into N synthetic machine folders (other labels, same samples) in
a temp dir beside the committed folders (which the chapters quote), then times ``mkdocs build
--strict`` (what ``make site`` runs) against the committed results and against committed + copies,
each with an empty build cache (cold), again with the cache it left (warm), and once more as the
Pages workflow builds (restored: the results checked out afresh, so every file has a new inode and
times, and the cache restored without the folders the workflow removes before saving it), and where
each build's time went (the hook logs each warming step: results files, figure x machine pairs,
pages, written pages; the rest is mkdocs starting, the catalog between the steps, and the build
itself in one process), and what the workers' time went on in a cold build, by kind of job (the total, how many
jobs, and the mean), and where the site's bytes are, by kind of file (and how much of the pages is
the theme around their content). Nothing is written into the checkout except the built sites' temp
dirs, which are removed.

    .venv/bin/python tools/site_scaling.py            # 100 synthetic machines
    .venv/bin/python tools/site_scaling.py --machines 20
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
MKDOCS = REPO / ".venv" / "bin" / "mkdocs"
WORKFLOW = REPO / ".github" / "workflows" / "pages.yml"
CACHE = ".cache/bench/"  # where the workflow's build keeps its cache (make site's default)


def relabel(text: str, machine: str) -> str:
    """A results file as if measured on ``machine``: the loader checks that the
    machine column matches the folder, so the label is rewritten, nothing else."""
    rows = list(csv.reader(io.StringIO(text)))
    col = rows[0].index("machine")
    for row in rows[1:]:
        row[col] = machine
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def synthesize(source: Path, target: Path, count: int) -> None:
    """The committed folders as they are (the chapters quote them: the reference machine, its kept
    sessions), plus ``count`` copies: CSVs relabelled, side files (a trace, a memory profile) as they are."""
    for folder in sorted(p for p in source.iterdir() if p.is_dir()):
        shutil.copytree(folder, target / folder.name)
    files = sorted(p for p in source.glob("*/*") if p.is_file())
    for i in range(count):
        machine = f"synthetic-{i:03d}"
        (target / machine).mkdir(parents=True)
        for path in files:
            if path.suffix == ".csv":
                (target / machine / path.name).write_text(relabel(path.read_text(), machine))
            else:
                (target / machine / path.name).write_bytes(path.read_bytes())


# What the bench hook logs after each warming step (benchsite/build/plugin.py, _warm).
WARMED = re.compile(r"bench: warmed (?P<what>[a-z ]+): (?P<ran>\d+) of (?P<jobs>\d+) jobs .*? "
                    r"in (?P<seconds>[0-9.]+) s$", re.M)


# And what the workers' time went on in each step, by kind of job (benchsite/build/plugin.py, _warm).
WORKER_TIME = re.compile(r"bench: worker time on (?P<what>[a-z ]+): (?P<kinds>.+)$", re.M)


def worker_time(log: str) -> list[str]:
    """Each warming step's worker time by kind of job, one line a step, from a build's log."""
    return [f"{m['what']}: {m['kinds']}" for m in WORKER_TIME.finditer(log)]


def steps(log: str, total: float) -> str:
    """Where a build's time went, from its log: each warming step, then the rest (mkdocs
    starting, the catalog between the steps, and the build itself in one process: the
    chapters, the search index, writing every page)."""
    found = [(m["what"], float(m["seconds"])) for m in WARMED.finditer(log)]
    parts = [f"{what} {seconds:.1f} s" for what, seconds in found]
    return " · ".join([*parts, f"the rest {total - sum(s for _, s in found):.1f} s"])


def build(results: Path, cache: Path, out: Path) -> tuple[float, str, list[str]]:
    """Seconds for one strict build, where they went, and the workers' time by kind of job; a
    failed build stops the benchmark."""
    env = dict(os.environ, BENCH_RESULTS=str(results), BENCH_CACHE=str(cache), NO_MKDOCS_2_WARNING="1")
    env.pop("BENCH_MACHINE", None)
    start = time.perf_counter()
    proc = subprocess.run([str(MKDOCS), "build", "--strict", "-d", str(out)], cwd=REPO, env=env,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"build against {results} failed:\n{proc.stderr[-3000:]}")
    return elapsed, steps(proc.stderr, elapsed), worker_time(proc.stderr)


def workflow_removes() -> list[str]:
    """The build cache's folders the Pages workflow removes before saving the cache (its
    ``rm -rf`` step after the build), relative to the cache."""
    found = [p.removeprefix(CACHE) for line in re.findall(r"^\s*run: rm -rf (.+)$", WORKFLOW.read_text(), re.M)
             for p in line.split() if p.startswith(CACHE)]
    if not found:
        sys.exit(f"{WORKFLOW}: no 'rm -rf {CACHE}...' step found; the restored build cannot be set up as it builds")
    return found


def check_out_again(results: Path, cache: Path) -> None:
    """What the next Pages build starts from: the same results at the same place in a fresh
    checkout (new files: new inodes and times), and the saved cache less what the workflow removes."""
    fresh = results.with_name(results.name + "-checkout")
    shutil.copytree(results, fresh, copy_function=shutil.copyfile)  # contents only, no times
    shutil.rmtree(results)
    fresh.rename(results)
    for folder in workflow_removes():
        shutil.rmtree(cache / folder, ignore_errors=True)


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


# The content of a page as Material writes it; the rest of the page is the theme around it
# (head, header, navigation, table of contents, footer): about 20 KB on every /bench page, more on
# a chapter, whose table of contents is longer.
ARTICLE = re.compile(rb"<article\b.*</article>", re.S)
KINDS = ("machine pages", "session pages", "changes pages", "/bench index and figure pages", "downloads",
         "chapters", "the rest")


def kind_of(path: str) -> str:
    """What a built site's file is, by where the site puts it (benchsite/core/urls.py: the /bench
    pages, bench/<fig>/<machine>/[<session>/]; the downloads under results/)."""
    parts = path.split("/")
    if parts[0] == "results":
        return "downloads"
    if not path.endswith(".html"):
        return "the rest"
    if parts[0] == "bench":
        if len(parts) > 1 and parts[1] == "changes":
            return "changes pages"
        return {4: "machine pages", 5: "session pages"}.get(len(parts), "/bench index and figure pages")
    return "chapters"


def sizes(site: Path) -> dict[str, tuple[int, int, int]]:
    """A built site's bytes by kind of file: (files, bytes, of which the theme around each page's
    content; a page with no <article> counts none), the kinds in ``KINDS`` order, those with no
    file left out."""
    found = {kind: [0, 0, 0] for kind in KINDS}
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        entry = found[kind_of(path.relative_to(site).as_posix())]
        data = path.read_bytes()
        article = ARTICLE.search(data) if path.suffix == ".html" else None
        entry[0] += 1
        entry[1] += len(data)
        entry[2] += len(data) - len(article.group(0)) if article else 0
    return {kind: (n, size, theme) for kind, (n, size, theme) in found.items() if n}


def size_line(site: Path) -> str:
    """Where a site's bytes are, one kind after another, in MB (the theme's share of its pages)."""
    return " · ".join(f"{kind} {size / 1e6:.1f} MB ({n}" + (f", theme {theme / 1e6:.1f} MB)" if theme else ")")
                      for kind, (n, size, theme) in sizes(site).items())


def per_session_mb(site: Path) -> float:
    """What one kept session of every figure on one machine adds to a site, at most over the
    sessions the site shows: its session pages (bench/<fig>/<machine>/<session>/) and any download
    under results/ that names it."""
    found: dict[tuple[str, str], int] = {}
    for path in site.rglob("*"):
        parts = path.relative_to(site).parts
        if path.is_file() and len(parts) == 5 and parts[0] == "bench" and parts[1] != "changes":
            key = (parts[2], parts[3])  # machine slug, session
        elif path.is_file() and parts[0] == "results" and "sessions" in parts:
            key = (parts[1], parts[parts.index("sessions") + 1])
        else:
            continue
        found[key] = found.get(key, 0) + path.stat().st_size
    return max(found.values(), default=0) / 1e6


class Budget(NamedTuple):
    """One of the site's budgets (issue 38's decisions): a measured value against its limit."""
    what: str
    unit: str
    limit: float
    at_machines: int | None = None  # checked only at this many synthetic folders; None: always

    def line(self, value: float | None, machines: int) -> str:
        if value is None or (self.at_machines is not None and machines != self.at_machines):
            verdict, shown = f"not checked (run with --machines {self.at_machines})", "-"
        else:
            verdict, shown = ("met" if value <= self.limit else "NOT MET"), f"{value:.1f} {self.unit}"
        return f"{self.what:<62} {f'<= {self.limit:g} {self.unit}':>10} {shown:>10}  {verdict}"


BUDGETS = {
    "committed cold": Budget("committed results: cold build", "s", 10),
    "author": Budget("committed results: one chapter edited, built again in-process", "s", 2),
    "restored": Budget("100 more folders: the publishing build (restored cache)", "s", 60, 100),
    "cold": Budget("100 more folders: cold build", "s", 180, 100),
    "size": Budget("100 more folders: site size", "MB", 200, 100),
    "session": Budget("one more kept session of every figure on one machine", "MB", 1),
}

# The author's loop as `mkdocs serve` runs it: one process builds the site, a chapter changes, the
# same process builds it again (serve rebuilds the whole site in-process on every change).
AUTHOR_LOOP = """
import sys, time
from mkdocs.commands.build import build
from mkdocs.config import load_config
config = load_config(config_file=sys.argv[1], site_dir=sys.argv[2], strict=True)
build(config)
chapter = sys.argv[3]
with open(chapter, "a", encoding="utf-8") as fh:
    fh.write("\\nOne more sentence, as an author would add.\\n")
config = load_config(config_file=sys.argv[1], site_dir=sys.argv[2], strict=True)
start = time.perf_counter()
build(config)
print(f"{time.perf_counter() - start:.3f}")
"""


def author_loop(results: Path, cache: Path, work: Path) -> float:
    """Seconds to build the site again after one chapter changed, in the process that built it
    (the cache warm), on a copy of docs/ and mkdocs.yml: the checkout is not touched."""
    (work / "docs").parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "docs", work / "docs")
    shutil.copy(REPO / "mkdocs.yml", work / "mkdocs.yml")
    (work / "bench_scripts").symlink_to(REPO / "bench_scripts")
    env = dict(os.environ, BENCH_RESULTS=str(results), BENCH_CACHE=str(cache), NO_MKDOCS_2_WARNING="1")
    env.pop("BENCH_MACHINE", None)
    proc = subprocess.run([str(MKDOCS.with_name("python")), "-c", AUTHOR_LOOP, str(work / "mkdocs.yml"),
                           str(work / "site"), str(work / "docs" / "index.md")],
                          cwd=work, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"the author's loop failed:\n{proc.stderr[-3000:]}")
    return float(proc.stdout.split()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--machines", type=int, default=100)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="site-scaling-") as tmp:
        tmp_path = Path(tmp)
        synthesize(REPO / "results", tmp_path / "results", args.machines)
        # The committed results are built from a copy too: the restored build checks them out afresh.
        shutil.copytree(REPO / "results", tmp_path / "committed" / "results")
        cases = [("committed results", tmp_path / "committed" / "results"),
                 (f"{args.machines} more folders", tmp_path / "results")]
        print(f"{'results':<24} {'cold cache':>11} {'warm cache':>11} {'restored':>9} {'pages':>6} {'site MB':>8}")
        measured: dict[str, float] = {}
        for name, results in cases:
            cache, out = tmp_path / f"cache-{len(name)}", tmp_path / f"site-{len(name)}"
            (cold, cold_steps, workers), (warm, warm_steps, _) = build(results, cache, out), build(results, cache, out)
            check_out_again(results, cache)
            restored, restored_steps, _ = build(results, cache, out.with_name(out.name + "-restored"))  # no site yet
            pages = len(list(out.rglob("index.html")))
            print(f"{name:<24} {cold:>10.1f}s {warm:>10.1f}s {restored:>8.1f}s {pages:>6} {size_mb(out):>8.1f}",
                  flush=True)
            print(f"    cold: {cold_steps}\n    warm: {warm_steps}\n    restored: {restored_steps}", flush=True)
            print(f"    site: {size_line(out)}", flush=True)
            for line in workers:  # where a cold build's worker time went, job by kind
                print(f"    cold workers, {line}", flush=True)
            if results == cases[0][1]:
                measured["committed cold"] = cold
                measured["session"] = per_session_mb(out)
                measured["author"] = author_loop(results, cache, tmp_path / "author")
            else:
                measured.update(restored=restored, cold=cold, size=size_mb(out))
        print(f"\n{'budget':<62} {'limit':>10} {'measured':>10}")
        for key, budget in BUDGETS.items():
            print(budget.line(measured.get(key), args.machines))


if __name__ == "__main__":
    main()
