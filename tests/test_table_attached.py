"""A table model kept without its samples (``Table.detached``, what the build cache stores) and put
back on its frame (``Table.attached``) has every row's samples as the table made from the frame had
them: the same rows, values and index, whether the frame's index is its positions or not."""

from __future__ import annotations

import pickle

import pandas as pd

from benchsite.model.table import Table
from conftest import reference_frames


def test_a_table_put_back_on_its_frame_has_the_samples_it_was_made_with():
    checked = 0
    for fig, frame in reference_frames():
        for shown in (frame, frame.set_axis(frame.index * 3 + 7)):  # positions, and other labels
            made = Table.of(shown, fig)
            back = pickle.loads(pickle.dumps(made.detached())).attached(shown)
            assert len(back.rows) == len(made.rows)
            for a, b in zip(made.rows, back.rows):
                pd.testing.assert_frame_equal(a.samples, b.samples, check_index_type=False)
                assert a.samples.index.tolist() == b.samples.index.tolist()
            checked += 1
    assert checked > 20
