"""The runner: R processes per figure, atomic publication, failures contained."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from benchkit import runner
from benchsite import BENCH_DIR
from benchsite.model.load import ResultFile, load
from conftest import REPO, smoke_run

BENCH = REPO / "bench_scripts"

FAKE_SCRIPT = textwrap.dedent('''
    import os, sys, time
    from benchkit import Recorder, Sample, figure_main

    FIGURE = {"title": "t", "caption": "c", "chapter": "index.md", "variants": ["v"]}

    def measure(rec: Recorder) -> None:
        mode = os.environ.get("FAKE_MODE", "ok")
        if os.environ.get("FAKE_LOG"):
            with open(os.environ["FAKE_LOG"], "a") as log:
                log.write(f"{os.path.basename(__file__)[:-3]} {rec.config.run} {rec.config.seed}\\n")
        if mode == "fail-second" and rec.config.run == 1:
            sys.exit("second run breaks on purpose")
        if mode == "slow":
            time.sleep(60)
        if mode == "cache-hit":
            from benchkit import compiles
            compiles.refuse_cache_hits([Sample(0.01, 1, 1, cache_hits=1)], "fake first call")
        if mode == "wrong-answer":
            from benchkit import check_close
            check_close([1.0, 2.0], [1.0, 2.5], rtol=1e-6, atol=0.0, what="fake sum")
        rec.add("v", "completed", [Sample(0.001 * (rec.config.run + 1))], dtype="float32", shape="1")
        (rec.artifact("note.txt")).write_text(f"run {rec.config.run}")

    if __name__ == "__main__":
        figure_main(__file__, measure)
''')


def fake_bench(root):
    """A bench_scripts folder with two fake figures that import the real harness."""
    folder = root / "bench"
    folder.mkdir()
    (folder / "benchkit").symlink_to(BENCH / "benchkit")
    (folder / "good.py").write_text(FAKE_SCRIPT)
    (folder / "other.py").write_text(FAKE_SCRIPT)
    return folder


def fake_results(root):
    folder = root / "results"
    (folder / "someone-else").mkdir(parents=True)
    (folder / "someone-else" / "good.csv").write_text("not ours\n")
    return folder


@pytest.fixture
def bench_dir(tmp_path):
    return fake_bench(tmp_path)


@pytest.fixture
def results(tmp_path):
    return fake_results(tmp_path)


def run_main(bench_dir, results, *args, env=None):
    old = dict(os.environ)
    os.environ.update(env or {}, MACHINE="fake-machine")
    try:
        return runner.main(["--results", str(results), *args], bench_dir=bench_dir)
    finally:
        os.environ.clear()
        os.environ.update(old)


@pytest.fixture(scope="module")
def three_rounds(tmp_path_factory):
    """One session of three runs of both fake figures (each visit logged: FAKE_LOG), which the two
    tests below read: (its exit status, its results folder, the log)."""
    root = tmp_path_factory.mktemp("rounds")
    bench, results, log = fake_bench(root), fake_results(root), root / "order.log"
    code = run_main(bench, results, "--runs", "3", "--session", "s-test", env={"FAKE_LOG": str(log)})
    return code, results, log


@pytest.mark.slow
def test_r_runs_are_r_processes_written_once(three_rounds):
    code, results, log = three_rounds
    assert code == 0
    assert [line.split()[:2] for line in log.read_text().splitlines() if line.startswith("good ")] == \
        [["good", "0"], ["good", "1"], ["good", "2"]]  # one visit a run
    frame = load(ResultFile("fake-machine", "good", results / "fake-machine" / "good.csv"))
    assert sorted(frame["run"]) == [0, 1, 2]
    assert frame["timestamp_utc"].nunique() >= 1 and frame["figure_id"].unique().tolist() == ["fig-good"]
    assert (results / "fake-machine" / "good.note.txt").read_text() == "run 0"
    assert (results / "someone-else" / "good.csv").read_text() == "not ours\n"


@pytest.mark.slow
def test_runs_are_interleaved_across_figures_in_one_session(three_rounds):
    """Round r runs every figure's run r: each figure's runs span the session. Every row
    carries the session id, and the order seed the run was told, which is reproducible."""
    code, results, log = three_rounds
    assert code == 0
    visits = [line.split() for line in log.read_text().splitlines()]
    assert [int(run) for _, run, _ in visits] == [0, 0, 1, 1, 2, 2]
    assert all({stem for stem, run, _ in visits if run == str(r)} == {"good", "other"} for r in range(3))
    for stem in ("good", "other"):
        frame = load(ResultFile("fake-machine", stem, results / "fake-machine" / f"{stem}.csv"))
        assert set(frame["session_id"]) == {"s-test"}
        told = {int(run): int(seed) for s, run, seed in visits if s == stem}
        recorded = dict(zip(frame["run"], frame["order_seed"]))
        assert recorded == told == {r: runner.run_seed("s-test", stem, r) for r in range(3)}
    assert len({seed for _, _, seed in visits}) == 6  # a different order every run


@pytest.mark.slow
def test_a_failing_run_keeps_the_old_file_and_the_others_go_on(bench_dir, results, capsys):
    target = results / "fake-machine" / "good.csv"
    target.parent.mkdir()
    target.write_text("previous results\n")
    code = run_main(bench_dir, results, "--runs", "2", env={"FAKE_MODE": "fail-second"})
    out = capsys.readouterr()
    assert code == 1
    assert target.read_text() == "previous results\n"
    assert "second run breaks on purpose" in out.err
    assert "failed: good, other" in out.out
    assert not list((results.parent / ".bench" / "staging").iterdir())


@pytest.mark.slow
def test_a_wrong_answer_stops_the_script_before_anything_is_written(bench_dir, results, capsys):
    code = run_main(bench_dir, results, "--runs", "2", "--only", "good", env={"FAKE_MODE": "wrong-answer"})
    err = capsys.readouterr().err
    assert code == 1
    assert "reference check failed: fake sum: differs from the NumPy reference" in err
    assert "exited 3" in err
    assert not (results / "fake-machine").exists()


@pytest.mark.slow
def test_a_warm_compilation_cache_is_refused_before_anything_is_written(bench_dir, results, capsys):
    code = run_main(bench_dir, results, "--runs", "1", "--only", "good", env={"FAKE_MODE": "cache-hit"})
    err = capsys.readouterr().err
    assert code == 1 and "exited 5" in err
    assert "refused: fake first call: 1 persistent compilation cache hit(s)" in err
    assert not (results / "fake-machine").exists()


@pytest.mark.slow
def test_workers_record_that_the_persistent_cache_is_off(bench_dir, results):
    env = {"JAX_COMPILATION_CACHE_DIR": str(results.parent / "jax-cache")}
    assert run_main(bench_dir, results, "--runs", "1", "--only", "good", env=env) == 0
    frame = load(ResultFile("fake-machine", "good", results / "fake-machine" / "good.csv"))
    assert set(frame["compilation_cache"]) == {"off"}
    assert '"JAX_COMPILATION_CACHE_DIR"' in frame["jax_env"].iloc[0]


def test_a_second_run_is_refused_while_one_holds_the_lock(bench_dir, results, capsys):
    with runner.bench_lock(results.parent / ".bench"):
        assert run_main(bench_dir, results, "--runs", "1") == 2
    assert "refusing to start a second one" in capsys.readouterr().err
    assert not (results / "fake-machine").exists()


def test_unknown_figure_is_an_error(bench_dir, results, capsys):
    assert run_main(bench_dir, results, "--only", "nope") == 2
    assert "no such figure script: nope" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_bench_loses_nothing(bench_dir, results, sig):
    target = results / "fake-machine" / "good.csv"
    target.parent.mkdir()
    target.write_text("previous results\n")
    env = dict(os.environ, MACHINE="fake-machine", FAKE_MODE="slow", PYTHONPATH=str(REPO))
    # Ctrl-C as a terminal delivers it: a test process (or a shell's background job) may run with
    # SIGINT ignored, which a child would inherit; the runner under test starts with the default.
    code = (f"import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            f"sys.path.insert(0, {str(bench_dir)!r}); from benchkit import runner; "
            f"from pathlib import Path; sys.exit(runner.main(['--results', {str(results)!r}, '--runs', '2'], "
            f"bench_dir=Path({str(bench_dir)!r})))")
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    staging = results.parent / ".bench" / "staging"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "[round 1/2" not in (proc.stdout.readline() or ""):
        pass
    time.sleep(1.0)  # the worker is now inside measure()
    os.killpg(proc.pid, sig) if sig == signal.SIGINT else proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert "results/ is as it was" in err
    assert target.read_text() == "previous results\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["good.csv"]
    assert not staging.exists() or not list(staging.iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("script", runner.figure_scripts(BENCH_DIR), ids=lambda p: p.stem)
def test_every_figure_script_runs_in_smoke_mode(script):
    """Each real figure script, tiny sizes, one run: it cannot rot unnoticed. All of them run in
    one session of the runner, as `make bench-smoke` runs them, shared with the tests of each
    figure's rows (conftest.smoke_runs); a script run on its own goes through the same runner
    (test_a_figure_script_run_on_its_own_goes_through_the_runner)."""
    proc, results = smoke_run(script)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    written = results / "smoke-test" / f"{script.stem}.csv"
    frame = load(ResultFile("smoke-test", script.stem, written))
    assert len(frame) > 0 and frame["run"].unique().tolist() == [0]


@pytest.mark.slow
def test_a_figure_script_run_on_its_own_goes_through_the_runner(bench_dir, results):
    """`python bench_scripts/<stem>.py --runs R` (CONTRIBUTING.md): figure_main hands the runner
    this script alone, with the options given; the runner writes its rows as for make bench."""
    env = dict(os.environ, MACHINE="fake-machine", PYTHONPATH=str(bench_dir))
    proc = subprocess.run([sys.executable, str(bench_dir / "good.py"), "--smoke", "--runs", "2", "--results",
                           str(results)], cwd=bench_dir, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    written = load(ResultFile("fake-machine", "good", results / "fake-machine" / "good.csv"))
    assert sorted(written["run"].unique().tolist()) == [0, 1]
    assert not (results / "fake-machine" / "other.csv").exists()  # this script alone


@pytest.mark.slow
def test_a_second_make_bench_is_refused_whole(tmp_path):
    """While one `make bench` holds its lock, another measures nothing and builds nothing."""
    import fcntl

    lock = REPO / ".bench" / "make-bench.lock"
    lock.parent.mkdir(exist_ok=True)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        proc = subprocess.run(["make", "--no-print-directory", "bench", "R=1", f"RESULTS={tmp_path / 'r'}"],
                              cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "another make bench is running here; refusing" in proc.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_make_n_bench_prints_the_session_and_measures_nothing(tmp_path):
    """`make -n bench` (what run-it-yourself offers where the Makefile's tools are missing) prints the
    commands: make runs a recipe line naming $(MAKE) even under -n, so bench must not name it.
    PYTHON=false: were the line run after all, it would measure nothing."""
    proc = subprocess.run(["make", "--no-print-directory", "-n", "bench", "R=1", "PYTHON=false",
                           f"RESULTS={tmp_path / 'r'}"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "false bench_scripts/run.py --runs 1" in proc.stdout and "--no-print-directory site" in proc.stdout
    assert not (tmp_path / "r").exists()
    assert "$(MAKE)" not in (REPO / "Makefile").read_text().split("\nbench:")[1].split("\n\n")[0]


@pytest.mark.slow
def test_an_interrupt_while_a_worker_starts_stops_that_worker(monkeypatch):
    """Ctrl-C that lands while the runner is starting a worker is held until the worker's process
    object exists, then raised where the worker is killed: nothing outlives the runner."""
    import signal as sig

    from benchkit import runner

    started = []
    real_popen = subprocess.Popen

    def popen_interrupted_on_the_way(*args, **kwargs):
        sig.raise_signal(sig.SIGINT)  # arrives mid-start
        started.append(real_popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(runner.subprocess, "Popen", popen_interrupted_on_the_way)
    previous = sig.signal(sig.SIGINT, sig.default_int_handler)  # as in a terminal, whatever ran before
    try:
        with pytest.raises(KeyboardInterrupt):
            runner._run_worker([sys.executable, "-c", "import time; time.sleep(30)"])
    finally:
        sig.signal(sig.SIGINT, previous)
    assert len(started) == 1 and started[0].poll() is not None  # started, then killed, not orphaned
    assert sig.pthread_sigmask(sig.SIG_BLOCK, set()) == set()  # the runner's signals are unblocked again
