"""The site builds strict from the committed results, and its pages say what they show."""

import os
import subprocess

import pytest

from conftest import REPO


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env.pop("BENCH_RESULTS", None)
    env.pop("BENCH_MACHINE", None)
    proc = subprocess.run([str(REPO / ".venv" / "bin" / "mkdocs"), "build", "--strict", "-d", str(out)],
                          cwd=REPO, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_strict_build_passes(built_site):
    assert (built_site / "index.html").is_file()


def test_dispatch_figure_section_is_complete(built_site):
    html = (built_site / "what-the-clock-caught" / "index.html").read_text()
    assert 'id="fig-dispatch-vs-completion"' in html
    for needle in ("bench-caption", "<table>", "bench-spread", "bench-provenance", "<svg role=\"img\"",
                   ">measure<", "completed / dispatch"):
        assert needle in html, needle
    assert "bench:value" not in html and "bench:figure" not in html  # every marker expanded


def test_every_committed_csv_is_downloadable(built_site):
    for csv in (REPO / "results").glob("*/*.csv"):
        assert (built_site / "results" / csv.parent.name / csv.name).is_file()


def test_bench_section_covers_every_committed_result(built_site):
    index = (built_site / "bench" / "index.html").read_text()
    for csv in (REPO / "results").glob("*/*.csv"):
        fig_id = "fig-" + csv.stem.replace("_", "-")
        assert fig_id in index and csv.parent.name in index
        page = built_site / "bench" / fig_id / csv.parent.name / "index.html"
        assert "Cite this result" in page.read_text()
    chapter = (built_site / "what-the-clock-caught" / "index.html").read_text()
    assert "Link to this figure" in chapter and 'href="../bench/fig-dispatch-vs-completion/"' in chapter
