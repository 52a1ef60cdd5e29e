"""End to end on a copy of the repository: a changed script marks its figure stale on every
page and fails a strict build (through mkdocs and through make); two machine folders give
tabs that switch and anchors that open them in Chromium."""

import functools
import http.server
import importlib.util
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from conftest import REFERENCE, REPO, committed_build

pytestmark = pytest.mark.slow  # a copy of the repository built, through mkdocs and make, and Chromium

FIG = "fig-dispatch-vs-completion"
SCRIPT = "bench_scripts/dispatch_vs_completion.py"
FIRST, SECOND = REFERENCE, "cpu-second-copy"
PARTS = ("mkdocs.yml", "Makefile", "requirements.txt", "pyproject.toml", "docs", "bench_scripts", "benchsite", "tools",
         "results")


def _scaling():
    spec = importlib.util.spec_from_file_location("site_scaling", REPO / "tools" / "site_scaling.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _relabel():
    return _scaling().relabel


def _other_machines(folder, names):
    """shutil.copytree's ignore: in results/, every machine folder but the reference's (the copy
    has two machines, FIRST and SECOND; a third would only make each build longer)."""
    if Path(folder) != REPO / "results":
        return []
    return [n for n in names if (REPO / "results" / n).is_dir() and n != REFERENCE]


@pytest.fixture(scope="module")
def repo_copy(tmp_path_factory):
    """The parts the site needs, a second machine folder, and a script edited after its run."""
    root = tmp_path_factory.mktemp("repo")
    for part in PARTS:
        if (REPO / part).is_dir():
            shutil.copytree(REPO / part, root / part, ignore=_other_machines)
        else:
            shutil.copy(REPO / part, root / part)
    (root / ".venv").symlink_to((REPO / ".venv").resolve())
    source = root / "results" / FIRST / "dispatch_vs_completion.csv"
    (root / "results" / SECOND).mkdir()
    (root / "results" / SECOND / source.name).write_text(_relabel()(source.read_text(), SECOND))
    with open(root / SCRIPT, "a") as fh:
        fh.write("# edited after the results were recorded\n")
    return root


def mkdocs(root, out, **env):
    """A strict build of the copy, with the session's build cache, in one process (tests/conftest.py,
    build_site: no test here is of the warming workers)."""
    full = dict(os.environ, NO_MKDOCS_2_WARNING="1", BENCH_CACHE=str(committed_build()[2]), BENCH_JOBS="1", **env)
    for key in ("BENCH_RESULTS", "BENCH_MACHINE", *(() if "BENCH_STRICT" in env else ("BENCH_STRICT",))):
        full.pop(key, None)
    return subprocess.run([str(root / ".venv" / "bin" / "mkdocs"), "build", "--strict", "-d", str(out)],
                          cwd=root, capture_output=True, text=True, env=full, timeout=600)


@pytest.fixture(scope="module")
def built(repo_copy):
    proc = mkdocs(repo_copy, repo_copy / "site")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return repo_copy / "site"


def test_the_scaling_benchmarks_restored_build_starts_where_the_pages_workflow_does(tmp_path):
    """tools/site_scaling.py's third build is the Pages workflow's next one: the same results at
    the same path as new files (a checkout makes new inodes and times, which the stamp-keyed
    entries are keyed by), and the cache without the folders the workflow's ``rm -rf`` step
    removes (read from the workflow, so the two cannot drift apart)."""
    scaling = _scaling()
    assert scaling.workflow_removes() == ["warmed", "frames/digest"]
    results, cache = tmp_path / "results", tmp_path / "cache"
    (results / "m").mkdir(parents=True)
    csv = results / "m" / "x.csv"
    csv.write_text("a\n1\n")
    os.utime(csv, (1_000_000, 1_000_000))
    before = csv.stat()
    for folder in ("warmed", "frames/digest", "frames", "gzip", "page"):
        (cache / folder).mkdir(parents=True, exist_ok=True)
        (cache / folder / "entry.pkl").write_bytes(b"x")
    scaling.check_out_again(results, cache)
    after = csv.stat()
    assert csv.read_text() == "a\n1\n" and after.st_mtime_ns != before.st_mtime_ns
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("results")] == ["results"]
    kept = sorted(p.parent.relative_to(cache).as_posix() for p in cache.rglob("entry.pkl"))
    assert kept == ["frames", "gzip", "page"]


