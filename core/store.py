"""The embedded SQLite store (through sqlite-utils): datasets, votes, EvalRuns, counts, matrices.

Votes are stored dictionary-encoded: label columns (models, annotators, queries …) hold integer codes
into the ``labels`` table and outcomes hold codes into ``outcomes``. That halves the file, makes a
million-vote ingest a few seconds, and loads straight into pandas categoricals. The view
``votes_labeled`` shows the same rows with their labels for anyone querying the file with SQL.

Every ingest is one transaction: a rejected or interrupted ingest leaves the store as it was.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import sqlite_utils

from core.io import Loaded
from core.schema import OUTCOMES, VOTE_COLUMNS, VOTE_LABEL_COLUMNS

CHUNK_ROWS = 100_000  # rows per executemany call; progress is reported between chunks
REPO_ROOT = Path(__file__).resolve().parents[1]

# Label columns share one dictionary per field; both model columns use the field "model".
LABEL_FIELD = {"model_a": "model", "model_b": "model", **{c: c for c in VOTE_LABEL_COLUMNS}}
OUTCOME_COLUMNS = ("winner", "golden_answer")
VOTE_SQL_TYPES = {c: int for c in (*LABEL_FIELD, *OUTCOME_COLUMNS, "is_golden")} | {
    "vote_id": str, "timestamp": float, "response_time_s": float, "len_a": float, "len_b": float, "weight": float}
RUN_SQL_TYPES = {"model_id": str, "task_id": str, "metric_name": str, "score": float, "category": str,
                 "weight": float, "stderr": float}
COUNT_SQL_TYPES = {"model_a": str, "model_b": str, "winner": str, "count": float, "game_id": str,
                   "dimension": str, "period": str, "annotator_status": str}
MATRIX_SQL_TYPES = {"model_row": str, "model_col": str, "rate": float, "n": float}
TABLE_OF_KIND = {"votes": "votes", "eval_runs": "eval_runs", "counts": "counts", "winrate_matrix": "matrices"}
TYPES_OF_TABLE = {"votes": VOTE_SQL_TYPES, "eval_runs": RUN_SQL_TYPES, "counts": COUNT_SQL_TYPES,
                  "matrices": MATRIX_SQL_TYPES}


def default_db_path() -> Path:
    """``$EVALBOARD_DB`` if set, else ``data/evalboard.db`` in the project folder."""
    env = os.environ.get("EVALBOARD_DB")
    return Path(env) if env else REPO_ROOT / "data" / "evalboard.db"


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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite_utils.Database(self.path)
        self.db.execute("PRAGMA journal_mode=WAL")
        # NORMAL is durable at every checkpoint and never corrupts in WAL mode; FULL would fsync per commit.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self._create_schema()

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- schema ------------------------------------------------------------------------------------
    def _create_schema(self) -> None:
        db = self.db
        if "datasets" in db.table_names():
            return
        with db.conn:
            db["datasets"].create({"id": int, "name": str, "kind": str, "created_at": str, "rows": int,
                                   "source": str, "sha256": str, "columns": str, "notes": str, "options": str},
                                  pk="id", not_null={"name", "kind", "rows", "sha256"})
            db["datasets"].create_index(["name"], unique=True)
            db["datasets"].create_index(["sha256"])
            db["labels"].create({"dataset_id": int, "field": str, "code": int, "label": str},
                                pk=("dataset_id", "field", "code"), not_null={"label"})
            db["outcomes"].create({"code": int, "label": str}, pk="code")
            db["outcomes"].insert_all([{"code": i, "label": o} for i, o in enumerate(OUTCOMES)])
            for table, types in TYPES_OF_TABLE.items():
                db[table].create({"dataset_id": int, "row": int, **types}, not_null={"dataset_id", "row"})
                db[table].create_index(["dataset_id", "row"], unique=True)
            db.create_view("votes_labeled", _labeled_view_sql())

    # -- writing -----------------------------------------------------------------------------------
    def ingest(self, loaded: Loaded, name: str | None = None,
               progress: Callable[[int, int], None] | None = None) -> IngestResult:
        """Store a validated input in one transaction; the same input twice is reported, not duplicated."""
        existing = self.db.execute("SELECT id FROM datasets WHERE sha256 = ? AND kind = ?",
                                   [loaded.sha256, loaded.kind]).fetchone()
        if existing:
            return IngestResult(self.dataset(existing[0]), created=False)
        table = TABLE_OF_KIND[loaded.kind]
        frame = loaded.frame
        conn = self.db.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            dataset_id = self._insert_dataset(loaded, name, table)
            if table == "votes":
                columns, arrays = self._encode_votes(dataset_id, frame)
            else:
                columns = [c for c in TYPES_OF_TABLE[table] if c in frame.columns]
                arrays = [_sql_values(frame[c]) for c in columns]
            self._bulk_insert(table, dataset_id, columns, arrays, len(frame), progress)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return IngestResult(self.dataset(dataset_id), created=True)

    def _insert_dataset(self, loaded: Loaded, name: str | None, table: str) -> int:
        base = (name or Path(loaded.source).name.split(".")[0] or "dataset").strip()
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

    def _encode_votes(self, dataset_id: int, frame: pd.DataFrame) -> tuple[list[str], list[list]]:
        labels, columns, arrays = [], [], []
        for col in VOTE_COLUMNS:
            if col not in frame:
                continue
            series = frame[col]
            if col in LABEL_FIELD:
                cat = series.cat
                if col != "model_b":  # model_b shares model_a's categories (see core.io.votes)
                    labels += [(dataset_id, LABEL_FIELD[col], i, str(v)) for i, v in enumerate(cat.categories)]
                values = _codes(cat.codes.to_numpy())
            elif col in OUTCOME_COLUMNS:
                values = _codes(series.cat.codes.to_numpy())
            elif col == "is_golden":
                values = series.to_numpy(dtype=np.int64).tolist()
            elif col == "timestamp":
                ns = series.to_numpy(dtype="datetime64[ns]").astype(np.int64).astype(np.float64) / 1e9
                values = _sql_values(pd.Series(np.where(series.isna().to_numpy(), np.nan, ns)))
            else:
                values = _sql_values(series)
            columns.append(col)
            arrays.append(values)
        self.db.conn.executemany("INSERT INTO labels VALUES (?, ?, ?, ?)", labels)
        return columns, arrays

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
        info = self.dataset(dataset)
        with self.db.conn:
            for table in ("labels", *TYPES_OF_TABLE):
                self.db.conn.execute(f"DELETE FROM [{table}] WHERE dataset_id = ?", [info.id])
            self.db.conn.execute("DELETE FROM datasets WHERE id = ?", [info.id])
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

    def load(self, dataset: str | int, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """A stored dataset as the DataFrame its loader produced (votes: categoricals for labels).

        ``columns`` limits what is read; for analysis of large vote sets read only what you need.
        """
        info = self.dataset(dataset)
        wanted = [c for c in (columns or info.columns) if c in info.columns]
        missing = [c for c in (columns or ()) if c not in info.columns]
        if missing:
            raise KeyError(f"dataset '{info.name}' has no column {', '.join(missing)} "
                           f"(it has {', '.join(info.columns)})")
        table = TABLE_OF_KIND[info.kind]
        cols = ", ".join(f"[{c}]" for c in wanted) or "row"
        cursor = self.db.execute(f"SELECT {cols} FROM [{table}] WHERE dataset_id = ? ORDER BY row", [info.id])
        data = cursor.fetchall()
        columns_data = list(zip(*data)) if data else [()] * len(wanted)
        if table == "votes":
            labels = self._labels(info.id)
            return pd.DataFrame({c: _decode_vote_column(c, v, labels) for c, v in zip(wanted, columns_data)})
        types = TYPES_OF_TABLE[table]
        out = {}
        for c, v in zip(wanted, columns_data):
            out[c] = np.array(v, dtype=np.float64) if types[c] is float else pd.array(v, dtype="str")
        return pd.DataFrame(out, index=pd.RangeIndex(info.rows))

    def _labels(self, dataset_id: int) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for field, label in self.db.execute(
                "SELECT field, label FROM labels WHERE dataset_id = ? ORDER BY field, code", [dataset_id]):
            out.setdefault(field, []).append(label)
        return out


def _codes(codes: np.ndarray) -> list:
    """Categorical codes for SQL: -1 (missing) becomes NULL."""
    out = codes.astype(np.int64).tolist()
    if (codes < 0).any():
        out = [None if c < 0 else c for c in out]
    return out


def _sql_values(series: pd.Series) -> list:
    values = series.to_numpy(dtype=object if not pd.api.types.is_float_dtype(series.dtype) else np.float64)
    if values.dtype == np.float64:
        nan = np.isnan(values)
        out = values.tolist()
        return [None if m else v for v, m in zip(out, nan)] if nan.any() else out
    return [None if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else v for v in values]


def _decode_vote_column(col: str, values: tuple, labels: dict[str, list[str]]):
    if col in LABEL_FIELD or col in OUTCOME_COLUMNS:
        codes = np.array([-1 if v is None else v for v in values], dtype=np.int64) if None in values else \
            np.array(values, dtype=np.int64)
        categories = labels.get(LABEL_FIELD.get(col, ""), []) if col in LABEL_FIELD else list(OUTCOMES)
        return pd.Categorical.from_codes(codes, categories=categories)
    if col == "is_golden":
        return np.array(values, dtype=bool)
    if col == "vote_id":
        return pd.array(values, dtype="str")
    numbers = np.array(values, dtype=np.float64)
    if col == "timestamp":
        return pd.to_datetime(numbers, unit="s", utc=True).as_unit("ns").round("us")
    return numbers


def _dataset(row: tuple) -> Dataset:
    id_, name, kind, created, rows, source, sha, columns, notes, _options = row
    return Dataset(id_, name, kind, created, rows, source, sha, tuple(json.loads(columns or "[]")),
                   tuple(json.loads(notes or "[]")))


def _labeled_view_sql() -> str:
    parts = ["v.dataset_id", "v.row", "v.vote_id"]
    for col in VOTE_COLUMNS:
        if col in LABEL_FIELD:
            parts.append(f"(SELECT label FROM labels l WHERE l.dataset_id = v.dataset_id AND l.field = "
                         f"'{LABEL_FIELD[col]}' AND l.code = v.{col}) AS {col}")
        elif col in OUTCOME_COLUMNS:
            parts.append(f"(SELECT label FROM outcomes o WHERE o.code = v.{col}) AS {col}")
        elif col == "timestamp":
            parts.append("strftime('%Y-%m-%dT%H:%M:%fZ', v.timestamp, 'unixepoch') AS timestamp")
        elif col != "vote_id":
            parts.append(f"v.{col}")
    return "SELECT " + ", ".join(parts) + " FROM votes v"
