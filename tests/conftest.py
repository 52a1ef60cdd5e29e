import fcntl
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# benchsite and benchkit come from the project's editable install (make venv); the figure scripts
# and the lesson helpers are not packages: pyproject.toml's pytest `pythonpath` lists their folders.

# The machine whose numbers the prose quotes (extra.bench.machine in mkdocs.yml).
REFERENCE = re.search(r"^\s+machine:\s*(\S+)", (REPO / "mkdocs.yml").read_text(), re.MULTILINE).group(1)


def reference_frames():
    """(figure, validated frame) of each committed results file of the reference machine whose
    figure a script defines: what the table model's round-trip tests make tables of."""
    from benchkit.layout import discover
    from benchkit.schema import figure_id_for
    from benchsite.model import load
    from benchsite.model.figures import all_figures

    figures = all_figures(REPO / "bench_scripts")
    for file in discover(REPO / "results"):
        fig = figures.get(figure_id_for(file.stem)) if file.machine == REFERENCE else None
        if fig is not None:
            yield fig, load.load(file)


_catalogs: dict = {}


def committed_catalog(preferred: str | None = None, declared: str | None = None):
    """``Catalog.build(REPO / "results", preferred=preferred, declared=declared)``, its files
    validated once a process (each test that read the committed results through a catalog
    validated the same files again, about 1.7 s CPU a time): a new Catalog each call, nothing made
    in it yet (no table, no comparison), over copies of the frames (a test may change them).
    tests/test_sessions.py holds that it is what Catalog.build makes."""
    from benchsite.model.catalog import Catalog, Frames

    if "built" not in _catalogs:
        _catalogs["built"] = Catalog.build(REPO / "results")
    built = _catalogs["built"]
    frames = Frames()
    for key in built.frames:
        frames[key] = built.frames[key].copy()
    return Catalog(built.results, dict(built.figures), frames, dict(built.errors), list(built.orphans),
                   preferred=preferred, declared=declared)


def load_hook(name: str, monkeypatch) -> object:
    """A fresh copy of ``benchsite/build/<name>.py`` (the plugin, the render cache) as a module of
    its own (registered for the test's length: its dataclasses look their module up), so that a
    test's build state starts empty."""
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", REPO / "benchsite" / "build" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


# mkdocs run with one more logger shown: the lesson plugin's, which says at debug level when the build
# itself converts the notebook (benchsite/build/lesson_plugin.py). mkdocs' own level stays as `make site`
# has it: it is a part of every build cache key (benchsite/build/sitesetup.py), and `-v` would change it.
NOTEBOOK_LOG = ("import logging, sys; logging.getLogger('mkdocs.plugins.bench-notebooks').setLevel(logging.DEBUG); "
                "from mkdocs.__main__ import cli; sys.exit(cli())")


def _mkdocs(out: Path, results: Path | None, strict: bool, extra_env: dict, args: tuple[str, ...],
            notebook_log: bool = False):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", **extra_env)
    for var in ("BENCH_RESULTS", "BENCH_MACHINE", "BENCH_STRICT", "BENCH_CLAIMS", "BENCH_CACHE", "BENCH_JOBS"):
        if var not in extra_env:
            env.pop(var, None)
    if results is not None:
        env["BENCH_RESULTS"] = str(results)
    mkdocs = [sys.executable, "-c", NOTEBOOK_LOG] if notebook_log else [str(REPO / ".venv" / "bin" / "mkdocs")]
    cmd = [*mkdocs, "build", "-d", str(out), "--strict" if strict else "--no-strict", *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env, timeout=300)


# One build cache for the whole session, in its temporary folder (the repository's .cache/bench is
# left alone): the committed site is built into it first, cold and on two workers, and every later
# build that names no cache of its own reads it warm. Its entries are keyed by what made them, so
# one cache serves builds of different results folders (tests/test_warm_build.py checks that), and
# written atomically, so builds running at once share it.
_session: dict = {}


