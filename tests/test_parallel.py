"""Warming the build cache in worker processes (benchsite/build/parallel.py), with jobs whose effects
are files the test can count: each job runs once, a failed or killed job is left to the build,
a job that ran to the end is not run again, and nothing a worker says reaches the build's log.

The test process has imported JAX (other tests do), and ``warm`` refuses to fork a process that
runs JAX's threads; so each case runs in a fresh interpreter (``spawn``), as a build does."""

import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from benchsite.build import parallel


def clean(case, tmp_path: Path, jobs: str = "2") -> None:
    """Run ``case(tmp_path)`` in a fresh interpreter with its own cache; its assertions fail this test."""
    proc = multiprocessing.get_context("spawn").Process(target=_child, args=(case, str(tmp_path), jobs))
    proc.start()
    proc.join(120)
    assert proc.exitcode == 0, (tmp_path / "failure.txt").read_text() if (tmp_path / "failure.txt").exists() \
        else f"exit code {proc.exitcode}"


def _child(case, tmp: str, jobs: str) -> None:
    import traceback

    os.environ.update(BENCH_CACHE=str(Path(tmp) / "cache"), BENCH_JOBS=jobs)
    try:
        case(Path(tmp))
    except BaseException:
        (Path(tmp) / "failure.txt").write_text(traceback.format_exc())
        raise


def mark(folder: Path, name: str) -> None:
    """A job's visible effect: one line per run, with the process that ran it."""
    with open(folder / name, "a") as fh:
        fh.write(f"{os.getpid()}\n")


def fail() -> None:
    raise ValueError("this job's data is bad")


def die() -> None:
    os._exit(3)  # a worker killed mid-job (out of memory, say)


def warn() -> None:
    logging.getLogger("mkdocs.plugins.bench").warning("WORKER-WARNING")


def each_job_once(tmp: Path) -> None:
    jobs = [parallel.Job(partial(mark, tmp, f"job-{i}")) for i in range(12)]
    assert parallel.warm(jobs) == 12
    runs = {p.name: p.read_text().split() for p in tmp.glob("job-*")}
    assert sorted(runs) == sorted(f"job-{i}" for i in range(12))
    assert all(len(pids) == 1 for pids in runs.values())
    assert str(os.getpid()) not in {pid for pids in runs.values() for pid in pids}


def test_each_job_runs_once_in_a_worker_process(tmp_path):
    clean(each_job_once, tmp_path)


def time_by_kind(tmp: Path) -> None:
    jobs = [parallel.Job(partial(mark, tmp, f"a{i}"), kind="a") for i in range(3)]
    jobs += [parallel.Job(partial(mark, tmp, "b"), kind="b"), parallel.Job(fail, kind="c")]
    spent: dict[str, list[float]] = {}
    assert parallel.warm(jobs, spent) == 5
    assert sorted(spent) == ["a", "b"] and len(spent["a"]) == 3 and len(spent["b"]) == 1  # a failed job: none
    assert all(isinstance(s, float) and s >= 0 for seconds in spent.values() for s in seconds)


def test_the_seconds_of_each_finished_job_are_reported_by_its_kind(tmp_path):
    clean(time_by_kind, tmp_path)


def slow_mark(folder: Path, name: str) -> None:
    mark(folder, name)
    time.sleep(0.02)  # long enough that the other worker takes the next job handed out


def grouped_in_one_worker(tmp: Path) -> None:
    jobs = [parallel.Job(partial(slow_mark, tmp, f"g{g}-{i}"), kind="page", group=f"g{g}")
            for g in range(4) for i in range(4)]
    jobs += [parallel.Job(partial(slow_mark, tmp, f"alone-{i}"), kind="other") for i in range(4)]
    spent: dict[str, list[float]] = {}
    assert parallel.warm(jobs, spent) == 20
    assert len(spent["page"]) == 16 and len(spent["other"]) == 4  # each job's seconds, as before
    for g in range(4):
        pids = {p.read_text() for p in tmp.glob(f"g{g}-*")}
        assert len(pids) == 1, f"group g{g} ran in {len(pids)} workers"
        stamps = [(tmp / f"g{g}-{i}").stat().st_mtime_ns for i in range(4)]
        assert stamps == sorted(stamps)  # one after another, in order


def test_a_group_of_jobs_runs_in_one_worker_in_order(tmp_path):
    clean(grouped_in_one_worker, tmp_path)


def freeze_count(folder: Path) -> None:
    import gc

    (folder / f"frozen-{os.getpid()}").write_text(str(gc.get_freeze_count()))


def inherited_left_alone(tmp: Path) -> None:
    import gc

    inherited = [{"made": i} for i in range(5000)]  # tracked by the collector, made before the fork
    before = gc.get_freeze_count()
    assert parallel.warm([parallel.Job(partial(freeze_count, tmp)) for _ in range(4)]) == 4
    counts = [int(p.read_text()) for p in tmp.glob("frozen-*")]
    assert counts and all(c >= before + len(inherited) for c in counts), counts  # its collector skips them
    assert gc.get_freeze_count() == before  # the build's own process is left as it was


def test_a_workers_collector_leaves_what_it_inherited_alone(tmp_path):
    clean(inherited_left_alone, tmp_path)


