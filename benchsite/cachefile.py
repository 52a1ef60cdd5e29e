"""One cache entry on disk: a pickle written atomically (temp file + rename, so two builds at
once never read half a file) and read back, or ``None`` when it is missing or damaged."""

from __future__ import annotations

import os
import pickle
import tempfile
from pathlib import Path


def read(path: Path) -> object | None:
    if not path.is_file():
        return None
    try:
        return pickle.loads(path.read_bytes())
    except Exception:  # noqa: BLE001 - a damaged entry is made again
        return None


def write(path: Path, value: object) -> None:
    """Store ``value``; a read-only checkout still builds, it just makes the value again next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        pass
