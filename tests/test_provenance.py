"""Provenance fields are present, scalar, and name hardware rather than hosts."""

import socket

import pytest

from harness import provenance
from harness.schema import PROVENANCE_COLUMNS

REPO_FIELDS = {"figure_id", "script_path", "script_sha256"}


@pytest.fixture(scope="module")
def fields():
    from conftest import REPO

    return provenance.collect_all(REPO / "bench_scripts" / "dispatch_vs_completion.py", REPO)


def test_every_provenance_column_is_collected(fields):
    assert set(PROVENANCE_COLUMNS) == set(fields)


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


def test_machine_override_wins_and_is_checked():
    assert provenance.machine_label("cpu", "cpu", "x", 2, override="my-laptop") == "my-laptop"
    with pytest.raises(ValueError, match="MACHINE"):
        provenance.machine_label("cpu", "cpu", "x", 2, override="../elsewhere")
