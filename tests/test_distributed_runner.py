"""The runner's multi-process mode: N workers per run under one jax.distributed runtime,
every process's rows kept, and a worker that dies or hangs failing the run cleanly
(no orphan process, no partial file, the coordinator's port free again)."""

import os
import socket
import textwrap
import time

import pytest

from benchkit import runner
from benchkit.schema import SCHEMA_VERSION
from benchsite.model.load import ResultFile, load
from conftest import REPO

BENCH = REPO / "bench_scripts"
MACHINE = "fake-machine"

# A real figure script through the real harness: joins the run's runtime, checks the
# global view, records one sample per process, then does whatever FAKE_MODE asks.
MULTI = textwrap.dedent('''
    import os, signal, sys, time
    from pathlib import Path
    from benchkit import Recorder, Sample, figure_main

    FIGURE = {"title": "t", "caption": "c", "chapter": "index.md", "variants": ["v"], "group_by": ["proc"],
              "processes": 2, "cpu_devices": 1, "timeout_s": TIMEOUT}

    def measure(rec: Recorder) -> None:
        import jax
        from benchkit.multiproc import barrier
        me = jax.process_index()
        log = os.environ.get("FAKE_LOG")
        if log:  # pid and coordinator port: the test checks both are gone afterwards
            Path(f"{log}.{me}").write_text(f"{os.getpid()} {sys.argv[sys.argv.index('--coordinator') + 1]}")
        assert (jax.process_count(), jax.device_count()) == (2, 2)
        mode = os.environ.get("FAKE_MODE", "ok")
        if mode == "kill" and me == 1:
            os.kill(os.getpid(), signal.SIGKILL)  # dies mid-run; process 0 waits in the barrier
        if mode == "hang" and me == 1:
            time.sleep(600)
        barrier()
        rec.add("v", "completed", [Sample(0.001 * (me + 1))], dtype="float32", shape="1", params={"proc": me})
        barrier()

    if __name__ == "__main__":
        figure_main(__file__, measure)
''')

SINGLE_NEEDS_MORE = textwrap.dedent('''
    from benchkit import Recorder, Sample, figure_main

    FIGURE = {"title": "t", "caption": "c", "chapter": "index.md", "variants": ["v"], "min_devices": 4096}

    def measure(rec: Recorder) -> None:
        rec.add("v", "completed", [Sample(0.001)], dtype="float32", shape="1")

    if __name__ == "__main__":
        figure_main(__file__, measure)
''')


def make_bench(tmp_path, name: str, text: str):
    folder = tmp_path / "bench"
    folder.mkdir(exist_ok=True)
    if not (folder / "benchkit").exists():
        (folder / "benchkit").symlink_to(BENCH / "benchkit")
    (folder / f"{name}.py").write_text(text)
    return folder


def run_main(bench_dir, results, *args, env=None):
    old = dict(os.environ)
    os.environ.update(env or {}, MACHINE=MACHINE)
    try:
        return runner.main(["--results", str(results), "--smoke", *args], bench_dir=bench_dir)
    finally:
        os.environ.clear()
        os.environ.update(old)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def port_free(port: int) -> bool:
    """Nothing listens on it: a new coordinator could take it. (SO_REUSEADDR, as a server sets
    it: connections of the killed run may linger in TIME_WAIT, which is not a listener.)"""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen()
        except OSError:
            return False
    return True


def assert_nothing_left(tmp_path, results, name):
    """No worker alive, the coordinator's port free, nothing published, staging empty."""
    logs = sorted(tmp_path.glob("log.*"))
    assert logs, "the workers never started measuring"
    for log in logs:
        pid, address = log.read_text().split()
        assert not alive(int(pid)), f"worker {log.name} outlived its run"
        assert port_free(int(address.rsplit(":", 1)[1]))
    assert not (results / MACHINE / f"{name}.csv").exists()
    staging = results.parent / ".bench" / "staging"
    assert not staging.exists() or not list(staging.iterdir())


@pytest.mark.slow
def test_a_multi_process_run_keeps_every_process_rows(tmp_path, capsys):
    bench = make_bench(tmp_path, "multi", MULTI.replace("TIMEOUT", "120"))
    results = tmp_path / "results"
    assert run_main(bench, results, "--runs", "2") == 0
    frame = load(ResultFile(MACHINE, "multi", results / MACHINE / "multi.csv"))
    assert sorted(zip(frame["run"], frame["process_index"])) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert set(frame["process_count"]) == {2} and set(frame["schema_version"]) == {SCHEMA_VERSION}
    assert (frame["run_wall_s"] > 0).all()  # the runner wrote each run's wall time into its rows
    assert frame.groupby("process_index")["p_proc"].unique().map(list).to_dict() == {0: ["0"], 1: ["1"]}
    assert "2 runs ->" in capsys.readouterr().out  # runs, not processes


@pytest.mark.slow
def test_a_killed_worker_fails_the_run_cleanly(tmp_path, capsys):
    bench = make_bench(tmp_path, "multi", MULTI.replace("TIMEOUT", "120"))
    results = tmp_path / "results"
    started = time.monotonic()
    code = run_main(bench, results, "--runs", "2", env={"FAKE_MODE": "kill", "FAKE_LOG": str(tmp_path / "log")})
    assert code == 1
    assert time.monotonic() - started < 60  # the dead peer ended the run, not the time limit
    err = capsys.readouterr().err
    assert "process 1 died of signal SIGKILL" in err and "run 1 of 2 processes failed" in err
    assert_nothing_left(tmp_path, results, "multi")


