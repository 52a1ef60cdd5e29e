"""Writing results files: every column, every row, atomically or not at all."""

from __future__ import annotations

import csv
import io
import math
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from .schema import COLUMNS, WRITE_DEFAULTS

Row = Mapping[str, object]


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"refusing to write a non-finite number ({value})")
        return repr(value)  # shortest text that reads back as the same float
    return str(value)


def to_csv_text(rows: Iterable[Row]) -> str:
    """Rows as CSV text with the schema's columns in order; unknown keys are an error."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for i, row in enumerate(rows):
        extra = set(row) - set(COLUMNS)
        if extra:
            raise ValueError(f"row {i}: columns not in the schema: {sorted(extra)}")
        writer.writerow([_cell(row.get(col, WRITE_DEFAULTS.get(col))) for col in COLUMNS])
    return buf.getvalue()


def write_atomic(path: Path, data: str | bytes, staging: Path | None = None) -> None:
    """Replace ``path`` with ``data`` in one rename.

    The temporary file lives in ``staging`` (outside ``results/``) when given,
    so an interrupted write leaves nothing behind in the results folder and the
    previous file untouched. A rename across file systems falls back to a
    temporary file beside the target.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_dir = staging or path.parent
    tmp_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=tmp_dir)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would make results unreadable to others
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.replace(tmp, path)
        except OSError:
            if tmp_dir == path.parent:
                raise
            write_atomic(path, data, staging=None)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read_rows(path: Path) -> list[dict[str, str]]:
    """A worker's CSV back as dicts of strings (header checked)."""
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path}: header does not match the schema's columns")
        return list(reader)
