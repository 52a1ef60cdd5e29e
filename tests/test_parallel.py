"""Warming the build cache in worker processes (benchsite/parallel.py), with jobs whose effects
are files the test can count: each job runs once, a failed or killed job is left to the build,
a job that ran to the end is not run again, and nothing a worker says reaches the build's log."""

import logging
import os
import threading
from functools import partial
from pathlib import Path

import pytest

from benchsite import parallel


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("BENCH_JOBS", "2")
    return tmp_path / "cache"


def mark(folder: Path, name: str) -> None:
    """A job's visible effect: one line per run, with the process that ran it."""
    with open(folder / name, "a") as fh:
        fh.write(f"{os.getpid()}\n")


def fail() -> None:
    raise ValueError("this job's data is bad")


def die() -> None:
    os._exit(3)  # a worker killed mid-job (out of memory, say)


def test_each_job_runs_once_in_a_worker_process(tmp_path):
    jobs = [parallel.Job(partial(mark, tmp_path, f"job-{i}")) for i in range(12)]
    assert parallel.warm(jobs) == 12
    runs = {p.name: p.read_text().split() for p in tmp_path.glob("job-*")}
    assert sorted(runs) == sorted(f"job-{i}" for i in range(12))
    assert all(len(pids) == 1 for pids in runs.values())
    assert str(os.getpid()) not in {pid for pids in runs.values() for pid in pids}


def test_one_worker_means_no_warming(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_JOBS", "1")
    assert parallel.warm([parallel.Job(partial(mark, tmp_path, "a")), parallel.Job(partial(mark, tmp_path, "b"))]) == 0
    assert not list(tmp_path.glob("[ab]"))


def test_a_bad_jobs_setting_is_named(monkeypatch):
    monkeypatch.setenv("BENCH_JOBS", "many")
    with pytest.raises(SystemExit, match="BENCH_JOBS='many'"):
        parallel.workers()


def test_threads_running_mean_no_warming(tmp_path):
    """mkdocs serve runs a server thread; forking then could copy a held lock into a worker."""
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert parallel.warm([parallel.Job(partial(mark, tmp_path, f"t{i}")) for i in range(3)]) == 0
    finally:
        stop.set()
        thread.join()
    assert not list(tmp_path.glob("t*"))


def test_a_finished_keyed_job_is_skipped_next_time_and_a_failed_one_is_not(tmp_path, cache):
    done = parallel.Job(partial(mark, tmp_path, "done"), key=parallel.key("done", 1))
    bad = parallel.Job(fail, key=parallel.key("bad", 1))
    assert parallel.warm([done, bad]) == 2
    assert done.done_file.is_file() and not bad.done_file.exists()
    assert parallel.warm([done, bad]) == 0  # only the failed one is left: not worth a pool
    assert (tmp_path / "done").read_text().count("\n") == 1
    changed = parallel.Job(partial(mark, tmp_path, "done"), key=parallel.key("done", 2))  # its input changed
    assert parallel.warm([changed, bad]) == 2
    assert (tmp_path / "done").read_text().count("\n") == 2


def test_a_worker_that_dies_leaves_the_rest_to_the_build(tmp_path):
    jobs = [parallel.Job(die)] + [parallel.Job(partial(mark, tmp_path, f"after-{i}")) for i in range(4)]
    parallel.warm(jobs)  # returns: no exception, no hang
    assert parallel.warm([parallel.Job(partial(mark, tmp_path, f"again-{i}")) for i in range(2)]) == 2
    assert len(list(tmp_path.glob("again-*"))) == 2


def warn() -> None:
    logging.getLogger("mkdocs.plugins.bench").warning("WORKER-WARNING")


def test_what_a_worker_logs_never_reaches_the_build(capfd):
    """A strict build counts warnings; the build itself raises the one this job would have."""
    handler = logging.StreamHandler()  # as mkdocs sets up its log: the workers inherit it
    logging.getLogger("mkdocs").addHandler(handler)
    try:
        parallel.warm([parallel.Job(warn), parallel.Job(warn)])
        warn()  # the same warning from the build itself does show
    finally:
        logging.getLogger("mkdocs").removeHandler(handler)
    out, err = capfd.readouterr()
    assert (out + err).count("WORKER-WARNING") == 1
