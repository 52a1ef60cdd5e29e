"""`make claims`: every claim checked against any results folder, with how many runs bore it out
on their own (issue 37: a claim that holds in only some runs is a sentence about noise)."""

from __future__ import annotations

import ast

import pytest

from benchfixtures import demo_figure, write_machine
from benchsite.model.catalog import Catalog
from benchsite.model.load import ResultFile, load
from benchsite.model.table import Table
from benchsite.pages import claimcheck
from benchsite.views import claims
from conftest import committed_catalog


def demo_table(tmp_path, slow_run0: float = 1.0, runs: int = 3) -> Table:
    path = write_machine(tmp_path / "r", "cpu-a", sizes=(8,), runs=runs)
    frame = load(ResultFile("cpu-a", "demo", path))
    frame.loc[(frame["variant"] == "fast") & (frame["run"] == 0), "time_s"] *= slow_run0
    return Table.of(frame, demo_figure(tmp_path))


def test_support_counts_the_runs_that_bear_a_claim_out_alone(tmp_path):
    tab = demo_table(tmp_path)
    assert claims.support(tab, 'median("slow", n=8) > median("fast", n=8)') == (3, 3)
    assert claims.support(tab, 'median("slow", n=8) < median("fast", n=8)') == (0, 3)
    assert claims.support(tab, 'faster("fast", "slow", n=8)') == (3, 3)  # a verdict: each run's direction


def test_a_claim_true_on_the_medians_can_hold_in_only_some_runs(tmp_path):
    tab = demo_table(tmp_path, slow_run0=1000.0)  # run 0's fast variant is now slower than its slow one
    assert claims.evaluate(tab, 'median("slow", n=8) > median("fast", n=8)').state == "true"
    assert claims.support(tab, 'median("slow", n=8) > median("fast", n=8)') == (2, 3)
    assert claims.support(tab, 'slower("slow", "fast", n=8)') == (2, 3)


def test_a_claim_about_the_spread_between_runs_has_no_per_run_support(tmp_path):
    assert claims.support(demo_table(tmp_path), 'spread("fast", n=8) < 1') is None


