"""Random damage to a committed results file and to a kept session, from a seeded generator.

Every mutation must be refused with a message that names the file and a line (``path:N:``) or be
accepted as valid data, by the same path the site build takes (``Catalog.build``, the table model,
``sessions.history``), never any other exception. The seed is fixed, so a failure names the
mutation that made it and comes back on every run; change ``SEED`` locally to look further.
"""

from __future__ import annotations

import csv
import gzip
import io
import random
import re
import shutil
import traceback
from pathlib import Path

import pytest

from benchkit import archive
from benchkit.layout import discover
from benchsite.model import load, sessions
from benchsite.model.catalog import Catalog, Unavailable
from benchsite.model.figures import all_figures
from conftest import REFERENCE, REPO

SEED = 20261205
MUTATIONS = 150  # per file: a few seconds in all
STEM = "run_to_run_spread"  # a small committed file (about 90 rows), kept sessions on both machines
OLDER = "cpu-intel-xeon-f6m207-2c"  # its files are an older schema and summary format, upgraded on load

# Cells a writer never writes: numbers past int64 or float, NaN and inf, the spellings float() and
# int() read but the writers never write (1_000, padded, other digits, hex), text where a number or
# a flag goes, bad params, times, ids and markup.
JUNK = ["", "x", "1_000", " 12", "12 ", "\t3", "1e400", "-1e400", "1e-400", "-1", "-0.0", "+5", "0",
        "nan", "NaN", "inf", "-inf", "Infinity", "9" * 40, "-" + "9" * 40, "9" * 400, "1." + "9" * 400,
        "0x10", "1.5", "5e", ".", "1.", ".5", "\u0661\u0662", "true", "TRUE", "false", "n=1;n=2", "=", ";",
        "n=", "a" * 300, "2026-02-30T00:00:00Z", "../up", "<b>x</b>", '"', "\x00", "\u00a0", "-", "e5"]
QUOTED = ['"a,b"', '"line\nbreak"', '"cr\rhere"', '""', '"x""y"']


def _field(rng: random.Random, text: str, value: str) -> str:
    """One cell of a random line (the header included) set to ``value``."""
    lines = text.splitlines(keepends=True)
    if not lines:
        return value
    i = rng.randrange(len(lines))
    body = lines[i].rstrip("\r\n")
    cells = body.split(",")
    cells[rng.randrange(len(cells))] = value
    lines[i] = ",".join(cells) + lines[i][len(body):]
    return "".join(lines)


def _header(rng: random.Random, text: str, how: str) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    body = lines[0].rstrip("\r\n")
    names = body.split(",")
    a, b = rng.randrange(len(names)), rng.randrange(len(names))
    if how == "swap":
        names[a], names[b] = names[b], names[a]
    elif how == "rename":
        names[a] = rng.choice([names[b], names[a].upper(), names[a] + "_x", "", " " + names[a]])
    else:
        del names[a]
    lines[0] = ",".join(names) + lines[0][len(body):]
    return "".join(lines)


def _rows(rng: random.Random, text: str, how: str) -> str:
    lines = text.splitlines(keepends=True)
    if len(lines) < 2:
        return text
    i = rng.randrange(1, len(lines))
    if how == "drop":
        del lines[i]
    elif how == "double":
        lines.insert(i, lines[i])
    elif how == "swap":
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif how == "blank":
        lines.insert(i, "\n")
    else:
        return text[:rng.randrange(len(text))]  # cut anywhere
    return "".join(lines)


def mutate_text(rng: random.Random, text: str) -> tuple[str, list[str]]:
    """One to three kinds of damage to CSV text, and what they were."""
    done = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        kind = rng.choice(("junk", "junk", "junk", "quoted", "header", "rows", "rows", "bom", "crlf", "empty",
                           "header only", "trailing"))
        if kind == "junk":
            value = rng.choice(JUNK)
            text, kind = _field(rng, text, value), f"cell {value[:12]!r}"
        elif kind == "quoted":
            text = _field(rng, text, rng.choice(QUOTED))
        elif kind == "header":
            how = rng.choice(("swap", "rename", "drop"))
            text, kind = _header(rng, text, how), f"header name {how}"
        elif kind == "rows":
            how = rng.choice(("drop", "double", "swap", "blank", "cut"))
            text, kind = _rows(rng, text, how), f"row {how}"
        elif kind == "bom":
            text = "\ufeff" + text
        elif kind == "crlf":
            text = text.replace("\n", "\r\n")
        elif kind == "empty":
            text = ""
        elif kind == "header only":
            text = text.split("\n", 1)[0] + "\n"
        else:
            text += rng.choice(("\n", "\n\n", ",", "x\n", " "))
        done.append(kind)
    return text, done


