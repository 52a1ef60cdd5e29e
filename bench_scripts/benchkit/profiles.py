"""Reading what ``jax.profiler`` writes, with the standard library only.

* A trace (``*.trace.json.gz``, also ``perfetto_trace.json.gz``) is gzipped
  Chrome trace-event JSON; complete events (``"ph": "X"``) carry a start and a
  duration in microseconds. XLA marks the events of compiled operations with an
  ``hlo_op`` argument: those are the program's own work, on whatever device ran
  it (on the CPU backend, the host's worker threads).
* A device memory profile is a pprof ``Profile``: gzipped protocol buffers.
  Only the fields needed for totals are decoded (sample types, samples with
  their values and string labels, the string table); everything else is kept
  as raw bytes, so a file can be rewritten without losing what is not read.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

US = 1e-6  # trace timestamps and durations are in microseconds


class ProfileFormatError(ValueError):
    """A trace or profile file is not what this module can read."""


@dataclass(frozen=True)
class Event:
    """One complete trace event, times in microseconds."""

    name: str
    ts: float
    dur: float
    pid: int
    tid: int
    args: dict = field(default_factory=dict, compare=False)

    @property
    def end(self) -> float:
        return self.ts + self.dur

    @property
    def hlo_op(self) -> str | None:
        return self.args.get("hlo_op")


# --8<-- [start:read-trace]
def read_trace(path: Path) -> list[Event]:
    """Complete events of a gzipped trace-event JSON file, sorted by start time."""
    try:
        doc = json.loads(gzip.decompress(path.read_bytes()))
        raw = doc["traceEvents"]
    except (OSError, EOFError, ValueError, KeyError, TypeError) as err:
        raise ProfileFormatError(f"{path}: not a gzipped trace-event JSON file ({err})") from err
    events = [Event(str(e["name"]), float(e["ts"]), float(e.get("dur", 0.0)), int(e.get("pid", 0)),
                    int(e.get("tid", 0)), dict(e.get("args") or {}))
              for e in raw if isinstance(e, dict) and e.get("ph") == "X" and "ts" in e]
    return sorted(events, key=lambda e: (e.ts, -e.dur))


def within(events: list[Event], span: Event) -> list[Event]:
    """Events that start inside ``span`` (on any thread)."""
    return [e for e in events if span.ts <= e.ts < span.end]


def outermost(events: list[Event]) -> list[Event]:
    """Drop every event nested inside an earlier kept one on the same thread, so a
    sum of durations counts no interval twice (the profiler often records a
    call and its own inner scope under the same name). Expects start-time order."""
    kept: list[Event] = []
    open_until: dict[tuple[int, int], float] = {}
    for e in events:
        lane = (e.pid, e.tid)
        if e.ts >= open_until.get(lane, float("-inf")):
            kept.append(e)
            open_until[lane] = e.end
    return kept


def op_events(events: list[Event]) -> list[Event]:
    """Compiled-operation events, outermost only: an op nested in another op on
    the same thread (a call inside a loop body, say) is not counted twice."""
    return outermost([e for e in events if e.hlo_op is not None])


def seconds_by_op(ops: list[Event]) -> dict[str, float]:
    """Total seconds per ``hlo_op`` name."""
    total: dict[str, float] = defaultdict(float)
    for e in ops:
        total[str(e.hlo_op)] += e.dur * US
    return dict(total)


def busy_and_span(ops: list[Event]) -> tuple[float, float]:
    """Seconds of op time summed over threads, and first start to last end."""
    if not ops:
        return 0.0, 0.0
    return sum(e.dur for e in ops) * US, (max(e.end for e in ops) - min(e.ts for e in ops)) * US
# --8<-- [end:read-trace]


# --- pprof (protocol buffers, wire format) -----------------------------------

Field = tuple[int, int, int | bytes, bytes]  # number, wire type, value, raw bytes


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ProfileFormatError("truncated or overlong varint")
        byte = buf[i]
        value |= (byte & 0x7F) << shift
        i, shift = i + 1, shift + 7
        if byte < 0x80:
            return value, i


def fields(buf: bytes) -> Iterator[Field]:
    """Top-level fields of one message: (number, wire type, value, raw bytes)."""
    i = 0
    while i < len(buf):
        start = i
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            size, i = _varint(buf, i)
            value, i = buf[i:i + size], i + size
        elif wire in (1, 5):
            step = 8 if wire == 1 else 4
            value, i = buf[i:i + step], i + step
        else:
            raise ProfileFormatError(f"unsupported wire type {wire} at byte {start}")
        if i > len(buf):
            raise ProfileFormatError(f"field {number} runs past the end of its message")
        yield number, wire, value, buf[start:i]


def _int(value: int | bytes) -> int:
    if not isinstance(value, int):
        raise ProfileFormatError("expected an integer field, found bytes")
    return value


def _blob(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise ProfileFormatError("expected a length-delimited field, found an integer")
    return value


def _ints(value: int | bytes) -> list[int]:
    """A repeated integer field, packed or not; int64 sign restored."""
    raw, i = ([value], 0) if isinstance(value, int) else ([], 0)
    while isinstance(value, bytes) and i < len(value):
        v, i = _varint(value, i)
        raw.append(v)
    return [v - (1 << 64) if v >= 1 << 63 else v for v in raw]


def _bytes_of(data: bytes) -> bytes:
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


# --8<-- [start:pprof-totals]
@dataclass(frozen=True)
class PprofTotals:
    """Per sample type (``"space/bytes"``), per value of one label: sum and sample count."""

    totals: dict[tuple[str, str], int]
    samples: dict[str, int]


def pprof_totals(data: bytes, label: str = "kind") -> PprofTotals:
    """Sum every sample type's values, split by the string value of ``label``."""
    top = list(fields(_bytes_of(data)))
    strings = [_blob(v).decode("utf-8", "replace") for n, _, v, _ in top if n == 6]
    types = [_value_type(_blob(v), strings) for n, _, v, _ in top if n == 1]
    totals: dict[tuple[str, str], int] = defaultdict(int)
    samples: dict[str, int] = defaultdict(int)
    for n, _, v, _ in top:
        if n == 2:
            values, labels = _sample(_blob(v), strings)
            group = labels.get(label, "")
            samples[group] += 1
            for kind, amount in zip(types, values):
                totals[(kind, group)] += amount
    return PprofTotals(dict(totals), dict(samples))
