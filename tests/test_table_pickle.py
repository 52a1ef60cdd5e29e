"""A table model read back from the build cache (pickled, as ``Catalog.table`` and ``sessions.history``
keep it) has every row's run medians as they were made: the same values, dtype, runs, index type and
names (``Row`` pickles them as arrays, not as pandas' own pickles of a Series and its index)."""

from __future__ import annotations

import pickle

import pandas as pd

from benchsite.model import session_files
from benchsite.model.table import Table
from conftest import reference_frames


def _same_run_medians(made: Table, back: Table) -> int:
    assert len(back.rows) == len(made.rows)
    compared = 0
    for a, b in zip(made.rows, back.rows):
        assert list(a.run_medians) == list(b.run_medians)
        for variant, series in a.run_medians.items():
            other = b.run_medians[variant]
            pd.testing.assert_series_equal(series, other, check_index_type=True, check_exact=True)
            assert type(other.index) is type(series.index)
            assert (other.name, other.index.name) == (series.name, series.index.name)
            compared += 1
        assert a.cells == b.cells and a.params == b.params and a.label == b.label
    return compared


def test_a_pickled_table_has_the_run_medians_it_was_made_with():
    compared = 0
    for fig, frame in reference_frames():
        made = Table.of(frame, fig)
        compared += _same_run_medians(made, pickle.loads(pickle.dumps(made)))
        compared += _same_run_medians(made, pickle.loads(pickle.dumps(made.detached())).attached(frame))
        for session in session_files.from_results(frame).values():  # a session's table (sessions.py)
            made = Table.of(session, fig)
            compared += _same_run_medians(made, pickle.loads(pickle.dumps(made)))
    assert compared > 100