def mutate(rng: random.Random, data: bytes, csv_text: bool = True) -> tuple[bytes, list[str]]:
    """Damage to a file's bytes: mostly CSV-aware (``csv_text``), else flipped, cut or inserted bytes."""
    if csv_text and rng.random() < 0.75:
        text, done = mutate_text(rng, data.decode("utf-8"))
        return text.encode("utf-8"), done
    out = bytearray(data)
    kind = rng.choice(("flipped bytes", "flipped bytes", "cut bytes", "inserted bytes"))
    if kind == "flipped bytes" and out:
        for _ in range(rng.randint(1, 4)):
            out[rng.randrange(len(out))] = rng.randrange(256)
    elif kind == "cut bytes":
        del out[rng.randrange(len(out) + 1):]
    else:
        at = rng.randrange(len(out) + 1)
        out[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return bytes(out), [kind]


def names_a_line(message: str, *paths: Path, lines: int) -> bool:
    """Whether ``message`` starts with one of ``paths`` and a line of it (1 .. its lines + 1)."""
    found = re.match("(" + "|".join(re.escape(str(p)) for p in paths) + r"):([0-9]+): \S", message)
    return found is not None and 1 <= int(found.group(2)) <= lines + 1


def _lines(gz: bytes) -> int:
    try:
        return gzip.decompress(gz).count(b"\n") + 1
    except Exception:  # noqa: BLE001 -- not gzip: the message names line 1
        return 1


@pytest.fixture(scope="module")
def fig():
    return next(f for f in all_figures().values() if f.stem == STEM)


@pytest.fixture(autouse=True)
def scratch_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))


def the_build_reads(root: Path, fig, machine: str, cache: Path | None = None) -> list[str]:
    """What a build reports of ``fig`` on ``machine`` (a file:line message each), reading it as the
    build does: the results file validated, its table made, every session (the latest one, compacted
    from the file, and the kept ones) validated and tabulated. ``cache``: the build cache's folder of
    validated files (the kept-session test validates its unchanged results file once)."""
    cat = Catalog.build(root, {fig.id: fig}, cache=cache)
    reports = [cat.errors[(fig.id, machine)]] if (fig.id, machine) in cat.errors else []
    try:
        cat.table(fig.id, machine)
    except Unavailable as err:
        reports.append(str(err))
    hist = sessions.history(cat, fig.id, machine)
    return reports + list(hist.errors.values())


def failure(what: list[str], i: int, err: BaseException) -> str:
    where = traceback.extract_tb(err.__traceback__)[-1]
    return (f"mutation {i} ({', '.join(what)}): {type(err).__name__}: {str(err)[:300]} "
            f"at {where.filename}:{where.lineno}")


@pytest.mark.parametrize("machine", [REFERENCE, OLDER])
def test_a_damaged_results_file_is_refused_with_file_and_line_or_read_as_valid(tmp_path, fig, machine):
    original = (REPO / "results" / machine / f"{STEM}.csv").read_bytes()
    path = tmp_path / "results" / machine / f"{STEM}.csv"
    path.parent.mkdir(parents=True)
    rng = random.Random(f"{SEED}-{machine}")
    bad, refused = [], 0
    for i in range(MUTATIONS):
        data, what = mutate(rng, original)
        path.write_bytes(data)
        try:
            reports = the_build_reads(tmp_path / "results", fig, machine)
        except Exception as err:  # noqa: BLE001 -- the point: nothing else may escape
            bad.append(failure(what, i, err))
            continue
        refused += bool(reports)
        lines = data.count(b"\n") + 1
        bad += [f"mutation {i} ({', '.join(what)}): {r[:300]}" for r in reports
                if not names_a_line(r, path, lines=lines)]
    assert not bad, "\n".join(bad[:10])
    assert MUTATIONS // 4 < refused < MUTATIONS  # the damage is mostly real, and some of it harmless


@pytest.mark.parametrize("machine", [REFERENCE, OLDER])
def test_a_damaged_kept_session_is_refused_with_file_and_line_or_read_as_valid(tmp_path, fig, machine):
    root = tmp_path / "results"
    (root / machine).mkdir(parents=True)
    shutil.copy(REPO / "results" / machine / f"{STEM}.csv", root / machine)
    kept = archive.kept_files(REPO / "results")[(machine, STEM)]
    sid = sorted(kept)[0]
    originals = [p.read_bytes() for p in kept[sid]]
    summary, runs = archive.summary_file(root, machine, sid, STEM), archive.runs_file(root, machine, sid, STEM)
    summary.parent.mkdir(parents=True)
    rng = random.Random(f"{SEED}-{machine}-kept")
    bad, refused = [], 0
    for i in range(MUTATIONS):
        files: list[bytes | None] = list(originals)
        what = []
        # One file damaged, now and then both, or one of them gone (a partial session).
        for which in (0, 1) if rng.random() < 0.15 else (rng.randrange(2),):
            name = "runs file" if which else "summary file"
            if rng.random() < 0.04:
                files[which], done = None, ["missing"]
            elif rng.random() < 0.1:  # the compressed bytes themselves
                files[which], done = mutate(rng, originals[which], csv_text=False)
            else:
                text, done = mutate(rng, gzip.decompress(originals[which]))
                files[which] = gzip.compress(text, mtime=0)
            what += [f"{name}: {done[0]}", *done[1:]]
        for path, data in zip((summary, runs), files):
            path.unlink(missing_ok=True)
            if data is not None:
                path.write_bytes(data)
        lines = max(_lines(data) for data in files if data is not None) if any(files) else 1
        try:
            # The validator itself refuses with SessionError (history would turn any ValueError
            # into file:1; this is stricter), then the build's reading of the whole history.
            try:
                sessions.parse(*sessions.read_texts(summary, runs), (str(summary), str(runs)), machine, STEM, sid)
            except sessions.SessionError as err:
                if not names_a_line(str(err), summary, runs, lines=lines):
                    bad.append(f"mutation {i} ({', '.join(what)}): {str(err)[:300]}")
            reports = the_build_reads(root, fig, machine, cache=tmp_path / "frames")
        except Exception as err:  # noqa: BLE001 -- the point: nothing else may escape
            bad.append(failure(what, i, err))
            continue
        refused += bool(reports)
        bad += [f"mutation {i} ({', '.join(what)}): {r[:300]}" for r in reports
                if not names_a_line(r, summary, runs, lines=lines)]
    assert not bad, "\n".join(bad[:10])
    assert MUTATIONS // 4 < refused < MUTATIONS