def test_a_build_says_how_long_each_warming_step_took(built_site_log):
    """Each warming step logs its jobs and seconds (benchsite/build/plugin.py, _warm) in the form
    tools/site_scaling.py reads to show where a build's time went (read from the session's first
    build: cold, on two workers)."""
    scaling = _scaling()
    log = built_site_log
    found = [(m["what"], int(m["ran"]), int(m["jobs"])) for m in scaling.WARMED.finditer(log)]
    steps = ["results files", "figure x machine pairs", "pages", "written pages"]
    assert [what for what, _, _ in found] == steps
    assert all(0 <= ran <= jobs and jobs > 0 for _, ran, jobs in found)
    # A cold build's workers say what their time went on, each step by kind of job.
    spent = scaling.worker_time(log)
    assert [line.split(":")[0] for line in spent] == steps
    assert spent[0].startswith("results files: results file ") and "chapter " in spent[2]
    assert all(kind in spent[2] for kind in ("/bench page ", "machine page ", "session page ", "changes page "))
    assert all(kind in spent[3] for kind in ("machine page ", "session page ", "changes page "))  # finished there


def test_the_scaling_tool_shows_each_steps_worker_time_by_kind():
    log = "\n".join(["INFO    -  bench: warmed pages: 3 of 3 jobs on 2 workers in 1.5 s",
                     "INFO    -  bench: worker time on pages: chapter 2.0 s (2, 1000 ms each) · "
                     "machine page 0.5 s (1, 500 ms each)",
                     "INFO    -  bench: warmed results files: 0 of 3 jobs (done by an earlier build) in 0.0 s"])
    assert _scaling().worker_time(log) == ["pages: chapter 2.0 s (2, 1000 ms each) · machine page 0.5 s "
                                           "(1, 500 ms each)"]


def test_the_scaling_tool_adds_the_steps_up_to_the_build():
    log = "\n".join(["INFO    -  bench: warmed results files: 3 of 3 jobs on 2 workers in 1.5 s",
                     "INFO    -  bench: warmed figure x machine pairs: 0 of 3 jobs (done by an earlier build) in 0.0 s",
                     "INFO    -  Documentation built",
                     "INFO    -  bench: warmed pages: 7 of 9 jobs on 2 workers in 2.25 s"])
    assert _scaling().steps(log, 10.0) == ("results files 1.5 s · figure x machine pairs 0.0 s · pages 2.2 s · "
                                           "the rest 6.2 s")


def test_a_rebuild_over_the_last_site_leaves_only_the_new_one(built, repo_copy, tmp_path):
    """The last build's pages are removed while the next build runs (benchsite/build/sitedir.py): the
    rebuilt folder holds what a build into an empty one holds, and the hidden entries mkdocs'
    own clean keeps (a gh-pages checkout's .git)."""
    out = tmp_path / "site"
    shutil.copytree(built, out)
    (out / "bench" / "gone-since").mkdir()
    (out / "bench" / "gone-since" / "index.html").write_text("a page no longer in the site")
    (out / ".git").mkdir()
    (out / ".git" / "HEAD").write_text("ref: refs/heads/gh-pages\n")
    # The /bench pages and downloads are taken back: an unchanged page is left as it is (its
    # time stays), an edited one, one of another mode, a folder in a page's place, a link in a
    # download's place and a download no longer in the site are replaced or removed.
    same = out / "bench" / FIG / FIRST / "index.html"
    os.utime(same, ns=(10**9, 10**9))
    edited = out / "bench" / FIG / SECOND / "index.html"
    edited.write_bytes(edited.read_bytes().replace(b"<title>", b"<title>edited ", 1))
    os.link(edited, tmp_path / "published.html")  # e.g. a copy made with cp -l: keeps its bytes
    (out / "results" / FIRST / "dispatch_vs_completion.csv.gz").chmod(0o600)
    (out / "results" / FIRST / "removed.csv.gz").write_text("a results file no longer in the site")
    folder = next(p for p in (out / "bench").glob(f"{FIG}/{FIRST}/*/index.html"))
    folder.unlink()
    folder.mkdir()
    (folder / "x").write_text("a folder where a page goes")
    download = out / "results" / SECOND / "dispatch_vs_completion.csv.gz"
    download.unlink()
    (tmp_path / "outside").write_text("not the site's")
    download.symlink_to(tmp_path / "outside")
    proc = mkdocs(repo_copy, out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "removing the last build's site while this one runs" in proc.stderr

    def files(root):
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() or p.is_symlink())

    def modes(root):
        return {str(p.relative_to(root)): p.lstat().st_mode for p in root.rglob("*") if ".git" not in p.parts}

    assert files(out) == sorted([*files(built), ".git/HEAD"])
    for name in files(built):
        assert not (out / name).is_symlink() and (out / name).read_bytes() == (built / name).read_bytes(), name
    assert modes(out) == modes(built)
    assert same.stat().st_mtime_ns == 10**9  # not written
    assert b"<title>edited " in (tmp_path / "published.html").read_bytes()  # not rewritten in place
    assert (tmp_path / "outside").read_text() == "not the site's"


