"""Storing a vote: one short transaction, committed before the next item is served.

A vote holds one outcome per dimension of the campaign. ``UNIQUE(assignment_id, dimension)`` makes a
double submit (double click, browser back, a retry after a lost response) store the vote once: the
second submit changes nothing and reports that. Times are measured on the server clock up to when the
vote arrives: ``response_time_s`` is the time the item was on the annotator's screen (the rule is in
:mod:`core.campaign.screen_time`), ``served_time_s`` the time since it was (last) served.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping

import pandas as pd

from core.campaign.screen_time import on_screen_seconds
from core.campaign.store import Campaign, CampaignError, TokenError, campaign_for_token, write_transaction
from core.campaign.style import answer_key, side_counts
from core.schema import LEFT_SCORE, OUTCOMES

# What the Vote page offers, in order, and the outcome each choice stores (model_a is the LEFT answer).
CHOICES = {"A": "model_a", "B": "model_b", "Tie": "tie", "Both bad": "tie (bothbad)"}


def record_vote(conn: sqlite3.Connection, token: str, assignment_id: int, outcomes: Mapping[str, str],
                now: float | None = None) -> bool:
    """Store the annotator's outcomes for a served item; False when this item's vote was already stored.

    ``outcomes`` maps every dimension of the campaign to ``model_a``, ``model_b``, ``tie`` or
    ``tie (bothbad)``. Raises TokenError for an unknown or revoked token and CampaignError when the item
    was not served to this token or the outcomes are incomplete.
    """
    campaign, digest = campaign_for_token(conn, token)
    _check_outcomes(campaign, outcomes)
    now = time.time() if now is None else now
    with write_transaction(conn):
        row = conn.execute("SELECT token_hash, shown_at, voted, golden_id, pair_id, left_model FROM "
                           "campaign_assignments WHERE id = ?", [int(assignment_id)]).fetchone()
        if row is None or row[0] != digest:
            raise CampaignError(f"item {assignment_id} was not served to this token")
        if conn.execute("SELECT revoked FROM campaign_tokens WHERE token_hash = ?", [digest]).fetchone()[0]:
            raise TokenError()
        _, shown_at, voted, golden_id, pair_id, left = row
        if voted:
            return False
        served = max(0.0, now - shown_at)
        on_screen = min(served, max(0.0, on_screen_seconds(conn, int(assignment_id), shown_at, now)))
        conn.executemany("INSERT INTO campaign_votes (assignment_id, dimension, winner, voted_at, response_time_s, "
                         "served_time_s) VALUES (?, ?, ?, ?, ?, ?)",
                         [(int(assignment_id), d, outcomes[d], now, on_screen, served) for d in campaign.dimensions])
        conn.execute("UPDATE campaign_assignments SET voted = 1 WHERE id = ?", [int(assignment_id)])
        conn.execute("UPDATE campaign_tokens SET done = done + 1, golden_done = golden_done + ? WHERE token_hash = ?",
                     [int(golden_id is not None), digest])
        if pair_id is not None:  # the pair's running result on the first dimension, for active sampling
            left_score = LEFT_SCORE[outcomes[campaign.dimensions[0]]]
            conn.execute("UPDATE campaign_pairs SET judged = judged + 1, lo_score = lo_score + "
                         "CASE WHEN model_lo = ? THEN ? ELSE ? END WHERE id = ?",
                         [left, left_score, 1.0 - left_score, pair_id])
    return True


def _check_outcomes(campaign: Campaign, outcomes: Mapping[str, str]) -> None:
    missing = [d for d in campaign.dimensions if d not in outcomes or outcomes[d] is None]
    if missing:
        raise CampaignError(f"choose an outcome for {', '.join(missing)}")
    unknown = sorted(set(outcomes) - set(campaign.dimensions))
    if unknown:
        raise CampaignError(f"not a dimension of this campaign: {', '.join(unknown)}")
    bad = {d: o for d, o in outcomes.items() if o not in OUTCOMES}
    if bad:
        raise CampaignError("outcomes must be one of " + ", ".join(OUTCOMES) + "; got "
                            + ", ".join(f"{d}={o!r}" for d, o in bad.items()))


def vote_records(conn: sqlite3.Connection, campaign: Campaign) -> pd.DataFrame:
    """The campaign's votes in the canonical vote columns (core.schema), one row per (item, dimension).

    A golden item is asked on every dimension (so that it looks like any other item) but has one correct
    answer: only its first dimension's vote is published, so each golden item counts once towards an
    annotator's golden accuracy. The other answers stay in ``campaign_votes``.

    With the lengths come the per-side style counts of the answers as the Vote page showed them
    (core.campaign.style), so that scheme style controls for every feature.
    """
    rows = conn.execute(
        """
        SELECT v.id, coalesce(a.query_id, 'golden:' || a.golden_id), coalesce(q.game_id, 'all'), v.dimension,
               coalesce(q.category, g.category), a.left_model, a.right_model, v.winner, t.annotator_id,
               v.voted_at, v.response_time_s, a.len_a, a.len_b, a.golden_id IS NOT NULL, a.golden_answer,
               a.query_id, a.golden_id
        FROM campaign_votes v
        JOIN campaign_assignments a ON a.id = v.assignment_id
        JOIN campaign_tokens t ON t.token_hash = a.token_hash
        LEFT JOIN campaign_queries q ON q.campaign_id = a.campaign_id AND q.query_id = a.query_id
        LEFT JOIN campaign_golden g ON g.id = a.golden_id
        WHERE a.campaign_id = ? AND (a.golden_id IS NULL OR v.dimension = ?) ORDER BY v.id
        """, [campaign.id, campaign.dimensions[0]]).fetchall()
    columns = ["vote_id", "query_id", "game_id", "dimension", "category", "model_a", "model_b", "winner",
               "annotator_id", "timestamp", "response_time_s", "len_a", "len_b", "is_golden", "golden_answer"]
    frame = pd.DataFrame([r[:len(columns)] for r in rows], columns=columns)
    left = [answer_key(r[-2], r[-1], r[5]) for r in rows]
    right = [answer_key(r[-2], r[-1], r[6]) for r in rows]
    for column, values in side_counts(conn, campaign, left, right).items():
        frame[column] = values
    frame["vote_id"] = [f"{campaign.name}:{v}" for v in frame["vote_id"]]
    frame["is_golden"] = frame["is_golden"].astype(bool)
    return frame
