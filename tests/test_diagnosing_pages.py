"""The diagnosing pages (profiling, dtypes and precision) as built from the committed results."""

import re

import pytest

from conftest import REPO


def page(built_site, name: str) -> str:
    return (built_site / "diagnosing" / name / "index.html").read_text()


@pytest.mark.slow
def test_every_marker_expanded(built_site):
    for name in ("profiling", "dtypes-and-precision"):
        html = page(built_site, name)
        assert not re.search(r"bench:(value|figure|ranked|file)", html), name


@pytest.mark.slow
def test_profiling_page_shows_the_trace_summary_and_links_its_files(built_site):
    html = page(built_site, "profiling")
    assert 'id="fig-profile-top-ops"' in html
    assert 'class="bench-ranked"' in html and "share" in html
    links = re.findall(r'href="([^"]*profile_top_ops\.(?:trace\.json\.gz|memory\.prof))"', html)
    assert len(links) == 2
    for link in links:  # relative to the page: diagnosing/profiling/
        assert (built_site / "diagnosing" / "profiling" / link).resolve().is_file(), link


@pytest.mark.slow
def test_profiling_page_embeds_the_reader_code(built_site):
    html = page(built_site, "profiling")
    assert "read_trace" in html and "pprof_totals" in html and "train_step" in html


@pytest.mark.slow
def test_dtype_page_has_time_throughput_and_error_tables(built_site):
    html = page(built_site, "dtypes-and-precision")
    for fig in ("fig-dtype-cost", "fig-matmul-precision"):
        assert f'id="{fig}"' in html
    for label in ("Achieved bandwidth", "Achieved FLOP/s", "Error against the float64"):
        assert label in html, label


@pytest.mark.slow
def test_every_side_file_is_downloadable(built_site):
    for side in (REPO / "results").glob("*/*.*"):
        served = side.name + (".gz" if side.suffix == ".csv" else "")  # results CSVs are served compressed
        assert (built_site / "results" / side.parent.name / served).is_file(), side.name
