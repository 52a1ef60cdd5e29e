"""Provenance fields are present, scalar, and name hardware rather than hosts."""

import os
import socket
import subprocess

import pytest

from benchkit import provenance
from benchkit.schema import PROVENANCE_COLUMNS

REPO_FIELDS = {"figure_id", "script_path", "script_sha256"}


@pytest.fixture(scope="module")
def fields():
    from conftest import REPO

    return provenance.collect_all(REPO / "bench_scripts" / "dispatch_vs_completion.py", REPO)


# Filled once the measuring is over: by the worker (what else ran meanwhile) and the runner.
AFTER_MEASURING = {"load_avg_1m_end", "other_load", "run_wall_s"}


def test_every_provenance_column_is_collected(fields):
    assert set(PROVENANCE_COLUMNS) == set(fields) | AFTER_MEASURING
    assert not AFTER_MEASURING & set(fields)


def test_the_load_meter_counts_other_processes_cpu_time_not_its_own():
    tick = os.sysconf("SC_CLK_TCK")
    stats = iter([f"cpu  {10 * tick} 0 {5 * tick} 900 7 0 0 0 0 0\n",  # 15 s busy
                  f"cpu  {14 * tick} 0 {6 * tick} 990 7 0 0 0 0 0\n"])  # 20 s busy: 5 s more
    clocks, own = iter([100.0, 102.0]), iter([1.0, 2.0])  # 2 s of wall, 1 s of it this process's
    meter = provenance.LoadMeter(read_stat=lambda: next(stats), clock=lambda: next(clocks),
                                 own_cpu=lambda: next(own)).start()
    assert meter.stop()["other_load"] == 2.0  # (5 s - 1 s own) over 2 s: two other CPUs busy


def test_the_load_meter_leaves_the_column_empty_without_proc_stat():
    meter = provenance.LoadMeter(read_stat=lambda: None).start()
    assert meter.stop()["other_load"] == ""


def test_every_field_is_a_flat_scalar(fields):
    for key, value in fields.items():
        assert isinstance(value, (str, int, float, bool)), key


def test_script_fields_identify_the_script(fields):
    assert fields["figure_id"] == "fig-dispatch-vs-completion"
    assert fields["script_path"] == "bench_scripts/dispatch_vs_completion.py"
    assert len(fields["script_sha256"]) == 64


def test_versions_and_platform_are_filled(fields):
    for key in ("jax_version", "jaxlib_version", "numpy_version", "python_version", "platform",
                "device_kind", "timestamp_utc"):
        assert fields[key], key
    assert fields["device_count"] >= 1 and fields["cpu_count"] >= 1


def test_no_hostname_in_published_fields(fields):
    host = socket.gethostname().lower()
    assert all(host not in str(v).lower() for v in fields.values() if len(host) > 3)


@pytest.mark.parametrize("args, label", [
    (("cpu", "cpu", "AMD EPYC 7B13", 2), "cpu-amd-epyc-7b13-2c"),
    (("gpu", "NVIDIA H200", "Intel(R) Xeon(R)", 16), "gpu-nvidia-h200"),
    (("tpu", "TPU v5 lite", "x", 8), "tpu-tpu-v5-lite"),
])
def test_machine_label_is_derived_from_hardware(args, label):
    assert provenance.machine_label(*args) == label


def test_accelerator_label_counts_devices():
    assert provenance.machine_label("gpu", "NVIDIA H200", "x", 16, device_count=8) == "gpu-nvidia-h200-x8"
    assert provenance.machine_label("tpu", "TPU v5 lite", "x", 8, device_count=4) == "tpu-tpu-v5-lite-x4"


CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: {family}
model\t\t: {model}
model name\t: AMD EPYC
stepping\t: 1
cpu MHz\t\t: 2450.000
flags\t\t: fpu sse4_2 avx avx2 fma {extra}

