"""``Table.of`` takes every (row, variant, run)'s median and within-run spread in one pass over the
table (``table.split``, ``stats.cell_runs``). Held here to the row-by-row computation it replaced,
kept below as it was (pandas' groupby for the rows, then each row's per-run medians, summaries,
ratio, verdict and within-run spreads on its own), to the bit: on every committed results file and
its sessions, and on random frames with missing params, NaN and zero times, ties, odd and even
counts, single samples and single runs, runs a variant lacks, and variants the figure does not show."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from benchfixtures import demo_figure
from benchsite.model import session_files, stats
from benchsite.model.headline import choose_headline
from benchsite.model.table import Row, Table, groups, sort_key
from conftest import REPO

# --- the row-by-row computation, as it was -------------------------------------------------------


def _old_groups(frame, fig):
    cols = [f"p_{k}" for k in fig.group_by]
    if not cols:
        yield "", frame
        return
    keyed = sorted(frame.groupby(cols, sort=False), key=lambda kv: [sort_key(v) for v in kv[0]])
    for values, rows in keyed:
        yield ", ".join(f"{k}={v}" for k, v in zip(fig.group_by, values)), rows


def _old_per_run_median(runs, values):
    values = np.asarray(values, dtype=float)
    order = np.lexsort((values, runs))
    runs, values = runs[order], values[order]
    starts = np.flatnonzero(np.r_[True, runs[1:] != runs[:-1]])
    counts = np.add.reduceat(~np.isnan(values), starts)
    low, high = values[starts + np.maximum(counts - 1, 0) // 2], values[starts + counts // 2]
    with np.errstate(over="ignore"):
        medians = np.where(counts % 2 == 1, high, (low + high) / 2)
    return pd.Series(medians, index=pd.Index(runs[starts], name="run"), name="time_s")


def _old_within_spreads(frame):
    seen: dict = {}
    key_codes = np.fromiter(map(lambda v: seen.setdefault(v, len(seen)), frame["variant"].tolist()), dtype=np.intp,
                            count=len(frame))
    runs, times = frame["run"].to_numpy(), frame["time_s"].to_numpy(dtype=float)
    order = np.lexsort((times, runs, key_codes))
    codes, runs, times = key_codes[order], runs[order], times[order]
    starts = np.flatnonzero(np.r_[True, (codes[1:] != codes[:-1]) | (runs[1:] != runs[:-1])])
    sizes = np.diff(np.r_[starts, times.size])

    def quantiles(q):
        h = (sizes - 1) * q
        lo = h.astype(np.intp)
        hi = np.minimum(lo + 1, sizes - 1)
        return times[starts + lo] + (h - lo) * (times[starts + hi] - times[starts + lo])

    mid = quantiles(0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = (quantiles(0.75) - quantiles(0.25)) / mid
    frac[(sizes < stats.MIN_WITHIN_SAMPLES) | (mid == 0)] = np.nan
    fracs: list[list[float]] = [[] for _ in seen]
    for code, value in zip(codes[starts].tolist(), frac.tolist()):
        fracs[code].append(value)
    out = {}
    for key, code in seen.items():
        kept = sorted(v for v in fracs[code] if v == v)
        out[key] = stats.median_of(kept) if kept else float("nan")
    return out


def _old_row(label, samples, fig):
    variants, runs = samples["variant"].to_numpy(), samples["run"].to_numpy()
    times = samples["time_s"].to_numpy(dtype=float)
    per_run = {v: _old_per_run_median(runs[at], times[at]) for v in fig.variants if (at := variants == v).any()}
    ratio, verdict = None, None
    if fig.ratio and all(v in per_run for v in fig.ratio):
        paired_a, paired_b = stats.paired_runs(per_run[fig.ratio[0]], per_run[fig.ratio[1]])
        if paired_a.size:
            ratio = stats.summarize(paired_a / paired_b)
        verdict = stats.paired_verdict(paired_a, paired_b) if fig.ratio_verdict else None
    params = {k: str(samples[f"p_{k}"].iloc[0]) for k in fig.group_by}
    return dict(label=label, params=params, samples=samples, run_medians=per_run,
                cells={v: stats.summarize(m) for v, m in per_run.items()}, ratio=ratio, verdict=verdict)


def _old_spreads(rows, fig):
    within_by_row = [_old_within_spreads(r["samples"]) for r in rows]
    out = []
    for variant in fig.variants:
        having = [(r, w) for r, w in zip(rows, within_by_row) if variant in r["cells"]]
        if not having:
            continue
        within = tuple(w[variant] for _, w in having)
        runs = len(set().union(*(r["run_medians"][variant].index for r, _ in having)))
        out.append((variant, runs, tuple(r["cells"][variant].range_frac for r, _ in having), within,
                    stats.noise_label(float(pd.Series(within).max()))))
    return out


# --- exact comparison ----------------------------------------------------------------------------

def _same(a, b, where: str) -> None:
    """Equal to the bit: floats by value and sign (NaN equal to NaN), pandas objects exactly, with
    their index, names and dtypes; dataclasses field by field (a Summary's values too)."""
    if isinstance(a, float) or isinstance(b, float):
        assert type(a) is type(b) and (a == b and math.copysign(1, a) == math.copysign(1, b) or a != a and b != b), \
            f"{where}: {a!r} != {b!r}"
    elif isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b, check_exact=True, check_index_type=True)
        assert type(a.index) is type(b.index) and a.index.name == b.index.name, where
        _same(a.tolist(), b.tolist(), where)
    elif dataclasses.is_dataclass(a):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{where}: {list(a)} != {list(b)}"
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), f"{where}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert type(a) is type(b) and a == b, f"{where}: {a!r} != {b!r}"