def nothing_with_one_worker(tmp: Path) -> None:
    assert parallel.warm([parallel.Job(partial(mark, tmp, "a")), parallel.Job(partial(mark, tmp, "b"))]) == 0
    assert not list(tmp.glob("[ab]"))


def test_one_worker_means_no_warming(tmp_path):
    clean(nothing_with_one_worker, tmp_path, jobs="1")


def test_a_bad_jobs_setting_is_named(monkeypatch):
    monkeypatch.setenv("BENCH_JOBS", "many")
    with pytest.raises(SystemExit, match="BENCH_JOBS='many'"):
        parallel.workers()


def nothing_while_threads_run(tmp: Path) -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert parallel.warm([parallel.Job(partial(mark, tmp, f"t{i}")) for i in range(3)]) == 0
    finally:
        stop.set()
        thread.join()
    assert not list(tmp.glob("t*"))


def test_threads_running_mean_no_warming(tmp_path):
    """mkdocs serve runs a server thread; forking then could copy a held lock into a worker."""
    clean(nothing_while_threads_run, tmp_path)


def test_a_process_running_jax_is_not_forked(tmp_path, monkeypatch):
    """This very process: JAX was imported by other tests (or is stood in for here)."""
    monkeypatch.setitem(sys.modules, "jax", sys.modules.get("jax", object()))
    monkeypatch.setenv("BENCH_JOBS", "2")
    assert parallel.warm([parallel.Job(partial(mark, tmp_path, f"j{i}")) for i in range(3)]) == 0
    assert not list(tmp_path.glob("j*"))


def skip_what_finished(tmp: Path) -> None:
    done = parallel.Job(partial(mark, tmp, "done"), key=parallel.key("done", 1))
    bad = parallel.Job(fail, key=parallel.key("bad", 1))
    assert parallel.warm([done, bad]) == 2
    assert done.done_file.is_file() and not bad.done_file.exists()
    assert parallel.warm([done, bad]) == 0  # only the failed one is left: not worth a pool
    assert (tmp / "done").read_text().count("\n") == 1
    changed = parallel.Job(partial(mark, tmp, "done"), key=parallel.key("done", 2))  # its input changed
    assert parallel.warm([changed, bad]) == 2
    assert (tmp / "done").read_text().count("\n") == 2


def test_a_finished_keyed_job_is_skipped_next_time_and_a_failed_one_is_not(tmp_path):
    clean(skip_what_finished, tmp_path)


def survive_a_dead_worker(tmp: Path) -> None:
    parallel.warm([parallel.Job(die)] + [parallel.Job(partial(mark, tmp, f"after-{i}")) for i in range(4)])
    assert parallel.warm([parallel.Job(partial(mark, tmp, f"again-{i}")) for i in range(2)]) == 2
    assert len(list(tmp.glob("again-*"))) == 2


def test_a_worker_that_dies_leaves_the_rest_to_the_build(tmp_path):
    clean(survive_a_dead_worker, tmp_path)


def workers_say_nothing(tmp: Path) -> None:
    log = tmp / "stderr.txt"
    with open(log, "w") as fh:
        os.dup2(fh.fileno(), 2)  # this process's stderr, which the workers inherit
    handler = logging.StreamHandler(sys.stderr)  # as mkdocs sets up its log: the workers inherit it
    logging.getLogger("mkdocs").addHandler(handler)
    assert parallel.warm([parallel.Job(warn), parallel.Job(warn)]) == 2
    warn()  # the same warning from the build itself does show
    handler.flush()
    assert log.read_text().count("WORKER-WARNING") == 1, log.read_text()


def test_what_a_worker_logs_never_reaches_the_build(tmp_path):
    """A strict build counts warnings; the build itself raises the one this job would have."""
    clean(workers_say_nothing, tmp_path)


def sleep_in_a_worker(folder: Path) -> None:
    mark(folder, f"worker-{os.getpid()}")
    time.sleep(300)


def warm_two_sleepers(tmp: Path) -> None:
    parallel.warm([parallel.Job(partial(sleep_in_a_worker, tmp)) for _ in range(2)])


def _alive(pid: int) -> bool:
    """Running, and not a zombie waiting to be reaped by whoever adopted it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a parent's death is signalled to a child on Linux")
def test_a_build_killed_mid_warming_takes_its_workers_with_it(tmp_path):
    """A build killed outright (SIGKILL: a time limit, an out-of-memory kill) leaves no worker
    behind: each asked Linux to be killed with it (parallel._die_with)."""
    build = multiprocessing.get_context("spawn").Process(target=_child, args=(warm_two_sleepers, str(tmp_path), "2"))
    build.start()
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("worker-*"))) < 2 and time.monotonic() < deadline and build.is_alive():
        time.sleep(0.1)
    workers = [int(p.name.split("-")[1]) for p in tmp_path.glob("worker-*")]
    assert len(workers) == 2, (tmp_path / "failure.txt").read_text() if (tmp_path / "failure.txt").exists() else workers
    try:
        assert all(_alive(pid) for pid in workers)
        os.kill(build.pid, signal.SIGKILL)
        build.join(30)
        deadline = time.monotonic() + 60
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [pid for pid in workers if _alive(pid)] == []
    finally:
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
