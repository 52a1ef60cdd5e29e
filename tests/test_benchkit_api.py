"""benchkit as a library: Bench, the report, and `python -m benchkit compare`.

Timing is controlled with fakes (a clock the timed functions advance) where a test checks
numbers; the end-to-end tests run real worker processes on tiny inputs and check only what
was written and said, never how long anything took.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchkit import Bench, BenchError, Report, verdicts
from benchkit.bench import _Cell, measure_cells
from benchkit.results import read_rows
from benchsite.model.load import ResultFile, load

PY = sys.executable


# --- the report, from rows whose numbers the test chose ------------------------------------

def rows(times: dict[str, list[float]], compiles: int = 0) -> list[dict[str, str]]:
    """One sample per run and variant: ``times[variant][run]`` seconds."""
    base = {"machine": "cpu-test", "session_id": "s", "git_commit": "abc", "git_dirty": "False", "jax_version": "0",
            "jaxlib_version": "0", "numpy_version": "0", "python_version": "3", "platform": "cpu", "device_kind": "cpu",
            "cpu_model": "test", "script_path": "x.py", "harness_sha256": "h", "figure_id": "fig-x"}
    return [{**base, "variant": v, "boundary": "completed", "run": str(r), "time_s": repr(t), "compiles": str(compiles)}
            for r in range(len(next(iter(times.values())))) for v, ts in times.items() for t in [ts[r]]]


def test_a_consistent_two_fold_difference_is_a_result_and_not_the_same():
    a = [1.00e-3, 1.02e-3, 0.99e-3, 1.01e-3, 1.00e-3, 1.03e-3]
    b = [2 * t * (1 + 0.01 * (i % 2)) for i, t in enumerate(a)]
    report = Report.from_rows(rows({"a": a, "b": b}), Path("r/cpu-test/x.csv"))
    (c,) = report.comparisons
    assert c.variant == "b" and c.baseline == "a"
    assert 1.99 < c.ratio < 2.03
    assert c.verdict.is_result and not c.same.is_same
    assert "`b` slower than `a`: a result" in c.direction()
    text = report.markdown()
    assert "| `b` / `a` | 2.0" in text and "could not show the same within ±10 %" in text
    assert "cpu-test" in text and "r/cpu-test/x.csv" in text


def test_an_a_a_pair_is_not_a_result_and_is_the_same_within_the_margin():
    a = [1.00e-3, 1.02e-3, 0.99e-3, 1.01e-3, 1.00e-3, 1.03e-3]
    b = [t * f for t, f in zip(a, (1.01, 0.99, 1.00, 1.02, 0.98, 1.00))]
    (c,) = Report.from_rows(rows({"a": a, "b": b}), Path("x.csv"), margin=0.10).comparisons
    assert not c.verdict.is_result and c.same.is_same
    assert c.direction().startswith(verdicts.NOT_YET)


def test_too_few_runs_say_so_rather_than_no_difference():
    (c,) = Report.from_rows(rows({"a": [1.0, 1.0, 1.0], "b": [2.0, 2.0, 2.0]}), Path("x.csv")).comparisons
    assert not c.verdict.is_result and "3 paired runs; the rule needs at least 5" in c.direction()


def test_the_report_counts_compiles_inside_timed_windows_and_takes_the_baseline_asked_for():
    report = Report.from_rows(rows({"new": [2.0] * 5, "old": [1.0] * 5}, compiles=1), Path("x.csv"), baseline="old")
    assert [line.compiles for line in report.lines] == [5, 5]
    assert report.comparisons[0].variant == "new" and report.comparisons[0].ratio == 2.0


def test_the_report_lists_functions_in_the_order_added_whatever_order_they_ran():
    measured = rows({"fast": [1.0] * 5, "slow": [3.0] * 5})  # rows in measuring order: fast first
    report = Report.from_rows(measured, Path("x.csv"), order=["slow", "fast"], baseline="slow")
    assert [line.variant for line in report.lines] == ["slow", "fast"]
    assert (report.comparisons[0].variant, report.comparisons[0].baseline) == ("fast", "slow")


def test_the_report_refuses_a_margin_outside_zero_and_one():
    with pytest.raises(ValueError, match="margin"):
        Report.from_rows(rows({"a": [1.0] * 5}), Path("x.csv"), margin=5)


# --- a worker's measuring, with a clock the functions advance ---------------------------------

@pytest.fixture(autouse=True)
def jax_cache_setting_restored():
    """measure_cells switches this process's persistent compilation cache off, as a worker does;
    the tests that run it in-process put the setting back for the tests after them."""
    import jax

    before = jax.config.jax_enable_compilation_cache
    yield
    jax.config.update("jax_enable_compilation_cache", before)

def test_measure_cells_times_what_the_fake_clock_says(tmp_path):
    now = [0.0]

    def clock() -> float:
        return now[0]

    def costs(seconds: float):
        def fn(x):
            now[0] += seconds
            return x
        return fn

    script = tmp_path / "mine.py"
    script.write_text("# the script a Bench runs\n")
    opts = argparse.Namespace(repo=None, session="s-1", seed=3, run_index=0)
    cells = [_Cell("a", costs(1e-3), (1.0,), "completed"), _Cell("b", costs(2e-3), (1.0,), "completed")]
    got = measure_cells(cells, script, "mine", opts, clock=clock, block=lambda out: out)
    for variant, cost in (("a", 1e-3), ("b", 2e-3)):
        times = [float(r["time_s"]) for r in got if r["variant"] == variant]
        assert len(times) >= 5 and times == pytest.approx([cost] * len(times))
    assert {r["figure_id"] for r in got} == {"fig-mine"} and {r["boundary"] for r in got} == {"completed"}
    assert [r["seq"] for r in got] == list(range(len(got)))  # interleaved, in the order taken


def test_a_check_that_fails_stops_the_worker_before_timing(tmp_path):
    script = tmp_path / "mine.py"
    script.write_text("\n")
    opts = argparse.Namespace(repo=None, session="s", seed=0, run_index=0)
    cell = _Cell("a", lambda x: x + 1, (1.0,), "completed", check=5.0)
    with pytest.raises(BenchError, match="differs from the NumPy reference"):
        measure_cells([cell], script, "mine", opts, clock=lambda: 0.0, block=lambda out: out)


def test_bench_refuses_bad_names_labels_and_boundaries():
    with pytest.raises(BenchError, match="names the results file"):
        Bench("Has-Caps", argv=[])
    bench = Bench("ok", argv=[])
    bench.time("a", abs, 1.0)
    with pytest.raises(BenchError, match="used twice"):
        bench.time("a", abs, 1.0)
    with pytest.raises(BenchError, match="boundary"):
        bench.time("b", abs, 1.0, boundary="first-call")
    with pytest.raises(BenchError, match="nothing to time"):
        Bench("empty", argv=[]).run()


def test_bench_refuses_zero_runs_a_bad_margin_and_bad_sample_counts_before_running():
    with pytest.raises(BenchError, match="runs must be at least 1, not 0"):
        Bench("ok", argv=["--runs", "0"])
    with pytest.raises(BenchError, match="margin"):
        Bench("ok", margin=10, argv=[])
    with pytest.raises(BenchError, match="min_samples"):
        Bench("ok", min_samples=0, argv=[])


@pytest.mark.slow
def test_an_uncaught_mistake_ends_the_script_with_its_message_and_no_traceback(tmp_path):
    (tmp_path / "bad.py").write_text("from benchkit import Bench\nBench('Bad-Name')\n")
    done = run([PY, "bad.py"], tmp_path)
    assert done.returncode == 1 and done.stderr.startswith("benchkit: Bench name 'Bad-Name'")
    assert "Traceback" not in done.stderr and not (tmp_path / "results").exists()


def test_the_block_says_when_the_work_tree_had_uncommitted_changes():
    dirty = [{**row, "git_dirty": "true"} for row in rows({"a": [1.0] * 5})]
    assert "with uncommitted changes" in Report.from_rows(dirty, Path("x.csv")).markdown()
    assert "with uncommitted changes" not in Report.from_rows(rows({"a": [1.0] * 5}), Path("x.csv")).markdown()


def test_an_equivalence_too_few_runs_cannot_decide_says_why():
    text = Report.from_rows(rows({"a": [1.0, 1.0], "b": [1.0, 1.0]}), Path("x.csv")).markdown()
    assert "could not show the same within ±10 % (2 runs: too few" in text


def test_benchs_own_options_come_from_the_command_line_and_leave_the_scripts():
    bench = Bench("ok", runs=6, argv=["--runs", "2", "--mine", "7", "--results", "/tmp/r"])
    assert bench.runs == 2 and bench.results == Path("/tmp/r") and bench.script_args == ["--mine", "7"]


# --- end to end: real worker processes, tiny inputs -------------------------------------------

def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_the_five_line_example_writes_a_results_file_the_site_reads(tmp_path):
    (tmp_path / "five.py").write_text(textwrap.dedent("""\
        import jax, jax.numpy as jnp
        from benchkit import Bench
        bench = Bench("tanh_sum")
        bench.time("tanh", jax.jit(lambda x: jnp.tanh(x).sum()), jnp.ones(1000))
        bench.time("cheap", jax.jit(lambda x: x[0]), jnp.ones(1000))
        bench.first_call("fresh", lambda: (lambda x: jnp.tanh(x) * 2), jnp.ones(1000), samples=2)
        bench.run()
        """))
    done = run([PY, "five.py", "--runs", "2", "--results", "out"], tmp_path)
    assert done.returncode == 0, done.stderr
    (csv,) = (tmp_path / "out").glob("*/tanh_sum.csv")
    frame = load(ResultFile(csv.parent.name, "tanh_sum", csv))
    stages = {f"fresh:{s}" for s in ("trace", "lower", "compile", "first-execute")}
    assert set(frame["variant"]) == {"tanh", "cheap", "fresh"} | stages and set(frame["run"]) == {0, 1}
    assert "| `cheap` / `tanh` |" in done.stdout  # the first added is the baseline, whichever ran first
    first = frame[frame["variant"] == "fresh"]
    assert len(first) == 4 and (first["compiles"] >= 1).all()  # 2 a run, each one a fresh compile
    assert (frame[frame["variant"] == "tanh"]["compiles"] == 0).all()
    assert "#### benchkit: `tanh_sum`" in done.stdout and "| `tanh` |" in done.stdout
    assert "run 2 of 2" in done.stderr  # progress while it runs
    assert "fork" not in done.stderr  # no Python runs in a forked copy of a process with jax's threads
    assert not csv.with_name("tanh_sum.compare.json").exists() and "no side file" in done.stderr  # first calls


@pytest.mark.slow
def test_a_bench_at_one_boundary_writes_the_side_file_a_site_reads(tmp_path):
    from benchsite.model import comparisons

    (tmp_path / "two.py").write_text(textwrap.dedent("""\
        import jax, jax.numpy as jnp
        from benchkit import Bench
        bench = Bench("two_sums", min_samples=3)
        bench.time("sum", jax.jit(jnp.sum), jnp.ones(1000))
        bench.time("mean", jax.jit(jnp.mean), jnp.ones(1000))
        bench.run()
        """))
    done = run([PY, "two.py", "--runs", "1", "--results", "out"], tmp_path)
    assert done.returncode == 0, done.stderr
    (side,) = (tmp_path / "out").glob("*/two_sums.compare.json")
    record = json.loads(side.read_text())
    assert record["made_by"] == "benchkit Bench" and record["ratio"] == ["mean", "sum"]
    assert [v["target"] for v in record["versions"]] == ["two.py:sum", "two.py:mean"]
    fig = comparisons.read(side, "two_sums")
    assert fig.variants == ("sum", "mean") and fig.ratio == ("mean", "sum") and "`benchkit Bench`" in fig.caption


OPS = textwrap.dedent("""\
    import jax.numpy as jnp

    def once(x):
        return jnp.sin(x)

    def twice(x):
        return jnp.sin(jnp.sin(x))

    def other(x):
        return jnp.cos(x)

    def bad_shape(x):
        return jnp.dot(x, jnp.ones(3))

    def fails(x):
        raise ValueError("this version is broken")
    """)


@pytest.fixture
def ops(tmp_path) -> Path:
    (tmp_path / "ops.py").write_text(OPS)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "ops", "--allow-empty"],
                   cwd=tmp_path, check=True)
    return tmp_path


def compare(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return run([PY, "-m", "benchkit", "compare", *args, "--args", "jnp.ones(1000)", "--results", "out"], cwd)


@pytest.mark.slow
def test_compare_prints_a_verdict_block_and_writes_the_csv_and_its_record(ops):
    done = compare(ops, "ops.py:once", "ops.py:twice", "--runs", "2", "--no-check", "--names", "old,new")
    assert done.returncode == 0, done.stderr
    assert "| `new` / `old` |" in done.stdout and "paired verdict" in done.stdout
    (csv,) = (ops / "out").glob("*/compare_once_twice.csv")
    frame = load(ResultFile(csv.parent.name, csv.stem, csv))
    assert set(frame["variant"]) == {"old", "new"} and set(frame["figure_id"]) == {"fig-compare-once-twice"}
    record = json.loads(csv.with_name("compare_once_twice.compare.json").read_text())
    assert record["format"] == 1 and record["ratio"] == ["new", "old"] and record["boundary"] == "completed"
    assert [v["variant"] for v in record["versions"]] == ["old", "new"]
    assert "def twice" in record["versions"][1]["source"] and record["command"].startswith("python -m benchkit compare")
    assert set(read_rows(csv)[0]) >= {"run_wall_s", "other_load"}


@pytest.mark.slow
def test_compare_takes_a_version_from_a_git_revision(ops):
    subprocess.run(["git", "add", "ops.py"], cwd=ops, check=True)
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "add"], cwd=ops, check=True)
    (ops / "ops.py").write_text(OPS.replace("jnp.sin(jnp.sin(x))", "jnp.sin(x)"))  # twice, now once
    done = compare(ops, "HEAD:ops.py:twice", "ops.py:twice", "--runs", "1", "--no-check")  # values differ now
    assert done.returncode == 0, done.stderr
    (side,) = (ops / "out").glob("*/compare_twice.compare.json")
    old, new = json.loads(side.read_text())["versions"]
    assert old["revision"] == "HEAD" and "jnp.sin(jnp.sin(x))" in old["source"]
    assert new["revision"] == "" and "jnp.sin(jnp.sin(x))" not in new["source"]


@pytest.mark.slow
@pytest.mark.parametrize("new, said", [
    ("ops.py:other", "`b` returns different values from `a`"),
    ("ops.py:bad_shape", "`b` fails for these arguments (while being traced): TypeError"),
    ("ops.py:fails", "`b` fails for these arguments (while being traced): ValueError: this version is broken"),
    ("ops.py:missing", "the file defines no missing (it defines: once, twice, other, bad_shape, fails)"),
    ("nosuch.py:once", "no such file nosuch.py"),
])
def test_compare_refuses_with_a_message_and_writes_nothing(ops, new, said):
    done = compare(ops, "ops.py:once", new, "--runs", "2")
    assert done.returncode == 2
    assert said in done.stderr and "Traceback" not in done.stderr
    assert not list((ops / "out").glob("*/*")) if (ops / "out").exists() else True


@pytest.mark.slow
def test_compare_keeps_the_session_it_replaces_and_refuses_a_figure_scripts_name(ops):
    (ops / "bench_scripts").mkdir()
    (ops / "bench_scripts" / "taken.py").write_text("FIGURE = {}\n")
    (ops / "results").mkdir()
    refused = run([PY, "-m", "benchkit", "compare", "ops.py:once", "ops.py:once", "--name", "taken",
                   "--results", "results"], ops)
    assert refused.returncode == 2 and "is a figure script" in refused.stderr
    for _ in range(2):
        done = compare(ops, "ops.py:once", "ops.py:once", "--runs", "1", "--name", "again")
        assert done.returncode == 0, done.stderr
    kept = sorted(p.name for p in (ops / "out").glob("*/sessions/*/again*.csv.gz"))
    assert kept == ["again.csv.gz", "again.runs.csv.gz"] and "kept the previous session" in done.stderr
