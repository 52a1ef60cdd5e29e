"""Recorder.interleaved: cells sampled in seeded, shuffled rounds; ``seq`` is the
execution order. Driven by fakes whose timing the tests control."""

from __future__ import annotations

import pytest

from benchkit import Config, Recorder, Sample, timing
from fakes import FakeClock, FakeFunction, block


def recorder(seed: int, clock: FakeClock) -> Recorder:
    return Recorder(Config(run=0, smoke=False, platform="cpu", seed=seed), clock=clock, block=block)


def measure(seed: int, counts: dict[str, int] | None = None) -> tuple[Recorder, list[str]]:
    """Three cells of 2 ms calls (one call per sample); the cap sets each cell's count."""
    clock, log = FakeClock(), []
    rec = recorder(seed, clock)
    counts = counts or {"a": 12, "b": 12, "c": 12}
    with rec.interleaved() as cells:
        for name, count in counts.items():
            fn = FakeFunction(clock, dispatch_s=0.0, work_s=2**-9, name=name, log=log)
            cells.collect(name, "completed", fn, (), dtype="float32", shape="1",
                          params={"n": 1}, maximum=count, minimum=1)
    lead = 1 + timing.LEAD_IN_CALLS  # every sample: its untimed lead-in calls, then the timed call
    # warm-up, then the sizing samples of each cell (one to choose calls, then SIZING_SAMPLES)
    warmed = (timing.WARMUP_CALLS + lead * (1 + timing.SIZING_SAMPLES)) * len(counts)
    return rec, log[warmed::lead]


def test_seq_is_the_execution_order():
    rec, executed = measure(seed=7)
    by_seq = sorted(rec.rows, key=lambda r: r["seq"])
    assert [r["seq"] for r in by_seq] == list(range(36))
    assert [r["variant"] for r in by_seq] == executed


def test_the_same_seed_gives_the_same_order_and_another_seed_another():
    _, first = measure(seed=1)
    _, again = measure(seed=1)
    _, other = measure(seed=2)
    assert first == again
    assert first != other


def test_each_round_visits_every_cell_once_in_a_shuffled_order():
    _, executed = measure(seed=3)
    rounds = [executed[i:i + 3] for i in range(0, 36, 3)]
    assert all(sorted(r) == ["a", "b", "c"] for r in rounds)
    assert len({tuple(r) for r in rounds}) > 1, "the order must change between rounds"


def test_a_cells_samples_are_spread_across_the_run():
    rec, _ = measure(seed=5, counts={"few": 4, "many": 20})
    seqs = [r["seq"] for r in rec.rows if r["variant"] == "few"]
    assert len(seqs) == 4
    assert max(seqs) - min(seqs) > 0.6 * len(rec.rows)  # not one block
    assert min(b - a for a, b in zip(seqs, seqs[1:])) > 1  # never back to back


def test_sample_indices_count_within_a_cell():
    rec, _ = measure(seed=9)
    for name in "abc":
        assert sorted(r["sample"] for r in rec.rows if r["variant"] == name) == list(range(12))


def test_collect_and_add_continue_the_same_seq():
    clock = FakeClock()
    rec = recorder(0, clock)
    rec.collect("one", "completed", FakeFunction(clock, 0.0, 2**-9), (), dtype="f", shape="1",
                maximum=3)
    rec.add("mine", "clock", [Sample(1e-7), Sample(1e-7)], dtype="none", shape="")
    least = rec.config.min_samples  # the cap never goes below the run's minimum
    assert [(r["variant"], r["seq"]) for r in rec.rows] == (
        [("one", i) for i in range(least)] + [("mine", least), ("mine", least + 1)])
    assert all(r["cache_hits"] == 0 for r in rec.rows)


