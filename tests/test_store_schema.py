"""One connection policy and one schema for every part of the store file (core.store.connection/.schema)."""

from __future__ import annotations

import re
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest

import core.store.connection as connection
import core.store.schema as schema
import core.store.transactions as transactions
from core.campaign import get_campaign, issue_tokens, record_vote, serve_next
from core.cli import main
from core.collect.store import CollectStore
from core.evalset import store as evalset_store
from core.store import Store
from core.store.connection import connect
from core.store.schema import SCHEMA_VERSION, SchemaTooNew
from core.store.transactions import StoreBusy, with_retry, write_transaction
from tests.test_campaign import ANSWERS_CSV

REPO = Path(__file__).resolve().parents[1]
# What sqlite-utils made for `datasets` before the schema had a version.
OLD_DATASETS = ("CREATE TABLE [datasets] ([id] INTEGER PRIMARY KEY, [name] TEXT NOT NULL, [kind] TEXT NOT NULL, "
                "[created_at] TEXT, [rows] INTEGER NOT NULL, [source] TEXT, [sha256] TEXT NOT NULL, [columns] TEXT, "
                "[notes] TEXT, [options] TEXT)")


def objects(path: Path) -> set[str]:
    with closing(sqlite3.connect(path)) as con:
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")}


def user_version(path: Path) -> int:
    with closing(sqlite3.connect(path)) as con:
        return con.execute("PRAGMA user_version").fetchone()[0]


def half_made(db: Path) -> None:
    """The store of the report: made by a campaign (its tables only), then a publish created `datasets`
    and failed before `labels`. Leaves the campaign's tables and `datasets`, and no schema version."""
    with closing(sqlite3.connect(db)) as con:
        keep = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND "
                                          "name LIKE 'campaign_%'")}
        for kind, name in con.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
                                      "AND type IN ('view', 'table')").fetchall():
            if name not in keep:
                con.execute(f"DROP {kind.upper()} [{name}]")
        con.execute(OLD_DATASETS)
        con.execute("PRAGMA user_version = 0")
        con.commit()


def test_a_half_made_store_is_repaired_and_publish_and_ingest_work(tmp_path, capsys):
    db = tmp_path / "store.db"
    (tmp_path / "answers.csv").write_bytes(ANSWERS_CSV)
    assert main(["campaign", "create", "c", "--answers", str(tmp_path / "answers.csv"), "--annotators", "ann",
                 "--dimensions", "overall", "--seed", "1", "--db", str(db)]) == 0
    token = capsys.readouterr().out.strip().splitlines()[-1].split("\t")[1]
    with closing(connect(db)) as conn:
        item = serve_next(conn, token)
        record_vote(conn, token, item.assignment_id, {"overall": "model_a"})
    half_made(db)
    assert "labels" not in objects(db) and "datasets" in objects(db)

    assert main(["campaign", "publish", "c", "--db", str(db)]) == 0
    (tmp_path / "runs.csv").write_text("model_id,task_id,score\nm1,t1,0.5\nm2,t1,0.7\n")
    assert main(["ingest", str(tmp_path / "runs.csv"), "--db", str(db)]) == 0
    with Store(db) as store:
        kinds = sorted(d.kind for d in store.datasets())
        assert kinds == ["eval_runs", "votes"]
        published = next(d for d in store.datasets() if d.kind == "votes")
        assert store.load(published.id)["winner"].tolist() == ["model_a"]
    assert user_version(db) == SCHEMA_VERSION


def test_every_part_makes_the_whole_schema(tmp_path):
    made = {}
    openers = {"store": lambda p: Store(p).close(), "campaign": lambda p: connect(p).close(),
               "collect": lambda p: CollectStore(p).close(), "evalset": lambda p: evalset_store.list_sets(p)}
    for part, open_ in openers.items():
        path = tmp_path / f"{part}.db"
        open_(path)
        made[part] = objects(path)
        assert user_version(path) == SCHEMA_VERSION
    assert all(names == made["store"] for names in made.values())
    assert {"datasets", "labels", "votes", "votes_labeled", "campaign_votes", "collect_answers",
            "evalset_items"} <= made["store"]


def test_schema_creation_is_one_transaction(tmp_path, monkeypatch):
    """A failure on the last statement leaves no table at all, not the tables made before it."""
    real = schema.current_schema
    monkeypatch.setattr(schema, "current_schema", lambda: [*real(), "CREATE TABLE broken (x REFERENCES)"])
    db = tmp_path / "store.db"
    with pytest.raises(sqlite3.OperationalError):
        connect(db)
    assert objects(db) == set() and user_version(db) == 0
    monkeypatch.setattr(schema, "current_schema", real)
    with Store(db) as store:
        assert store.datasets() == []


