"""A machine panel's meta line and provenance (``views/render.py``) read the same as pandas'
grouping gave them: the samples per cell (``groupby([...], dropna=False).size()``) and each run's
first value of a per-run field (``groupby("run")[col].first()``), on every committed table and on
frames with empty cells."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchkit.layout import discover
from benchkit.schema import figure_id_for
from benchsite.model import load
from benchsite.model.figures import all_figures
from benchsite.model.table import distinct_texts
from benchsite.views import fmt, render
from conftest import REPO


def _texts(frame: pd.DataFrame) -> dict[str, set[str]]:
    """What a panel asks of its table (``Table.texts``): the distinct texts of the columns it lists."""
    return {col: distinct_texts(frame[col]) for col in render.TEXT_COLUMNS}


def _distinct(frame: pd.DataFrame, col: str) -> str:
    return render._distinct(_texts(frame), col)


def _old_meta(frame: pd.DataFrame) -> dict:
    first = frame.iloc[0]
    per_run = frame.groupby(["run", "variant", "params"], dropna=False).size()
    return {"machine": first["machine"], "platform": first["platform"], "device_kind": first["device_kind"],
            "jax": _distinct(frame, "jax_version"), "date": _distinct(frame, "timestamp_utc")[:10],
            "boundary": _distinct(frame, "boundary"), "runs": frame["run"].nunique(),
            "processes": int(frame["process_count"].max()) if "process_count" in frame else 1,
            "samples": fmt.count_span(int(per_run.min()), int(per_run.max()), "sample")}


def _old_by_run(frame: pd.DataFrame, col: str) -> str:
    values = frame.groupby("run")[col].first()
    if values.nunique(dropna=False) <= 1:
        return _distinct(frame, col)
    return "by run: " + ", ".join("—" if v != v else str(v) for v in values)


def _files():
    """The committed results files of the scripts' figures: each test validates its own (made
    while collecting, every test process validated every file, whichever ran this module)."""
    figures = all_figures(REPO / "bench_scripts")
    return [file for file in discover(REPO / "results") if figure_id_for(file.stem) in figures]


def _edited(frame: pd.DataFrame) -> list[pd.DataFrame]:
    """The frame with empty cells where a per-run field or params may have them: some rows, one
    run's every row, every row; and runs out of order."""
    out = []
    runs = frame["run"].to_numpy()
    for rows in (np.arange(len(frame)) % 3 == 0, runs == runs.max(), np.ones(len(frame), dtype=bool)):
        edited = frame.copy()
        for col in render.PER_RUN_FIELDS:
            edited[col] = edited[col].astype(float).where(~rows)
        edited["params"] = edited["params"].astype(object).where(~rows, None)
        out.append(edited)
    out.append(frame.iloc[::-1].reset_index(drop=True))
    return out


@pytest.mark.parametrize("file", _files(), ids=lambda file: f"{file.machine}/{file.stem}")
def test_the_meta_and_per_run_fields_are_what_pandas_grouping_gave(file):
    frame = load.load(file)
    for f in [frame, *_edited(frame)]:
        texts = _texts(f)
        assert render._meta(f, texts) == _old_meta(f)
        for col in render.PER_RUN_FIELDS:
            assert render._by_run(f, texts, col) == _old_by_run(f, col)
