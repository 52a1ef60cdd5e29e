"""Claims: sentences checked against the data beside them (benchsite/views/claims.py).

Small tables first (a claim that holds, one that does not, what the build reads), then the real
pages: the committed results pass, and the same results with one variant scaled in several
figures fail a strict build on exactly the claims that depend on it, naming page:line, the claim
and the measured values; a lenient build shows them flagged.
"""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest

from benchfixtures import demo_figure, write_machine
from benchsite.model import quotes
from benchsite.model.figures import CLAIM, FigureError, all_figures, read_figure
from benchsite.model.load import ResultFile, load
from benchsite.model.table import Table
from benchsite.views import claims, fmt
from conftest import REFERENCE, REPO, build_site


@pytest.fixture
def table(tmp_path) -> Table:
    # fast: 10 µs x n/8, slow: 1 ms x n/8, three runs 1 % apart: slow / fast = 100 at every n
    path = write_machine(tmp_path / "r", "cpu-a", sizes=(8, 16, 32))
    return Table.of(load(ResultFile("cpu-a", "demo", path)), demo_figure(tmp_path))


def test_a_claim_that_holds_is_true_and_keeps_what_it_read(table):
    got = claims.evaluate(table, 'ratio(n="last") > 50 and growth("fast") < 5')
    assert got.state == "true"
    assert got.values[0].startswith("slow / fast at n=32: 100×")
    assert got.values[1].startswith("fast from n=8 to n=32: 4.00×")


def test_a_claim_the_data_contradicts_is_false_with_its_values(table):
    got = claims.evaluate(table, 'median("slow", n="first") < median("fast", n="first")')
    assert got.state == "false"
    assert got.measured == "slow at n=8: 1.01 ms [1.00..1.02]; fast at n=8: 10.1 µs [10.0..10.2]"


def test_verdicts_come_from_the_paired_rule(table):
    # three runs: fewer than the rule needs, so no difference is "a result" however large
    got = claims.evaluate(table, 'slower("slow", "fast", n=8)')
    assert got.state == "false" and "not a result yet" in got.measured


def test_a_claim_limited_to_accelerators_is_an_expectation_on_a_cpu(table):
    got = claims.evaluate(table, "ratio(n=8) < 1", on=("gpu", "tpu"))
    assert got.state == "expected" and got.platform == "cpu" and not got.values


@pytest.mark.parametrize("expr, says", [
    ('median("medium", n=8) > 0', "not a variant"),
    ('median("fast", size=8) > 0', "no group_by param size"),
    ('median("fast") > 0', "matches 3 rows"),
    ('median("fast", n=4096) > 0', "no row"),
    ('__import__("os") > 0', "unknown function"),
    ('median("fast", n=8) >', "cannot read"),
    ('median("fast", n=8).real > 0', "not allowed"),
])
def test_a_claim_the_build_cannot_read_says_why(table, expr, says):
    with pytest.raises(claims.ClaimError, match=re.escape(says)):
        claims.evaluate(table, expr)


@pytest.fixture
def unpaired(tmp_path) -> Table:
    """Nine runs of two variants whose ratio moves from run to run, and "slow" lacks run 0: which
    runs are paired decides the numbers."""
    path = write_machine(tmp_path / "r", "cpu-a", runs=9, sizes=(8, 16))
    frame = load(ResultFile("cpu-a", "demo", path))
    slow = frame["variant"] == "slow"
    frame.loc[slow, "time_s"] *= 1 + 0.1 * ((frame.loc[slow, "run"] * 7) % 5)
    return Table.of(frame[~(slow & (frame["run"] == 0))].copy(), demo_figure(tmp_path))