@pytest.fixture(autouse=True)
def _mkdocs_logging_as_it_was():
    """Each test leaves MkDocs' logging as it found it: sitesetup.count_hidden_warnings (the
    plugin's on_startup under -q) lowers the ``mkdocs`` logger's level, adds a handler and puts a
    filter on every handler a record reaches, the test runner's capture handlers included, for the
    rest of the process; later tests in that process then saw no warning."""
    import logging

    from benchsite.build import sitesetup

    def chain():
        logger = logging.getLogger("mkdocs")
        while logger is not None:
            yield logger
            logger = logger.parent if logger.propagate else None

    mkdocs_logger = logging.getLogger("mkdocs")
    level, before = mkdocs_logger.level, {id(f) for lg in chain() for h in lg.handlers for f in h.filters}
    yield
    mkdocs_logger.setLevel(level)
    for logger in chain():
        for handler in list(logger.handlers):
            if isinstance(handler, sitesetup._KeepHidden):
                logger.removeHandler(handler)
            handler.filters[:] = [f for f in handler.filters
                                  if not isinstance(f, sitesetup._StillHidden) or id(f) in before]


@pytest.fixture(autouse=True)
def _cache_of_this_checkout(monkeypatch):
    """Each test starts with the build cache's default folder this checkout's: a plugin's
    on_config, run in a test's process with a temporary mkdocs.yml, points it at that project
    (cachefile.use_project) for the rest of the process."""
    from benchsite.core import cachefile

    monkeypatch.setattr(cachefile, "_PROJECT", [cachefile.REPO])


@pytest.fixture(scope="session", autouse=True)
def _session_folder(tmp_path_factory):
    _session["tmp"] = tmp_path_factory  # nothing is built until a test asks


# --- made once a run, whichever process asks first -----------------------------------------------
# make test runs the tests in two processes (pytest-xdist, -n 2): each has session fixtures of its
# own, so the builds and runs every test module shares are made through once(): the first process
# to ask makes it, under a lock, in a folder both see; the other waits for it and reads back what it
# returned. Without xdist it is a session fixture like any other.

def _shared_folder() -> Path:
    """This run's temporary folder, or with pytest-xdist the one its workers' folders are in."""
    base = _session["tmp"].getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared"


def once(name: str, make):
    """``make(folder)``, run once a test run in a new ``folder``: what it returned (JSON: paths as
    strings, programs' runs through ``ran``), to every process that asks."""
    if name not in _session:
        root = _shared_folder()
        root.mkdir(parents=True, exist_ok=True)
        with open(root / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed, or its process ends
            done = root / f"{name}.json"
            if not done.is_file():
                shutil.rmtree(root / name, ignore_errors=True)  # what a failed attempt left
                (root / name).mkdir()
                done.write_text(json.dumps(make(root / name)))
            _session[name] = json.loads(done.read_text())
    return _session[name]


def ran(proc: subprocess.CompletedProcess) -> dict:
    return {"args": [str(a) for a in proc.args], "returncode": proc.returncode, "stdout": proc.stdout,
            "stderr": proc.stderr}


def run_of(kept: dict) -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess(kept["args"], kept["returncode"], kept["stdout"], kept["stderr"])


def committed_build() -> tuple[Path, subprocess.CompletedProcess, Path]:
    """(site, its mkdocs run, its cache): the committed results built strict, as `make site` builds
    them, cold on two workers (its log shows when the build itself converts the notebook:
    NOTEBOOK_LOG); once a run, by the first test that builds anything."""
    def make(root: Path):
        env = {"BENCH_CACHE": str(root / "cache"), "BENCH_JOBS": "2"}
        return ran(_mkdocs(root / "site", None, True, env, (), notebook_log=True))

    kept = once("committed", make)
    root = _shared_folder() / "committed"
    return root / "site", run_of(kept), root / "cache"


def build_site(out: Path, results: Path | None = None, strict: bool = True, extra_env: dict | None = None,
               args: tuple[str, ...] = (), notebook_log: bool = False) -> subprocess.CompletedProcess:
    """``mkdocs build`` into ``out``, optionally from another results folder (``args``: more options),
    with the session's build cache unless ``extra_env`` names one (``BENCH_CACHE``), in one process
    unless it names ``BENCH_JOBS`` (``""``: as many workers as `make site` takes, one a core).

    One process: warming workers only make a build faster where cores are idle, and make test keeps
    both busy, so the workers' own start and reads were CPU the run paid again (about a fifth of a
    build of the reference machine's folder on the committed cache: 8.8 against 11.0 CPU-s, medians
    of five). What workers do is checked by the builds that name them: the committed build, the
    damaged strict builds, the edited tree's warm build, tests/test_docs_reads.py and
    tests/test_warm_build.py (whose test_a_build_on_two_workers_writes_what_one_process_writes holds
    that workers write what one process writes)."""
    extra_env = dict(extra_env or {})
    if "BENCH_CACHE" not in extra_env:
        extra_env["BENCH_CACHE"] = str(committed_build()[2])
    extra_env.setdefault("BENCH_JOBS", "1")
    return _mkdocs(out, results, strict, extra_env, args, notebook_log)


@pytest.fixture(scope="session")
def built_site():
    """The site as `make site` builds it from the committed results (read it, never write it)."""
    out, proc, _ = committed_build()
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="session")
def built_site_log(built_site) -> str:
    """What the build of ``built_site`` logged (cold, two workers, NOTEBOOK_LOG)."""
    return committed_build()[1].stderr