class LimitClock:
    """The runner's ``time`` for one test: real time until ``ready()``, then the real time plus
    ``limit`` (the figure's time limit), so that a deadline the runner set ``limit`` seconds after
    any moment before that has passed at once, and one set any later has not."""

    def __init__(self, ready, limit: float):
        self.ready, self.limit, self.jumped = ready, limit, False

    def monotonic(self) -> float:
        self.jumped = self.jumped or self.ready()
        return time.monotonic() + (self.limit if self.jumped else 0.0)

    def __getattr__(self, name):
        return getattr(time, name)


def both_measuring(tmp_path) -> bool:
    """Both workers have written their log: process 1 hangs next, process 0 waits in the barrier."""
    logs = list(tmp_path.glob("log.*"))
    return len(logs) == 2 and all(len(log.read_text().split()) == 2 for log in logs)


@pytest.mark.slow
def test_a_hung_worker_is_killed_at_the_figure_time_limit(tmp_path, capsys, monkeypatch):
    """Process 1 hangs in measure while process 0 waits for it in the barrier, holding the
    coordinator's port: once the figure's limit is over, the runner kills both, fails the run and
    leaves nothing. The limit passes on the runner's clock (LimitClock) as soon as both workers
    are measuring, instead of waiting it out: a limit long enough for two jax start-ups on a loaded
    2-core machine used to be most of this test's time, idle. A runner that timed the limit on
    another clock, or from a later moment, waits it out in real time (past 60 s: fails)."""
    bench = make_bench(tmp_path, "multi", MULTI.replace("TIMEOUT", "120"))
    results = tmp_path / "results"
    monkeypatch.setattr(runner, "time", LimitClock(lambda: both_measuring(tmp_path), 120))
    started = time.monotonic()
    code = run_main(bench, results, "--runs", "1", env={"FAKE_MODE": "hang", "FAKE_LOG": str(tmp_path / "log")})
    assert code == 1 and time.monotonic() - started < 60
    assert "still running when the run ended; limit 120 s" in capsys.readouterr().err
    assert both_measuring(tmp_path)
    assert_nothing_left(tmp_path, results, "multi")


@pytest.mark.slow
def test_a_figure_this_machine_cannot_run_is_skipped_not_failed(tmp_path, capsys):
    bench = make_bench(tmp_path, "needs_more", SINGLE_NEEDS_MORE)
    results = tmp_path / "results"
    assert run_main(bench, results, "--runs", "3") == 0
    out = capsys.readouterr()
    assert "needs 4096 devices" in out.err and "skipped: needs_more" in out.out
    assert "round 2/3" not in out.out  # one refusal is enough: no more runs of it
    assert not (results / MACHINE).exists()


def test_figure_settings_reads_only_the_runtime_keys(tmp_path):
    script = tmp_path / "s.py"
    script.write_text('FIGURE = {"title": "t", "processes": 2, "cpu_devices": 4, "min_devices": 8, "timeout_s": 9}\n')
    assert runner.figure_settings(script) == {"processes": 2, "cpu_devices": 4, "min_devices": 8, "timeout_s": 9}
    script.write_text("FIGURE = {'title': 't'}\n")
    assert runner.figure_settings(script) == {}
    script.write_text("FIGURE = dict(processes=2)\n")  # not a literal: the worker reports it
    assert runner.figure_settings(script) == {}


def test_free_port_is_free():
    assert port_free(runner.free_port())


@pytest.mark.parametrize("stem", ["shard_block", "process_clocks", "collective_cost", "overlap_comm_compute"])
def test_the_chapter_multi_process_figures_declare_two_processes(stem):
    settings = runner.figure_settings(BENCH / f"{stem}.py")
    assert settings["processes"] == 2 and settings["timeout_s"] < runner.RUN_TIMEOUT_S


@pytest.mark.slow
def test_an_interrupted_multi_process_run_leaves_no_worker(tmp_path):
    """SIGTERM (as from `kill` or a CI timeout) while both workers run: the runner kills and reaps
    both, exits 130, and publishes nothing."""
    import signal
    import subprocess
    import sys

    bench = make_bench(tmp_path, "multi", MULTI.replace("TIMEOUT", "120"))
    results = tmp_path / "results"
    code = (f"import sys; from pathlib import Path; from benchkit import runner; "
            f"sys.exit(runner.main(['--results', {str(results)!r}, '--smoke', '--runs', '1'], "
            f"bench_dir=Path({str(bench)!r})))")
    env = dict(os.environ, FAKE_MODE="hang", FAKE_LOG=str(tmp_path / "log"), MACHINE=MACHINE)
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("log.*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert_nothing_left(tmp_path, results, "multi")


@pytest.mark.slow
def test_a_multi_process_figure_that_needs_more_devices_is_skipped(tmp_path, capsys):
    text = MULTI.replace("TIMEOUT", "120").replace('"cpu_devices": 1,', '"cpu_devices": 1, "min_devices": 64,')
    bench = make_bench(tmp_path, "multi", text)
    results = tmp_path / "results"
    assert run_main(bench, results, "--runs", "2") == 0
    out = capsys.readouterr()
    assert "needs 64 devices across its processes; this machine has 2" in out.err
    assert "skipped: multi" in out.out and not (results / MACHINE).exists()
