"""A table model kept without its samples (``Table.detached``, what the build cache stores) and put
back on its frame (``Table.attached``) has every row's samples as the table made from the frame had
them: the same rows, values and index, whether the frame's index is its positions or not."""

from __future__ import annotations

import pickle

import pandas as pd

from benchkit.layout import discover
from benchkit.schema import figure_id_for
from benchsite.model import load
from benchsite.model.figures import all_figures
from benchsite.model.table import Table
from conftest import REFERENCE, REPO


def test_a_table_put_back_on_its_frame_has_the_samples_it_was_made_with():
    figures = all_figures(REPO / "bench_scripts")
    checked = 0
    for file in (f for f in discover(REPO / "results") if f.machine == REFERENCE):
        fig = figures.get(figure_id_for(file.stem))
        if fig is None:
            continue
        frame = load.load(file)
        for shown in (frame, frame.set_axis(frame.index * 3 + 7)):  # positions, and other labels
            made = Table.of(shown, fig)
            back = pickle.loads(pickle.dumps(made.detached())).attached(shown)
            assert len(back.rows) == len(made.rows)
            for a, b in zip(made.rows, back.rows):
                pd.testing.assert_frame_equal(a.samples, b.samples, check_index_type=False)
                assert a.samples.index.tolist() == b.samples.index.tolist()
            checked += 1
    assert checked > 20