STALE_MESSAGE = f"{FIG} on {FIRST} is stale"


def test_stale_figure_is_marked_on_every_page_that_shows_it(built):
    assert "⚠\u00a0stale" in (built / "bench" / "index.html").read_text()
    for page in (f"bench/{FIG}/index.html", f"bench/{FIG}/{FIRST}/index.html", "what-the-clock-caught/index.html"):
        assert 'class="bench-stale"' in (built / page).read_text(), page


def test_make_site_strict_fails_naming_the_stale_figure(repo_copy, tmp_path):
    """make site STRICT=1 is mkdocs build --strict with BENCH_STRICT=1 (the Makefile's recipe):
    the one build checks both (make shows mkdocs' log on its output)."""
    # STAMP points at a fresh file so make does not try to install anything into the shared venv.
    stamp = tmp_path / "installed"
    stamp.touch()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    env["BENCH_CACHE"] = str(committed_build()[2])
    proc = subprocess.run(["make", "--no-print-directory", "site", "STRICT=1", f"STAMP={stamp}"], cwd=repo_copy,
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode != 0
    assert STALE_MESSAGE in proc.stdout + proc.stderr and "stale" in proc.stdout + proc.stderr


def test_every_figure_and_machine_has_its_pages_and_csv(built):
    for machine in (FIRST, SECOND):
        assert (built / "bench" / FIG / machine / "index.html").is_file()
        assert (built / "results" / machine / "dispatch_vs_completion.csv.gz").is_file()
    page = (built / "bench" / FIG / "index.html").read_text()
    assert f'id="{FIG}--{SECOND}"' in page and f"{SECOND} vs {FIRST}" in page
    machines = list((built.parent / "results").glob("*/dispatch_vs_completion.csv"))  # the committed ones too
    assert "<!--bench-" not in page and page.count('class="bench-samples"') == len(machines) >= 2


# --- in Chromium --------------------------------------------------------------------------

class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def server(built):
    handler = functools.partial(QuietHandler, directory=str(built))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which("chromium"):
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=shutil.which("chromium"),
                                     args=["--no-sandbox", "--disable-gpu", "--disable-quic"])
        yield chromium
        chromium.close()


def open_tab(page):
    return page.eval_on_selector_all("input[type=radio]:checked", "els => els.map(e => e.id)")


def test_an_anchor_opens_its_machines_tab_and_a_click_switches(browser, server):
    page = browser.new_page()
    page.goto(f"{server}bench/{FIG}/#{FIG}--{SECOND}")
    assert open_tab(page) == [f"{FIG}--{SECOND}"]
    page.click(f"label[for='{FIG}--{FIRST}']")
    assert open_tab(page) == [f"{FIG}--{FIRST}"]
    assert page.url.endswith(f"#{FIG}--{FIRST}")  # the address bar now links that tab
    visible = page.locator(".bench-tab-panel .bench-meta strong").filter(visible=True)
    assert visible.all_text_contents() == [FIRST]
    page.close()


def test_the_scaling_tool_says_where_the_sites_bytes_are(tmp_path):
    """Bytes by kind of file, by where the site puts it, and how much of each page is the theme
    around its <article> (the part that is the same on every page)."""
    page = "<html><nav>menu</nav><article class='md-content__inner'>{}</article><footer/></html>"
    files = {"bench/fig-a/m1/index.html": page.format("table"),
             "bench/fig-a/m1/20261201T000000Z-ab12/index.html": page.format("run"),
             "bench/changes/m1/index.html": page.format("what changed"),
             "bench/fig-a/index.html": page.format("machines"), "bench/index.html": page.format("every figure"),
             "results/m1/a.csv.gz": "x" * 7, "how-good-is-this-number/index.html": page.format("prose"),
             "assets/bench.css": "y" * 3, "index.html": "<html>no article</html>"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    theme = len(page.format("")) - len("<article class='md-content__inner'></article>")
    found = _scaling().sizes(tmp_path)
    assert list(found) == ["machine pages", "session pages", "changes pages", "/bench index and figure pages",
                           "downloads", "chapters", "the rest"]
    assert found["machine pages"] == (1, len(page.format("table")), theme)
    assert found["session pages"] == (1, len(page.format("run")), theme)
    assert found["/bench index and figure pages"][:1] == (2,) and found["downloads"] == (1, 7, 0)
    # A page without an <article> (none of mkdocs' content) counts no theme: only what is known to be.
    assert found["chapters"] == (2, len(page.format("prose")) + len("<html>no article</html>"), theme)
    assert found["the rest"] == (1, 3, 0)
    assert _scaling().size_line(tmp_path).startswith(
        "machine pages 0.0 MB (1, theme 0.0 MB) · session pages")