@pytest.mark.parametrize("pair", [("slow", "fast"), ("fast", "slow")])  # the figure's ratio, and another
def test_a_claim_reads_a_ratio_and_its_verdicts_as_a_sentence_quotes_them(unpaired, pair):
    """One query path: a claim's ratio, paired verdict and equivalence of two variants are the ones
    ``bench:value`` quotes for the same row (quotes.pair), over the runs both variants have."""
    a, b = pair
    got = claims.evaluate(unpaired, f'ratio("{a}", "{b}", n=16) > 0 and not result("{a}", "{b}", n=16) '
                                    f'and not same("{a}", "{b}", margin=0.01, n=16)')
    opts = {"a": a, "b": b, "n": "16"}
    ratio = quotes.ratio(unpaired.frame, dict(opts), unpaired.fig)
    verdict = quotes.verdict(unpaired.frame, dict(opts), unpaired.fig)
    same = quotes.equivalence(unpaired.frame, {**opts, "margin": "0.01"}, unpaired.fig)
    assert ratio.runs == 8 and ratio.low < ratio.high  # eight paired runs, unequal ratios
    assert got.values == (
        f"{a} / {b} at n=16: {fmt.ratio_range(ratio.median, ratio.low, ratio.high)}",
        f"verdict {a} vs {b} at n=16: {verdict.text} ({fmt.sig(verdict.ratio)}×; {verdict.reason})",
        f"equivalence {a} vs {b} at n=16: {same.text} ({same.reason})")
    if pair == unpaired.fig.ratio:  # and the table's ratio column
        assert unpaired.rows[1].ratio == ratio


@pytest.mark.parametrize("pair", [("slow", "slow"), ("fast", "slow")])
def test_a_claim_compares_two_rows_as_a_sentence_quotes_them(unpaired, pair):
    """``a_n=`` / ``b_n=`` pick each side's row: the ratio and verdicts are bench:value's with
    ``a.n=`` / ``b.n=`` (quotes.pair on the figure's samples), over the runs both sides have."""
    a, b = pair
    sides = f'"{a}", "{b}", a_n=16, b_n=8'
    got = claims.evaluate(unpaired, f"ratio({sides}) > 0 and result({sides}) or same({sides}, margin=0.5)")
    opts = {"a": a, "b": b, "a.n": "16", "b.n": "8"}
    ratio = quotes.ratio(unpaired.frame, dict(opts), unpaired.fig)
    verdict = quotes.verdict(unpaired.frame, dict(opts), unpaired.fig)
    same = quotes.equivalence(unpaired.frame, {**opts, "margin": "0.5"}, unpaired.fig)
    assert ratio.runs == 8  # "slow" lacks run 0: eight paired runs
    assert got.values == (
        f"{a} at n=16 / {b} at n=8: {fmt.ratio_range(ratio.median, ratio.low, ratio.high)}",
        f"verdict {a} at n=16 vs {b} at n=8: {verdict.text} ({fmt.sig(verdict.ratio)}×; {verdict.reason})",
        f"equivalence {a} at n=16 vs {b} at n=8: {same.text} ({same.reason})")
    assert claims.support(unpaired, f"ratio({sides}) > 0") == (8, 9)  # run 0 has no slow row
    with pytest.raises(claims.ClaimError, match=re.escape("matches {'n': 4096}")):
        claims.evaluate(unpaired, f'ratio("{a}", "{b}", a_n=4096, b_n=8) > 0')
    with pytest.raises(claims.ClaimError, match="no group_by param a_n"):  # a statistic of one cell
        claims.evaluate(unpaired, 'median("fast", a_n=8) > 0')


def test_a_claims_pair_is_the_one_query_path(unpaired, monkeypatch):
    asked = []
    real = quotes.pair
    monkeypatch.setattr(quotes, "pair", lambda *args: asked.append(dict(args[1])) or real(*args))
    claims.evaluate(unpaired, 'ratio(n=8) > 0 and result(n=8) or same(n=8, margin=0.05)')
    assert asked == [{"a": "slow", "b": "fast"}] * 3


@pytest.fixture
def twins(tmp_path) -> Table:
    # nine runs; "one" and "other" are the same call (every run moves both alike), "slow" is 100x
    path = write_machine(tmp_path / "r", "cpu-a", runs=9, sizes=(8, 16),
                         variants=(("one", 1e-5), ("other", 1e-5), ("slow", 1e-3)))
    return Table.of(load(ResultFile("cpu-a", "demo", path)),
                    demo_figure(tmp_path, variants=("one", "other", "slow"), ratio=("other", "one")))


def test_same_is_the_equivalence_rule_with_its_margin(twins):
    got = claims.evaluate(twins, 'same("other", "one", margin=0.05, n=8) and same(margin=0.01, n=16)')
    assert got.state == "true"
    assert got.values[0].startswith("equivalence other vs one at n=8: the same within ±5 % "
                                    "(sign-test interval (at least 90 %)")
    far = claims.evaluate(twins, 'same("slow", "one", margin=0.25, n=8)')
    assert far.state == "false" and "could not show the same within ±25 % (interval 100" in far.measured
    assert claims.evaluate(twins, 'not same("slow", "one", margin=0.25, n=8)').state == "true"