# --- one rule for a number, in a results file and in a kept session ---------------------------------

NUMBERS = {  # text -> what both validators read it as in an integer column, and in a float column
    "12": (12, 12.0), "+5": (5, 5.0), "-0": (0, 0.0), "1.5": (None, 1.5), "1e-05": (None, 1e-05),
    ".5": (None, 0.5), "1.": (None, 1.0), "1E+16": (None, 1e16), str(2**63 - 1): (2**63 - 1, 2.0**63),
    str(2**63): (None, 2.0**63), str(-2**63 - 1): (None, -2.0**63), "9" * 40: (None, 1e40),
    # float() and int() read these; no writer writes them
    "1_000": (None, None), " 12": (None, None), "12 ": (None, None), "\t3": (None, None),
    "\u0661\u0662": (None, None), "0x10": (None, None),
    "1e": (None, None), ".": (None, None), "x": (None, None),
}


@pytest.mark.parametrize("text", NUMBERS)
@pytest.mark.parametrize("integer", [True, False])
def test_a_number_is_read_by_one_rule(text, integer):
    expected = NUMBERS[text][0 if integer else 1]
    value, why = load.number(text, integer)
    assert (value, why is None) == (expected, expected is not None) and type(value) is type(expected)


# Cells of columns a results file and a kept session's runs file share, each read by the one validator
# in both: the same value accepted, or refused with the same words after file:line.
ALIKE = [("cpu_count", t) for t in NUMBERS] + [("load_avg_1m", t) for t in NUMBERS] + [
    ("mem_total_bytes", t) for t in ("", "-1", "0", "1.5")] + [
    ("git_dirty", t) for t in ("true", "false", "True", "1", "")] + [
    ("timestamp_utc", t) for t in ("2026-02-30T00:00:00Z", "2026-12-01 10:45:00", "")] + [
    ("jax_version", t) for t in ("", "0.10.2")]


def _set_first_row(text: str, col: str, value: str) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    rows[1][rows[0].index(col)] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def _judged(read) -> str:
    """What the validator said after ``file:line: `` (``""``: accepted)."""
    try:
        read()
    except load.ResultsError as err:
        found = re.match(r"(.*?):([0-9]+): (.*)", str(err), re.DOTALL)
        assert found, str(err)
        return f"line {found.group(2)}: {found.group(3)}"
    return ""


@pytest.mark.parametrize("col,text", ALIKE)
def test_a_kept_session_and_a_results_file_are_judged_alike(tmp_path, col, text):
    path = tmp_path / REFERENCE / f"{STEM}.csv"
    path.parent.mkdir()
    path.write_text(_set_first_row((REPO / "results" / REFERENCE / f"{STEM}.csv").read_text(), col, text))
    (file,) = [f for f in discover(tmp_path) if f.path == path]
    kept = archive.kept_files(REPO / "results")[(REFERENCE, STEM)]
    sid = sorted(kept)[0]
    summary, runs = sessions.read_texts(*kept[sid])
    as_results = _judged(lambda: load.validate(file))
    as_session = _judged(lambda: sessions.parse(summary, _set_first_row(runs, col, text), ("s", "r"),
                                                REFERENCE, STEM, sid))
    assert as_results == as_session
    if col in ("cpu_count", "load_avg_1m"):  # and as the number rule reads it
        assert (as_results == "") == (load.number(text, col == "cpu_count")[1] is None)


def test_the_committed_kept_sessions_still_read_as_valid():
    """The one rule refuses nothing the writers wrote: every committed session parses."""
    for (machine, stem), found in archive.kept_files(REPO / "results").items():
        for sid, (summary, runs) in found.items():
            sessions.parse(*sessions.read_texts(summary, runs), (str(summary), str(runs)), machine, stem, sid)
