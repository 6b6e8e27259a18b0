"""Eval sets in the same SQLite file as the Store, in tables of their own (``evalset_*``):

- ``evalset_sets``: one row per saved set (name, size, settings and audit as JSON, created_at);
- ``evalset_items``: its queries in order, with category, reason, scores and tags, then its reserves
  (``reason`` ``reserve``, positions after the set's);
- ``evalset_audit``: one row per build stage (in, out, method, drops, notes, model calls).

A set is saved in one transaction: all of it or nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from core.errors import EvalBoardError, SettingError
from core.evalset.audit import Audit
from core.evalset.results import EVAL_SET_COLUMNS
from core.store.connection import connect
from core.store.transactions import write_transaction


class EvalSetExists(EvalBoardError, ValueError):
    pass


class EvalSetNotFound(EvalBoardError, KeyError):
    def __str__(self) -> str:
        return f"no stored eval set named {self.args[0]!r}"


@dataclass(frozen=True)
class StoredSet:
    id: int
    name: str
    created_at: str
    size: int
    settings: dict
    audit: dict


RESERVE = "reserve"


def save(table: pd.DataFrame, audit: Audit, name: str, db: str | Path | None = None, *,
         replace: bool = False, reserves: pd.DataFrame | None = None) -> int:
    """Store an eval set under ``name`` (with its reserves); returns its id. An existing name is an error
    unless ``replace``."""
    name = str(name).strip()
    if not name:
        raise SettingError("an eval set needs a name")
    con = connect(db)
    try:
        with write_transaction(con):  # one transaction
            old = con.execute("SELECT id FROM evalset_sets WHERE name = ?", (name,)).fetchone()
            if old and not replace:
                raise EvalSetExists(f"an eval set named {name!r} is already stored; choose another name")
            if old:
                con.execute("DELETE FROM evalset_sets WHERE id = ?", (old[0],))
            cur = con.execute("INSERT INTO evalset_sets (name, created_at, size, settings, audit) VALUES (?,?,?,?,?)",
                              (name, datetime.now(UTC).isoformat(timespec="seconds"), len(table),
                               json.dumps(audit.settings, ensure_ascii=False, default=str), audit.to_json()))
            set_id = cur.lastrowid
            kept = table[list(EVAL_SET_COLUMNS)].to_dict("records")
            if reserves is not None:
                kept += reserves[list(EVAL_SET_COLUMNS)].assign(reason=RESERVE).to_dict("records")
            rows = [(set_id, i, *[_cell(rec[c]) for c in EVAL_SET_COLUMNS]) for i, rec in enumerate(kept)]
            con.executemany(f"INSERT INTO evalset_items (set_id, position, {', '.join(EVAL_SET_COLUMNS)}) VALUES "
                            f"({', '.join('?' * (len(EVAL_SET_COLUMNS) + 2))})", rows)
            con.executemany("INSERT INTO evalset_audit VALUES (?,?,?,?,?,?,?,?,?)",
                            [(set_id, i, s.stage, s.n_in, s.n_out, s.method, json.dumps(s.dropped),
                              json.dumps(s.notes, ensure_ascii=False), json.dumps(s.calls))
                             for i, s in enumerate(audit.stages)])
        return int(set_id)
    finally:
        con.close()


def _cell(value):
    if isinstance(value, bool):
        return int(value)
    if hasattr(value, "item"):
        return value.item()
    return value


def list_sets(db: str | Path | None = None) -> list[StoredSet]:
    con = connect(db)
    try:
        rows = con.execute("SELECT id, name, created_at, size, settings, audit FROM evalset_sets "
                           "ORDER BY id").fetchall()
    finally:
        con.close()
    return [StoredSet(r[0], r[1], r[2], r[3], json.loads(r[4]), json.loads(r[5])) for r in rows]


def load(name: str, db: str | Path | None = None) -> tuple[StoredSet, pd.DataFrame]:
    """The stored set (its queries only; :func:`load_reserves` gives the reserves)."""
    info, items = _load_items(name, db)
    return info, items[items["reason"] != RESERVE].reset_index(drop=True)


def load_reserves(name: str, db: str | Path | None = None) -> pd.DataFrame:
    """The reserves stored with a set, best first (empty for a set stored without reserves)."""
    items = _load_items(name, db)[1]
    return items[items["reason"] == RESERVE].reset_index(drop=True)


def _load_items(name: str, db: str | Path | None = None) -> tuple[StoredSet, pd.DataFrame]:
    con = connect(db)
    try:
        row = con.execute("SELECT id, name, created_at, size, settings, audit FROM evalset_sets WHERE name = ?",
                          (name,)).fetchone()
        if row is None:
            raise EvalSetNotFound(name)
        items = pd.read_sql_query(f"SELECT {', '.join(EVAL_SET_COLUMNS)} FROM evalset_items WHERE set_id = ? "
                                  "ORDER BY position", con, params=(row[0],))
    finally:
        con.close()
    for tag in EVAL_SET_COLUMNS[-4:]:
        items[tag] = items[tag].astype(bool)
    return StoredSet(row[0], row[1], row[2], row[3], json.loads(row[4]), json.loads(row[5])), items