def test_same_is_read_on_all_runs_together_when_counting_support(twins):
    # one run shows nothing the same; the claim is about every run at once, as "not result" is
    assert claims.support(twins, 'same("other", "one", margin=0.05, n=8)') == (9, 9)
    assert claims.support(twins, 'same("slow", "one", margin=0.05, n=8)') == (0, 9)


@pytest.mark.parametrize("expr, says", [
    ('same("other", "one", n=8)', "same() needs margin="),
    ('same(n=8, margin=0)', "between 0 and 1"),
    ('same(n=8, margin=5)', "between 0 and 1"),
    ('same(n=8, margin="5 %")', "between 0 and 1"),
])
def test_a_same_claim_without_a_usable_margin_is_refused(twins, expr, says):
    with pytest.raises(claims.ClaimError, match=re.escape(says)):
        claims.evaluate(twins, expr)
    with pytest.raises(claims.ClaimError, match=re.escape(says)):
        claims.split(f"fig-demo {expr}")  # as a caption's claim is read, before any table


def test_a_caption_claim_is_read_and_checked_when_the_script_is_read(tmp_path):
    script = tmp_path / "fig_x.py"
    good = 'Fast <!-- bench:claim fig-x ratio(n="last") > 1 -->is slower<!-- /bench:claim -->.'
    script.write_text(f"FIGURE = {{'title': 't', 'caption': {good!r}, 'chapter': 'c.md', 'variants': ['a', 'b']}}\n")
    fig = read_figure(script)
    assert fig.caption == "Fast is slower." and fig.caption_src == good
    script.write_text("FIGURE = {'title': 't', 'caption': 'x <!-- bench:claim fig-x ratio( -->y<!-- /bench:claim -->', "
                      "'chapter': 'c.md', 'variants': ['a', 'b']}\n")
    with pytest.raises(FigureError, match=r"fig_x.py:1: FIGURE caption: cannot read the claim"):
        read_figure(script)


def test_a_captions_inline_code_is_code_and_the_rest_is_escaped(tmp_path):
    """A caption is a plain string in the script, put into raw HTML, so Markdown never turns its
    `code` spans into code: fig-shard-block's caption showed `block_until_ready` with its
    backticks. Each span is now <code>, escaped, in the plain words and in a claim's words alike."""
    script = tmp_path / "fig_x.py"
    caption = "A `jax.Array`'s <b>`x < y`</b> & `` stays; `one` and `two`."
    script.write_text(f"FIGURE = {{'title': 't', 'caption': {caption!r}, 'chapter': 'c.md', 'variants': ['a']}}\n")
    shown = str(claims.caption_html(read_figure(script), ctx=None))
    assert shown == ("A <code>jax.Array</code>&#x27;s &lt;b&gt;<code>x &lt; y</code>&lt;/b&gt; &amp; `` stays; "
                     "<code>one</code> and <code>two</code>.")
    assert claims.plain("waits on <code>block_until_ready</code> <!-- x -->") == "waits on block_until_ready …"


@pytest.mark.slow
def test_the_sharded_chapters_caption_shows_code_not_backticks(built_site):
    """In the chapter (claims checked) and on /bench's figure page (plain words) alike."""
    for page in ("timing-sharded-programs/index.html", "bench/fig-shard-block/index.html"):
        captions = re.findall(r'<p class="bench-caption">(.*?)</p>', (built_site / page).read_text(), re.S)
        assert captions and "`" not in "".join(captions), page
        assert "<code>block_until_ready</code>" in "".join(captions), page


# --- the real pages -----------------------------------------------------------------------------

DOCS = REPO / "docs"


def claim_lines(words: str) -> list[str]:
    """``docs/<page>:<line>`` of every claim on the site whose words contain ``words``."""
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        for number, line in enumerate(page.read_text(encoding="utf-8").split("\n"), 1):
            if any(words in body for _, body in CLAIM.findall(line)):
                found.append(f"docs/{page.relative_to(DOCS)}:{number}")
    assert found, f"no claim says {words!r}"
    return found