def test_own_samplers_interleave_and_may_add_columns_per_sample():
    clock = FakeClock()
    rec = recorder(4, clock)
    taken, warmed = [], []

    def sampler(name):
        def one():
            taken.append(name)
            return Sample(0.5, 1, 2), {"detail": f"{name}{len(taken)}"}
        return one

    with rec.interleaved() as cells:
        for name in ("x", "y"):
            cells.sample(name, "loop", sampler(name), 5, dtype="f", shape="1",
                         warmup=lambda n=name: warmed.append(n), max_rel_error=0.0)
    assert warmed == ["x", "y"]
    assert [r["variant"] for r in sorted(rec.rows, key=lambda r: r["seq"])] == taken
    assert taken != ["x"] * 5 + ["y"] * 5
    assert all(r["compiles"] == 2 and r["max_rel_error"] == 0.0 for r in rec.rows)
    assert [r["detail"] for r in rec.rows] == [f"{n}{i + 1}" for i, n in enumerate(taken)]


def test_nothing_is_measured_when_the_block_fails():
    clock = FakeClock()
    rec = recorder(0, clock)
    fn = FakeFunction(clock, 0.0, 2**-9)
    with pytest.raises(KeyError):
        with rec.interleaved() as cells:
            cells.collect("a", "completed", fn, (), dtype="f", shape="1")
            raise KeyError("boom")
    assert fn.calls == 0 and rec.rows == []


def test_a_bad_parameter_fails_before_measuring():
    rec = recorder(0, FakeClock())
    with pytest.raises(ValueError):
        rec.interleaved().collect("a", "completed", print, (), dtype="f", shape="1",
                                  params={"k": "a;b"})


def test_shuffled_blocks_follow_the_seed():
    def order(seed):
        return recorder(seed, FakeClock()).shuffled(range(8))

    assert order(1) == order(1)
    assert order(1) != order(2)
    assert sorted(order(3)) == list(range(8))


def test_schedule_spreads_uneven_counts_evenly():
    import random

    indices = timing.schedule([2, 6], random.Random(0))
    assert sorted(indices) == [0, 0, 1, 1, 1, 1, 1, 1]
    positions = [i for i, c in enumerate(indices) if c == 0]
    assert positions[0] >= 2 and positions[1] >= 5  # rounds 3 and 6 of 6, not the first two


def test_after_names_the_cell_measured_just_before_each_sample():
    rec, _ = measure(seed=11)
    by_seq = sorted(rec.rows, key=lambda r: r["seq"])
    key = lambda r: f"{r['variant']}|{r['boundary']}|{r['params']}"  # noqa: E731
    assert by_seq[0]["after"] == "c|completed|n=1"  # the last cell sized ran just before round 1
    assert [r["after"] for r in by_seq[1:]] == [key(r) for r in by_seq[:-1]]


def test_every_sample_starts_after_an_untimed_call_of_its_own_cell():
    clock, log = FakeClock(), []
    rec = recorder(4, clock)
    with rec.interleaved() as cells:
        for name in "ab":
            fn = FakeFunction(clock, dispatch_s=0.0, work_s=2**-9, name=name, log=log)
            cells.collect(name, "completed", fn, (), dtype="float32", shape="1", maximum=6, minimum=1)
    lead = 1 + timing.LEAD_IN_CALLS
    sampled = log[-12 * lead:]  # the last 12 samples' calls: two cells of 6
    assert all(len(set(sampled[i:i + lead])) == 1 for i in range(0, len(sampled), lead))
    assert {r["lead_in"] for r in rec.rows} == {timing.LEAD_IN_CALLS}


def test_a_call_slower_than_the_lead_in_limit_gets_no_lead_in():
    clock, log = FakeClock(), []
    rec = recorder(4, clock)
    with rec.interleaved() as cells:
        fast = FakeFunction(clock, dispatch_s=0.0, work_s=2**-9, name="fast", log=log)  # 2 ms
        slow = FakeFunction(clock, dispatch_s=0.0, work_s=2**-5, name="slow", log=log)  # 31 ms
        assert 2**-9 < timing.LEAD_IN_UNDER_S <= 2**-5
        cells.collect("fast", "completed", fast, (), dtype="float32", shape="1", maximum=4, minimum=4)
        cells.collect("slow", "completed", slow, (), dtype="float32", shape="1", maximum=4, minimum=4)
    lead = {r["variant"]: r["lead_in"] for r in rec.rows}
    assert lead == {"fast": timing.LEAD_IN_CALLS, "slow": 0}
    sampled = log[-12:]  # four samples each: fast ones a lead-in and the call, slow ones the call alone
    assert sampled.count("slow") == 4 and sampled.count("fast") == 8
