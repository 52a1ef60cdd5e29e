"""benchkit.profiles: reading traces and pprof files, on small hand-made fixtures."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from benchkit import profiles

# --- fixtures: a trace-event file and a pprof message built by hand ----------------------


def write_trace(path: Path, events: list[dict], metadata: bool = True) -> Path:
    doc = {"displayTimeUnit": "ns", "traceEvents": events}
    if metadata:
        doc["metadata"] = {"highres-ticks": True}
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return path


def op(name: str, ts: float, dur: float, tid: int = 2) -> dict:
    return {"ph": "X", "pid": 1, "tid": tid, "ts": ts, "dur": dur, "name": name,
            "args": {"hlo_op": name, "hlo_module": "jit_step"}}


def host(name: str, ts: float, dur: float, tid: int = 1) -> dict:
    return {"ph": "X", "pid": 1, "tid": tid, "ts": ts, "dur": dur, "name": name}


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # int64 on the wire: two's complement in ten bytes
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def vi(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def ld(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


STRINGS = ["", "allocations", "count", "space", "bytes", "kind", "buffer", "executable",
           "/home/someone/project/train.py"]


def pprof(samples: list[tuple[list[int], str]], packed: bool = True) -> bytes:
    """A Profile with sample types allocations/count and space/bytes."""
    body = ld(1, vi(1, 1) + vi(2, 2)) + ld(1, vi(1, 3) + vi(2, 4))
    for values, kind in samples:
        vals = ld(2, b"".join(varint(v) for v in values)) if packed else b"".join(vi(2, v) for v in values)
        body += ld(2, ld(1, varint(1)) + vals + ld(3, vi(1, 5) + vi(2, STRINGS.index(kind))))
    body += vi(9, 12345)  # a field this reader does not use (time_nanos): kept as it is
    body += b"".join(ld(6, s.encode()) for s in STRINGS)
    return gzip.compress(body)


# --- traces ---------------------------------------------------------------------------------


def test_read_trace_keeps_complete_events_in_time_order(tmp_path):
    path = write_trace(tmp_path / "t.json.gz", [
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/host:CPU"}},
        op("dot", 50.0, 10.0), host("train", 0.0, 100.0), {"ph": "i", "ts": 5.0, "name": "mark"},
    ])
    events = profiles.read_trace(path)
    assert [e.name for e in events] == ["train", "dot"]
    assert events[1].hlo_op == "dot" and events[0].hlo_op is None
    assert events[1].end == 60.0


def test_read_trace_names_the_file_when_it_is_not_a_trace(tmp_path):
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(profiles.ProfileFormatError, match="bad.json.gz"):
        profiles.read_trace(bad)
    no_events = write_trace(tmp_path / "empty.json.gz", [])
    no_events.write_bytes(gzip.compress(b'{"something": []}'))
    with pytest.raises(profiles.ProfileFormatError, match="empty.json.gz"):
        profiles.read_trace(no_events)


def test_ops_per_step_sum_busy_time_and_span_across_threads(tmp_path):
    path = write_trace(tmp_path / "t.json.gz", [
        host("train", 0.0, 100.0), host("train", 200.0, 100.0),
        op("dot", 10.0, 30.0, tid=2), op("fusion", 20.0, 40.0, tid=3),  # parallel threads
        op("dot", 210.0, 20.0, tid=2),
    ])
    events = profiles.read_trace(path)
    first, second = [e for e in events if e.name == "train"]
    ops = profiles.op_events(profiles.within(events, first))
    busy, span = profiles.busy_and_span(ops)
    assert busy == pytest.approx(70e-6)  # 30 + 40 µs, summed over threads
    assert span == pytest.approx(50e-6)  # 10 µs to 60 µs
    assert profiles.seconds_by_op(ops) == pytest.approx({"dot": 30e-6, "fusion": 40e-6})
    assert profiles.seconds_by_op(profiles.op_events(profiles.within(events, second))) == \
        pytest.approx({"dot": 20e-6})


def test_an_op_nested_in_another_on_the_same_thread_is_not_counted_twice(tmp_path):
    path = write_trace(tmp_path / "t.json.gz", [
        op("while", 0.0, 100.0, tid=2), op("body", 10.0, 50.0, tid=2), op("other", 10.0, 5.0, tid=3),
    ])
    ops = profiles.op_events(profiles.read_trace(path))
    assert sorted(e.name for e in ops) == ["other", "while"]


def test_outermost_keeps_a_same_named_inner_scope_out_of_a_sum(tmp_path):
    path = write_trace(tmp_path / "t.json.gz", [
        host("PjitFunction(step)", 0.0, 100.0), host("PjitFunction(step)", 1.0, 98.0),
        host("PjitFunction(step)", 200.0, 10.0), host("PjitFunction(step)", 50.0, 5.0, tid=7),
    ])
    kept = profiles.outermost(profiles.read_trace(path))
    assert sorted((e.ts, e.tid) for e in kept) == [(0.0, 1), (50.0, 7), (200.0, 1)]


def test_no_ops_means_zero_busy_and_zero_span():
    assert profiles.busy_and_span([]) == (0.0, 0.0)


# --- pprof --------------------------------------------------------------------------------


def test_pprof_totals_per_sample_type_and_kind():
    data = pprof([([1, 1000], "buffer"), ([2, 24], "buffer"), ([1, 0], "executable")])
    totals = profiles.pprof_totals(data)
    assert totals.totals == {("allocations/count", "buffer"): 3, ("space/bytes", "buffer"): 1024,
                             ("allocations/count", "executable"): 1, ("space/bytes", "executable"): 0}
    assert totals.samples == {"buffer": 2, "executable": 1}


def test_pprof_unpacked_values_and_negative_int64_decode():
    data = pprof([([1, -8], "buffer")], packed=False)
    assert profiles.pprof_totals(data).totals[("space/bytes", "buffer")] == -8


def test_pprof_reads_an_uncompressed_profile_too():
    data = gzip.decompress(pprof([([1, 64], "buffer")]))
    assert profiles.pprof_totals(data).totals[("space/bytes", "buffer")] == 64


def test_truncated_pprof_is_an_error_not_a_wrong_total():
    raw = gzip.decompress(pprof([([1, 1000], "buffer")]))
    with pytest.raises(profiles.ProfileFormatError):
        profiles.pprof_totals(raw[:-3])


def test_label_pointing_outside_the_string_table_is_an_error():
    body = ld(1, vi(1, 1) + vi(2, 2)) + ld(2, ld(2, varint(5)) + ld(3, vi(1, 40) + vi(2, 41)))
    body += b"".join(ld(6, s.encode()) for s in STRINGS[:3])
    with pytest.raises(profiles.ProfileFormatError, match="string index"):
        profiles.pprof_totals(body)


def test_rewriting_strings_changes_only_the_string_table():
    data = pprof([([1, 1000], "buffer")])
    out = profiles.rewrite_pprof_strings(data, lambda s: "train.py" if s.startswith("/home/") else s)
    raw = gzip.decompress(out)
    assert b"/home/someone" not in raw and b"train.py" in raw
    assert profiles.pprof_totals(out) == profiles.pprof_totals(data)
    kept = [f for f in profiles.fields(raw) if f[0] == 9]
    assert kept and kept[0][2] == 12345  # the unread field survived byte for byte
