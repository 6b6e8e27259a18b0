"""Transactions on a store connection (:func:`core.store.connection.connect`): the write lock taken first
(``BEGIN IMMEDIATE``), retried with jittered backoff while other writers hold it; read snapshots.

Why: a deferred transaction that reads and then writes fails at once with "database is locked" when
another writer committed in between (SQLite cannot wait there), so every write starts by taking the
write lock. SQLite's busy handler polls, and under many short writers a long wait can keep losing the
race; a later attempt after a random pause usually wins it.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

WRITE_ATTEMPTS = 8  # BEGIN IMMEDIATE tries, each waiting up to the connection's busy timeout
BACKOFF_FIRST_S = 0.02
BACKOFF_MAX_S = 1.0
_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)

T = TypeVar("T")


class StoreBusy(sqlite3.OperationalError):
    """Other programs held the write lock longer than every retry allowed; nothing was written."""


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
