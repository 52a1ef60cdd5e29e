"""Bad results files through a real `mkdocs build`: the reference machine's files damaged (beside
two more machines that tests/test_bad_inputs.py and tests/test_escaping.py read from the same builds).

A strict build fails with each file's own file:line message and no traceback; a
lenient build (what `mkdocs serve` does) renders every page, with an error box
where that machine's data was needed, prose values included, and where a prose value
selects rows a valid file does not have (page:line).
"""

import html
import re
import shutil

import pytest
from test_bad_inputs import drop_column, replace_cell
from test_comparisons import other_variants, write_comparison

from benchkit.schema import figure_id_for
from benchsite.model.figures import all_figures
from conftest import REFERENCE, REPO, build_site

pytestmark = pytest.mark.slow  # every test here reads a real mkdocs build


def truncate(text: str) -> str:
    return text[: text.rindex("\n", 0, len(text) - 1) + 30]  # the last row cut short, no newline


# stem -> (damage, the message the build must name); every figure here is embedded in a chapter.
DAMAGE = {
    # the header's own width: a committed file may be an older schema version, upgraded on load
    "dispatch_vs_completion": (truncate, r":\d+: \d+ fields where the header has \d+ \(truncated"),
    "block_placement": (lambda t: drop_column(t, "time_s"), r":1: missing column\(s\) time_s"),
    "statistic_choice": (lambda t: replace_cell(t, 5, "time_s", "nan"), r":5: column 'time_s' is nan"),
    "naive_vs_blocked": (lambda t: replace_cell(t, 3, "time_s", "-0.5"), r":3: .*a time must be positive"),
    "implicit_sync": (lambda t: replace_cell(t, 2, "schema_version", "99"), r":2: schema_version 99 is not one"),
    "pytree_block": (lambda t: "", r":1: empty file"),
    "compile_exchange_rate": (lambda t: t + t.splitlines()[3] + "\n", r":\d+: duplicate sample .*first seen at"),
    "run_to_run_spread": (lambda t: replace_cell(t, 4, "calls", "1.5"),
                          r":4: column 'calls' has '1.5', not a valid integer"),
}


# Results with no figure script (benchsite/model/comparisons.py): stem -> (the side file's text, or None for
# none, and what the build must say). A damaged side file is a damaged results file; no side file, an orphan.
COMPARISONS = {
    "compare_bad_json": ('{"format": 1,\n "title": "x",,\n}', r"compare_bad_json\.compare\.json:2: not valid JSON"),
    "compare_other_variants": (other_variants(),
                               r"compare_other_variants\.compare\.json:\d+: its versions \(a, c\) are not the"),
    "compare_orphan": (None, r"compare_orphan\.csv: no script bench_scripts/compare_orphan\.py for these results"),
}


# A valid file that lacks rows the prose quotes (another machine may not measure a size): (stem, the
# params of the rows dropped, the chapter, the marker that selects them). Neither a claim nor the
# headline reads them.
NO_ROWS = ("jax_vs_numpy", "n=1048576;op=axpy", "how-good-is-this-number.md",
           "bench:value fig-jax-vs-numpy stat=ratio a=jit b=numpy op=axpy n=1048576")


def no_rows_message() -> str:
    """What the build must say of NO_ROWS: the page's file and line, the marker, the selection."""
    _, _, page, marker = NO_ROWS
    line = next(i for i, text in enumerate((REPO / "docs" / page).read_text().splitlines(), 1) if marker in text)
    return (f"docs/{page}:{line}: {marker}: no rows match {{'op': 'axpy', 'n': '1048576'}} "
            f"in fig-jax-vs-numpy on {REFERENCE}")


def damaged_folder(root):
    """The reference machine alone, with one figure damaged in each way (and the comparisons above),
    plus what the other tests that share its builds need (tests/conftest.py, damaged_results): one
    damaged file on another machine (tests/test_bad_inputs.py), markup in every text field
    (tests/test_escaping.py) and damaged kept sessions of an undamaged figure (tests/test_permalinks.py)."""
    from test_bad_inputs import add_damaged_machine
    from test_escaping import add_poisoned_machine
    from test_permalinks import add_damaged_sessions

    shutil.copytree(REPO / "results" / REFERENCE, root / REFERENCE)
    for stem, (damage, _) in DAMAGE.items():
        path = root / REFERENCE / f"{stem}.csv"
        path.write_text(damage(path.read_text()))
    stem, params = NO_ROWS[:2]
    path = root / REFERENCE / f"{stem}.csv"
    path.write_text("".join(line for line in path.read_text().splitlines(keepends=True) if f",{params}," not in line))
    for stem, (text, _) in COMPARISONS.items():
        path = write_comparison(root, REFERENCE, text=text or "", stem=stem)
        if text is None:
            path.unlink()
    add_damaged_machine(root)
    add_poisoned_machine(root)
    add_damaged_sessions(root, root.parent / "scratch")
    return root


