"""The A/A calibration's counts, on constructed results with known false positives (no timing)."""

import dataclasses

import numpy as np
import pytest

from benchkit import results
from benchsite.build.buildcache import BuildCache
from benchsite.model import calibration, stats
from benchsite.model.catalog import Catalog
from benchsite.model.figures import Figure
from benchsite.pages.markers import Context, MarkerError, expand
from benchsite.views import verdict_rates
from test_results import make_row

DRIFT = [1.0, 1.03, 0.97, 1.02, 0.98, 1.01, 0.99, 1.04, 0.96]  # one per run, shared by A and B
WIGGLE = [0.01, -0.01] * 5  # B's own noise around A: alternating, so no direction wins
PLANTED = {3: 1.2, 5: 1.2}  # n -> B / A in every run: what a rule must call a result
SIZES = (1, 2, 3, 4, 5, 6)


def aa_catalog(tmp_path, planted=PLANTED, runs=9) -> Catalog:
    script = tmp_path / "aa.py"
    script.write_text("FIGURE = {}\n")
    fig = Figure(id="fig-aa", stem="aa", script=script, title="A/A", caption="c", chapter="index.md",
                 variants=("A", "B"), group_by=("op", "n"), ratio=("A", "B"))
    rows = []
    for n in SIZES:
        for r in range(runs):
            a = 1e-4 * n * DRIFT[r]
            b = a * planted.get(n, 1 + WIGGLE[r])
            rows += [make_row(run=r, sample=s, variant=v, time_s=t, params=f"n={n};op=x", figure_id="fig-aa",
                              script_path="bench_scripts/aa.py", script_sha256="x" * 64)
                     for s in range(3) for v, t in (("A", a), ("B", b))]
    results.write_atomic(tmp_path / "results" / "cpu-test-2c" / "aa.csv", results.to_csv_text(rows))
    return Catalog.build(tmp_path / "results", {"fig-aa": fig})


def found(tmp_path, **kw):
    return calibration.pairs(aa_catalog(tmp_path, **kw).table("fig-aa", "cpu-test-2c"))


def test_every_row_is_one_pair_over_its_runs(tmp_path):
    pairs = found(tmp_path)
    assert [p.label for p in pairs] == [f"op=x, n={n}" for n in SIZES]
    assert calibration.runs_of(pairs) == 9 and all(p.a.size == p.b.size == 9 for p in pairs)


DIFFERENCE = tuple(r for r in calibration.RULES if r.name in ("paired", "unpaired"))


def test_each_rule_counts_exactly_the_planted_differences(tmp_path):
    counts = {c.rule.name: c for c in calibration.measured(found(tmp_path))}
    assert set(counts) == {"paired", "unpaired", "equivalence"}
    assert set(counts["equivalence"].wrong) >= {"op=x, n=3", "op=x, n=5"}  # a planted one is not "the same"
    for count in (counts["paired"], counts["unpaired"]):
        assert count.pairs == len(SIZES)
        assert count.wrong == ("op=x, n=3", "op=x, n=5"), count.rule.name
        assert count.rate == pytest.approx(2 / 6)


def test_the_paired_count_is_the_figure_panels_verdicts(tmp_path):
    tab = aa_catalog(tmp_path).table("fig-aa", "cpu-test-2c")
    paired = calibration.measured(calibration.pairs(tab))[0]
    assert paired.rule.name == "paired"
    assert paired.wrong == tuple(r.label for r in tab.rows if r.verdict.is_result)  # what the panel says per row


def test_no_planted_difference_no_false_positive(tmp_path):
    counts = calibration.measured(found(tmp_path, planted={}), DIFFERENCE)
    assert [len(c.wrong) for c in counts] == [0, 0]


def test_the_unpaired_rule_compares_disjoint_halves_in_run_order(monkeypatch):
    seen = []
    monkeypatch.setattr(stats, "unpaired_verdict", lambda a, b: seen.append((a, b)) or stats.Verdict("x", ""))
    calibration.halves(np.arange(1.0, 10.0), np.arange(11.0, 20.0))  # runs 0-8 of A and of B
    (a_side, b_side), = seen
    assert a_side.tolist() == [1, 2, 3, 4]  # A's earlier runs 0-3
    assert b_side.tolist() == [15, 16, 17, 18, 19]  # B's later runs 4-8: no run on both sides


def test_a_third_rule_is_one_line(tmp_path):
    always = calibration.Rule("always", "calls everything", lambda a, b: stats.Verdict(stats.RESULT, ""))
    never_same = calibration.Rule("never same", "never says the same", lambda a, b: stats.Verdict("x", ""),
                                  wrong=lambda v: v.text != "the same")
    counts = calibration.measured(found(tmp_path), DIFFERENCE + (always, never_same))
    assert [len(c.wrong) for c in counts] == [2, 2, 6, 6]
    assert calibration.simulated(always, 5, trials=50) == 1.0


@pytest.mark.parametrize(("k", "n", "low", "high"), [(0, 16, 0.0, 0.2059), (5, 10, 0.1871, 0.8129),
                                                     (16, 16, 0.7941, 1.0)])
def test_exact_interval_matches_clopper_pearson(k, n, low, high):
    assert calibration.exact_interval(k, n) == pytest.approx((low, high), abs=1e-4)