def _held_to_the_old(frame: pd.DataFrame, fig, where: str) -> int:
    """Table.of(frame, fig) against the row-by-row computation; the number of cells compared."""
    made = Table.of(frame, fig)
    timed = frame[frame["variant"].isin(fig.variants)]
    old = [_old_row(label, part, fig) for label, part in _old_groups(timed, fig)]
    assert len(made.rows) == len(old), where
    for i, (row, want) in enumerate(zip(made.rows, old)):
        for name, value in want.items():
            _same(getattr(row, name), value, f"{where} row {i} {name}")
    _same([(s.variant, s.runs, s.between, s.within, s.noise) for s in made.spreads],
          _old_spreads(old, fig), f"{where} spreads")
    _same(made.headline, choose_headline([Row(**want) for want in old], fig), f"{where} headline")
    _same([label for label, _ in groups(timed, fig)], [label for label, _ in _old_groups(timed, fig)], where)
    return sum(len(r.cells) for r in made.rows)


def test_every_committed_table_and_session_is_the_row_by_row_one():
    from benchkit.layout import discover
    from benchkit.schema import figure_id_for
    from benchsite.model import load
    from benchsite.model.figures import all_figures

    figures, compared, tables = all_figures(REPO / "bench_scripts"), 0, 0
    for file in discover(REPO / "results"):
        fig = figures.get(figure_id_for(file.stem))
        if fig is None:
            continue
        frame = load.load(file)
        compared += _held_to_the_old(frame, fig, f"{file.machine}/{file.stem}")
        for sid, session in session_files.from_results(frame).items():
            compared += _held_to_the_old(session, fig, f"{file.machine}/{file.stem} session {sid}")
        tables += 1
    assert tables >= 50 and compared >= 900


def _random_frame(rng: np.random.Generator, int_params: bool) -> pd.DataFrame:
    out = []
    sizes = rng.choice([8, 16, 64, 1024, 3], size=rng.integers(1, 5), replace=False)
    ops = rng.choice(["add", "mul", "dot"], size=rng.integers(1, 3), replace=False)
    runs = rng.permutation(20)[: rng.integers(1, 8)]
    for n in sizes:
        for op in ops:
            for variant in ("fast", "slow", "other"):
                for run in runs:
                    if rng.random() < 0.15:  # a run this cell lacks
                        continue
                    count = int(rng.choice([1, 2, 3, 4, 5, 8, 9]))
                    base = rng.lognormal(-9, 1)
                    times = base * (1 + np.round(rng.random(count) * 4) / 100)  # ties
                    times[rng.random(count) < 0.1] = np.nan
                    times[rng.random(count) < 0.03] = 0.0
                    out += [dict(run=int(run), variant=variant, time_s=t, p_n=int(n), p_op=str(op)) for t in times]
    frame = pd.DataFrame(out).sample(frac=1.0, random_state=int(rng.integers(1 << 30)))  # rows out of order
    frame = frame.set_index(pd.Index(rng.permutation(len(frame)) * 3))  # an index that is not positions
    if not int_params:
        n = frame["p_n"].astype(str).astype(object)
        n[rng.random(len(frame)) < 0.05] = None  # a sample without that param: no row's
        frame["p_n"] = n
    return frame.assign(machine="m")


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning", "ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize("seed", range(24))
def test_random_tables_are_the_row_by_row_ones(seed, tmp_path):
    rng = np.random.default_rng(seed)
    frame = _random_frame(rng, int_params=seed % 3 == 0)
    for group_by in ((), ("n",), ("op", "n"), ("n", "op")):
        for ratio, verdict in ((("slow", "fast"), True), (("fast", "slow"), False), (None, True)):
            fig = demo_figure(tmp_path, group_by=group_by, ratio=ratio, ratio_verdict=verdict)
            _held_to_the_old(frame, fig, f"seed {seed} {group_by} {ratio}")


def test_a_table_is_made_in_one_pass_not_row_by_row(monkeypatch, tmp_path):
    """The rows are split once (no pandas groupby), and no row asks its own per-run medians or
    within-run spreads: ``stats.cell_runs`` makes them all."""
    def refused(*args, **kwargs):
        raise AssertionError("asked row by row")

    monkeypatch.setattr(pd.DataFrame, "groupby", refused)
    monkeypatch.setattr(stats, "within_spreads", refused)
    monkeypatch.setattr(stats, "per_run_median", refused)
    frame = _random_frame(np.random.default_rng(1), int_params=False)
    table = Table.of(frame, demo_figure(tmp_path, group_by=("op", "n")))
    assert len(table.rows) > 1 and all(r.run_medians for r in table.rows)
