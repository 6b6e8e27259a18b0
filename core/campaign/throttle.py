"""Slowing down token guessing on the Vote page, per session and per client, without slowing real voters.

A token is a 128-bit secret, so guessing one is hopeless at any rate; the throttle still makes sure
nobody can try thousands a minute (and fill logs, or probe for a leaked list). Rules:

- the first :data:`FREE_FAILURES` wrong tokens cost nothing (typos happen); after that, each further
  attempt must wait :func:`delay_after` seconds since the last failure: 2 s, 4 s, 8 s … up to
  :data:`MAX_DELAY_S`. While a wait runs, a typed token is *not checked at all* (checking it and only
  hiding the answer would leave guessing as fast as before);
- failures are counted per browser session and per client. The client count lives in the store
  (``campaign_token_failures``), so a new session from the same client — a reload, another tab, a
  script opening fresh sessions — starts where the last one stopped. A client's count is forgotten
  after :data:`FORGET_AFTER_S` without failures; a correct token does not reset it (a voter with one
  valid token could otherwise launder guesses);
- what counts as a client: the address the request came from (see :func:`client_id`). Clients are
  stored as a hash, never as an address;
- real voters are not slowed: a token this session already accepted is never throttled, and voting
  never touches the throttle. Only entering a *new* token after repeated failures from the same
  client waits.
"""

from __future__ import annotations

import hashlib
import ipaddress
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

from core.store.transactions import write_transaction

FREE_FAILURES = 5
FIRST_DELAY_S = 2.0
MAX_DELAY_S = 15 * 60.0
FORGET_AFTER_S = 24 * 3600.0


def clock() -> float:
    """Seconds since the epoch (a function, so tests can move time instead of sleeping)."""
    return time.time()


def delay_after(failures: int) -> float:
    """Seconds to wait after ``failures`` wrong tokens in a row: none for the first FREE_FAILURES, then doubling."""
    if failures < FREE_FAILURES:
        return 0.0
    return min(MAX_DELAY_S, FIRST_DELAY_S * 2.0 ** (failures - FREE_FAILURES))


@dataclass(frozen=True)
class Failures:
    """Wrong tokens so far and when the last one came."""

    count: int = 0
    last: float = 0.0

    def wait(self, now: float) -> float:
        """Seconds before another token may be checked (0: now)."""
        if self.count and now - self.last >= FORGET_AFTER_S:
            return 0.0
        return max(0.0, self.last + delay_after(self.count) - now)

    def failed(self, now: float) -> Failures:
        fresh = self.count == 0 or now - self.last >= FORGET_AFTER_S
        return replace(self, count=1 if fresh else self.count + 1, last=now)


def client_id(ip_address: str | None, headers: Mapping[str, str] | None) -> str | None:
    """A stable, anonymous key for where a request comes from, or None when that is unknown.

    The peer address when Streamlit knows it. Streamlit reports no address for a connection from the
    same machine, which is also how a reverse proxy on that machine connects: then the address the
    proxy appended last to ``X-Forwarded-For`` (or its ``X-Real-IP``) is the client. Only a proxy's
    own entry is trusted — entries further left were written by the client and can be anything.
    """
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    address = ip_address
    if not address:
        forwarded = [part.strip() for part in headers.get("x-forwarded-for", "").split(",") if part.strip()]
        address = forwarded[-1] if forwarded else headers.get("x-real-ip", "").strip() or None
    if not address:
        return None
    try:
        address = str(ipaddress.ip_address(address))
    except ValueError:
        return None
    return "ip:" + hashlib.sha256(address.encode()).hexdigest()[:24]


def client_failures(conn: sqlite3.Connection, client: str) -> Failures:
    row = conn.execute("SELECT failures, last_failure FROM campaign_token_failures WHERE client = ?",
                       [client]).fetchone()
    return Failures(*row) if row else Failures()


def record_client_failure(conn: sqlite3.Connection, client: str, now: float) -> Failures:
    """Count one more wrong token for ``client`` (one transaction); returns the new count."""
    with write_transaction(conn):
        conn.execute("DELETE FROM campaign_token_failures WHERE last_failure < ?", [now - FORGET_AFTER_S])
        updated = client_failures(conn, client).failed(now)
        conn.execute("INSERT INTO campaign_token_failures (client, failures, last_failure) VALUES (?, ?, ?) "
                     "ON CONFLICT (client) DO UPDATE SET failures = excluded.failures, "
                     "last_failure = excluded.last_failure", [client, updated.count, updated.last])
    return updated


def wait_message(seconds: float) -> str:
    return (f"Too many wrong tokens were entered from here. Try again in {max(1, round(seconds)):,} s "
            "(each further wrong token doubles the wait).")
