"""Every bad results file is refused with its file and line; a page never shows it silently."""

import pytest

from benchkit import results
from benchkit.schema import COLUMNS
from benchsite.model.load import ResultFile, ResultsError, load
from conftest import REFERENCE, REPO
from test_results import make_row

GOOD_ROWS = [make_row(run=r, sample=s, figure_id="fig-demo") for r in range(2) for s in range(3)]


def good_text() -> str:
    return results.to_csv_text(GOOD_ROWS)


def replace_cell(text: str, line: int, column: str, value: str) -> str:
    """Set one cell (1-based line numbers, header is line 1) in CSV text."""
    lines = text.splitlines()
    cells = lines[line - 1].split(",")
    cells[lines[0].split(",").index(column)] = value  # the file's own header: any schema version
    lines[line - 1] = ",".join(cells)
    return "\n".join(lines) + "\n"


def drop_column(text: str, column: str) -> str:
    i = COLUMNS.index(column)
    return "\n".join(",".join(c for j, c in enumerate(line.split(",")) if j != i)
                     for line in text.splitlines()) + "\n"


BAD_INPUTS = {
    "truncated": (lambda t: t[: t.rindex("\n", 0, len(t) - 1) + 40],
                  rf":7: \d+ fields where the header has {len(COLUMNS)}"),
    "empty file": (lambda t: "", r":1: empty file"),
    "header only": (lambda t: t.splitlines()[0] + "\n", r":2: no data rows"),
    "missing column": (lambda t: drop_column(t, "time_s"), r":1: missing column\(s\) time_s"),
    # every column of version 3 and all but one of those version 4 added (the loader once took it
    # for version 3's header plus extras, and failed with a KeyError)
    "missing a column version 4 added": (lambda t: drop_column(t, "run_wall_s"),
                                         r":1: missing column\(s\) run_wall_s$"),
    "unknown column": (lambda t: "\n".join(line + (",surprise" if i == 0 else ",1")
                                            for i, line in enumerate(t.splitlines())) + "\n",
                       r":1: unknown column\(s\) surprise"),
    "int not int": (lambda t: replace_cell(t, 3, "run", "first"), r":3: column 'run' has 'first', not a valid integer"),
    "fractional count": (lambda t: replace_cell(t, 4, "calls", "1.5"),
                         r":4: column 'calls' has '1.5', not a valid integer"),
    # numpy's int64 raised OverflowError here, a traceback naming no file, in every build
    "count past 64 bits": (lambda t: replace_cell(t, 5, "calls", "1" * 40),
                           r":5: column 'calls' has '1{40}', not a valid integer \(beyond the 64-bit range\)"),
    # float() and int() read these; the writers never write them (load.number: kept sessions too)
    "count with an underscore": (lambda t: replace_cell(t, 3, "compiles", "1_000"),
                                 r":3: column 'compiles' has '1_000', not a valid integer"),
    "padded time": (lambda t: replace_cell(t, 4, "time_s", " 0.5"),
                    r":4: column 'time_s' has ' 0\.5', not a valid number"),
    "two problems, first row wins": (lambda t: replace_cell(replace_cell(t, 6, "run", "x"), 3, "time_s", "-1"),
                                     r":3: column 'time_s' is -1.0; a time must be positive"),
    "time not number": (lambda t: replace_cell(t, 4, "time_s", "fast"), r":4: column 'time_s' has 'fast'"),
    "NaN time": (lambda t: replace_cell(t, 2, "time_s", "nan"), r":2: column 'time_s' is nan, not a finite"),
    "infinite error": (lambda t: replace_cell(t, 5, "max_rel_error", "inf"), r":5: column 'max_rel_error' is inf"),
    "zero time": (lambda t: replace_cell(t, 6, "time_s", "0.0"), r":6: .*a time must be positive"),
    "negative time": (lambda t: replace_cell(t, 6, "time_s", "-1e-3"), r":6: .*a time must be positive"),
    "negative count": (lambda t: replace_cell(t, 3, "compiles", "-2"), r":3: column 'compiles' is -2"),
    "bad bool": (lambda t: replace_cell(t, 2, "git_dirty", "maybe"), r":2: column 'git_dirty' has 'maybe'"),
    "empty required": (lambda t: replace_cell(t, 3, "variant", ""), r":3: column 'variant' is empty"),
    "unknown schema": (lambda t: replace_cell(t, 2, "schema_version", "99"), r":2: schema_version 99 is not one"),
    "duplicate key": (lambda t: t + t.splitlines()[3] + "\n", r":8: duplicate sample .*first seen at .*:4"),
    "wrong machine": (lambda t: replace_cell(t, 5, "machine", "cpu-other-4c"), r":5: machine 'cpu-other-4c'"),
    "wrong figure": (lambda t: replace_cell(t, 2, "figure_id", "fig-else"), r":2: figure_id 'fig-else'"),
    "bad params": (lambda t: replace_cell(t, 3, "params", "n"), r":3: params 'n' is not of the form"),
    # A session id is a page's URL and a folder name; the time is shown as a day and read as a time.
    "session id not a path segment": (lambda t: replace_cell(t, 4, "session_id", "a b/<c>"),
                                      r":4: session_id 'a b/<c>' is not a session id"),
    "session id, every row": (lambda t: t.replace("20260101T000000Z-test", "../up"),
                              r":2: session_id '\.\./up' is not a session id"),
    "timestamp not a time": (lambda t: replace_cell(t, 5, "timestamp_utc", "yesterday"),
                             r":5: timestamp_utc 'yesterday' is not a UTC time of the form"),
    "timestamp with markup": (lambda t: replace_cell(t, 2, "timestamp_utc", "<i>x</i>T00:00:00Z"),
                              r":2: timestamp_utc '<i>x</i>T00:00:00Z' is not a UTC time"),
    "timestamp, no such day": (lambda t: replace_cell(t, 7, "timestamp_utc", "2026-02-30T10:00:00Z"),
                               r":7: timestamp_utc '2026-02-30T10:00:00Z'"),
    "timestamp without its zone": (lambda t: replace_cell(t, 3, "timestamp_utc", "2026-12-01T10:00:00"),
                                   r":3: timestamp_utc '2026-12-01T10:00:00' is not"),
    "unterminated quote": (lambda t: t + '1,"fig-demo\n', r":\d+: (malformed CSV|\d+ fields)"),
    # A quote left open reads on to the end of the file (or past csv's field limit): the error names
    # the line the quote opened on, not where the reader gave up.
    "quote opened mid-file": (lambda t: replace_cell(t, 3, "detail", '"open') + "x" * 140_000 + "\n"
                              + t.splitlines()[1],
                              r":3: malformed CSV in the record that starts here \(read on to line \d+\): "),
    "not utf-8": (lambda t: t.replace("Test CPU", "Test \udcff CPU"), r":1: cannot read"),
}