def test_claims_are_found_with_their_page_and_line_outside_code_fences(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    claim = '<!-- bench:claim fig-demo ratio() {} 1 -->{}<!-- /bench:claim -->'
    (docs / "a.md").write_text(f"# A\n\nx {claim.format('>', 'slow is <b>slower</b>')}\n"
                               f"```\n{claim.format('<', 'in a fence')}\n```\n")
    found = [f for f in claimcheck.found_claims(docs, []) if f.where.startswith("docs/")]
    assert [(f.where, f.words) for f in found] == [("docs/a.md:3", "slow is …slower…")]


def test_check_reads_the_machine_asked_for_and_reports_false_claims(tmp_path):
    write_machine(tmp_path / "r", "cpu-a", sizes=(8,))
    fig = demo_figure(tmp_path)
    cat = Catalog.build(tmp_path / "r", {fig.id: fig}, declared="cpu-ref")
    found = [claimcheck.Found("docs/a.md:3", 'fig-demo median("slow", n=8) < median("fast", n=8)', "w")]
    (checked,) = claimcheck.check(cat, "cpu-a", found)
    assert (checked.state, checked.machine, checked.support) == ("false", "cpu-a", (0, 3))
    assert "| docs/a.md:3 | fig-demo | cpu-a | **no** | 0 of 3 |" in claimcheck.report([checked])


def test_a_cell_missing_on_another_machine_is_unavailable_there_not_an_error(tmp_path):
    """Another machine's folder can lack a cell the prose's machine has (an older session): the claim
    cannot be read there, which `make claims` and the your-machine page report; on the machine the
    prose quotes, the same gap is the claim's own error."""
    write_machine(tmp_path / "r", "cpu-a", sizes=(8,))
    write_machine(tmp_path / "r", "cpu-b", sizes=(16,))
    fig = demo_figure(tmp_path)
    cat = Catalog.build(tmp_path / "r", {fig.id: fig}, preferred="cpu-a", declared="cpu-a")
    found = [claimcheck.Found("docs/a.md:3", 'fig-demo median("slow", n=8) > median("fast", n=8)', "w")]
    (checked,) = claimcheck.check(cat, "cpu-b", found)
    assert checked.state == "unavailable" and checked.machine == "cpu-b"
    with pytest.raises(claims.ClaimError, match="docs/a.md:3"):
        claimcheck.check(cat, None, [claimcheck.Found("docs/a.md:3", 'fig-demo median("slow", n=64) > 1', "w")])


def test_a_cell_the_readers_machine_lacks_is_unavailable_when_the_reference_reads_it(tmp_path):
    """After make bench the prose quotes the reader's machine (preferred): a claim whose cell its
    results lack, but the reference machine's have, cannot be checked there; the page flags it and
    neither `make claims` nor the build stops. A claim the reference cannot read either is the
    claim's own error, on any machine."""
    from types import SimpleNamespace
    write_machine(tmp_path / "r", "cpu-a", sizes=(8,))
    write_machine(tmp_path / "r", "cpu-b", sizes=(16,))
    fig = demo_figure(tmp_path)
    cat = Catalog.build(tmp_path / "r", {fig.id: fig}, preferred="cpu-b", declared="cpu-a")
    assert cat.prose_machine(fig.id) == "cpu-b"
    sound, wrong = 'fig-demo median("slow", n=8) > median("fast", n=8)', 'fig-demo median("slow", n=64) > 1'
    (checked,) = claimcheck.check(cat, "cpu-b", [claimcheck.Found("docs/a.md:3", sound, "w")])
    assert checked.state == "unavailable" and "no row of fig-demo on cpu-b" in checked.measured
    with pytest.raises(claims.ClaimError, match="docs/a.md:3"):
        claimcheck.check(cat, "cpu-b", [claimcheck.Found("docs/a.md:3", wrong, "w")])
    problems: list[str] = []
    ctx = SimpleNamespace(catalog=cat, claims_fatal=True, on_problem=problems.append, page="docs/a.md")
    line = f"x <!-- bench:claim {sound} -->slow is slower<!-- /bench:claim -->"
    html = claims.expand_line(line, ctx, 3)
    assert "slow is slower" in html and "cannot be checked on cpu-b" in html and problems == []
    with pytest.raises(claims.ClaimError, match="docs/a.md:3"):
        claims.expand_line(line.replace(sound, wrong), ctx, 3)


def test_the_command_names_a_missing_folder_or_machine(tmp_path, capsys):
    assert claimcheck.main(["--results", str(tmp_path / "nowhere")]) == 2
    assert "no results folder" in capsys.readouterr().err
    write_machine(tmp_path / "r", "cpu-a", sizes=(8,))
    assert claimcheck.main(["--results", str(tmp_path / "r"), "--machine", "cpu-zz"]) == 2
    assert "no machine cpu-zz" in capsys.readouterr().err


def test_a_verdicts_absence_is_read_on_all_runs_together(tmp_path):
    tab = demo_table(tmp_path, runs=6)  # slow is 100x fast in every run: "a result"
    assert claims.support(tab, 'not result("slow", "fast", n=8)') == (0, 6)
    assert claims.support(tab, 'not faster("slow", "fast", n=8) and median("slow", n=8) > 0') == (6, 6)
    few = demo_table(tmp_path / "b")  # three runs decide nothing: not a result, in every reading
    assert claims.support(few, 'not result("slow", "fast", n=8)') == (3, 3)


def test_every_claim_is_borne_out_by_every_run_of_the_reference():
    """Issue 37: a claim that holds in only some runs is a sentence about noise. A claim that
    compares raw numbers must hold in each run alone; one that rests on a verdict (faster,
    slower, result) is decided by the paired rule, which already weighs the runs."""
    from benchsite.model.claim_syntax import parse, split

    declared = claimcheck.declared_machine()
    cat = committed_catalog(preferred=declared, declared=declared)
    weak = []
    for c in claimcheck.check(cat, None, list(claimcheck.found_claims(claimcheck.DOCS, claimcheck.scripts(cat)))):
        assert c.state in ("true", "expected"), (c.found.where, c.measured)
        calls = {n.func.id for n in ast.walk(parse(split(c.found.spec)[2])) if isinstance(n, ast.Call)}
        by_verdict = bool(calls & {"faster", "slower", "result"})
        if c.support and c.support[0] < c.support[1] and not by_verdict:
            weak.append((c.found.where, c.support, c.found.words[:60]))
    assert weak == []
