"""The carry-over diagnostic (benchsite/views/carryover.py) on constructed runs whose carry-over is known:
a preceding cell that slows the next sample by a set factor is found, with a verdict; one that
does not is not called carry-over; the ``after`` column and ``seq`` give the same answer."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from benchsite.build.buildcache import BuildCache
from benchsite.model import stats
from benchsite.views import carryover

CELLS = [("light", "n=8", 10e-6), ("heavy", "n=512", 1e-3), ("light", "n=64", 50e-6)]


def _runs(factor: float, runs: int = 9, rounds: int = 60, noise: float = 0.05, seed: int = 1) -> pd.DataFrame:
    """Interleaved rounds of three cells in a shuffled order per round, as the harness samples them;
    a sample of ``light n=8`` that follows ``heavy n=512`` takes ``factor`` times longer."""
    rng, rows = random.Random(seed), []
    for run in range(runs):
        prev, seq = None, 0
        for _ in range(rounds):
            order = list(range(len(CELLS)))
            rng.shuffle(order)
            # A cell follows itself only across a round's edge: add short streaks so that each run
            # has samples after the cell itself (as the committed files do, a few a run).
            for i in order + ([order[-1]] if rng.random() < 0.5 else []):
                variant, params, base = CELLS[i]
                slow = factor if (variant, params) == ("light", "n=8") and prev == "heavy|completed|n=512" else 1.0
                rows.append(dict(variant=variant, params=params, boundary="completed", run=run,
                                 process_index=0, seq=seq, session_id="s",
                                 time_s=base * slow * float(np.exp(rng.gauss(0, noise)))))
                prev, seq = f"{variant}|completed|{params}", seq + 1
    return pd.DataFrame(rows)


def _by_name(frame: pd.DataFrame) -> dict[str, carryover.Carry]:
    return {c.name: c for c in carryover.figure_carry(frame)}


def test_a_preceding_cell_that_slows_the_next_sample_is_found_with_its_factor():
    got = _by_name(_runs(factor=2.0))["light|completed|n=8"]
    assert got.moved_by == "heavy|completed|n=512" and got.examined == 2
    assert got.ratios.size == 9 and got.above == 9
    assert np.median(got.ratios) == pytest.approx(2.0, rel=0.1)
    assert got.verdict.is_result and got.verdict.ratio == pytest.approx(2.0, rel=0.1)
    # Half of the samples after another cell follow the heavy one: that median lies in between.
    both = stats.paired_runs(got.after_others, got.after_self)
    assert 1.0 < np.median(both[0] / both[1]) < 2.0


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_preceding_cell_that_does_not_slow_the_next_sample_is_not_called_carry_over(seed):
    for c in carryover.figure_carry(_runs(factor=1.0, seed=seed)):
        assert c.compared and c.examined == 2
        assert not c.verdict.is_result, (c.name, c.verdict.reason)


def test_the_other_cells_it_did_not_slow_show_no_carry_over():
    got = _by_name(_runs(factor=2.0))
    assert not got["heavy|completed|n=512"].verdict.is_result
    assert not got["light|completed|n=64"].verdict.is_result


@pytest.mark.parametrize("runs", [6, 9])
def test_with_six_runs_a_real_slowdown_is_still_a_result_and_no_slowdown_is_not(runs):
    """The pick is made on the other runs, so no correction eats the six runs a session has."""
    got = _by_name(_runs(factor=2.0, runs=runs, seed=5))["light|completed|n=8"]
    assert got.verdict.is_result and got.same == runs == got.ratios.size
    for seed in range(5, 10):
        assert not any(c.verdict.is_result for c in carryover.figure_carry(_runs(factor=1.0, runs=runs, seed=seed)))


def test_each_run_is_judged_on_the_cell_the_other_runs_picked():
    candidates = {"a": pd.Series([2.0, 2.0, 2.0, 0.5, 2.0], index=range(5)),
                  "b": pd.Series([1.0, 1.0, 1.0, 3.0, 1.0], index=range(5))}
    overall, per_run, same = carryover.most_different(candidates)
    assert overall == "a" and same == 5
    assert per_run.tolist() == [2.0, 2.0, 2.0, 0.5, 2.0]  # run 3 is judged on "a" too: the others picked it
    candidates["b"] = pd.Series([1.0, 1.0, 1.0, 9.0, 1.0], index=range(5))
    overall, per_run, same = carryover.most_different(candidates)
    assert overall == "a" and per_run[3] == 0.5  # b's one wild run cannot pick b for that run


def _with_after(frame: pd.DataFrame) -> pd.DataFrame:
    """The same samples as the harness's ``after`` column would name them, with ``seq`` gone and
    the rows in another order: only ``after`` can say what came before."""
    ordered = frame.sort_values(["run", "seq"])
    names = ordered["variant"] + "|" + ordered["boundary"] + "|" + ordered["params"]
    after = names.groupby(ordered["run"]).shift(1).fillna("")
    out = ordered.assign(after=after, lead_in=1, seq=np.nan)
    return out.sample(frac=1.0, random_state=3)


def test_the_after_column_and_seq_give_the_same_predecessors_and_numbers():
    frame = _runs(factor=2.0)
    from_seq = carryover.predecessors(frame)
    alt = _with_after(frame)
    from_after = carryover.predecessors(alt).reindex(frame.index)
    assert from_seq.fillna("-").equals(from_after.fillna("-"))
    a, b = _by_name(frame), _by_name(alt)
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].verdict == b[name].verdict and a[name].moved_by == b[name].moved_by
        assert np.array_equal(a[name].ratios, b[name].ratios)
    assert b["light|completed|n=8"].lead_in == (1, 1) and a["light|completed|n=8"].lead_in is None


def test_a_run_without_after_falls_back_to_seq_and_a_first_sample_has_no_predecessor():
    frame = _runs(factor=1.0, runs=2, rounds=3)
    alt = _with_after(frame).sort_index()
    alt.loc[alt["run"] == 1, "after"] = ""  # an upgraded older file: nothing recorded
    alt.loc[alt["run"] == 1, "seq"] = frame.loc[frame["run"] == 1, "seq"]
    got = carryover.predecessors(alt)
    assert got.fillna("-").equals(carryover.predecessors(frame).fillna("-"))
    firsts = frame.groupby("run")["seq"].idxmin()
    assert got[firsts].isna().all() and got.drop(firsts).notna().all()


def test_processes_of_one_run_are_separate_sequences():
    frame = _runs(factor=1.0, runs=1, rounds=2)
    two = pd.concat([frame, frame.assign(process_index=1)], ignore_index=True)
    got = carryover.predecessors(two)
    assert got.isna().sum() == 2  # each process's first sample


def test_too_few_runs_with_samples_after_itself_decide_nothing():
    frame = _runs(factor=3.0, runs=stats.PAIRED_MIN_RUNS - 1)
    got = _by_name(frame)["light|completed|n=8"]
    assert not got.compared and got.verdict is None and got.moved_by is None and got.examined == 0
    cells, compared, results, slower = carryover.counts(carryover.figure_carry(frame))
    assert (cells, compared, results, slower) == (3, 0, 0, 0)


def test_the_table_and_the_count_say_what_was_computed():
    carries = carryover.figure_carry(_runs(factor=2.0))
    text = carryover.table(carries)
    assert text.count("\n") == 2 + len(CELLS) - 1
    assert "heavy n=512 (of 2; the pick of the other runs in 9 of 9) | 2" in text and "a result" in text
    cells, compared, results, slower = carryover.counts(carries)
    assert cells == compared == 3 and results == slower == 1
    assert "1 of 3 that could be compared" in carryover.count_sentence(cells, compared, results, slower)
    assert "no lead-in" in carryover.lead_in_note(carries)


def _demo_catalog(tmp_path):
    """A catalog of one figure, fig-demo, on one machine: ``_runs(factor=2.0)`` (a ``light n=8``
    sample that follows ``heavy n=512`` takes twice as long), written as a results file and read back."""
    from benchkit import results
    from benchsite.model.catalog import Catalog
    from benchsite.model.figures import Figure
    from test_results import make_row

    script = tmp_path / "demo.py"
    script.write_text("FIGURE = {}\n")
    fig = Figure(id="fig-demo", stem="demo", script=script, title="Demo", caption="c", chapter="index.md",
                 variants=("light", "heavy"), group_by=("n",))
    frame = _runs(factor=2.0)
    frame["sample"] = frame.groupby(["run", "variant", "params"]).cumcount()
    rows = [make_row(**{k: v for k, v in r.items() if k != "process_index"}, script_sha256="x" * 64)
            for r in frame.to_dict("records")]
    results.write_atomic(tmp_path / "results" / "cpu-test-2c" / "demo.csv", results.to_csv_text(rows))
    return Catalog.build(tmp_path / "results", {"fig-demo": fig})


def test_the_markers_render_the_table_and_the_count_from_a_results_folder(tmp_path):
    from benchsite.pages.markers import Context, expand

    cat = _demo_catalog(tmp_path)
    problems = []
    page = "<!-- bench:carryover fig-demo -->\n\nOver every figure, <!-- bench:carryover-count -->."
    ctx = Context(cat, "docs/page.md", lambda target: "../" + target, problems.append, cache=BuildCache())
    html = expand(page, ctx)
    assert "| light n=8 (completed) |" in html and "heavy n=512 (of 2;" in html
    assert 'href="../verdicts/"' in html and "a result" in html
    assert "1 of 3 that could be compared" in html and not problems
    assert "cpu-test-2c" in html and "9 runs" in html


def test_a_first_sample_whose_after_names_the_cell_sized_last_keeps_that_predecessor():
    """benchkit writes, for a run's first sample, the cell whose warm-up and sizing ran last: the
    ``after`` path says so, where ``seq`` alone has nothing before it."""
    frame = _runs(factor=1.0, runs=1, rounds=2)
    alt = _with_after(frame).sort_index()
    first = frame["seq"].idxmin()
    alt.loc[first, "after"] = "heavy|completed|n=512"
    got = carryover.predecessors(alt)
    assert got[first] == "heavy|completed|n=512"
    assert got.drop(first).equals(carryover.predecessors(frame).drop(first))


# --- the carry-over as first written (pandas group by group), the reference the faster one is held to

def _reference_predecessors(frame: pd.DataFrame) -> pd.Series:
    keys, cells = ["run", "process_index"], carryover.cell_names(frame)
    ordered = frame[[*keys, "seq"]].assign(_cell=cells).sort_values([*keys, "seq"], kind="stable")
    derived = ordered.groupby(keys, sort=False)["_cell"].shift(1)
    derived[ordered["seq"].isna()] = None
    derived = derived.reindex(frame.index).astype(object)
    derived = derived.where(derived.notna(), None)
    if "after" not in frame:
        return derived
    given = frame["after"].astype(object).where(frame["after"].notna(), "").astype(str)
    recorded = given.ne("").groupby([frame[k] for k in keys]).transform("any")
    return pd.Series(np.where(recorded, given.where(given.ne(""), None), derived), index=frame.index, dtype=object)


def _reference_medians(times: pd.Series, runs: pd.Series) -> pd.Series:
    grouped = times.groupby(runs, sort=True)
    found = grouped.median()[grouped.size() >= carryover.MIN_GROUP].rename_axis("run").rename(None)
    return found if len(found) else pd.Series(dtype=float, index=pd.Index([], name="run"))


def _reference_carry(frame: pd.DataFrame) -> list[tuple]:
    """Per cell, what :class:`carryover.Carry` holds, each group of samples selected and its
    medians taken on its own, each predecessor paired by ``stats.paired_runs``."""
    cells, before = carryover.cell_names(frame), _reference_predecessors(frame)
    known = before.notna()
    times, runs, cells, before = frame["time_s"].astype(float)[known], frame["run"][known], cells[known], \
        before[known].astype(str)
    out = []
    for cell in carryover.cell_names(frame.drop_duplicates(["variant", "params"])):
        mine = cells.eq(cell)
        after = {prev: _reference_medians(t, runs[mine][t.index])
                 for prev, t in times[mine].groupby(before[mine], sort=True)}
        none = _reference_medians(times[:0], runs[:0])
        after_self = after.get(cell, none)
        others = mine & before.ne(cell)
        after_others = _reference_medians(times[others], runs[others])
        candidates = {}
        for prev, after_prev in after.items():
            a, b = stats.paired_runs(after_prev, after_self)
            if prev != cell and a.size >= stats.PAIRED_MIN_RUNS:
                candidates[prev] = pd.Series(a / b, index=stats.common_runs(after_prev, after_self)[0])
        moved_by, ratios, same = carryover.most_different(candidates)
        out.append((cell, after_self, after_others, len(candidates), moved_by, ratios.to_numpy(), same,
                    stats.paired_verdict(ratios.to_numpy(), np.ones(ratios.size)) if moved_by else None))
    return out


def _committed_frames(every: int) -> list[pd.DataFrame]:
    """Every ``every``-th figure's results of each committed machine folder (the reference takes a
    few seconds a machine in full)."""
    from pathlib import Path
    folders = sorted(p for p in (Path(__file__).parents[1] / "results").iterdir() if p.is_dir())
    return [frame for folder in folders for frame in list(carryover.machine_frames(folder).values())[::every]]


def test_the_carry_over_is_the_one_each_group_taken_on_its_own_gives_to_the_bit():
    """figure_carry takes every (cell, preceding cell, run) median in one sort and pairs the
    runs in plain Python: the same medians, ratios, picks and verdicts as selecting each group's
    samples and pairing them with ``stats.paired_runs``, on the committed results (both the
    ``after`` and the ``seq`` path) and on constructed runs."""
    frames = [*_committed_frames(every=5), _runs(factor=2.0), _with_after(_runs(factor=2.0, seed=7)),
              _runs(factor=1.0, runs=stats.PAIRED_MIN_RUNS - 1), _runs(factor=2.0, runs=stats.PAIRED_MIN_RUNS)]
    compared = seq_path = 0
    for frame in frames:
        assert carryover.predecessors(frame).fillna("-").equals(_reference_predecessors(frame).fillna("-"))
        got = carryover.figure_carry(frame)
        want = _reference_carry(frame)
        assert [c.name for c in got] == [w[0] for w in want]
        for c, (_, after_self, after_others, examined, moved_by, ratios, same, verdict) in zip(got, want):
            pd.testing.assert_series_equal(c.after_self, after_self, check_exact=True, check_index_type=True)
            pd.testing.assert_series_equal(c.after_others, after_others, check_exact=True, check_index_type=True)
            assert (c.examined, c.moved_by, c.same) == (examined, moved_by, same)
            assert np.array_equal(c.ratios, ratios) and c.ratios.dtype == ratios.dtype
            assert c.verdict == verdict
            compared += c.verdict is not None
            seq_path += "after" not in frame or not frame["after"].fillna("").astype(str).ne("").all()
    assert compared > 10 and seq_path  # cells were compared, and some from ``seq``


def test_a_figure_with_no_samples_has_no_predecessors_and_no_cells():
    """No rows (a frame filtered to nothing): no predecessors and no cells, from ``seq`` or from
    ``after``, as the pandas version gave; not an error."""
    empty = _runs(factor=1.0).iloc[:0]
    for frame in (empty, _with_after(_runs(factor=1.0)).iloc[:0]):
        got = carryover.predecessors(frame)
        assert got.empty and got.dtype == object and got.index.equals(frame.index)
        assert carryover.figure_carry(frame) == []


def test_a_sample_with_no_seq_has_no_predecessor_and_precedes_none():
    """A row whose ``seq`` is empty (and no ``after`` in its run) cannot be placed in its run: it
    has no predecessor, and the other rows keep those they have without it."""
    frame = _runs(factor=1.0, runs=3, rounds=4).astype({"seq": float})
    unplaced = frame.index[frame["run"].eq(1)][[2, 5, 6]]
    frame.loc[unplaced, "seq"] = np.nan
    got = carryover.predecessors(frame)
    assert got[unplaced].isna().all()
    placed = frame.drop(unplaced)
    assert got.drop(unplaced).fillna("-").equals(carryover.predecessors(placed).fillna("-"))
    assert got.drop(unplaced).notna().sum() == len(placed) - 3  # each run's first sample alone


def test_the_count_of_a_figure_is_the_count_of_its_table():
    """``figure_counts`` (what the count over a machine's figures asks of each) is ``counts`` of the
    table's cells, on the committed results and on constructed runs (both paths, too few runs)."""
    frames = [*_committed_frames(every=3), _runs(factor=2.0), _with_after(_runs(factor=2.0, seed=7)),
              _runs(factor=1.0, runs=stats.PAIRED_MIN_RUNS - 1), _runs(factor=1.0).iloc[:0]]
    found = [carryover.figure_counts(frame) for frame in frames]
    assert found == [carryover.counts(carryover.figure_carry(frame)) for frame in frames]
    assert sum(f[2] for f in found) >= 1 and found[-1] == (0, 0, 0, 0)


def test_the_count_marker_makes_no_table(tmp_path, monkeypatch):
    """The count over every figure of a machine is made without each figure's table (its medians
    after itself and after any other cell, its lead-in calls): the count alone."""
    from benchsite.pages.markers import Context, expand

    cat = _demo_catalog(tmp_path)
    monkeypatch.setattr(carryover, "figure_carry", lambda frame: pytest.fail("the count made a table"))
    ctx = Context(cat, "docs/page.md", lambda target: target, [].append, cache=BuildCache())
    assert "1 of 3 that could be compared" in expand("Over every figure, <!-- bench:carryover-count -->.", ctx)


def test_a_file_whose_every_row_records_after_is_read_without_grouping_its_runs(monkeypatch):
    """Where every row names its predecessor (every file the harness writes now), nothing is left
    to derive from ``seq``, and no run is grouped to find out."""
    frame = _with_after(_runs(factor=1.0, runs=2, rounds=3))
    frame["after"] = frame["after"].where(frame["after"].ne(""), "heavy|completed|n=512")  # a first sample's
    want = pd.Series(frame["after"].to_numpy(dtype=object), index=frame.index, dtype=object)
    monkeypatch.setattr(pd.Series, "groupby", lambda *a, **k: pytest.fail("grouped the runs"))
    assert carryover.predecessors(frame).equals(want)


def test_the_count_of_a_figure_is_its_tables_at_the_edges():
    """``figure_counts`` against ``counts(figure_carry(...))`` where the two could part: exactly
    ``PAIRED_MIN_RUNS`` runs (a verdict on as many runs as the rule needs is compared), and a cell
    measured at two boundaries (the table has one line per variant and params, so has the count)."""
    exact = _runs(factor=2.0, runs=stats.PAIRED_MIN_RUNS)
    twice = _runs(factor=2.0, seed=3)
    twice.loc[twice["variant"].eq("light") & twice["params"].eq("n=8") & twice["run"].mod(2).eq(0),
              "boundary"] = "dispatch"
    for frame in (exact, twice):
        assert carryover.figure_counts(frame) == carryover.counts(carryover.figure_carry(frame))
    assert carryover.figure_counts(exact)[1] >= 1  # some cell compared on exactly the runs the rule needs
