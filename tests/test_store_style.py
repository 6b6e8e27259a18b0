"""The store keeps the per-side style counts (schema v4): ingest stores them, a load gives them back exactly,
scheme style ranks a stored dataset as it ranks the file, and a store of version 3 opens, migrates and keeps
its datasets (which rank with scheme style on length only, with the scheme's note)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import numpy as np
import pandas as pd
import pytest

import core.store.schema as schema
from core.cli import main
from core.io import load
from core.schema import STYLE_COUNT_COLUMNS
from core.store import Store
from core.store.schema import SCHEMA_VERSION, ensure_schema
from core.store.tables import STORED_VOTE_COLUMNS, VOTE_SQL_TYPES
from tests.conftest import shared_file
from tests.test_real_data import TULU_OUTCOMES
from tests.test_style_scheme import votes_with_texts, write


def rank_out(capsys, *args) -> str:
    code = main(["rank", *map(str, args), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_schema_has_the_count_columns():
    assert SCHEMA_VERSION >= 4  # the count columns came with version 4
    assert STORED_VOTE_COLUMNS[-len(STYLE_COUNT_COLUMNS):] == STYLE_COUNT_COLUMNS
    assert all(VOTE_SQL_TYPES[c] is float for c in STYLE_COUNT_COLUMNS)


def test_counts_round_trip_exactly_and_are_listed(tmp_path):
    path = write(votes_with_texts(200, seed=3), tmp_path)
    loaded = load(path)
    assert set(STYLE_COUNT_COLUMNS) <= set(loaded.frame.columns)
    with Store(tmp_path / "s.db") as store:
        info = store.ingest(loaded, name="texts").dataset
        assert set(STYLE_COUNT_COLUMNS) <= set(info.columns)
        back = store.load(info.id)  # from SQLite (and it writes the snapshot)
        again = store.load(info.id)  # from the snapshot
        subset = store.load(info.id, ["model_a", *STYLE_COUNT_COLUMNS])
    for frame in (back, again):
        pd.testing.assert_frame_equal(frame, loaded.frame)
        assert all(frame[c].dtype == np.float64 for c in STYLE_COUNT_COLUMNS)
    pd.testing.assert_frame_equal(subset, loaded.frame[["model_a", *STYLE_COUNT_COLUMNS]])
    assert loaded.frame["headers_a"].sum() > 0 and loaded.frame["bold_b"].sum() > 0  # the sample has them


def test_missing_counts_are_null_and_come_back_missing(tmp_path):
    frame = pd.DataFrame({"model_a": ["a", "b", "c"], "model_b": ["b", "c", "a"], "winner": ["model_a"] * 3,
                          "len_a": [10, 20, 30], "len_b": [5, 5, 5], "headers_a": [1, None, 2],
                          "headers_b": [0, 3, None]})
    loaded = load(write(frame, tmp_path))
    with Store(tmp_path / "s.db") as store:
        info = store.ingest(loaded).dataset
        with closing(sqlite3.connect(tmp_path / "s.db")) as con:
            stored = con.execute("SELECT headers_a, headers_b, lists_a FROM votes ORDER BY row").fetchall()
        back = store.load(info.id)
    assert stored == [(1.0, 0.0, None), (None, 3.0, None), (2.0, None, None)]
    assert "lists_a" not in info.columns and "headers_a" in info.columns
    pd.testing.assert_frame_equal(back, loaded.frame)


def test_a_file_without_texts_or_counts_stores_no_counts(tmp_path):
    frame = pd.DataFrame({"model_a": ["a", "b"], "model_b": ["b", "a"], "winner": ["model_a", "tie"]})
    with Store(tmp_path / "s.db") as store:
        info = store.ingest(load(write(frame, tmp_path))).dataset
        with closing(sqlite3.connect(tmp_path / "s.db")) as con:
            stored = con.execute(f"SELECT {', '.join(STYLE_COUNT_COLUMNS)} FROM votes").fetchall()
    assert not set(STYLE_COUNT_COLUMNS) & set(info.columns)
    assert stored == [(None,) * 6] * 2


def test_the_labeled_view_shows_the_counts(tmp_path):
    with Store(tmp_path / "s.db") as store:
        store.ingest(load(write(votes_with_texts(20), tmp_path)))
    with closing(sqlite3.connect(tmp_path / "s.db")) as con:
        names = [d[0] for d in con.execute("SELECT * FROM votes_labeled LIMIT 1").description]
    assert names[-len(STYLE_COUNT_COLUMNS):] == list(STYLE_COUNT_COLUMNS)


@pytest.mark.parametrize("extra", [(), ("--ci", "bootstrap", "--bootstrap", "50"), ("--by", "game_id")])
def test_rank_of_a_stored_dataset_is_byte_identical_to_the_file(tmp_path, capsys, extra):
    path = write(votes_with_texts(300, seed=5), tmp_path)
    db = tmp_path / "s.db"
    assert main(["ingest", str(path), "--name", "texts", "--db", str(db)]) == 0
    capsys.readouterr()
    from_file = rank_out(capsys, path, "--scheme", "style", *extra)
    from_store = rank_out(capsys, "texts", "--db", db, "--scheme", "style", *extra)
    assert from_store == from_file
    parsed = json.loads(from_file)
    block = parsed["groups"][0] if "groups" in parsed else parsed
    assert [c["name"] for c in block["covariates"]] == ["length", "headers", "lists", "bold"]


def test_tulu1_ranks_the_same_from_the_store(tmp_path, capsys):
    path = shared_file("tulu1_human_eval/annotations.csv")
    reading = ["--map", "winner=preference", "--map", "query_id=instance_id",
               *[a for k, v in TULU_OUTCOMES.items() for a in ("--outcome", f"{k}={v}")]]
    db = tmp_path / "s.db"
    assert main(["ingest", str(path), "--name", "tulu", "--db", str(db), *reading]) == 0
    capsys.readouterr()
    from_file = rank_out(capsys, path, "--scheme", "style", *reading)
    from_store = rank_out(capsys, "tulu", "--db", db, "--scheme", "style")
    assert from_store == from_file
    assert len(json.loads(from_file)["covariates"]) == 4


# -- a store of version 3 --------------------------------------------------------------------------------
def make_version_3(db, added: tuple[str, ...] = ()) -> None:
    """Turn a current store file into what version 3 made: a votes table without the count columns (but
    ``added``, as a migration stopped halfway would leave it), datasets that do not list them, version 3."""
    with closing(sqlite3.connect(db)) as con:
        keep = [c for c in STORED_VOTE_COLUMNS if c not in STYLE_COUNT_COLUMNS or c in added]
        ddl = con.execute("SELECT sql FROM sqlite_master WHERE name = 'votes'").fetchone()[0]
        for column in STYLE_COUNT_COLUMNS:
            if column not in added:
                ddl = ddl.replace(f", [{column}] REAL", "")
        con.execute("DROP VIEW votes_labeled")
        con.execute("ALTER TABLE votes RENAME TO votes_new")
        con.execute(ddl)
        columns = ", ".join(["dataset_id", "row", *keep])
        con.execute(f"INSERT INTO votes ({columns}) SELECT {columns} FROM votes_new")
        con.execute("DROP TABLE votes_new")
        for id_, listed in con.execute("SELECT id, columns FROM datasets").fetchall():
            kept = [c for c in json.loads(listed) if c not in STYLE_COUNT_COLUMNS]
            con.execute("UPDATE datasets SET columns = ? WHERE id = ?", [json.dumps(kept), id_])
        con.execute("PRAGMA user_version = 3")
        con.commit()


def votes_columns(db) -> list[str]:
    with closing(sqlite3.connect(db)) as con:
        return [r[1] for r in con.execute("PRAGMA table_info(votes)")]


@pytest.mark.parametrize("added", [(), ("headers_a", "headers_b")], ids=["v3", "partly-migrated"])
def test_a_version_3_store_migrates_and_keeps_its_datasets(tmp_path, capsys, added):
    db = tmp_path / "s.db"
    path = write(votes_with_texts(200, seed=7), tmp_path)
    with Store(db) as store:
        info = store.ingest(load(path), name="old").dataset
        before = store.load(info.id).drop(columns=list(STYLE_COUNT_COLUMNS))
    for snapshot in (tmp_path / "s.db.snapshots").glob("*.arrow"):
        snapshot.unlink()  # version 3 had no counts in its snapshots either
    make_version_3(db, added)
    assert not set(STYLE_COUNT_COLUMNS) - set(added) & set(votes_columns(db))

    with Store(db) as store:
        with closing(sqlite3.connect(db)) as con:
            assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert votes_columns(db)[-len(STYLE_COUNT_COLUMNS):] == list(STYLE_COUNT_COLUMNS)
        kept = store.dataset("old")
        assert kept.rows == 200 and not set(STYLE_COUNT_COLUMNS) & set(kept.columns)
        pd.testing.assert_frame_equal(store.load(kept.id), before)
    out = json.loads(rank_out(capsys, "old", "--db", db, "--scheme", "style"))
    assert [c["name"] for c in out["covariates"]] == ["length"]
    assert any("not controlled for headers, lists, bold" in n for n in out["params"]["notes"])


def test_the_migration_runs_inside_the_schema_transaction(tmp_path, monkeypatch):
    db = tmp_path / "s.db"
    Store(db).close()
    make_version_3(db)

    def failing(conn):
        schema._add_column(conn, "votes", "headers_a", "REAL")
        raise RuntimeError("killed midway")

    monkeypatch.setitem(schema.MIGRATIONS, 4, failing)
    with closing(sqlite3.connect(db, isolation_level=None)) as con, pytest.raises(RuntimeError):
        ensure_schema(con)
    assert "headers_a" not in votes_columns(db)  # rolled back with the rest
    with closing(sqlite3.connect(db)) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 3