def expected(stem: str) -> re.Pattern:
    return re.compile(re.escape(f"{REFERENCE}/{stem}.csv") + DAMAGE[stem][1])


def test_strict_build_fails_naming_each_file_and_line_without_a_traceback(damaged_strict_twice):
    proc = damaged_strict_twice[0][0]
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    for stem in DAMAGE:
        assert expected(stem).search(proc.stderr), (stem, proc.stderr[-3000:])
    for stem, (_, message) in COMPARISONS.items():
        assert re.search(re.escape(f"{REFERENCE}/") + message, proc.stderr), (stem, proc.stderr[-3000:])


def test_a_quiet_strict_build_fails_too(damaged_results, damaged_strict_twice, tmp_path):
    """``-q`` sets mkdocs' logger to ERROR, so warnings are dropped before the handler that strict
    mode counts them with ever sees one (mkdocs/__main__.py, mkdocs/commands/build.py): the build
    passed. The hook keeps what it warned and fails the strict build with it, naming each file.
    (After the strict builds, on their cache: mkdocs' log level is a part of a page's key, so no
    page is read from it, and every problem is found afresh.)"""
    proc = build_site(tmp_path / "site", damaged_results, strict=True, args=("-q",))
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "warning(s) in strict mode, not shown at this log level" in proc.stderr
    for stem in DAMAGE:
        assert expected(stem).search(proc.stderr), (stem, proc.stderr[-3000:])


@pytest.fixture
def lenient_site(damaged_lenient):
    return damaged_lenient[0]


def page_text(site, src: str) -> str:
    path = site / (src.removesuffix(".md") + "/index.html" if not src.endswith("index.md") else "index.html")
    return html.unescape(path.read_text())


@pytest.mark.parametrize("stem", DAMAGE)
def test_lenient_build_shows_an_error_box_where_the_data_was_needed(lenient_site, stem):
    fig = next(f for f in all_figures().values() if f.stem == stem)
    chapter = page_text(lenient_site, fig.chapter)
    assert 'class="bench-error"' in chapter
    assert expected(stem).search(chapter), stem
    bench = html.unescape((lenient_site / "bench" / fig.id / "index.html").read_text())
    assert expected(stem).search(bench), stem


@pytest.mark.parametrize("stem", [s for s, (text, _) in COMPARISONS.items() if text is not None])
def test_lenient_build_shows_a_damaged_comparison_where_its_data_was_needed(lenient_site, stem):
    page = html.unescape((lenient_site / "bench" / figure_id_for(stem) / "index.html").read_text())
    assert 'class="bench-error"' in page and re.search(COMPARISONS[stem][1], page), stem


def test_prose_values_of_a_bad_file_become_inline_error_boxes(lenient_site):
    chapter = page_text(lenient_site, "what-the-clock-caught.md")
    inline = re.findall(r'<span class="bench-error" role="alert">([^<]*)</span>', chapter)
    assert inline and all("cannot be shown" in text for text in inline)
    assert any("dispatch_vs_completion.csv:" in text for text in inline)


def test_a_value_that_matches_no_rows_warns_with_page_and_line(damaged_strict_twice, lenient_site):
    """Once a lenient build stopped there (the marker's error aborted it); now it is a warning, which
    fails a strict build, cold or warm, and an error box where the number would have been."""
    message = no_rows_message()
    for proc in damaged_strict_twice[0]:
        assert message in proc.stderr, proc.stderr[-3000:]
    chapter = page_text(lenient_site, NO_ROWS[2])
    boxes = re.findall(r'<(?:span|div) class="bench-error" role="alert">(.*?)</(?:span|div)>', chapter, re.DOTALL)
    assert [text for text in boxes if message in re.sub("<[^>]+>", "", text)], boxes


def test_the_good_figures_still_render(lenient_site):
    chapter = page_text(lenient_site, "diagnosing/harness.md")
    figure = chapter.split('data-figure="fig-harness-floor"', 1)[1].split("data-figure=", 1)[0]
    assert "bench-error" not in figure and "<svg" in figure


def test_a_second_strict_build_still_fails_after_workers_warmed_the_cache(damaged_strict_twice):
    """Every problem must still be raised by the build itself, the second time too."""
    procs, cache = damaged_strict_twice
    for attempt, proc in enumerate(procs, 1):
        assert proc.returncode != 0 and "Traceback" not in proc.stderr
        for stem in DAMAGE:
            assert expected(stem).search(proc.stderr), (attempt, stem)
        for stem, (_, message) in COMPARISONS.items():
            assert re.search(message, proc.stderr), (attempt, stem)
    assert re.search(r"bench: warmed pages: [1-9]\d* of \d+ jobs on 2 workers", procs[0].stderr)  # workers ran
    assert list((cache / "warmed").iterdir())


