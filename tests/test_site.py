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


def test_asynchronous_dispatch_page_shows_its_four_figures(built_site):
    html = (built_site / "asynchronous-dispatch" / "index.html").read_text()
    for fig_id in ("fig-naive-vs-blocked", "fig-implicit-sync", "fig-pytree-block", "fig-host-device-overlap"):
        assert f'id="{fig_id}"' in html, fig_id
        assert f'data-figure="{fig_id}"' in html, fig_id
    assert html.count('<svg role="img"') >= 4
    assert html.count('class="bench-value"') >= 30  # the prose quotes the data, never typed numbers
    assert "bench:value" not in html and "bench:figure" not in html