def test_an_older_campaign_table_is_migrated(tmp_path):
    db = tmp_path / "store.db"
    with closing(sqlite3.connect(db)) as con:  # campaign_campaigns as made before active sampling existed
        con.execute("CREATE TABLE campaign_campaigns (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
                    "created_at REAL NOT NULL, dimensions TEXT NOT NULL, golden_rate REAL NOT NULL, "
                    "target INTEGER NOT NULL, seed INTEGER NOT NULL, cleaning TEXT NOT NULL)")
        con.execute("INSERT INTO campaign_campaigns VALUES (1, 'old', 0, '[\"overall\"]', 0, 5, 1, '{}')")
        con.commit()
    with closing(connect(db)) as conn:
        assert get_campaign(conn, "old").active_sampling is False
        assert issue_tokens(conn, get_campaign(conn, "old"), 1)
    assert user_version(db) == SCHEMA_VERSION


def test_a_newer_schema_is_refused(tmp_path):
    db = tmp_path / "store.db"
    with closing(sqlite3.connect(db)) as con:
        con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(SchemaTooNew, match="newer than this EvalBoard"):
        connect(db)


def test_first_opens_at_once_all_see_the_whole_schema(tmp_path):
    db = tmp_path / "store.db"
    errors: list[BaseException] = []

    def open_one(part: int) -> None:
        try:
            opener = (lambda: Store(db).close(), lambda: connect(db).close(),
                      lambda: CollectStore(db).close())[part % 3]
            opener()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=open_one, args=(i,)) for i in range(9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert schema.expected_objects() <= objects(db)


def test_connection_policy(tmp_path):
    with closing(connect(tmp_path / "store.db")) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == int(connection.BUSY_TIMEOUT_S * 1000)
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.isolation_level is None  # no implicit (deferred) transactions


def test_a_writer_waits_for_a_long_lock_and_then_writes(tmp_path, monkeypatch):
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_S", 0.05)  # far shorter than the lock below
    db = tmp_path / "store.db"
    holder, writer = connect(db), connect(db)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.6, lambda: holder.execute("COMMIT"))
    release.start()
    with write_transaction(writer):
        writer.execute("INSERT INTO outcomes VALUES (99, 'x')")
    release.join()
    assert writer.execute("SELECT label FROM outcomes WHERE code = 99").fetchone() == ("x",)
    holder.close()
    writer.close()


def test_retries_are_bounded_with_growing_jittered_pauses():
    pauses: list[float] = []

    def locked():
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(StoreBusy, match=r"the store /x/store.db stayed locked .* nothing was written"):
        with_retry(locked, "/x/store.db", attempts=6, sleep=pauses.append)
    assert len(pauses) == 5
    caps = [min(transactions.BACKOFF_MAX_S, transactions.BACKOFF_FIRST_S * 2 ** k) for k in range(5)]
    assert all(0 <= p <= cap for p, cap in zip(pauses, caps))


def test_other_errors_are_not_retried():
    calls = []

    def broken():
        calls.append(1)
        raise sqlite3.OperationalError("no such table: labels")

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        with_retry(broken, sleep=lambda s: None)
    assert len(calls) == 1


def test_a_failed_write_transaction_rolls_back(tmp_path):
    with closing(connect(tmp_path / "store.db")) as conn:
        with pytest.raises(RuntimeError), write_transaction(conn):
            conn.execute("INSERT INTO outcomes VALUES (98, 'y')")
            raise RuntimeError("midway")
        assert not conn.in_transaction
        assert conn.execute("SELECT 1 FROM outcomes WHERE code = 98").fetchone() is None


# Every way into the file goes through core.store.connection (and its transactions, core.store.transactions):
# no part can open it with another policy,
# start a deferred transaction, or run a script that commits behind its back.
FORBIDDEN = {
    r"sqlite3\.connect\(": "opens the file itself",
    r"sqlite_utils\.Database\((?!connect\()": "opens the file through sqlite-utils",
    r"""execute\(\s*["']BEGIN""": "starts a transaction by hand",
    r"\.executescript\(": "runs a script (it commits any open transaction)",
    r"with (?:self\.)?(?:conn|con|db\.conn)\s*:": "uses the connection as a deferred transaction",
}


def test_every_part_connects_through_the_store_policy():
    offenders = []
    for path in [REPO / "app.py", *(REPO / "core").rglob("*.py"), *(REPO / "pages").rglob("*.py")]:
        if path in (REPO / "core" / "store" / "connection.py", REPO / "core" / "store" / "transactions.py"):
            continue
        text = path.read_text()
        for pattern, what in FORBIDDEN.items():
            for match in re.finditer(pattern, text):
                line = text.count("\n", 0, match.start()) + 1
                offenders.append(f"{path.relative_to(REPO)}:{line} {what}")
    assert not offenders, offenders