processor\t: 1
vendor_id\t: SomethingElse
"""


def _label_from(tmp_path, **fmt):
    path = tmp_path / f"cpuinfo-{fmt['family']}-{fmt['model']}"
    path.write_text(CPUINFO.format(**fmt))
    cpu = provenance.collect_cpu(provenance.read_cpuinfo(path))
    return cpu, provenance.machine_label("cpu", "cpu", str(cpu["cpu_model"]), 2,
                                         cpu_vendor=str(cpu["cpu_vendor"]), cpu_family=str(cpu["cpu_family"]),
                                         cpu_model_number=str(cpu["cpu_model_number"]))


def test_same_model_name_different_family_gets_a_different_folder(tmp_path):
    old, old_label = _label_from(tmp_path, family=25, model=1, extra="")
    new, new_label = _label_from(tmp_path, family=26, model=2, extra="avx512f avx512_bf16")
    assert old_label == "cpu-amd-epyc-f25m1-2c" and new_label == "cpu-amd-epyc-f26m2-2c"
    assert old["cpu_vendor"] == "AuthenticAMD" and old["cpu_stepping"] == "1"  # first processor only
    assert old["cpu_flags_sha256"] != new["cpu_flags_sha256"]
    assert new["cpu_isa"] == "sse4_2 avx avx2 fma avx512f avx512_bf16" and old["cpu_mhz"] == "2450.000"


def test_a_processor_that_reports_nothing_keeps_the_short_label(tmp_path):
    cpu = provenance.collect_cpu(provenance.read_cpuinfo(tmp_path / "missing"))
    assert cpu["cpu_family"] == "unknown" and cpu["cpu_flags_sha256"] == "unknown"
    assert provenance.machine_label("cpu", "cpu", "Apple M3", 8, cpu_vendor="unknown") == "cpu-apple-m3-8c"


def test_jax_and_xla_variables_are_recorded_but_not_others():
    env = {"JAX_ENABLE_X64": "1", "XLA_PYTHON_CLIENT_PREALLOCATE": "false", "XLA_FLAGS": "--x", "HOME": "/h"}
    assert provenance.jax_env(env) == '{"JAX_ENABLE_X64":"1","XLA_PYTHON_CLIENT_PREALLOCATE":"false"}'
    assert provenance.jax_env({}) == ""


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


def test_git_dirty_ignores_what_a_session_writes_itself(tmp_path):
    repo = tmp_path / "repo"
    (repo / "results" / "m").mkdir(parents=True)
    (repo / "docs" / "lessons").mkdir(parents=True)
    (repo / "results" / "m" / "a.csv").write_text("old\n")
    (repo / "docs" / "lessons" / "l.ipynb").write_text("{}\n")
    (repo / "script.py").write_text("x = 1\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "c")
    (repo / "results" / "m" / "a.csv").write_text("new\n")  # what make bench rewrites
    (repo / "docs" / "lessons" / "l.ipynb").write_text('{"executed": 1}\n')
    assert provenance.collect_git(repo)["git_dirty"] is False
    (repo / "script.py").write_text("x = 2\n")  # the code that runs
    assert provenance.collect_git(repo)["git_dirty"] is True


def test_harness_hash_changes_with_any_harness_module_and_no_other_file(tmp_path):
    for name in provenance.HARNESS_MODULES:
        (tmp_path / f"{name}.py").write_text(f"NAME = {name!r}\n")
    (tmp_path / "report.py").write_text("R = 1\n")
    before = provenance.harness_sha256(tmp_path)
    (tmp_path / "report.py").write_text("R = 2\n")  # reads what was measured: not the harness
    assert provenance.harness_sha256(tmp_path) == before
    for name in provenance.HARNESS_MODULES:
        (tmp_path / f"{name}.py").write_text("changed = True\n")
        assert provenance.harness_sha256(tmp_path) != before, name
        before = provenance.harness_sha256(tmp_path)


def test_machine_override_wins_and_is_checked():
    assert provenance.machine_label("cpu", "cpu", "x", 2, override="my-laptop") == "my-laptop"
    with pytest.raises(ValueError, match="MACHINE"):
        provenance.machine_label("cpu", "cpu", "x", 2, override="../elsewhere")
