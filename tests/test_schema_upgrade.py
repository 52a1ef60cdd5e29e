"""Schema version 2: a version-1 file is upgraded on load, an unknown version refused;
staleness covers the harness as well as the figure's own script."""

import pandas as pd
import pytest

from benchkit import provenance, results
from benchkit.schema import COLUMNS, V1_MISSING, V3_MISSING
from benchsite.model.catalog import CodeHash, stale_reason
from benchsite.model.load import ResultFile, ResultsError, load
from test_results import make_row


def v1_text(rows: list[dict]) -> str:
    """The same rows as a schema-1 file: the columns of versions 2-4 dropped, version 1 stated."""
    keep = [c for c in COLUMNS if c not in V1_MISSING and c not in V3_MISSING]
    lines = [",".join(keep)]
    for row in results.to_csv_text(rows).splitlines()[1:]:
        cells = dict(zip(COLUMNS, row.split(",")))
        cells["schema_version"] = "1"
        lines.append(",".join(cells[c] for c in keep))
    return "\n".join(lines) + "\n"


@pytest.fixture
def v1_file(tmp_path):
    path = tmp_path / "cpu-test-2c" / "demo.csv"
    path.parent.mkdir()
    path.write_text(v1_text([make_row(run=r, sample=s, cpu_model="AMD EPYC") for r in range(2) for s in range(3)]))
    return ResultFile("cpu-test-2c", "demo", path)


def test_a_version_1_file_is_upgraded_on_load(v1_file):
    frame = load(v1_file)
    assert len(frame) == 6 and set(frame["schema_version"]) == {1}
    assert set(frame["session_id"]) == {"unknown"} and set(frame["cpu_family"]) == {"unknown"}
    assert set(frame["harness_sha256"]) == {"unknown"} and set(frame["cache_hits"]) == {0}
    assert frame["seq"].isna().all()


def test_a_version_1_file_counts_as_stale(v1_file):
    frame = load(v1_file)
    today = CodeHash(frame["script_sha256"].iloc[0], provenance.harness_sha256())
    assert stale_reason(frame, today) == "these results are in results format 1, which recorded no harness hash"


def test_an_older_header_is_read_by_name_in_any_order(v1_file):
    """As today's header is: the same columns in another order are the same version (the loader once
    took them for today's header and failed with a KeyError, naming no file)."""
    expected = load(v1_file)
    lines = [line.split(",") for line in v1_file.path.read_text().splitlines()]
    moved = [[*cells[3:], *cells[:3]] for cells in lines]
    v1_file.path.write_text("\n".join(",".join(cells) for cells in moved) + "\n")
    pd.testing.assert_frame_equal(load(v1_file), expected)


def test_a_version_1_header_with_version_2_rows_is_refused(v1_file):
    v1_file.path.write_text(v1_file.path.read_text().replace("\n1,", "\n2,", 1))
    with pytest.raises(ResultsError, match=r"demo\.csv:2: schema_version 2 is not one .*header is version 1"):
        load(v1_file)


def test_an_unknown_version_names_the_format_history(tmp_path):
    path = tmp_path / "cpu-test-2c" / "demo.csv"
    results.write_atomic(path, results.to_csv_text([make_row(schema_version=99)]))
    with pytest.raises(ResultsError, match=r"demo\.csv:2: schema_version 99 .*format history in results/README.md"):
        load(ResultFile("cpu-test-2c", "demo", path))


def test_staleness_names_what_changed():
    frame = pd.DataFrame({"script_sha256": ["s1"] * 2, "harness_sha256": ["h1"] * 2})
    assert stale_reason(frame, CodeHash("s1", "h1")) == ""
    assert stale_reason(frame, CodeHash("s1", "h2")) == "the harness changed after these results were recorded"
    assert stale_reason(frame, CodeHash("s2", "h2")) == ("the script and the harness changed after these "
                                                          "results were recorded")


def test_a_harness_change_marks_every_figure_stale(tmp_path):
    from benchfixtures import demo_figure, write_machine
    from benchsite.model.catalog import Catalog

    fig = demo_figure(tmp_path)
    sha = provenance.sha256_file(fig.script)
    write_machine(tmp_path / "results", "cpu-test-2c", sha=sha)
    cat = Catalog.build(tmp_path / "results", {fig.id: fig})
    assert cat.stale() == []
    cat = Catalog.build(tmp_path / "results", {fig.id: fig})  # the next build, after the harness changed
    cat._sha[""] = "a-different-harness"
    assert cat.stale() == [("fig-demo", "cpu-test-2c")]


def test_a_version_2_file_that_lost_a_column_is_told_which(tmp_path):
    """The missing column is named against the version the header is closest to, not today's."""
    from benchkit.schema import V2_MISSING
    from benchsite.model import load

    header = [c for c in load.V2_COLUMNS if c != "time_s"]
    path = tmp_path / "x.csv"
    path.write_text(",".join(header) + "\n")
    with pytest.raises(load.ResultsError, match=r"x\.csv:1: missing column\(s\) time_s$"):
        load._check_header(header, path)
    assert set(V2_MISSING) == {"process_index", "process_count"}
