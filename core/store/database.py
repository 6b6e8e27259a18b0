"""The Store: one SQLite file, one transaction per ingest (see the package docstring)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import sqlite_utils

from core.errors import SettingError
from core.io import Loaded
from core.io.names import dataset_name
from core.store.codec import decode_plain, encode_votes, is_coded, pack_plan, pack_sql, sql_values, unpack
from core.store.connection import REPO_ROOT, connect, default_db_path
from core.store.names import DatasetNotFound, campaign_dataset_row, not_found
from core.store.snapshot import path_for as snapshot_path
from core.store.snapshot import read as read_snapshot
from core.store.snapshot import remove as remove_snapshots
from core.store.snapshot import write as write_snapshot
from core.store.tables import ANNOTATOR_LABEL_FIELD, LABEL_FIELD, TABLE_OF_KIND, TYPES_OF_TABLE
from core.store.transactions import read_transaction, write_transaction

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
               progress: Callable[[int, int], None] | None = None, *, replace: int | None = None,
               annotator_labels: Mapping[str, str] | None = None, deduplicate: bool = True) -> IngestResult:
        """Store a validated input in one transaction; the same input twice is reported, not duplicated.

        ``replace``: the id of a dataset whose content this input becomes, keeping its id (and taking
        ``name``): readers see the old rows or the new ones, never none. ``annotator_labels`` maps
        annotator ids of a votes input to the names their owner gave them, shown by every load
        (:meth:`load`); the stored votes keep the ids. ``deduplicate=False`` stores the input even when
        another dataset holds the same content (a dataset that has to exist under its own name).
        """
        name = dataset_name(loaded.source, name)  # a name that breaks the name rules is an InputError
        table = TABLE_OF_KIND[loaded.kind]
        frame = loaded.frame
        conn = self.db.conn
        with write_transaction(conn):  # the duplicate check inside: two equal ingests at once store one
            if replace is not None:
                dataset_id, changed = self._replace_dataset(int(replace), loaded, name, annotator_labels)
                if not changed:
                    return IngestResult(self.dataset(dataset_id), created=False)
            else:
                existing = deduplicate and conn.execute("SELECT id FROM datasets WHERE sha256 = ? AND kind = ?",
                                                        [loaded.sha256, loaded.kind]).fetchone()
                if existing:
                    return IngestResult(self.dataset(existing[0]), created=False)
                dataset_id = self._insert_dataset(loaded, name, table)
            if table == "votes":
                columns, arrays, labels = encode_votes(dataset_id, frame)
                conn.executemany("INSERT INTO labels VALUES (?, ?, ?, ?)", labels)
                self._write_annotator_labels(dataset_id, frame, annotator_labels)
            else:
                columns = [c for c in TYPES_OF_TABLE[table] if c in frame.columns]
                arrays = [sql_values(frame[c]) for c in columns]
            self._bulk_insert(table, dataset_id, columns, arrays, len(frame), progress)
        if replace is not None:
            remove_snapshots(self.path, dataset_id, keep=loaded.sha256)  # the old content's columnar copy
        return IngestResult(self.dataset(dataset_id), created=True)

    def _replace_dataset(self, dataset_id: int, loaded: Loaded, name: str,
                         annotator_labels: Mapping[str, str] | None) -> tuple[int, bool]:
        """Make way for ``loaded`` as the content of ``dataset_id``: (id, whether rows must be written)."""
        old = self.dataset(dataset_id)
        if old.kind != loaded.kind:
            raise SettingError(f"dataset '{old.name}' holds {old.kind.replace('_', ' ')}, not "
                             f"{loaded.kind.replace('_', ' ')}: this input cannot replace it")
        if old.sha256 == loaded.sha256:  # the same content: at most a new name and new annotator names
            self._rename(old, name)
            self._write_annotator_labels(old.id, loaded.frame, annotator_labels)
            return old.id, False
        self._delete_rows(old.id)
        self._update_dataset(old, loaded, name)
        return old.id, True

    def _unique_name(self, base: str, own_id: int | None = None) -> str:
        taken = {r[0] for r in self.db.execute("SELECT name FROM datasets WHERE id IS NOT ?", [own_id])}
        unique, k = base, 2
        while unique in taken:
            unique, k = f"{base} ({k})", k + 1
        return unique

    def _insert_dataset(self, loaded: Loaded, base: str, table: str) -> int:
        """``base``: the name ingest has already checked (core.io.names.dataset_name)."""
        cur = self.db.conn.execute(
            "INSERT INTO datasets (name, kind, created_at, rows, source, sha256, columns, notes, options) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [self._unique_name(base), loaded.kind, _now(), len(loaded.frame), loaded.source, loaded.sha256,
             json.dumps(list(loaded.frame.columns)), json.dumps(list(loaded.notes)),
             json.dumps(dict(loaded.options), default=str)])
        return int(cur.lastrowid)

    def _update_dataset(self, old: Dataset, loaded: Loaded, base: str) -> None:
        """New content under the same id; ``created_at`` becomes the time of this content."""
        self.db.conn.execute(
            "UPDATE datasets SET name = ?, created_at = ?, rows = ?, source = ?, sha256 = ?, columns = ?, "
            "notes = ?, options = ? WHERE id = ?",
            [self._unique_name(base, old.id), _now(), len(loaded.frame), loaded.source, loaded.sha256,
             json.dumps(list(loaded.frame.columns)), json.dumps(list(loaded.notes)),
             json.dumps(dict(loaded.options), default=str), old.id])

    def _rename(self, old: Dataset, base: str) -> None:
        if old.name != base:
            self.db.conn.execute("UPDATE datasets SET name = ? WHERE id = ?", [self._unique_name(base, old.id), old.id])

    def _write_annotator_labels(self, dataset_id: int, frame: pd.DataFrame, labels: Mapping[str, str] | None) -> None:
        """The owner's names of the annotators, as label rows under the annotator_id column's codes."""
        self.db.conn.execute("DELETE FROM labels WHERE dataset_id = ? AND field = ?",
                             [dataset_id, ANNOTATOR_LABEL_FIELD])
        if not labels or "annotator_id" not in frame:
            return
        categories = frame["annotator_id"].cat.categories
        rows = [(dataset_id, ANNOTATOR_LABEL_FIELD, code, str(labels[a]).strip())
                for code, a in enumerate(categories) if a in labels and str(labels[a] or "").strip()]
        self.db.conn.executemany("INSERT INTO labels VALUES (?, ?, ?, ?)", rows)

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
            self._delete_rows(info.id)
            self.db.conn.execute("DELETE FROM datasets WHERE id = ?", [info.id])
        remove_snapshots(self.path, info.id)
        return info

    def _delete_rows(self, dataset_id: int) -> None:
        for table in ("labels", *TYPES_OF_TABLE):
            self.db.conn.execute(f"DELETE FROM [{table}] WHERE dataset_id = ?", [dataset_id])

    # -- reading -----------------------------------------------------------------------------------
    def datasets(self) -> list[Dataset]:
        rows = self.db.execute("SELECT * FROM datasets ORDER BY id").fetchall()
        return [_dataset(r) for r in rows]

    def dataset(self, dataset: str | int) -> Dataset:
        """A dataset by id, by name, or by the campaign whose votes it holds (see core.store.names)."""
        key = "id" if isinstance(dataset, (int, np.integer)) else "name"
        row = self.db.execute(f"SELECT * FROM datasets WHERE {key} = ?", [dataset]).fetchone()
        if row is None and key == "name" and str(dataset).isdigit():
            row = self.db.execute("SELECT * FROM datasets WHERE id = ?", [int(dataset)]).fetchone()
        if row is None and key == "name":
            row = campaign_dataset_row(self.db.conn, str(dataset))
        if row is None:
            raise not_found(self.db.conn, dataset)
        return _dataset(row)

    def load(self, dataset: str | int, columns: Sequence[str] | None = None, limit: int | None = None, *,
             annotator_labels: bool = True) -> pd.DataFrame:
        """A stored dataset as the DataFrame its loader produced (votes: categoricals for labels).

        ``columns`` limits what is read (for analysis of large vote sets read only what you need);
        ``limit`` reads only the first rows (a preview). ``annotator_labels``: annotators appear under
        the names their owner gave them where the store has them (a published campaign), else by id.
        Everything is read in one read transaction: a dataset replaced meanwhile is read wholly as it
        was or wholly as it is, never a mix and never missing.
        """
        with read_transaction(self.db.conn):
            info = self.dataset(dataset)
            frame = self._load(info, columns, limit)
            if annotator_labels and "annotator_id" in frame.columns:
                frame = self._with_annotator_labels(info.id, frame)
        return frame

    def _load(self, info: Dataset, columns: Sequence[str] | None, limit: int | None) -> pd.DataFrame:
        wanted = [c for c in (columns or info.columns) if c in info.columns]
        missing = [c for c in (columns or ()) if c not in info.columns]
        if missing:
            raise KeyError(f"dataset '{info.name}' has no column {', '.join(missing)} "
                           f"(it has {', '.join(info.columns)})")
        n = info.rows if limit is None else max(0, min(int(limit), info.rows))
        if limit is not None:
            return self._load_sqlite(info, wanted, n)
        path = snapshot_path(self.path, info.id, info.sha256)
        fast = read_snapshot(path, wanted)
        if fast is not None and len(fast) == n:
            return fast
        if len(wanted) < len(info.columns):  # a subset: no snapshot written (it would miss columns)
            return self._load_sqlite(info, wanted, n)
        frame = self._load_sqlite(info, wanted, n)
        write_snapshot(path, frame)
        return frame

    def annotator_labels(self, dataset: str | int) -> dict[str, str]:
        """``{annotator_id: name}``: the names the owner gave the annotators of a published campaign."""
        info = self.dataset(dataset)
        rows = self.db.execute(
            "SELECT a.label, n.label FROM labels a JOIN labels n ON n.dataset_id = a.dataset_id AND n.code = a.code "
            "AND n.field = ? WHERE a.dataset_id = ? AND a.field = ?",
            [ANNOTATOR_LABEL_FIELD, info.id, LABEL_FIELD["annotator_id"]]).fetchall()
        return dict(rows)

    def _with_annotator_labels(self, dataset_id: int, frame: pd.DataFrame) -> pd.DataFrame:
        labels = self.annotator_labels(dataset_id)
        column = frame["annotator_id"]
        if not labels or not isinstance(column.dtype, pd.CategoricalDtype):
            return frame
        shown = annotator_display_names(labels, [str(c) for c in column.cat.categories])
        # Label columns keep sorted categories (as core.io.votes makes them): recode to the names' order.
        order = np.argsort(np.array(shown, dtype=object), kind="stable")
        position = np.empty(len(shown) + 1, dtype=np.int64)
        position[order] = np.arange(len(shown))
        position[-1] = -1  # code -1 (no annotator) stays missing
        codes = position[column.cat.codes.to_numpy().astype(np.int64)]
        frame = frame.copy(deep=False)
        frame["annotator_id"] = pd.Categorical.from_codes(
            codes, categories=pd.Index([shown[i] for i in order], dtype=column.cat.categories.dtype))
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


def annotator_display_names(labels: Mapping[str, str], ids: Sequence[str]) -> list[str]:
    """What analyses call each annotator in ``ids``: the owner's name for them, with the id added where
    two annotators share a name or a name is another annotator's id; the id when there is no name."""
    count = Counter(labels.get(i) for i in ids if labels.get(i))
    taken = set(ids)
    shown = []
    for i in ids:
        label = labels.get(i)
        if not label or label == i:
            shown.append(i)
        elif count[label] > 1 or label in taken:
            shown.append(f"{label} ({i})")
        else:
            shown.append(label)
    return shown if len(set(shown)) == len(shown) else list(ids)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _dataset(row: tuple) -> Dataset:
    id_, name, kind, created, rows, source, sha, columns, notes, _options = row
    return Dataset(id_, name, kind, created, rows, source, sha, tuple(json.loads(columns or "[]")),
                   tuple(json.loads(notes or "[]")))

