"""A comparison ``python -m benchkit compare`` wrote (a results CSV and its ``.compare.json``) is a
figure of the /bench section: its ratio and verdicts on its pages, its recorded source as its code,
never stale against bench_scripts/; a damaged side file is an error naming the file and line; a CSV
with no side file stays an orphan."""

import hashlib
import json
import re

import pytest

import benchfixtures
from benchfixtures import render_page, write_machine
from benchkit import results
from benchkit.schema import figure_id_for
from benchsite.build.buildcache import BuildCache
from benchsite.model import comparisons
from benchsite.model.catalog import Catalog
from benchsite.pages.markers import Context, expand
from test_results import make_row

docs = benchfixtures.docs

STEM, FIG = "compare_scale", "fig-compare-scale"
SOURCE_A = 'import jax\n\n\n@jax.jit\ndef scale_v1(x):\n    return x * 2.0\n# --8<-- "mkdocs.yml"\n'
SOURCE_B = SOURCE_A.replace("x * 2.0", "x + x")


def side(**overrides) -> dict:
    """A side file as the contract gives it: b (HEAD~1) against a (the file on disk)."""
    data = {"format": 1, "title": "scale_v2 against scale_v1",
            "command": "python -m benchkit compare examples/scale.py:scale_v1 HEAD~1:examples/scale.py:scale_v2 "
                       "--args 'jnp.ones(1_000_000)'",
            "boundary": "completed", "margin": 0.1, "args": "jnp.ones(1_000_000)", "ratio": ["b", "a"],
            "versions": [
                {"variant": "a", "target": "examples/scale.py:scale_v1", "revision": "", "path": "examples/scale.py",
                 "sha256": hashlib.sha256(SOURCE_A.encode()).hexdigest(), "source": SOURCE_A},
                {"variant": "b", "target": "HEAD~1:examples/scale.py:scale_v2", "revision": "HEAD~1",
                 "path": "examples/scale.py", "sha256": hashlib.sha256(SOURCE_B.encode()).hexdigest(),
                 "source": SOURCE_B}]}
    data.update(overrides)
    return data


def write_comparison(root, machine="cpu-a", data=None, text=None, runs=5, variants=("a", "b"), stem=STEM):
    """compare's two files: b twice as slow as a in every run, both interleaved, params empty."""
    rows = [make_row(run=r, sample=s, seq=2 * s + i, variant=v, time_s=1e-4 * (1 + i) * (1 + 0.01 * r + 0.001 * s),
                     params="", figure_id=figure_id_for(stem), machine=machine, script_path="examples/scale.py",
                     script_sha256=hashlib.sha256(SOURCE_A.encode()).hexdigest())
            for r in range(runs) for s in range(4) for i, v in enumerate(variants)]
    results.write_atomic(root / machine / f"{stem}.csv", results.to_csv_text(rows))
    path = comparisons.side_file(root, machine, stem)
    path.write_text(text if text is not None else json.dumps(data or side(), indent=2))
    return path


@pytest.fixture(autouse=True)
def scratch_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))


def test_a_comparison_shows_its_ratio_verdicts_and_recorded_source(tmp_path, docs):
    root = tmp_path / "results"
    write_comparison(root)
    cat = Catalog.build(root, {}, preferred="cpu-a")
    assert cat.orphans == [] and cat.errors == {}
    fig = cat.figures[FIG]
    assert (fig.title, fig.variants, fig.ratio, fig.chapter) == ("scale_v2 against scale_v1", ("a", "b"), ("b", "a"),
                                                                 "time-your-own-code.md")
    assert all(fact in fig.caption for fact in ("python -m benchkit compare", "completed boundary", "±10 %"))
    assert cat.stale() == [] and cat.table(FIG, "cpu-a").stale == ""

    problems = []
    page = render_page(cat, f"bench/{FIG}/cpu-a.md", docs, problems)
    assert problems == []
    assert "<th>b / a</th>" in page and "2.00× [2.00..2.00]" in page  # the panel's ratio column
    verdicts = re.search(r"\| b / a \| a result\? \| the same within ±10 %\? \| runs \|\n.*\n(.*)\n", page).group(1)
    assert verdicts.startswith("| cpu-a | 2.00× [2.00..2.00] | [a result]")
    assert "[could not show the same within ±10 %" in verdicts and verdicts.endswith("| 5 |")
    assert "Made by `benchkit compare`" in page and "neither stale nor current" in page
    assert f"(../../results/cpu-a/{STEM}.compare.json)" in page  # the side file, downloadable
    assert "made by benchkit compare: its code is the recorded source" in page  # provenance, and the cite block
    assert "STALE" not in page and "current" not in page.split("Cite this result")[1].split("</pre>")[0]
    cite = page.split("Cite this result")[1]
    assert "code      recorded by benchkit compare: a = examples/scale.py:scale_v1 sha256" in cite
    assert "python -m benchkit compare examples/scale.py:scale_v1" in cite and "make bench ONLY" not in cite
    assert "[the recorded source of each version](index.md#code)" in page

    code = render_page(cat, f"bench/{FIG}/index.md", docs).split("## The code that produced it")[1]
    assert '--8<-- "' not in code.split("<pre>")[0]  # no snippet include of a script: the recorded text itself
    assert "<code>HEAD~1:examples/scale.py:scale_v2</code>, the file <code>examples/scale.py</code> at revision " \
           "<code>HEAD~1</code>" in code and "as it was on disk" in code
    assert 'class="language-python highlight"' in code and code.count("scale_v1") >= 2
    # A recorded line that reads like a snippet include is shown, never followed.
    assert "# --8&lt;-- &quot;mkdocs.yml&quot;" in code or "# --8&lt;-- \"mkdocs.yml\"" in code

    index = render_page(cat, "bench/index.md", docs)
    row = next(line for line in index.splitlines() if f"]({FIG}/cpu-a.md)" in line)
    assert "2.00× &#91;2.00..2.00&#93;" in row and "b / a · 5 runs" in row and "recorded source" in row