def scale(results: Path, stem: str, variant: str, factor: float, **params: str) -> None:
    """Multiply one variant's time_s in one figure's CSV (rows whose params match), keeping it valid."""
    path = results / REFERENCE / f"{stem}.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    head = rows[0]
    v, t, p = head.index("variant"), head.index("time_s"), head.index("params")
    changed = 0
    for row in rows[1:]:
        pairs = dict(kv.split("=", 1) for kv in row[p].split(";") if kv)
        if row[v] == variant and all(pairs.get(k) == str(x) for k, x in params.items()):
            row[t] = repr(float(row[t]) * factor)
            changed += 1
    assert changed, (stem, variant, params)
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)


@pytest.fixture(scope="module")
def mutated(tmp_path_factory) -> Path:
    """The committed results with one variant scaled in four figures."""
    results = tmp_path_factory.mktemp("results")
    shutil.copytree(REPO / "results" / REFERENCE, results / REFERENCE)
    scale(results, "dispatch_vs_completion", "dispatch", 200.0, n="1024")  # dispatch now grows like the work
    scale(results, "dtype_cost", "bfloat16", 0.4, op="matmul")  # bfloat16 matmul now faster than float32
    scale(results, "pytree_block", "one-leaf", 0.3, program="cheap-last")  # the tree now far slower than the leaf
    scale(results, "host_device_overlap", "blocked-each-step", 0.3)  # waiting now cheaper than either side
    return results


def warnings(proc) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("WARNING")]


TRIPPED = {  # words of a claim the mutation contradicts -> the figure it reads
    "it grows far less than the completed time does": "fig-dispatch-vs-completion",
    "At the smallest size the factor is only": "fig-dispatch-vs-completion",
    "bfloat16 was a result faster than float32 for the axpy, while for the matmul": "fig-dtype-cost",
    "the time of the loss alone": "fig-pytree-block",
    "the blocked loop was a result slower than either side alone": "fig-host-device-overlap",
}
HELD = ("more than half of the first call", "isolated calls were slower", "every one of the five waited",
        "The loss was ready early")


@pytest.fixture(scope="module")
def strict_build(mutated, tmp_path_factory):
    return build_site(tmp_path_factory.mktemp("site"), results=mutated)


@pytest.mark.slow
def test_the_committed_results_bear_out_every_claim(built_site, built_site_log):
    assert not [w for w in built_site_log.splitlines() if w.startswith("WARNING") and "claim" in w], \
        built_site_log[-3000:]


@pytest.mark.slow
def test_a_false_claim_fails_strict_naming_page_line_claim_and_values(strict_build):
    assert strict_build.returncode != 0
    assert "Traceback" not in strict_build.stderr
    said = [w for w in warnings(strict_build) if "claim contradicted" in w]
    for words, fig_id in TRIPPED.items():
        for where in claim_lines(words):
            start = f"{where}: claim contradicted by {fig_id}"
            hit = [w for w in said if w.split(" - ", 1)[-1].lstrip().startswith(start)]
            assert hit, (where, words, said)
            assert words in hit[0] and "measured: " in hit[0]
    assert re.search(r"measured: dispatch from n=128 to n=1024: \d", "\n".join(said))
    for words in HELD:  # claims on data nobody changed still hold
        assert not [w for w in said if words in w]


@pytest.mark.slow
def test_a_false_caption_claim_names_the_script(strict_build):
    said = "\n".join(warnings(strict_build))
    for stem in ("dispatch_vs_completion", "dtype_cost", "pytree_block", "host_device_overlap"):
        assert re.search(rf"bench_scripts/{stem}\.py:\d+: FIGURE caption \(shown on docs/", said), stem


