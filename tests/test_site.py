"""The site builds strict from the committed results, and its pages say what they show."""

import gzip
import html
import re

import pytest

from conftest import REPO


@pytest.mark.slow
def test_strict_build_passes(built_site):
    assert (built_site / "index.html").is_file()


@pytest.mark.slow
def test_dispatch_figure_section_is_complete(built_site):
    html = (built_site / "what-the-clock-caught" / "index.html").read_text()
    assert 'id="fig-dispatch-vs-completion"' in html
    for needle in ("bench-caption", "<table>", "bench-spread", "bench-provenance", "class=\"bench-samples\"",
                   ">measure<", "completed / dispatch"):
        assert needle in html, needle
    assert "bench:value" not in html and "bench:figure" not in html  # every marker expanded


@pytest.mark.slow
def test_every_committed_csv_is_downloadable_compressed(built_site):
    for csv in (REPO / "results").glob("*/*.csv"):
        served = built_site / "results" / csv.parent.name / f"{csv.name}.gz"
        assert gzip.decompress(served.read_bytes()) == csv.read_bytes()
    assert not list(built_site.glob("results/*/*.csv"))  # one copy, compressed


@pytest.mark.slow
def test_asynchronous_dispatch_page_shows_its_four_figures(built_site):
    html = (built_site / "asynchronous-dispatch" / "index.html").read_text()
    for fig_id in ("fig-naive-vs-blocked", "fig-implicit-sync", "fig-pytree-block", "fig-host-device-overlap"):
        assert f'id="{fig_id}"' in html, fig_id
        assert f'data-figure="{fig_id}"' in html, fig_id
    assert html.count('class="bench-samples"') >= 4  # a chart per figure
    assert html.count('class="bench-value"') >= 30  # the prose quotes the data, never typed numbers
    assert "bench:value" not in html and "bench:figure" not in html
@pytest.mark.slow
def test_bench_section_covers_every_committed_result(built_site):
    index = (built_site / "bench" / "index.html").read_text()
    for csv in (REPO / "results").glob("*/*.csv"):
        fig_id = "fig-" + csv.stem.replace("_", "-")
        assert fig_id in index and csv.parent.name in index
        page = built_site / "bench" / fig_id / csv.parent.name / "index.html"
        assert "Cite this result" in page.read_text()
    chapter = (built_site / "what-the-clock-caught" / "index.html").read_text()
    assert "Link to this figure" in chapter and 'href="../bench/fig-dispatch-vs-completion/"' in chapter


@pytest.mark.slow
def test_a_cpu_machine_page_names_the_dtypes_it_did_not_measure_instead_of_dashes(built_site):
    """fig-machine-peak measures 16-bit types only on an accelerator: on the CPU its panel, its
    session pages and the chapter name them as not measured, with no column of dashes for them."""
    pages = [built_site / "how-good-is-this-number" / "index.html",
             *sorted((built_site / "bench" / "fig-machine-peak").glob("*/index.html")),
             *sorted((built_site / "bench" / "fig-machine-peak").glob("*/*/index.html"))]
    assert len(pages) >= 3
    for page in pages:
        html = page.read_text()
        assert "not measured on this machine: bfloat16, float16" in html, page
        assert "<th>bfloat16</th>" not in html and "<th>float16</th>" not in html, page



# A figure's code block: on a chapter under a summary naming its script, on its /bench page under "The
# code that produced it" (the page of one figure, whose script all_figures names).
_CHAPTER_CODE = re.compile(r'<summary>The code that produced it: <code>(bench_scripts/[\w.-]+\.py)</code></summary>\s*'
                           r'<div class="highlight"><pre>(.*?)</pre>', re.S)
_BENCH_CODE = re.compile(r'<h2 id="code">The code that produced it.*?</h2>\s*'
                         r'<div class="highlight"><pre>(.*?)</pre>', re.S)


def _in_order(shown: list[str], lines: list[str]) -> bool:
    """Whether ``shown`` is ``lines`` with some lines left out (the snippet markers, the other sections)."""
    rest = iter(lines)
    return all(any(line == other for other in rest) for line in shown)


@pytest.mark.slow
def test_each_figure_shows_the_code_of_its_own_script(built_site):
    """A figure's code block, on its chapter and on its /bench page, holds lines of its own script, in
    that script's order (the named sections, less their markers): never another figure's code (the
    code is rendered once per figure and build, pages.code_html, and shown on both)."""
    from benchsite.model.figures import all_figures

    blocks = [(page, script, code) for page in built_site.glob("*/index.html")
              for script, code in _CHAPTER_CODE.findall(page.read_text())]
    chapters = len(blocks)
    for fig in all_figures().values():
        page = built_site / "bench" / fig.id / "index.html"
        blocks += [(page, fig.script_rel, code) for code in _BENCH_CODE.findall(page.read_text())]
    assert chapters >= 20 and len(blocks) - chapters == len(all_figures())
    for page, script, code in blocks:
        shown = html.unescape(re.sub(r"<[^>]+>", "", code)).rstrip("\n").split("\n")
        lines = (REPO / script).read_text().split("\n")
        assert len([line for line in shown if line.strip()]) >= 3, (page, script)
        assert _in_order(shown, lines), (page, script, [line for line in shown if line not in lines][:3])