def test_the_recorded_source_is_highlighted_once_a_build(tmp_path, docs, monkeypatch):
    """A comparison's figure page (twice) and a chapter's figure of it share one highlighting of its recorded
    source (the catalog's memo, ``("code-html", fig)``), and each shows the same block."""
    from benchsite.views import render

    root = tmp_path / "results"
    write_comparison(root)
    cat = Catalog.build(root, {}, preferred="cpu-a")
    made = []
    highlight = render.recorded_code
    monkeypatch.setattr(render, "recorded_code", lambda rec: made.append(rec.command) or highlight(rec))
    pages = [render_page(cat, f"bench/{FIG}/index.md", docs).split("## The code that produced it")[1]
             for _ in range(2)]
    ctx = Context(cat, "docs/chapter.md", lambda target: "/" + target, [].append, docs_dir=docs, cache=BuildCache())
    chapter = ctx.cache.fill(expand(f"<!-- bench:figure {FIG} -->\n", ctx), ctx.link)
    assert made == [side()["command"]]  # once, for three pages
    shown = str(highlight(cat.figures[FIG].compare))
    assert pages[0] == pages[1] and shown in pages[0] and shown in chapter
    assert " as `benchkit compare` recorded it (the same for every machine):" in pages[0]


def test_a_comparison_whose_side_file_was_not_read_says_its_source_cannot_be_shown(tmp_path, docs):
    root = tmp_path / "results"
    write_comparison(root, text=json.dumps(side(margin=5), indent=2))
    cat = Catalog.build(root, {})
    cat.stale()
    page = render_page(cat, f"bench/{FIG}/index.md", docs, [])
    assert FIG in cat.figures and not cat.figures[FIG].compare.versions
    assert ("## The code that produced it { #code }\n\nIts side file could not be read, so its recorded source "
            "cannot be shown (the error above names it).\n") in page


def test_a_csv_without_a_side_file_stays_an_orphan(tmp_path):
    root = tmp_path / "results"
    write_comparison(root).unlink()
    cat = Catalog.build(root, {})
    assert [f.stem for f in cat.orphans] == [STEM] and FIG not in cat.figures and cat.errors == {}


def other_variants() -> str:
    """A side file whose second version is labelled c, where the results file measured b."""
    data = side(ratio=["c", "a"])
    data["versions"][1]["variant"] = "c"
    return json.dumps(data, indent=2)


DAMAGED = {
    "not JSON": (lambda: '{"format": 1,\n "title": "x",\n "margin": 0.1,,\n}', r":3: not valid JSON: .*\(column 16\)"),
    "wrong format": (lambda: json.dumps(side(format=2), indent=2), r":2: format 2 is not one this site reads"),
    "a list": (lambda: "[1, 2]", r":1: a comparison's side file is one JSON object"),
    "margin not a fraction": (lambda: json.dumps(side(margin=5), indent=2), r":\d+: margin must be a fraction"),
    "ratio names no version": (lambda: json.dumps(side(ratio=["b", "z"]), indent=2), r":\d+: 'ratio' must name two"),
    "versions not the CSV's variants": (other_variants, r":\d+: its versions \(a, c\) are not the variants of its "
                                                       r"results file compare_scale.csv \(a, b\)"),
}


