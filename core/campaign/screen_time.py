"""How long an item was on the annotator's screen: the response time a vote records.

The server serves an item at ``shown_at`` (campaign_assignments; restamped when a new page shows it again).
Measuring a vote from there counts every minute the tab waited unseen — a background tab, a page left
open overnight — and makes a careful annotator look slow. So the Vote page reports, through a small
script in the browser, when the item goes off screen and comes back:

- **off** when the page becomes hidden (another tab, a minimised window, a locked screen: the browser's
  ``document.visibilityState``), or when nobody has touched the page (pointer, key, wheel, scroll, touch)
  for :data:`IDLE_AFTER_S` seconds while it is visible;
- **on** when it is visible again, or touched again after such a pause.

The server stamps each report with its own clock (never the browser's) and keeps, per displayed item, the
seconds counted so far and since when the item is on screen. The rule, per display:

    on-screen time = the sum of the on-screen stretches from ``shown_at`` to the vote,

where the item counts as on screen from ``shown_at`` until the first report says otherwise. The item is
served in the script run that draws it, so ``shown_at`` and the first paint are apart by the rest of that
run and the network (well under a second); a page drawn in a background tab reports off at once. A pause in
interaction therefore counts up to :data:`IDLE_AFTER_S` (the annotator may be reading), then stops. A page
that reports nothing (its script did not load) gives exactly the time since the item was served. Both
numbers are stored with each vote: ``response_time_s`` (on screen) and ``served_time_s`` (since served).

Reports are tied to the display they were made for (its ``shown_at``): when a reload serves the item again
with a fresh clock, the older reports no longer count.
"""

from __future__ import annotations

import sqlite3
import time

from core.campaign.store import CampaignError, TokenError, token_hash, write_transaction

IDLE_AFTER_S = 300.0  # five minutes without any touch of a visible page: the annotator is taken to be away
ON, OFF = "on", "off"
STATES = (ON, OFF)


def record_screen_event(conn: sqlite3.Connection, token: str, assignment_id: int, state: str,
                        now: float | None = None) -> bool:
    """Note that the item ``assignment_id`` went ``on`` or ``off`` screen at ``now`` (server clock).

    Returns False when nothing changed: the item was already in that state, or it was voted on already.
    Raises TokenError for an unknown or revoked token and CampaignError for an item not served to it.
    """
    if state not in STATES:
        raise CampaignError(f"a screen state is {' or '.join(STATES)}, got {state!r}")
    digest = token_hash(token)
    now = time.time() if now is None else float(now)
    with write_transaction(conn):
        owner = conn.execute("SELECT revoked FROM campaign_tokens WHERE token_hash = ?", [digest]).fetchone()
        if owner is None or owner[0]:
            raise TokenError()
        row = conn.execute("SELECT token_hash, shown_at, voted FROM campaign_assignments WHERE id = ?",
                           [int(assignment_id)]).fetchone()
        if row is None or row[0] != digest:
            raise CampaignError(f"item {assignment_id} was not served to this token")
        _, shown_at, voted = row
        if voted:
            return False
        seconds, since = _clock(conn, int(assignment_id), shown_at)
        now = max(now, shown_at)  # a report cannot predate the display it belongs to
        if state == OFF and since is not None:
            seconds, since = seconds + max(0.0, now - since), None
        elif state == ON and since is None:
            since = now
        else:
            return False
        conn.execute("INSERT INTO campaign_screen_time (assignment_id, shown_at, seconds, on_since) "
                     "VALUES (?, ?, ?, ?) ON CONFLICT (assignment_id) DO UPDATE SET shown_at = excluded.shown_at, "
                     "seconds = excluded.seconds, on_since = excluded.on_since",
                     [int(assignment_id), shown_at, seconds, since])
    return True


def on_screen_seconds(conn: sqlite3.Connection, assignment_id: int, shown_at: float, now: float) -> float:
    """Seconds the item was on screen in its current display (from ``shown_at``) up to ``now``."""
    seconds, since = _clock(conn, assignment_id, shown_at)
    return seconds + (max(0.0, now - since) if since is not None else 0.0)


def _clock(conn: sqlite3.Connection, assignment_id: int, shown_at: float) -> tuple[float, float | None]:
    """(seconds counted, on screen since or None) for the display that started at ``shown_at``; a display
    without reports has been on screen since it started."""
    row = conn.execute("SELECT shown_at, seconds, on_since FROM campaign_screen_time WHERE assignment_id = ?",
                       [assignment_id]).fetchone()
    if row is None or row[0] != shown_at:
        return 0.0, shown_at
    return float(row[1]), row[2]
