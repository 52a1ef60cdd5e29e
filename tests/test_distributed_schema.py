"""Schema version 3 (multi-process runs): ``process_index`` and ``process_count`` on every row;
version 1 and 2 files, measured one process per run, read as process 0 of 1. Version 4 (carry-over
and resource usage): older files read with those columns empty and no lead-in calls."""

import pytest

from benchkit import results
from benchkit.schema import COLUMNS, READABLE_VERSIONS, SCHEMA_VERSION, V1_MISSING, V2_MISSING, V3_MISSING
from benchsite.model.load import ResultFile, ResultsError, header_version, load
from test_results import make_row


def old_text(rows: list[dict], version: int) -> str:
    """The same rows as a file of an older version: its missing columns dropped, its version stated."""
    missing = {1: {**V1_MISSING, **V3_MISSING}, 2: {**V2_MISSING, **V3_MISSING}, 3: V3_MISSING}[version]
    keep = [c for c in COLUMNS if c not in missing]
    lines = [",".join(keep)]
    for row in results.to_csv_text(rows).splitlines()[1:]:
        cells = dict(zip(COLUMNS, row.split(",")))
        cells["schema_version"] = str(version)
        lines.append(",".join(cells[c] for c in keep))
    return "\n".join(lines) + "\n"


def write(tmp_path, text: str) -> ResultFile:
    path = tmp_path / "cpu-test-2c" / "demo.csv"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return ResultFile("cpu-test-2c", "demo", path)


def test_version_4_is_current_and_reads_all_four():
    assert SCHEMA_VERSION == 4 and READABLE_VERSIONS == (1, 2, 3, 4)
    assert COLUMNS.index("process_index") == COLUMNS.index("run") + 1
    assert set(V2_MISSING) == {"process_index", "process_count"} <= set(V1_MISSING)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_an_older_file_reads_as_one_process_per_run(tmp_path, version):
    rows = [make_row(run=r, sample=s, schema_version=version) for r in range(2) for s in range(3)]
    file = write(tmp_path, old_text(rows, version))
    assert header_version(file.path.read_text().splitlines()[0].split(",")) == version
    frame = load(file)
    assert len(frame) == 6 and set(frame["schema_version"]) == {version}
    assert set(frame["process_index"]) == {0} and set(frame["process_count"]) == {1}
    # no lead-in calls then, and nothing recorded about carry-over or resource usage
    assert set(frame["lead_in"]) == {0} and frame["after"].fillna("").eq("").all()
    assert frame[["cpu_s", "minflt", "other_load", "run_wall_s"]].isna().all().all()


def test_a_version_2_header_with_version_3_rows_is_refused(tmp_path):
    file = write(tmp_path, old_text([make_row(schema_version=2)], 2).replace("\n2,", "\n3,", 1))
    with pytest.raises(ResultsError, match=r"demo\.csv:2: schema_version 3 is not one .*header is version 2"):
        load(file)


def test_a_multi_process_file_round_trips(tmp_path):
    rows = [make_row(run=r, process_index=p, process_count=2, params=f"proc={p}", sample=0)
            for r in range(2) for p in range(2)]
    path = tmp_path / "cpu-test-2c" / "demo.csv"
    results.write_atomic(path, results.to_csv_text(rows))
    frame = load(ResultFile("cpu-test-2c", "demo", path))
    assert frame["process_index"].tolist() == [0, 1, 0, 1] and set(frame["process_count"]) == {2}


def test_a_writer_that_leaves_them_out_writes_one_process():
    text = results.to_csv_text([make_row()])
    header, row = (line.split(",") for line in text.splitlines())
    cells = dict(zip(header, row))
    assert (cells["process_index"], cells["process_count"]) == ("0", "1")
