"""Columnar snapshots: a derived Arrow (Feather v2, zstd) copy of each stored dataset, for fast loads.

SQLite stays the store of record; a snapshot is disposable. Reading a million votes back from SQLite
builds a Python object per value (seconds); an Arrow file maps straight into pandas (a fraction of a
second) with the same dtypes (categoricals, UTC timestamps, strings). A snapshot is written after the
first full load of a dataset, named by dataset id *and* content hash (a reused id never reads another
dataset's file), written to a temporary file and renamed (readers never see half a file), and removed
with its dataset. Any problem reading one (missing, truncated, another version) means "no snapshot":
the load falls back to SQLite and writes a fresh one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pyarrow.feather as feather


def folder(db_path: Path) -> Path:
    return db_path.parent / f"{db_path.name}.snapshots"


def path_for(db_path: Path, dataset_id: int, sha256: str) -> Path:
    return folder(db_path) / f"{dataset_id}-{sha256[:32]}.arrow"


def read(path: Path, columns: Sequence[str]) -> pd.DataFrame | None:
    """The snapshot's ``columns``, or None when there is no usable snapshot."""
    try:
        frame = feather.read_table(path, columns=list(columns), memory_map=True).to_pandas()
    except Exception:  # noqa: BLE001 - missing, partial or unreadable: fall back to SQLite
        return None
    return frame if list(frame.columns) == list(columns) else None


def write(path: Path, frame: pd.DataFrame) -> None:
    """Write atomically; a failure (disk full, read-only folder) only costs speed, so it is not raised."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
        os.close(fd)
        feather.write_feather(frame, tmp, compression="zstd")
        os.replace(tmp, path)
        tmp = None
    except Exception:  # noqa: BLE001
        pass
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def remove(db_path: Path, dataset_id: int, keep: str | None = None) -> None:
    """Remove the dataset's snapshots, except the one of content ``keep`` (a sha256) when given."""
    kept = path_for(db_path, dataset_id, keep).name if keep else None
    for stale in folder(db_path).glob(f"{dataset_id}-*.arrow"):
        if stale.name == kept:
            continue
        with contextlib.suppress(OSError):
            stale.unlink()
