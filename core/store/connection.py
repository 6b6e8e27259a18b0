"""The one way into the SQLite file: every part (analysis store, campaigns, collection, eval sets) connects here.

One policy for every connection, so that no part can hold a lock differently from the others:

- WAL journal: readers never block the writer and the writer never blocks readers;
- one busy timeout (:data:`BUSY_TIMEOUT_S`): a writer that finds the file locked waits instead of failing;
- autocommit (``isolation_level=None``): Python's sqlite3 module never opens a transaction behind the
  caller's back. A deferred transaction that reads and then writes fails at once with "database is
  locked" when another writer committed in between (SQLite cannot wait there), so writes go through
  :func:`write_transaction`, which takes the write lock first with ``BEGIN IMMEDIATE``;
- ``BEGIN IMMEDIATE`` is retried a bounded number of times, with exponential backoff and random jitter,
  when the busy timeout runs out: SQLite's busy handler polls, and under many short writers a long
  wait can keep losing the race; a later attempt after a random pause usually wins it;
- foreign keys on (the eval-set tables delete their items through them);
- ``synchronous=NORMAL``: in WAL mode a commit survives a crash of the process and never corrupts the file.

The schema (every table of every part) is checked on every connect and made or repaired in one
transaction when needed (see :mod:`core.store.schema`).
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

REPO_ROOT = Path(__file__).resolve().parents[2]
BUSY_TIMEOUT_S = 5.0
WRITE_ATTEMPTS = 8  # BEGIN IMMEDIATE tries, each waiting up to BUSY_TIMEOUT_S
BACKOFF_FIRST_S = 0.02
BACKOFF_MAX_S = 1.0
_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)

T = TypeVar("T")


class StoreBusy(sqlite3.OperationalError):
    """Other programs held the write lock longer than every retry allowed; nothing was written."""


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
    from core.store.schema import ensure_schema  # the schema module imports this one

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


def is_busy(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" / "database table is locked" (busy) errors."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _BUSY_CODES
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def with_retry(action: Callable[[], T], path: str | Path | None = None, *,
               attempts: int = WRITE_ATTEMPTS, sleep: Callable[[float], None] = time.sleep) -> T:
    """Run ``action``; when SQLite reports the file busy, wait a random, growing pause and try again.

    Full jitter (a pause drawn uniformly up to the current cap) keeps writers that failed together from
    coming back together. After ``attempts`` busy failures, :class:`StoreBusy` says so.
    """
    started = time.monotonic()
    for attempt in range(attempts):
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            if attempt == attempts - 1:
                waited = time.monotonic() - started
                where = f" {path}" if path is not None else ""
                raise StoreBusy(f"the store{where} stayed locked by other writers for {waited:.0f} s "
                                f"({attempts} attempts); nothing was written: try again") from exc
            sleep(random.uniform(0, min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2 ** attempt)))
    raise AssertionError("unreachable")  # pragma: no cover


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``with write_transaction(conn):`` — BEGIN IMMEDIATE (retried while busy) … COMMIT; ROLLBACK on error.

    Holding the write lock from the start means no statement inside can fail for a lock taken by someone
    else, so the body runs once and need not be safe to repeat. Inside an open transaction of the same
    connection it joins that transaction (the outer one commits or rolls back).
    """
    if conn.in_transaction:
        yield conn
        return
    with_retry(lambda: conn.execute("BEGIN IMMEDIATE"), getattr(conn, "path", None))
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite may already have rolled back (disk full, interrupt)
            conn.execute("ROLLBACK")
        raise


@contextmanager
def read_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``with read_transaction(conn):`` — the reads inside see one state of the file (WAL snapshot
    isolation), whatever writers commit meanwhile; inside a transaction it joins that one."""
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN")  # deferred: takes no lock; the first read fixes the state seen
    try:
        yield conn
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")