def smoke_runs() -> tuple[subprocess.CompletedProcess, Path]:
    """Every figure script run once at smoke sizes in one session of the runner, as `make
    bench-smoke` runs them (bench_scripts/run.py: one process a run, the runs interleaved), on a
    machine labelled ``smoke-test``: (the session's run, its results folder). Once a run."""
    def make(root: Path):
        return ran(subprocess.run([sys.executable, str(REPO / "bench_scripts" / "run.py"), "--runs", "1", "--smoke",
                                   "--results", str(root / "results")], cwd=REPO, capture_output=True, text=True,
                                  timeout=1200, env=dict(os.environ, MACHINE="smoke-test")))

    return run_of(once("smoke", make)), _shared_folder() / "smoke" / "results"


def smoke_run(script: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """``script``'s part of :func:`smoke_runs`: (the session's run, with exit status 0 when this
    script's results file was written, which the runner does only when all its runs succeeded;
    the results folder). The smoke test of every script (tests/test_runner.py) and the tests of one
    figure's rows (tests/benchfixtures.py, run_worker) read the same run."""
    session, results = smoke_runs()
    written = (results / "smoke-test" / f"{script.stem}.csv").is_file()
    return subprocess.CompletedProcess(session.args, 0 if written else (session.returncode or 1), session.stdout,
                                       session.stderr), results


@pytest.fixture(scope="session")
def damaged_results() -> Path:
    """A results folder of bad inputs, built three ways for four test modules: the reference
    machine with one figure damaged in each way (tests/test_bad_site.py) and damaged kept sessions
    of another (tests/test_permalinks.py), one damaged file on another machine
    (tests/test_bad_inputs.py), markup in every text field of a third (tests/test_escaping.py).
    Read it, never write it."""
    from test_bad_site import damaged_folder

    once("damaged", lambda root: str(damaged_folder(root / "results")))
    return _shared_folder() / "damaged" / "results"


@pytest.fixture(scope="session")
def damaged_strict_twice(damaged_results) -> tuple[list, Path]:
    """Two strict builds of ``damaged_results`` on the session's build cache: the first makes every
    page of this folder (none is in the cache yet: a page's key holds every input it can read),
    with worker processes filling the cache before the build (benchsite/build/parallel.py, two workers),
    the second reads that cache. ([both mkdocs runs], the cache)."""
    def make(root: Path):
        return [ran(build_site(root / f"site-{attempt}", damaged_results, strict=True, extra_env={"BENCH_JOBS": "2"}))
                for attempt in (1, 2)]

    kept = once("damaged-strict", make)
    return [run_of(k) for k in kept], committed_build()[2]


@pytest.fixture(scope="session")
def damaged_lenient(damaged_results, damaged_strict_twice) -> tuple[Path, subprocess.CompletedProcess]:
    """``damaged_results`` built lenient, as `mkdocs serve` does: (site, its mkdocs run). After the
    strict builds, on the same cache (strictness is no part of a cache key), which holds this
    folder's good pages; a page that reported a problem is never kept, so each is made again here."""
    proc = run_of(once("damaged-lenient", lambda root: ran(build_site(root / "site", damaged_results, strict=False))))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    return _shared_folder() / "damaged-lenient" / "site", proc


def edited_tree() -> tuple[dict[str, Path], dict[str, str]]:
    """Three strict builds: the session's build of the committed site (cold on two workers:
    committed_build), and the checkout with an edited copy of its code (tests/test_code_version.py,
    edited_builds) built warm on two workers on a copy of that build's cache, and cold in one
    process. ({name: its site}, {name: its log}: before, warm, cold). Once a run: the
    warm-equals-cold hold and the workers-write-what-one-process-writes check read them."""
    site, proc, cache = committed_build()
    assert proc.returncode == 0, proc.stderr[-3000:]

    def make(root: Path):
        from test_code_version import edited_builds

        return edited_builds(root, cache)

    logs = once("edited", make)
    root = _shared_folder() / "edited"
    return {"before": site, **{name: root / name for name in logs}}, {"before": proc.stderr, **logs}


# --- the order of the modules --------------------------------------------------------------------
# make test hands whole modules to its workers (--dist loadfile) in collection order
# (--no-loadscope-reorder: pytest-xdist would put the modules with the most tests first): the long
# ones first, so that the run ends on short modules that keep both cores busy instead of one long
# module running alone; and first among them the modules that make what others share (the smoke
# session, the committed and damaged builds; the edited tree before tests/test_warm_build.py reads
# it), so that no module waits for another's build. The rest keep pytest's order. A module missing
# here, or one that became short, only costs time.
LONG_FIRST = ("test_runner", "test_bad_inputs", "test_browser", "test_code_version", "test_bad_site",
              "test_sessions", "test_claims", "test_distributed_runner", "test_permalinks", "test_warm_build",
              "test_benchkit_api", "test_docs_reads", "test_search", "test_benchkit_install",
              "test_bench_site", "test_lesson_notebook", "test_claimcheck",
              # in-process modules of 4 CPU-s or more: left in pytest's order, one of them could end the run
              # with the other process idle (test_verdict_rule did)
              "test_verdict_rule", "test_carryover", "test_fuzz_inputs", "test_imports", "test_table_attached",
              "test_bench_pages")


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.stem, len(rank)))  # stable: each module's own order kept


