"""The Store: one SQLite file, one transaction per ingest (see the package docstring)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import sqlite_utils

from core.io import Loaded
from core.io.names import dataset_name
from core.store import snapshot
from core.store.codec import decode_plain, encode_votes, is_coded, pack_plan, pack_sql, sql_values, unpack
from core.store.connection import REPO_ROOT, connect, default_db_path, write_transaction
from core.store.tables import TABLE_OF_KIND, TYPES_OF_TABLE

CHUNK_ROWS = 100_000  # rows per executemany call; progress is reported between chunks
__all__ = ["REPO_ROOT", "Dataset", "DatasetNotFound", "IngestResult", "Store", "default_db_path"]


@dataclass(frozen=True)
class Dataset:
    id: int
    name: str
    kind: str
    created_at: str
    rows: int
    source: str
    sha256: str
    columns: tuple[str, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class IngestResult:
    dataset: Dataset
    created: bool  # False: the same input was already stored (nothing was added)

    def summary(self) -> str:
        d = self.dataset
        if not self.created:
            return f"already stored as dataset '{d.name}' (id {d.id}, {d.rows:,} rows); nothing added"
        return f"stored {d.rows:,} {d.kind.replace('_', ' ')} rows as dataset '{d.name}' (id {d.id})"


class DatasetNotFound(KeyError):
    def __str__(self) -> str:
        return f"no dataset named or numbered {self.args[0]!r}"


class Store:
    """One SQLite file. Open with a path, or the default (``EVALBOARD_DB`` or data/evalboard.db)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_db_path()
        # The connection policy and the whole schema (every part's tables, made or repaired in one
        # transaction) come from core.store.connection; sqlite-utils only wraps it for SQL queries.
        self.db = sqlite_utils.Database(connect(self.path))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- writing -----------------------------------------------------------------------------------
    def ingest(self, loaded: Loaded, name: str | None = None,
               progress: Callable[[int, int], None] | None = None) -> IngestResult:
        """Store a validated input in one transaction; the same input twice is reported, not duplicated."""
        name = dataset_name(loaded.source, name)  # a name that breaks the name rules is an InputError
        table = TABLE_OF_KIND[loaded.kind]
        frame = loaded.frame
        conn = self.db.conn
        with write_transaction(conn):  # the duplicate check inside: two equal ingests at once store one
            existing = conn.execute("SELECT id FROM datasets WHERE sha256 = ? AND kind = ?",
                                    [loaded.sha256, loaded.kind]).fetchone()
            if existing:
                return IngestResult(self.dataset(existing[0]), created=False)
            dataset_id = self._insert_dataset(loaded, name, table)
            if table == "votes":
                columns, arrays, labels = encode_votes(dataset_id, frame)
                conn.executemany("INSERT INTO labels VALUES (?, ?, ?, ?)", labels)
            else:
                columns = [c for c in TYPES_OF_TABLE[table] if c in frame.columns]
                arrays = [sql_values(frame[c]) for c in columns]
            self._bulk_insert(table, dataset_id, columns, arrays, len(frame), progress)
        return IngestResult(self.dataset(dataset_id), created=True)

    def _insert_dataset(self, loaded: Loaded, base: str, table: str) -> int:
        """``base``: the name ingest has already checked (core.io.names.dataset_name)."""
        taken = {r[0] for r in self.db.execute("SELECT name FROM datasets")}
        unique, k = base, 2
        while unique in taken:
            unique, k = f"{base} ({k})", k + 1
        cur = self.db.conn.execute(
            "INSERT INTO datasets (name, kind, created_at, rows, source, sha256, columns, notes, options) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [unique, loaded.kind, datetime.now(timezone.utc).isoformat(timespec="seconds"), len(loaded.frame),
             loaded.source, loaded.sha256, json.dumps(list(loaded.frame.columns)), json.dumps(list(loaded.notes)),
             json.dumps(dict(loaded.options), default=str)])
        return int(cur.lastrowid)

    def _bulk_insert(self, table: str, dataset_id: int, columns: Sequence[str], arrays: Sequence[list], n: int,
                     progress: Callable[[int, int], None] | None) -> None:
        sql = (f"INSERT INTO [{table}] (dataset_id, row, {', '.join(f'[{c}]' for c in columns)}) "
               f"VALUES ({', '.join('?' * (len(columns) + 2))})")
        for start in range(0, n, CHUNK_ROWS):
            stop = min(n, start + CHUNK_ROWS)
            chunk = [a[start:stop] for a in arrays]
            self.db.conn.executemany(sql, zip([dataset_id] * (stop - start), range(start, stop), *chunk))
            if progress:
                progress(stop, n)

    def delete(self, dataset: str | int) -> Dataset:
        """Remove a dataset and all its rows (one transaction)."""
        with write_transaction(self.db.conn):
            info = self.dataset(dataset)
            for table in ("labels", *TYPES_OF_TABLE):
                self.db.conn.execute(f"DELETE FROM [{table}] WHERE dataset_id = ?", [info.id])
            self.db.conn.execute("DELETE FROM datasets WHERE id = ?", [info.id])
        snapshot.remove(self.path, info.id)
        return info

    # -- reading -----------------------------------------------------------------------------------
    def datasets(self) -> list[Dataset]:
        rows = self.db.execute("SELECT * FROM datasets ORDER BY id").fetchall()
        return [_dataset(r) for r in rows]

    def dataset(self, dataset: str | int) -> Dataset:
        key = "id" if isinstance(dataset, (int, np.integer)) else "name"
        row = self.db.execute(f"SELECT * FROM datasets WHERE {key} = ?", [dataset]).fetchone()
        if row is None and key == "name" and str(dataset).isdigit():
            row = self.db.execute("SELECT * FROM datasets WHERE id = ?", [int(dataset)]).fetchone()
        if row is None:
            raise DatasetNotFound(dataset)
        return _dataset(row)

    def load(self, dataset: str | int, columns: Sequence[str] | None = None, limit: int | None = None
             ) -> pd.DataFrame:
        """A stored dataset as the DataFrame its loader produced (votes: categoricals for labels).

        ``columns`` limits what is read (for analysis of large vote sets read only what you need);
        ``limit`` reads only the first rows (a preview).
        """
        info = self.dataset(dataset)
        wanted = [c for c in (columns or info.columns) if c in info.columns]
        missing = [c for c in (columns or ()) if c not in info.columns]
        if missing:
            raise KeyError(f"dataset '{info.name}' has no column {', '.join(missing)} "
                           f"(it has {', '.join(info.columns)})")
        n = info.rows if limit is None else max(0, min(int(limit), info.rows))
        if limit is not None:
            return self._load_sqlite(info, wanted, n)
        path = snapshot.path_for(self.path, info.id, info.sha256)
        fast = snapshot.read(path, wanted)
        if fast is not None and len(fast) == n:
            return fast
        if len(wanted) < len(info.columns):  # a subset: no snapshot written (it would miss columns)
            return self._load_sqlite(info, wanted, n)
        frame = self._load_sqlite(info, wanted, n)
        snapshot.write(path, frame)
        return frame

    def _load_sqlite(self, info: Dataset, wanted: list[str], n: int) -> pd.DataFrame:
        where = "WHERE dataset_id = ? AND row < ? ORDER BY row"
        table = TABLE_OF_KIND[info.kind]
        if table == "votes":
            return self._load_votes(info, wanted, n, where)
        cols = ", ".join(f"[{c}]" for c in wanted) or "row"
        rows = self.db.execute(f"SELECT {cols} FROM [{table}] {where}", [info.id, n])
        data = list(zip(*rows.fetchall())) or [()] * len(wanted)
        types = TYPES_OF_TABLE[table]
        out = {c: np.array(v, dtype=np.float64) if types[c] is float else pd.array(v, dtype="str")
               for c, v in zip(wanted, data)}
        return pd.DataFrame(out, index=pd.RangeIndex(n))

    def _load_votes(self, info: Dataset, wanted: list[str], n: int, where: str) -> pd.DataFrame:
        labels = self._labels(info.id)
        packs = pack_plan([c for c in wanted if is_coded(c)], labels)
        plain = [c for c in wanted if not is_coded(c)]
        select = [pack_sql(p) for p in packs] + [f"[{c}]" for c in plain]
        cursor = self.db.execute(f"SELECT {', '.join(select) or 'row'} FROM votes {where}", [info.id, n])
        if len(select) == 1 and packs:  # one integer per row: no tuples to transpose
            columns = [np.fromiter((r[0] for r in cursor), dtype=np.int64, count=n)]
        else:
            columns = list(zip(*cursor.fetchall())) or [()] * len(select)
        out: dict = {}
        for pack, values in zip(packs, columns):
            out.update(unpack(np.asarray(values, dtype=np.int64), pack, labels))
        for col, values in zip(plain, columns[len(packs):]):
            out[col] = decode_plain(col, values)
        return pd.DataFrame({c: out[c] for c in wanted}, index=pd.RangeIndex(n))

    def _labels(self, dataset_id: int) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for field, label in self.db.execute(
                "SELECT field, label FROM labels WHERE dataset_id = ? ORDER BY field, code", [dataset_id]):
            out.setdefault(field, []).append(label)
        return out


def _dataset(row: tuple) -> Dataset:
    id_, name, kind, created, rows, source, sha, columns, notes, _options = row
    return Dataset(id_, name, kind, created, rows, source, sha, tuple(json.loads(columns or "[]")),
                   tuple(json.loads(notes or "[]")))
