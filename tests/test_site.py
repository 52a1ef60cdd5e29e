"""The site builds strict from the committed results, and its pages say what they show."""


from conftest import REPO


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