# --8<-- [end:pprof-totals]


def _string(strings: list[str], index: int) -> str:
    if not 0 <= index < len(strings):
        raise ProfileFormatError(f"string index {index} outside a table of {len(strings)}")
    return strings[index]


def _value_type(buf: bytes, strings: list[str]) -> str:
    parts = {n: _int(v) for n, _, v, _ in fields(buf)}
    return f"{_string(strings, parts.get(1, 0))}/{_string(strings, parts.get(2, 0))}"


def _sample(buf: bytes, strings: list[str]) -> tuple[list[int], dict[str, str]]:
    values: list[int] = []
    labels: dict[str, str] = {}
    for n, _, v, _ in fields(buf):
        if n == 2:
            values += _ints(v)
        elif n == 3:
            parts = {ln: _int(lv) for ln, _, lv, _ in fields(_blob(v))}
            if parts.get(2):  # a string label (numeric labels are not needed here)
                labels[_string(strings, parts.get(1, 0))] = _string(strings, parts[2])
    return values, labels


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def rewrite_pprof_strings(data: bytes, rewrite: Callable[[str], str]) -> bytes:
    """The same profile (gzipped) with each string-table entry passed through
    ``rewrite``; every other field is copied byte for byte."""
    out = bytearray()
    for number, _, value, raw in fields(_bytes_of(data)):
        if number == 6:
            text = rewrite(_blob(value).decode("utf-8", "replace")).encode()
            out += _encode_varint(6 << 3 | 2) + _encode_varint(len(text)) + text
        else:
            out += raw
    return gzip.compress(bytes(out), mtime=0)


def publish_trace(rec, logdir: str, written_s: float, shape: str) -> list[Event]:
    """The one trace ``jax.profiler.trace(logdir)`` wrote, published beside the figure's CSV as
    ``<stem>.trace.json.gz`` with a ``file`` row (seconds to write it, its size), then read back."""
    from .timing import Sample  # profiles stays importable without the timing machinery

    found = sorted(Path(logdir).glob("plugins/profile/*/perfetto_trace.json.gz"))
    if len(found) != 1:
        raise RuntimeError(f"expected one perfetto_trace.json.gz under {logdir}, found {len(found)}")
    published = rec.artifact("trace.json.gz")
    published.write_bytes(found[0].read_bytes())
    rec.add("file", "completed", [Sample(written_s)], dtype="float32", shape=shape,
            params={"part": "trace"}, size_bytes=float(published.stat().st_size))
    return read_trace(published)