# --- mkdocs' own warnings fail a strict build at every log level --------------------------------
# -q sets mkdocs' logger to ERROR, so its warnings (a broken link, a missing anchor, a nav entry to a
# missing page) never reached the handler strict mode counts with: `mkdocs build --strict -q`
# passed where `--strict` failed. The bench hook turns on sitesetup.count_hidden_warnings. Small
# docs trees of their own, with the bench hook and no results, build in a few seconds each.

BROKEN = {  # the tree's pages, and what mkdocs says about each damage
    "link": ({"index.md": "# Home\n\nSee [the page](gone.md).\n"},
             ["Doc file 'index.md' contains a link 'gone.md', but the target is not found among documentation files.",
              "A reference to 'missing.md' is included in the 'nav' configuration, which is not found in the "
              "documentation files."]),
    "anchor": ({"index.md": "# Home\n\nSee [there](other.md#nowhere).\n", "other.md": "# Other\n\n## Somewhere\n"},
               ["Doc file 'index.md' contains a link 'other.md#nowhere', but the doc 'other.md' does not contain "
                "an anchor '#nowhere'."]),
}
# The pages the generated /bench index links to, so that an undamaged tree builds strict.
LINKED_FROM_BENCH = ("verdicts.md", "run-it-yourself.md")


def small_site(root, pages: dict[str, str], nav: list | None = None):
    """A docs tree in ``root`` built by the site's bench plugin from an empty results folder: its
    mkdocs.yml (``-f`` it)."""
    (root / "results").mkdir(parents=True)
    for name, text in {**{n: f"# {n}\n" for n in LINKED_FROM_BENCH}, **pages}.items():
        (root / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / name).write_text(text)
    config = root / "mkdocs.yml"
    config.write_text("site_name: small\ndocs_dir: docs\nplugins:\n  - bench\n"
                      "validation:\n  anchors: warn\nextra:\n  bench:\n    results: results\n"
                      + (f"nav: {nav!r}\n" if nav else ""))
    return config


def build_small(root, config, strict: bool, *args: str):
    return build_site(root / "site", strict=strict, extra_env={"BENCH_CACHE": str(root / "cache")},
                      args=("-f", str(config), *args))


@pytest.mark.parametrize("level", [
    (),
    ("-q",),
    pytest.param(("-v",), id="-v"),
])
@pytest.mark.parametrize("damage", sorted(BROKEN))
def test_mkdocs_warnings_fail_a_strict_build_at_every_log_level(damage, level, tmp_path, request):
    if damage == "anchor" and level == ("-v",):
        request.applymarker(pytest.mark.xfail(strict=True, reason=(
            "mkdocs 1.6.1 records no links to anchors at DEBUG (structure/pages.py: "
            "`if log.getEffectiveLevel() > logging.DEBUG`), so -v checks no anchor: mkdocs issue #3927")))
    pages, messages = BROKEN[damage]
    config = small_site(tmp_path, pages, nav=["index.md", *pages.keys() - {"index.md"}, "missing.md"]
                        if damage == "link" else None)
    proc = build_small(tmp_path, config, True, *level)
    assert proc.returncode != 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    for message in messages:
        assert message in proc.stderr, (message, proc.stderr[-3000:])
    assert (f"{len(messages)} warning(s) in strict mode, not shown at this log level" in proc.stderr
            if level == ("-q",) else f"Aborted with {len(messages)} warnings in strict mode!" in proc.stdout)


@pytest.mark.parametrize("damage", sorted(BROKEN))
def test_a_quiet_lenient_build_of_the_same_passes_and_says_nothing(damage, tmp_path):
    pages, messages = BROKEN[damage]
    proc = build_small(tmp_path, small_site(tmp_path, pages), False, "-q")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout == "" and proc.stderr == ""  # -q prints what it printed: no warning


@pytest.mark.parametrize("strict", [True, False])
def test_a_page_that_is_not_utf8_stops_the_build_naming_its_line_without_a_traceback(strict, tmp_path):
    config = small_site(tmp_path, {"index.md": "# Home\n", "bad-enc.md": "# Bad\n"})
    (tmp_path / "docs" / "bad-enc.md").write_bytes(b"# Bad\n\ncaf\xe9\n")
    proc = build_small(tmp_path, config, strict)
    assert proc.returncode != 0
    assert "docs/bad-enc.md:3: not UTF-8 text (byte 0xe9" in proc.stderr, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr


def test_an_undamaged_small_tree_builds_strict_and_quiet(tmp_path):
    """The control: what fails above is the damage (the tree's own pages are complete)."""
    config = small_site(tmp_path, {"index.md": "# Home\n\nSee [there](other.md#somewhere).\n",
                                   "other.md": "# Other\n\n## Somewhere\n"})
    proc = build_small(tmp_path, config, True, "-q")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout == "" and proc.stderr == ""


def test_the_committed_site_builds_strict_and_quiet(tmp_path):
    proc = build_site(tmp_path / "site", args=("-q",))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "WARNING" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()
