"""The one way into the SQLite file: every part (analysis store, campaigns, collection, eval sets) connects here.

One policy for every connection, so that no part can hold a lock differently from the others:

- WAL journal: readers never block the writer and the writer never blocks readers;
- one busy timeout (:data:`BUSY_TIMEOUT_S`): a writer that finds the file locked waits instead of failing;
- autocommit (``isolation_level=None``): Python's sqlite3 module never opens a transaction behind the
  caller's back. A deferred transaction that reads and then writes fails at once with "database is
  locked" when another writer committed in between (SQLite cannot wait there), so writes go through
  :func:`core.store.transactions.write_transaction`, which takes the write lock first with
  ``BEGIN IMMEDIATE`` and retries it a bounded number of times with jittered backoff;
- foreign keys on (the eval-set tables delete their items through them);
- ``synchronous=NORMAL``: in WAL mode a commit survives a crash of the process and never corrupts the file.

The schema (every table of every part) is checked on every connect and made or repaired in one
transaction when needed (see :mod:`core.store.schema`).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from core.store.schema import ensure_schema
from core.store.transactions import with_retry

REPO_ROOT = Path(__file__).resolve().parents[2]
# How long one statement waits for another writer's lock before with_retry takes over. Every write is one
# short transaction (a vote, a token, a job row); the longest is a campaign publish replacing its dataset's
# rows, and 5 s carries the stress test through (tests/test_store_concurrency.py: eight processes voting
# for 60 s while five publishes run). A wait that runs out is retried by core.store.transactions.with_retry
# (WRITE_ATTEMPTS times with jittered pauses, about 40 s in all) rather than failing, so a longer single
# wait would buy nothing and would stall the Vote page behind one slow writer.
BUSY_TIMEOUT_S = 5.0


class StoreConnection(sqlite3.Connection):
    """A sqlite3 connection that knows its file, so that errors can name it."""

    path: Path | None = None


def default_db_path() -> Path:
    """``$EVALBOARD_DB`` if set, else ``data/evalboard.db`` in the project folder."""
    env = os.environ.get("EVALBOARD_DB")
    return Path(env) if env else REPO_ROOT / "data" / "evalboard.db"


def connect(path: str | Path | None = None) -> sqlite3.Connection:
    """A connection to the store file (default: :func:`default_db_path`) with the policy above and the
    current schema. Usable from any thread (one thread at a time); close it when done."""
    path = Path(path) if path is not None else default_db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False,
                           factory=StoreConnection)
    conn.path = path
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        # Switching to WAL needs a moment of exclusive access on a new file; on a WAL file it is a no-op.
        with_retry(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone(), path)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        ensure_schema(conn)
    except BaseException:
        conn.close()
        raise
    return conn