def test_simulated_paired_rate_agrees_with_the_site_simulation():
    site = {(r.rule, r.runs): r.rate for r in stats.simulate_error_rates(runs=(9,), shifts=(0,))}
    paired = calibration.RULES[0]
    # the same model and rule, other draws: within what 2000 and 4000 trials can tell apart
    assert abs(calibration.simulated(paired, 9) - site[("paired", 9)]) < 0.02


@pytest.mark.parametrize("rule", calibration.RULES, ids=lambda r: r.name)
@pytest.mark.parametrize(("runs", "run_sd", "drift_sd"), [(2, 0.02, 0.03), (5, 0.02, 0.03), (6, 0.0, 0.0),
                                                          (9, 0.05, 0.0), (10, 0.01, 0.1)])
def test_simulated_in_rows_calls_what_the_rule_calls_trial_by_trial(rule, runs, run_sd, drift_sd):
    """The simulation decides every trial at once (``wrong_in_rows``): exactly the rule's calls."""
    one_by_one = dataclasses.replace(rule, wrong_in_rows=None)
    assert rule.wrong_in_rows is not None
    assert calibration.simulated(rule, runs, run_sd, drift_sd, 300, 7) == \
        calibration.simulated(one_by_one, runs, run_sd, drift_sd, 300, 7)


def test_noise_estimate_recovers_the_model():
    rng = np.random.default_rng(1)
    drift = rng.normal(0, 0.05, (40, 9))
    pairs = [calibration.Pair(str(i), np.exp(d + rng.normal(0, 0.02, 9)), np.exp(d + rng.normal(0, 0.02, 9)))
             for i, d in enumerate(drift)]
    seen = calibration.noise(pairs)
    assert 0.01 < seen.run_sd < 0.04 and 0.025 < seen.drift_sd < 0.08


def ctx(catalog, problems=None):
    return Context(catalog, "docs/page.md", lambda target: "../" + target,
                   (problems if problems is not None else []).append, cache=BuildCache())


def test_marker_renders_counts_rates_and_the_pairs_called(tmp_path, monkeypatch):
    monkeypatch.setattr(calibration, "RULES", DIFFERENCE)
    html = expand("<!-- bench:aa-rates fig-aa -->", ctx(aa_catalog(tmp_path)))
    assert "<td>paired</td>" in html and "<td>unpaired</td>" in html
    assert html.count("<td>&#34;a result&#34;</td>") == 2  # the false call each rule can make here
    assert html.count("<td>6</td>") == 2 and html.count("<td>2</td>") == 2
    assert html.count("33 % [") == 2  # 2 of 6, with its interval
    assert html.count("op=x, n=3; op=x, n=5") == 2
    assert "fig-aa on cpu-test-2c, 9 runs" in html and f"{calibration.SIM_TRIALS} sets of 9 runs" in html

    # Under the table, each rule's measured interval against its two simulated rates, from the numbers
    # shown: two planted differences in six pairs lie far above what the simulation gives with none.
    assert html.count("its interval lies above both simulated rates") == 2


def test_the_marker_says_where_no_wrong_call_lies_against_the_simulation(tmp_path, monkeypatch):
    monkeypatch.setattr(calibration, "RULES", DIFFERENCE)
    html = expand("<!-- bench:aa-rates fig-aa -->", ctx(aa_catalog(tmp_path, planted={})))
    assert "Measured against simulated: <strong>paired</strong>: its interval holds both simulated rates" in html


@pytest.mark.parametrize(("interval", "at_site", "here", "said"), [
    ((0.2, 0.7), 0.005, 0.0005, "its interval lies above both simulated rates"),
    ((0.0, 0.21), 0.011, 0.0, "its interval holds both simulated rates"),
    ((0.0, 0.05), 0.2, 0.3, "its interval lies below both simulated rates"),
    ((0.01, 0.3), 0.02, 0.001, "its interval holds the simulated rate and lies above the rate simulated at the "
                               "noise measured here"),
    ((0.01, 0.3), 0.4, 0.1, "its interval holds the rate simulated at the noise measured here and lies below the "
                            "simulated rate"),
    ((0.2, 0.7), float("nan"), 0.001, "its interval lies above the rate simulated at the noise measured here (the "
                                      "other could not be simulated)"),
    ((0.0, 0.21), 0.3, float("nan"), "its interval lies below the simulated rate (the other could not be simulated)"),
    ((0.0, 0.21), float("nan"), float("nan"), "nothing to compare (no interval, or no rate could be simulated)"),
    ((float("nan"), float("nan")), 0.01, 0.02, "nothing to compare (no interval, or no rate could be simulated)"),
])
def test_a_measured_interval_is_read_against_both_simulated_rates(interval, at_site, here, said):
    assert verdict_rates.against_simulated(interval, at_site, here) == said


@pytest.mark.parametrize(("marker", "says"), [("<!-- bench:aa-rates fig-aa scale=2 -->", "unknown options"),
                                               ("<!-- bench:aa-rates -->", "figure id")])
def test_marker_refuses_what_it_cannot_render(tmp_path, marker, says):
    with pytest.raises(MarkerError, match=says):
        expand(marker, ctx(aa_catalog(tmp_path)))


def test_marker_refuses_a_figure_without_a_and_b(tmp_path):
    cat = aa_catalog(tmp_path)
    fig = cat.figures["fig-aa"]
    other = Catalog.build(tmp_path / "results", {"fig-aa": dataclasses.replace(fig, variants=("B", "C"))})
    with pytest.raises(MarkerError, match="has both A and B"):
        expand("<!-- bench:aa-rates fig-aa -->", ctx(other))