@pytest.mark.slow
def test_a_lenient_build_flags_the_false_sentence(mutated, tmp_path):
    out = tmp_path / "site"
    proc = build_site(out, results=mutated, strict=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = (out / "asynchronous-dispatch" / "index.html").read_text(encoding="utf-8")
    false = r'<span class="bench-claim bench-claim-false"[^>]*>(.*?)\[contradicted by the data: ([^\]]*)\]'
    flagged = re.findall(false, page, re.S)
    assert any("the blocked loop was a result slower than either side alone" in words
               and "verdict blocked-each-step vs host-only" in values
               for words, values in flagged), flagged
    assert 'class="bench-claim" title="checked against fig-implicit-sync' in page  # a true one: plain prose


def test_every_figure_embedded_in_a_chapter_so_its_caption_claims_are_checked():
    for fig in all_figures(REPO / "bench_scripts").values():
        if CLAIM.search(fig.caption_src):
            chapter = (DOCS / fig.chapter).read_text(encoding="utf-8")
            assert f"bench:figure {fig.id}" in chapter, fig.id


def test_how_many_claims_the_site_carries():
    pages = {p: len(CLAIM.findall(p.read_text(encoding="utf-8"))) for p in DOCS.rglob("*.md")}
    captions = sum(len(CLAIM.findall(f.caption_src)) for f in all_figures(REPO / "bench_scripts").values())
    assert sum(pages.values()) + captions >= 40 and sum(1 for n in pages.values() if n) >= 7


# --- outlying clusters: shown under the table, and a claim can count them -----------------------

def test_a_run_with_a_cluster_of_slow_samples_is_named_with_how_many_and_how_far(tmp_path):
    from benchsite.views import quantities, render

    path = write_machine(tmp_path / "r", "cpu-a", sizes=(8,))
    frame = load(ResultFile("cpu-a", "demo", path))
    slow = (frame["variant"] == "fast") & (frame["run"] == 1) & (frame["sample"] < 3)
    frame.loc[slow, "time_s"] *= 10  # three of run 1's four samples
    tab = Table.of(frame, demo_figure(tmp_path))
    assert quantities.outlier_lines(tab) == ["fast at n=8: run 1, 3 of 4 samples at 9.90×"]
    assert claims.evaluate(tab, 'clusters("fast", n=8) > 0').state == "true"
    assert claims.evaluate(tab, 'clusters("slow", n=8) > 0').state == "false"
    spread = str(render.spread_text(tab))
    assert "Spread of this panel (fig-demo on cpu-a)" in spread and "run 1, 3 of 4 samples" in spread
    frame.loc[slow & (frame["sample"] == 2), "time_s"] /= 10  # two stray samples: ordinary noise
    assert quantities.outlier_lines(Table.of(frame, demo_figure(tmp_path))) == []


# --- a reader's own machine: a false claim is shown and listed, and the run goes on (issue 37) ----

ELSEWHERE = "cpu-elsewhere-f1m1-2c"


def relabel(source: Path, dest: Path, machine: str, stems: set[str] | None = None) -> None:
    """Every results file of ``source`` (or those of ``stems``) as if ``machine`` had measured it,
    with its side files (a trace, a timeline), without the kept sessions."""
    dest.mkdir(parents=True)
    chosen = [p for p in source.iterdir() if p.is_file() and (stems is None or p.name.split(".")[0] in stems)]
    for path in sorted(p for p in chosen if p.suffix != ".csv"):
        shutil.copy2(path, dest / path.name)
    for path in sorted(p for p in chosen if p.suffix == ".csv"):
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        col = rows[0].index("machine")
        for row in rows[1:]:
            row[col] = machine
        with (dest / path.name).open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh, lineterminator="\n").writerows(rows)


# The chapters the tests of a reader's build read: that reader ran (make bench ONLY=...) the figures
# they show, those the mutation contradicts, and fig-machine-peak (a roofline reads the ceilings
# measured on the machine it quotes: a strict build needs them); every other figure is quoted from
# the reference.
LOCAL_CHAPTERS = ("what-the-clock-caught.md", "asynchronous-dispatch.md", "diagnosing/harness.md")


@pytest.fixture(scope="module")
def local_build(mutated, tmp_path_factory):
    """The committed results beside a reader's machine whose data contradict several claims, built
    strict as `make site` does after that reader's `make bench` (the prose quotes their machine).
    The reader measured the figures LOCAL_CHAPTERS needs, not all of them: each further figure is
    one more file, pair and set of pages the build makes, and nothing here reads them."""
    results = tmp_path_factory.mktemp("results")
    shutil.copytree(REPO / "results" / REFERENCE, results / REFERENCE)
    figures = {"fig-machine-peak", *TRIPPED.values()} | {f"fig-{fig}" for chapter in LOCAL_CHAPTERS for fig in
                                       re.findall(r"<!-- bench:\w+ fig-([\w-]+)", (DOCS / chapter).read_text())}
    relabel(mutated / REFERENCE, results / ELSEWHERE, ELSEWHERE,
            stems={fig.removeprefix("fig-").replace("-", "_") for fig in figures})
    out = tmp_path_factory.mktemp("site")
    return out, build_site(out, results=results, extra_env={"BENCH_MACHINE": ELSEWHERE})