@pytest.mark.parametrize("damage", DAMAGED)
def test_a_damaged_side_file_is_an_error_naming_file_and_line(tmp_path, docs, damage):
    make, message = DAMAGED[damage]
    root = tmp_path / "results"
    path = write_comparison(root, text=make())
    cat = Catalog.build(root, {})
    cat.stale()  # what the build asks of every pair first: a table-level problem becomes the pair's error
    assert FIG in cat.figures and cat.orphans == []  # shown as a damaged results file, not an orphan
    assert re.match(re.escape(str(path)) + message, cat.errors[(FIG, "cpu-a")]), cat.errors
    problems = []
    page = render_page(cat, f"bench/{FIG}/index.md", docs, problems)
    assert 'class="bench-error"' in page and any(str(path) in p for p in problems)
    assert "**invalid results**" in render_page(cat, "bench/index.md", docs, problems)


def test_two_machines_one_comparison_and_a_name_reused_for_another(tmp_path):
    root = tmp_path / "results"
    write_comparison(root, "cpu-a")
    write_comparison(root, "cpu-b")
    other = side()
    other["versions"][1]["sha256"] = "0" * 64  # another b under the same name
    write_comparison(root, "cpu-c", data=other)
    cat = Catalog.build(root, {}, preferred="cpu-a")
    assert cat.good_machines(FIG) == ["cpu-a", "cpu-b"]
    assert re.match(r".*cpu-c/compare_scale\.compare\.json:1: describes another comparison than .*cpu-a/",
                    cat.errors[(FIG, "cpu-c")])


def test_a_side_file_beside_a_figure_scripts_results_is_an_error(tmp_path):
    root = tmp_path / "results"
    write_machine(root, "cpu-a")  # fig-demo's results
    comparisons.side_file(root, "cpu-a", "demo").write_text(json.dumps(side()))
    fig = benchfixtures.demo_figure(tmp_path)
    cat = Catalog.build(root, {fig.id: fig})
    assert "a comparison's side file beside the results of the figure script demo.py" in cat.errors[("fig-demo",
                                                                                                      "cpu-a")]


def test_a_chapter_that_embeds_a_comparison_shows_its_recorded_source(tmp_path, docs):
    root = tmp_path / "results"
    write_comparison(root)
    cat = Catalog.build(root, {}, preferred="cpu-a")
    problems = []
    ctx = Context(cat, "docs/time-your-own-code.md", lambda target: "/" + target, problems.append,
                  src_uri="time-your-own-code.md", docs_dir=docs, cache=BuildCache())
    page = ctx.cache.fill(expand(f"# Time your own code\n\n<!-- bench:figure {FIG} -->\n", ctx), ctx.link)
    assert problems == [] and "2.00× [2.00..2.00]" in page
    code = page.split('class="bench-code"')[1]
    assert "--8&lt;--" in code and '--8<-- "' not in code  # the recorded text, not an include of a script
    assert "<code>examples/scale.py:scale_v1</code>" in code and "???+ example" not in code


def test_a_comparisons_chapter_link_is_the_section_on_the_command(tmp_path, docs):
    """A comparison is embedded in no chapter; "in its chapter" names the section that explains the
    command that made it, and says no chapter while that page does not exist."""
    from benchsite.pages.pages import NO_CHAPTER, chapter_link

    root = tmp_path / "results"
    write_comparison(root)
    cat = Catalog.build(root, {}, preferred="cpu-a")
    fig = cat.figures[FIG]
    ctx = Context(cat, "bench/x.md", lambda target: "/" + target, [].append, src_uri="bench/x.md", docs_dir=docs,
                  cache=BuildCache())
    (docs / comparisons.CHAPTER).write_text("# Time your own code\n\n## Compare { #compare }\n")
    assert chapter_link(fig, ctx) == "[Time your own code](../time-your-own-code.md#compare)"
    (docs / comparisons.CHAPTER).unlink()
    assert (chapter_link(fig, ctx) or NO_CHAPTER) == NO_CHAPTER


def test_a_bench_sessions_side_file_of_one_function_has_no_ratio(tmp_path):
    one = side(made_by="benchkit Bench", ratio=None, args="", command="python mine.py",
               versions=[side()["versions"][0]])
    path = tmp_path / "one.compare.json"
    path.write_text(json.dumps(one))
    fig = comparisons.read(path, "one")
    assert fig.ratio is None and fig.variants == ("a",) and fig.compare.made_by == "benchkit Bench"
    assert fig.caption.startswith("Made by `benchkit Bench`: a is `examples/scale.py:scale_v1`, interleaved")
    path.write_text(json.dumps({**one, "made_by": "someone"}))
    with pytest.raises(comparisons.ComparisonError, match=r"one.compare.json:\d+: made_by 'someone'"):
        comparisons.read(path, "one")