# --- the two tiers -------------------------------------------------------------------------------
# `make test-fast` (-m "not slow") runs the model and the views in about a minute; `make test` runs
# everything. A test that builds a site, starts Chromium, runs a figure script or any other program
# is marked slow (pytest.mark.slow). The check below keeps the fast tier fast: a program started
# while a test not marked slow runs (its fixtures included) fails that test, except these: git
# answers in milliseconds, jupytext asks pandoc for its version when it is first imported, and
# platform.processor() asks uname. Forked workers (benchsite/build/parallel.py) start no program.
CHEAP = {"git", "pandoc", "uname"}
_running: list = []  # the test whose setup, call or teardown runs now (fixtures included)


def _within(item):
    _running.append(item)
    try:
        return (yield)
    finally:
        _running.pop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _within(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _within(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    return (yield from _within(item))


def _program(args) -> str:
    if isinstance(args, (str, bytes)):
        first = shlex.split(os.fsdecode(args))[0]
    else:
        first = args if isinstance(args, os.PathLike) else list(args)[0]
    return Path(os.fsdecode(first)).name


class _Guarded(subprocess.Popen):
    def __init__(self, args, *rest, **kwargs):
        item = _running[-1] if _running else None
        if item is not None and item.get_closest_marker("slow") is None and _program(args) not in CHEAP:
            pytest.fail(f"{item.nodeid} starts a program ({_program(args)}) but is not marked slow: add "
                        "@pytest.mark.slow (or pytestmark = pytest.mark.slow for the module), so that "
                        "make test-fast stays fast", pytrace=False)
        super().__init__(args, *rest, **kwargs)


def pytest_configure(config):
    config._unguarded_popen = subprocess.Popen
    subprocess.Popen = _Guarded


def pytest_unconfigure(config):
    subprocess.Popen = getattr(config, "_unguarded_popen", subprocess.Popen)