def write(tmp_path, text: str, machine="cpu-test-2c") -> ResultFile:
    path = tmp_path / machine / "demo.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8", errors="surrogateescape"))
    return ResultFile(machine, "demo", path)


def test_the_good_file_loads(tmp_path):
    assert len(load(write(tmp_path, good_text()))) == len(GOOD_ROWS)


@pytest.mark.parametrize("name", BAD_INPUTS)
def test_bad_input_is_refused_with_file_and_line(tmp_path, name):
    damage, message = BAD_INPUTS[name]
    file = write(tmp_path, damage(good_text()))
    with pytest.raises(ResultsError, match=str(file.path).replace(".", r"\.") + message):
        load(file)


def test_a_folder_that_is_not_a_machine_label_is_refused(tmp_path):
    file = write(tmp_path, good_text().replace("cpu-test-2c", "<b>x</b>"), machine="<b>x</b>")
    with pytest.raises(ResultsError, match="is not a machine label"):
        load(file)


DAMAGED, STEM = "cpu-damaged-2c", "dtype_cost"  # a figure tests/test_bad_site.py leaves whole


def add_damaged_machine(root):
    """One damaged copy of a figure's results on another machine, beside ``root``'s reference
    machine (tests/conftest.py, damaged_results: built strict and lenient for several tests)."""
    src = REPO / "results" / REFERENCE / f"{STEM}.csv"
    damaged = root / DAMAGED / f"{STEM}.csv"
    damaged.parent.mkdir()
    text = src.read_text().replace(REFERENCE, DAMAGED)
    damaged.write_text(replace_cell(text, 5, "time_s", "nan"))  # line 5: time_s is NaN


@pytest.mark.slow
def test_strict_build_stops_on_a_bad_file_naming_it(damaged_strict_twice):
    proc = damaged_strict_twice[0][0]
    assert proc.returncode != 0
    assert f"{DAMAGED}/{STEM}.csv:5: column 'time_s' is nan" in proc.stderr


@pytest.mark.slow
def test_lenient_build_shows_the_problem_instead_of_the_figure(damaged_lenient):
    site, _ = damaged_lenient
    page = (site / "diagnosing" / "dtypes-and-precision" / "index.html").read_text()
    assert "bench-error" in page and f"{DAMAGED}/{STEM}.csv:5:" in page
    figure = page.split('data-figure="fig-dtype-cost"', 1)[1].split("data-figure=", 1)[0]
    assert "<svg" in figure and REFERENCE in figure  # the good machine's figure is still shown
