"""Whose numbers: the prose quotes a local run's machine, /bench compares with the declared
reference machine whichever was measured last, and a false claim fails a build only on the
reference (issue 37)."""

from __future__ import annotations

from benchfixtures import demo_figure, write_machine
from benchsite.build.buildcache import BuildCache
from benchsite.model.catalog import Catalog
from benchsite.pages.markers import Context, expand
from benchsite.views import claims

FALSE = '<!-- bench:claim fig-demo median("fast", n=8) > median("slow", n=8) -->fast is slower<!-- /bench:claim -->'


def two_machines(tmp_path, preferred="cpu-mine", declared="cpu-ref") -> Catalog:
    for machine in ("cpu-mine", "cpu-ref", "cpu-zz"):
        write_machine(tmp_path / "r", machine, sizes=(8,))
    fig = demo_figure(tmp_path)
    return Catalog.build(tmp_path / "r", {fig.id: fig}, preferred=preferred, declared=declared)


def test_the_reference_is_the_declared_machine_and_the_prose_quotes_the_local_one(tmp_path):
    cat = two_machines(tmp_path)
    assert cat.reference("fig-demo") == "cpu-ref" and cat.quoted("fig-demo") == "cpu-mine"
    assert cat.machines("fig-demo") == ["cpu-mine", "cpu-ref", "cpu-zz"]
    assert (cat.role("cpu-mine"), cat.role("cpu-ref"), cat.role("cpu-zz")) == ("measured here", "reference", "")
    fresh = two_machines(tmp_path / "b", preferred="cpu-ref")  # a clone with no local run
    assert fresh.quoted("fig-demo") == fresh.reference("fig-demo") == "cpu-ref" and fresh.role("cpu-ref") == "reference"


def context(cat, said, fatal=True):
    return Context(cat, "docs/chapter.md", lambda t: "/" + t, said.append, src_uri="chapter.md",
                   claims_fatal=fatal, cache=BuildCache())


def test_a_false_claim_is_a_problem_only_on_the_reference(tmp_path):
    said: list[str] = []
    local = claims.expand_line(FALSE, context(two_machines(tmp_path), said), 3)
    assert not said and "[did not hold on cpu-mine:" in local
    on_ref = claims.expand_line(FALSE, context(two_machines(tmp_path / "b", preferred="cpu-ref"), said), 3)
    assert len(said) == 1 and said[0].startswith("docs/chapter.md:3: claim contradicted by fig-demo on cpu-ref")
    assert "[contradicted by the data:" in on_ref
    said.clear()
    reported = claims.expand_line(FALSE, context(two_machines(tmp_path / "c", preferred="cpu-ref"), said, False), 3)
    assert not said and "[did not hold on cpu-ref:" in reported  # make bench's BENCH_CLAIMS=report


def test_the_banner_under_the_title_names_the_machine_and_its_role(tmp_path):
    said: list[str] = []
    text = expand("# Title\n\nSome prose <!-- bench:value fig-demo variant=fast n=8 -->.\n",
                  context(two_machines(tmp_path), said))
    title, banner = text.index("# Title"), text.index('<div class="bench-whose"')
    assert title < banner < text.index("Some prose")
    assert "<code>cpu-mine</code>, by <code>make bench</code> on this machine, not the" in text
    assert "<code>cpu-ref</code>" in text and not said
    plain = expand("# Title\n\nNo figure here.\n", context(two_machines(tmp_path / "b"), said))
    assert 'class="bench-whose"' not in plain


def test_without_a_declared_machine_every_machine_counts_as_the_reference(tmp_path):
    cat = two_machines(tmp_path, declared=None)
    assert cat.is_reference("cpu-mine") and cat.role("cpu-mine") == "" and cat.reference("fig-demo") == "cpu-mine"


def test_session_health_names_a_run_that_disturbed_every_figure_and_a_busy_machine(tmp_path):
    from benchkit import results
    from benchsite.pages import yours
    from test_results import make_row

    def machine(name: str, load: float, slow_run: int | None) -> None:
        for stem in ("demo", "other"):
            rows = [make_row(run=r, sample=s, variant=v, params="n=8", machine=name, figure_id=f"fig-{stem}",
                             script_path=f"bench_scripts/{stem}.py", load_avg_1m=load,
                             time_s=t * (3.0 if r == slow_run else 1.0 + 0.01 * r))
                    for r in range(6) for s in range(4) for v, t in (("fast", 1e-5), ("slow", 1e-3))]
            results.write_atomic(tmp_path / "r" / name / f"{stem}.csv", results.to_csv_text(rows))

    machine("cpu-quiet", 1.2, None)  # the session's own process and a little more: 0.1 per core besides
    machine("cpu-busy", 4.0, 2)
    figs = {f"fig-{stem}": demo_figure(tmp_path, id=f"fig-{stem}", stem=stem) for stem in ("demo", "other")}
    cat = Catalog.build(tmp_path / "r", figs)
    quiet, busy = yours.health(cat, "cpu-quiet"), yours.health(cat, "cpu-busy")
    assert (quiet.figures, round(quiet.load_median, 6), quiet.disturbed, quiet.noisy) == (2, 0.1, {}, False)
    assert busy.load_median == 1.5 and busy.disturbed == {2: ["fig-demo", "fig-other"]} and busy.noisy


def test_session_health_prefers_the_load_measured_over_the_runs(tmp_path):
    from benchkit import results
    from benchsite.pages import yours
    from test_results import make_row

    # The load average at the start says busy; what other processes did during the runs says quiet.
    rows = [make_row(run=r, sample=s, variant=v, params="n=8", machine="cpu-m", load_avg_1m=4.0,
                     other_load=0.2, time_s=t * (1.0 + 0.01 * r))
            for r in range(6) for s in range(4) for v, t in (("fast", 1e-5), ("slow", 1e-3))]
    results.write_atomic(tmp_path / "r" / "cpu-m" / "demo.csv", results.to_csv_text(rows))
    cat = Catalog.build(tmp_path / "r", {"fig-demo": demo_figure(tmp_path)})
    health = yours.health(cat, "cpu-m")
    assert health.during and round(health.load_median, 6) == 0.1 and not health.noisy  # 0.2 CPUs of 2
