"""The results contract: schema doc, CSV round trip, atomic replacement."""

import functools
import os
import re

import pytest

from benchkit import provenance, results
from benchkit.schema import COLUMNS, SCHEMA_VERSION, format_params, parse_params
from benchsite.model.load import ResultFile, load


def test_readme_documents_exactly_the_schema_columns():
    from conftest import REPO

    text = (REPO / "results" / "README.md").read_text()
    documented = re.findall(r"^\| `([a-z0-9_]+)` \|", text, flags=re.M)
    assert documented == list(COLUMNS)
    assert f"schema version {SCHEMA_VERSION}" in text


@functools.cache
def _todays_harness() -> str:
    """provenance.harness_sha256() once a process: it reads and hashes the harness's modules, and
    make_row is called tens of thousands of times a run (no test edits the checkout's harness:
    tests/test_provenance.py digests a copy)."""
    return provenance.harness_sha256()


def make_row(**overrides):
    row = {
        "schema_version": SCHEMA_VERSION, "figure_id": "fig-demo", "script_path": "bench_scripts/demo.py",
        "script_sha256": "0" * 64, "git_commit": "abc", "git_dirty": False,
        "timestamp_utc": "2026-01-01T00:00:00Z", "machine": "cpu-test-2c", "platform": "cpu",
        "device_kind": "cpu", "device_count": 1, "platform_version": "cpu", "jax_version": "0.0",
        "jaxlib_version": "0.0", "numpy_version": "0.0", "python_version": "3.11",
        "cpu_model": "Test CPU", "cpu_count": 2, "xla_flags": "", "jax_enable_x64": False,
        "jax_default_matmul_precision": "", "variant": "completed", "boundary": "completed",
        "dtype": "float32", "shape": "8x8", "params": "n=8", "run": 0, "sample": 0, "calls": 1,
        "compiles": 0, "time_s": 1.2345678901234567e-05, "max_rel_error": 1e-7,
        # schema 2: today's harness, so a test figure is stale only when its test says so
        "harness_sha256": _todays_harness(), "session_id": "20260101T000000Z-test",
        "cpu_vendor": "TestVendor", "cpu_family": "6", "cpu_model_number": "1", "cpu_stepping": "0",
        "cpu_flags_sha256": "f" * 64, "cpu_isa": "avx2", "cpu_governor": "unknown", "cpu_mhz": "unknown",
        "mem_total_bytes": 2**34, "load_avg_1m": 0.1, "jax_env": "", "compilation_cache": "off",
        "order_seed": 7, "seq": 0, "cache_hits": 0,
    }
    row.update(overrides)
    return row


def test_csv_round_trip_keeps_every_value(tmp_path):
    rows = [make_row(sample=i, time_s=(i + 1) * 1.1e-6, detail='a "quoted", text') for i in range(3)]
    path = tmp_path / "cpu-test-2c" / "demo.csv"
    results.write_atomic(path, results.to_csv_text(rows))
    frame = load(ResultFile("cpu-test-2c", "demo", path))
    assert list(frame["time_s"]) == [r["time_s"] for r in rows]  # unrounded
    assert list(frame["sample"]) == [0, 1, 2]
    assert frame["git_dirty"].tolist() == [False] * 3
    assert frame["detail"].iloc[0] == 'a "quoted", text'
    assert frame["p_n"].tolist() == ["8"] * 3


def test_writer_refuses_unknown_columns_and_non_finite_numbers():
    with pytest.raises(ValueError, match="not in the schema"):
        results.to_csv_text([make_row(surprise=1)])
    with pytest.raises(ValueError, match="non-finite"):
        results.to_csv_text([make_row(time_s=float("nan"))])


def test_params_round_trip_and_reject_separators():
    assert parse_params(format_params({"n": 512, "b": "x"})) == {"b": "x", "n": "512"}
    with pytest.raises(ValueError):
        format_params({"n": "1;2"})


def test_interrupted_write_leaves_the_previous_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "m" / "demo.csv"
    results.write_atomic(path, "old contents\n")

    def crash(*args, **kwargs):
        raise KeyboardInterrupt  # as if Ctrl-C arrived between writing and renaming

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        results.write_atomic(path, "new contents\n", staging=tmp_path / "staging")
    assert path.read_text() == "old contents\n"
    assert os.listdir(path.parent) == ["demo.csv"]
    assert os.listdir(tmp_path / "staging") == []


def test_interrupted_write_mid_file_leaves_no_partial_file(tmp_path, monkeypatch):
    path = tmp_path / "m" / "demo.csv"
    results.write_atomic(path, "old\n")
    real_fdopen = os.fdopen

    class Exploding:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            self.fh.write(data[:3])
            raise OSError("disk full")

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: Exploding(real_fdopen(fd, mode)))
    with pytest.raises(OSError, match="disk full"):
        results.write_atomic(path, "new contents\n")
    assert path.read_text() == "old\n"
    assert os.listdir(path.parent) == ["demo.csv"]