@pytest.mark.slow
def test_a_claim_false_on_a_readers_machine_is_flagged_there_and_does_not_fail_the_build(local_build):
    out, proc = local_build
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not [w for w in warnings(proc) if "claim" in w]
    page = (out / "asynchronous-dispatch" / "index.html").read_text(encoding="utf-8")
    flagged = re.findall(r'bench-claim-false"[^>]*>(.*?)\[did not hold on ([^:]+): ([^\]]*)\]', page, re.S)
    assert any("the blocked loop was a result slower than either side alone" in words and machine == ELSEWHERE
               and "blocked-each-step" in values
               for words, machine, values in flagged), flagged
    assert "contradicted by the data" not in page


@pytest.mark.slow
def test_each_chapter_says_whose_numbers_it_quotes(local_build, built_site):
    out, _ = local_build
    for site, machine, role in ((out, ELSEWHERE, "by <code>make bench</code> on this machine"),
                                (built_site, REFERENCE, "the site's reference machine")):
        for chapter in (c.removesuffix(".md") for c in LOCAL_CHAPTERS):
            page = (site / chapter / "index.html").read_text(encoding="utf-8")
            banner = re.search(r'<div class="bench-whose".*?</div>', page, re.S)
            assert banner, (site, chapter)
            assert page.index("bench-whose") < page.index("<h2"), "the banner comes before the first section"
            assert f"<code>{machine}</code>" in banner.group(0) and role in banner.group(0), banner.group(0)
            assert re.search(r"sessions? <code>\d{8}T\d{6}Z-[0-9a-f]{4}</code>", banner.group(0)), banner.group(0)


@pytest.mark.slow
def test_bench_keeps_the_declared_reference_and_the_tabs_say_whose(local_build):
    out, _ = local_build
    page = (out / "bench" / "fig-dispatch-vs-completion" / "index.html").read_text(encoding="utf-8")
    assert re.search(rf"Reference: <strong>{REFERENCE}</strong>", page), "the reader's run is not the reference"
    chapter = (out / "what-the-clock-caught" / "index.html").read_text(encoding="utf-8")
    labels = re.findall(r'<label class="bench-tab-label"[^>]*>(.*?)</label>', chapter, re.S)
    assert labels[0].startswith(ELSEWHERE) and "measured here" in labels[0], labels[:2]
    assert labels[1].startswith(REFERENCE) and "reference" in labels[1], labels[:2]


@pytest.mark.slow
def test_the_page_for_after_make_bench_lists_what_did_not_hold(local_build, built_site):
    out, _ = local_build
    page = (out / "your-machine" / "index.html").read_text(encoding="utf-8")
    section = page[page.index('id="claims-here"'):page.index('id="against-the-reference"')]
    for words in ("the blocked loop was a result slower than either side alone", "bfloat16 was a result faster"):
        assert words in section, words
    assert "How quiet the session was" in page and "Different hardware" in page
    assert re.search(rf'href="[^"]*bench/fig-dtype-cost/{ELSEWHERE}/#compared"', page)
    published = (built_site / "your-machine" / "index.html").read_text(encoding="utf-8")
    assert "This build has no local run" in published and 'id="claims-here"' not in published


@pytest.mark.slow
def test_a_cite_block_of_a_readers_own_session_says_it_is_not_published(local_build):
    out, _ = local_build
    mine = (out / "bench" / "fig-dtype-cost" / ELSEWHERE / "index.html").read_text(encoding="utf-8")
    ours = (out / "bench" / "fig-dtype-cost" / REFERENCE / "index.html").read_text(encoding="utf-8")
    assert "measured here by make bench, not published" in mine
    assert "not published" not in ours
    page = (out / "your-machine" / "index.html").read_text(encoding="utf-8")
    counts = re.search(r'fig-dtype-cost</a></td><td>(\d+)</td>', page)
    assert counts and int(counts.group(1)) > 0  # time cells only: fig-dtype-cost's ratio rows are left out
