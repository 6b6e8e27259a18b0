"""The next item for an annotator: balanced pairs, counterbalanced sides, planned golden items, overlap.

Rules, in order:

1. An item served but not yet voted on is served again (a reload, a restart or a second tab shows the
   same comparison; its display clock restarts unless the caller says the item is still on screen).
2. Golden items follow a plan made per annotator up front (:mod:`core.campaign.golden`): the session of
   ``target`` items plans ``round(golden_rate × target)`` golden items, of which each annotator meets
   ``min(pool, planned)`` distinct ones; the session is cut into that many blocks and each block holds one
   golden item at a position drawn at random inside it (seeded by campaign seed and annotator). So a small
   pool lasts to the end of the session instead of running out early, the last golden item falls in the
   last block, and the gap after one golden item does not tell when the next comes. The correct answer is
   put on a random side. An annotator never sees the same golden item twice.
3. Pairs: the model pair shown least often so far across the campaign (ties at random), so pair counts
   stay within one of each other and every model is shown at an even pace over time; within it, the
   query this annotator has not seen for this pair that was shown least often (so a fresh item, shown to
   nobody yet, while there is one).
4. Overlap: a share ``overlap`` of the real items (pair, query) a campaign judges is judged by
   ``overlap_k`` annotators (default 10 %, 2), so that agreement can be measured on real items. Before a
   fresh item, the serve takes an overlap item when (a) an item already served to 2 but fewer than
   ``overlap_k`` annotators is waiting, or (b) the items served to 2+ annotators number fewer than
   ``overlap × items served`` (counted at this serve: the share is held at the setting throughout the
   campaign, not reached at the end). The overlap item is one another annotator was served *and has voted
   on*, never one this annotator has seen. The other annotator is the one who shares the fewest items
   with this one so far (ties at random; revoked annotators and those without a vote are skipped; the
   first :data:`OVERLAP_PARTNERS` of that order are asked), so every pair of annotators gets some overlap
   and the pairs stay balanced. The model pair is one of those a fresh serve may take at this moment (the
   least-shown pairs, or the active-sampling slack), the one with the fewest overlap items first, so pair
   counts keep their bound and overlap items spread evenly over the model pairs. When no such item exists
   (nobody else has voted yet), the serve is fresh and the overlap waits for a later serve. Overlap items
   are recognisable in the published votes: the same ``query_id`` and the same two models (on either side)
   voted on by 2+ annotators, on each dimension.
5. Sides: the model that was on the left less often *within this pair* goes left (each pair's
   orientation stays within one of even); when the pair is even, the model with the smaller overall
   left-minus-right count goes left; then at random. An overlap item's second annotator may see it the
   other way round.

Whether a serve is golden or overlap follows from the plan and the counters, not from a coin: the
golden plan is drawn once per annotator and block (seeded by campaign seed, annotator, block), and every
other random choice (ties between pairs, queries and partners, sides) by a generator seeded by (campaign
seed, annotator, serve number), so a campaign replays identically for the same arrivals.

Active sampling (optional, off by default; a campaign setting): pairs up to :data:`ACTIVE_SLACK` serves
ahead of the least-shown pair may be drawn too, and among those the pair whose order is most uncertain
under the current Bradley–Terry fit comes first: the smallest |θ_i − θ_j| / sqrt(1/n_i + 1/n_j), with θ
from an MM fit of the first dimension's results (one virtual win and loss per model keep it finite early
on) and n the comparisons each model has had. Uniformity is then traded for information: pair counts stay
within ``ACTIVE_SLACK + 1`` instead of one. A heuristic, not an optimal design.

Rank target (optional, a campaign setting, :mod:`core.campaign.target`): once every pair has a vote, the
pairs are ordered by how much one more vote on each brings the target's hardest pair toward separation
(docs/methods.md §14 "Campaign target"), best first; overlap items then come from the first
:data:`TARGET_OVERLAP_PAIRS` of that order. When the target is reached the order is the balanced one again.
Golden items and sides follow rules 2 and 5 as always.

Counters (per pair: shown, sides, items served to 1+, 2+ and ``overlap_k``+ annotators; per model and
side; per (pair, query): shown and first annotator; per annotator pair: items shared) are kept in tables
and updated in the serve transaction, so a serve costs indexed reads whatever the number of votes (an
overlap search adds at most :data:`OVERLAP_PARTNERS` queries, each reading one annotator's items in the
allowed pairs; the golden plan is one seeded draw for the serve's block). They count *served* items: counting
only votes would let concurrent annotators all draw the same least-shown pair.
"""

from __future__ import annotations

import random
import sqlite3
import time
from dataclasses import dataclass

import numpy as np

from core.campaign.golden import golden_supply, is_golden_serve, planned_golden, session_length
from core.campaign.inputs import GOLDEN_CORRECT, GOLDEN_WRONG
from core.campaign.store import Campaign, TokenError, campaign_for_token, write_transaction
from core.campaign.target import target_order
from core.ranking.bradley_terry import mm

ACTIVE_SLACK = 3
OVERLAP_PARTNERS = 8  # annotators an overlap search asks, fewest shared items first: bounds a serve's cost
ACTIVE_PRIOR = 1.0  # virtual wins and losses per model in the active-sampling fit
TARGET_OVERLAP_PAIRS = 3  # with a rank target, overlap items come from the pairs that help it most


@dataclass(frozen=True)
class ServedItem:
    """What the Vote page shows. Model identities are not here: they stay in the database."""

    assignment_id: int
    prompt: str
    answer_a: str
    answer_b: str
    dimensions: tuple[str, ...]
    done: int
    target: int


def serve_next(conn: sqlite3.Connection, token: str, now: float | None = None,
               on_screen: int | None = None) -> ServedItem | None:
    """The item to show this token's annotator now, or None when the target is reached or nothing is left.

    ``on_screen``: the item this annotator's page shows already; if it is still open, it is served again
    without restarting its display clock. Raises TokenError for an unknown or revoked token.
    """
    campaign, digest = campaign_for_token(conn, token)
    now = time.time() if now is None else now
    with write_transaction(conn):
        row = conn.execute("SELECT served, done, revoked FROM campaign_tokens WHERE token_hash = ?",
                           [digest]).fetchone()
        if row is None or row[2]:
            raise TokenError()
        served, done, _ = row
        open_id = conn.execute("SELECT id FROM campaign_assignments WHERE token_hash = ? AND voted = 0 "
                               "ORDER BY id LIMIT 1", [digest]).fetchone()
        if open_id is not None:
            if open_id[0] != on_screen:
                conn.execute("UPDATE campaign_assignments SET shown_at = ? WHERE id = ?", [now, open_id[0]])
            assignment_id = open_id[0]
        elif done >= campaign.target:
            return None
        else:
            rng = random.Random(f"{campaign.seed}:{digest}:{served + 1}")
            assignment_id = None
            if _golden_serve(conn, campaign, digest, served + 1):
                assignment_id = _serve_golden(conn, campaign, digest, served + 1, rng, now)
            if assignment_id is None:
                assignment_id = _serve_pair(conn, campaign, digest, served + 1, rng, now)
            if assignment_id is None:
                return None
            conn.execute("UPDATE campaign_tokens SET served = served + 1 WHERE token_hash = ?", [digest])
        return _item(conn, campaign, assignment_id, done)


def _golden_serve(conn, campaign: Campaign, digest: str, seq: int) -> bool:
    """Whether serve ``seq`` of this annotator is one of their planned golden serves (core.campaign.golden)."""
    if campaign.golden_rate <= 0:
        return False
    # The pool only matters up to the plan: a bounded index walk.
    pool = conn.execute("SELECT count(*) FROM (SELECT 1 FROM campaign_golden WHERE campaign_id = ? LIMIT ?)",
                        [campaign.id, planned_golden(campaign.golden_rate, campaign.target)]).fetchone()[0]
    supply = golden_supply(pool, campaign.golden_rate, campaign.target)
    real_items = conn.execute("SELECT coalesce(sum(items), 0) FROM campaign_pairs WHERE campaign_id = ?",
                              [campaign.id]).fetchone()[0]
    length = session_length(campaign.target, real_items, supply.per_annotator)
    return is_golden_serve(campaign.seed, digest, length, supply.per_annotator, seq)


def _serve_golden(conn, campaign: Campaign, digest: str, seq: int, rng: random.Random, now: float) -> int | None:
    unseen = [r[0] for r in conn.execute(
        "SELECT id FROM campaign_golden g WHERE campaign_id = ? AND NOT EXISTS (SELECT 1 FROM campaign_assignments a "
        "WHERE a.token_hash = ? AND a.golden_id = g.id) ORDER BY id", [campaign.id, digest])]
    if not unseen:
        return None
    golden_id = rng.choice(unseen)
    correct, wrong = conn.execute("SELECT correct_clean, wrong_clean FROM campaign_golden WHERE id = ?",
                                  [golden_id]).fetchone()
    correct_left = rng.random() < 0.5
    left, right = (GOLDEN_CORRECT, GOLDEN_WRONG) if correct_left else (GOLDEN_WRONG, GOLDEN_CORRECT)
    len_a, len_b = (len(correct), len(wrong)) if correct_left else (len(wrong), len(correct))
    return conn.execute(
        "INSERT INTO campaign_assignments (campaign_id, token_hash, seq, golden_id, left_model, right_model, "
        "golden_answer, shown_at, len_a, len_b) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [campaign.id, digest, seq, golden_id, left, right, "model_a" if correct_left else "model_b", now,
         len_a, len_b]).lastrowid


def _serve_pair(conn, campaign: Campaign, digest: str, seq: int, rng: random.Random, now: float) -> int | None:
    pairs = conn.execute("SELECT id, model_lo, model_hi, shown, lo_left, judged, lo_score, items_started, "
                         "items_shared, items_complete FROM campaign_pairs WHERE campaign_id = ? ORDER BY id",
                         [campaign.id]).fetchall()
    # This annotator's own count per pair breaks ties, so each annotator also sees the pairs evenly.
    own = dict(conn.execute("SELECT pair_id, count(*) FROM campaign_assignments WHERE token_hash = ? "
                            "AND pair_id IS NOT NULL GROUP BY pair_id", [digest]).fetchall())
    # Least shown first, ties in random order; a pair this annotator has exhausted gives way to the next.
    pairs.sort(key=lambda p: (p[3], own.get(p[0], 0), rng.random()))
    allowed = None  # the pairs an overlap item may come from: by default those a fresh serve may take
    if campaign.active_sampling and pairs:
        pairs = _most_uncertain_first(pairs, own, rng)
    elif campaign.rank_target and pairs:
        targeted = target_order(conn, campaign, pairs)
        if targeted is not None:
            pairs, allowed = targeted, {p[0] for p in targeted[:TARGET_OVERLAP_PAIRS]}
    chosen = _overlap_item(conn, campaign, digest, pairs, rng, allowed) if pairs else None
    if chosen is None:
        chosen = _fresh_item(conn, digest, pairs, rng)
    if chosen is None:
        return None
    (pair_id, lo, hi, shown, lo_left, *_), query_id = chosen
    lo_goes_left = _lo_goes_left(conn, campaign, lo, hi, shown, lo_left, rng)
    left, right = (lo, hi) if lo_goes_left else (hi, lo)
    text_a, text_b = (_answer(conn, campaign, query_id, m) for m in (left, right))
    before = conn.execute("SELECT shown FROM campaign_pair_queries WHERE pair_id = ? AND query_id = ?",
                          [pair_id, query_id]).fetchone()[0]
    if before:  # the item becomes shared with every annotator already served it
        for (other,) in conn.execute("SELECT token_hash FROM campaign_assignments WHERE pair_id = ? AND query_id = ?",
                                     [pair_id, query_id]).fetchall():
            conn.executemany("INSERT INTO campaign_shared (token_hash, other, items) VALUES (?, ?, 1) "
                             "ON CONFLICT (token_hash, other) DO UPDATE SET items = items + 1",
                             [(digest, other), (other, digest)])
    conn.execute("UPDATE campaign_pairs SET shown = shown + 1, lo_left = lo_left + ?, items_started = "
                 "items_started + ?, items_shared = items_shared + ?, items_complete = items_complete + ? "
                 "WHERE id = ?",
                 [int(lo_goes_left), int(before == 0), int(before == 1), int(before + 1 == campaign.overlap_k),
                  pair_id])
    conn.execute("UPDATE campaign_pair_queries SET shown = shown + 1, first_token = coalesce(first_token, ?) "
                 "WHERE pair_id = ? AND query_id = ?", [digest, pair_id, query_id])
    conn.execute("UPDATE campaign_model_sides SET n_left = n_left + 1 WHERE campaign_id = ? AND model = ?",
                 [campaign.id, left])
    conn.execute("UPDATE campaign_model_sides SET n_right = n_right + 1 WHERE campaign_id = ? AND model = ?",
                 [campaign.id, right])
    return conn.execute(
        "INSERT INTO campaign_assignments (campaign_id, token_hash, seq, pair_id, query_id, left_model, "
        "right_model, shown_at, len_a, len_b) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [campaign.id, digest, seq, pair_id, query_id, left, right, now, len(text_a), len(text_b)]).lastrowid


def _fresh_item(conn, digest: str, pairs: list[tuple], rng: random.Random) -> tuple[tuple, str] | None:
    for pair in pairs:
        query_id = _unseen_query(conn, pair[0], digest, rng)
        if query_id is not None:
            return pair, query_id
    return None


def _overlap_item(conn, campaign: Campaign, digest: str, pairs: list[tuple], rng: random.Random,
                  allowed_ids: set[int] | None = None) -> tuple[tuple, str] | None:
    """An item another annotator has voted on, when the overlap rule asks for one (module docstring, rule 4)."""
    started, shared, complete = (sum(p[i] for p in pairs) for i in (7, 8, 9))
    wanted = []  # ranges of 'served to n annotators' to draw from, in order
    if shared > complete:  # items on their way to overlap_k annotators come first
        wanted.append((2, campaign.overlap_k - 1))
    if campaign.overlap > 0 and shared + 1 <= campaign.overlap * started + 1e-9:
        wanted.append((1, 1))
    if not wanted:
        return None
    if allowed_ids is None:
        slack = ACTIVE_SLACK if campaign.active_sampling else 0
        least = min(p[3] for p in pairs)
        allowed_ids = {p[0] for p in pairs if p[3] <= least + slack}
    # What a fresh serve may take now; the pair with the fewest overlap items first, then in the fresh order.
    allowed = sorted((p for p in pairs if p[0] in allowed_ids), key=lambda p: p[8])
    rank = {p[0]: i for i, p in enumerate(allowed)}
    order = "CASE pq.pair_id " + " ".join(f"WHEN {pair_id} THEN {i}" for pair_id, i in rank.items()) + " END"
    partners = conn.execute(
        "SELECT t.token_hash, coalesce(s.items, 0) FROM campaign_tokens t LEFT JOIN campaign_shared s "
        "ON s.token_hash = ? AND s.other = t.token_hash WHERE t.campaign_id = ? AND t.revoked = 0 AND t.done > 0 "
        "AND t.token_hash != ?", [digest, campaign.id, digest]).fetchall()
    partners.sort(key=lambda p: (p[1], rng.random()))
    for low, high in wanted:
        for partner, _ in partners[:OVERLAP_PARTNERS]:
            # One query per partner: its items in the allowed pairs (index on first_token, pair_id, shown).
            row = conn.execute(
                f"SELECT pq.pair_id, pq.query_id FROM campaign_pair_queries pq WHERE pq.first_token = ? "
                f"AND pq.pair_id IN ({', '.join('?' * len(rank))}) AND pq.shown BETWEEN ? AND ? AND EXISTS ("
                "SELECT 1 FROM campaign_assignments a WHERE a.token_hash = pq.first_token AND a.pair_id = pq.pair_id "
                "AND a.query_id = pq.query_id AND a.voted = 1) AND NOT EXISTS (SELECT 1 FROM campaign_assignments a "
                f"WHERE a.token_hash = ? AND a.pair_id = pq.pair_id AND a.query_id = pq.query_id) ORDER BY {order} "
                "LIMIT 1", [partner, *rank, low, high, digest]).fetchone()
            if row is not None:
                return allowed[rank[row[0]]], row[1]
    return None


def _most_uncertain_first(pairs: list[tuple], own: dict[int, int], rng: random.Random) -> list[tuple]:
    least = pairs[0][3]
    allowed = [p for p in pairs if p[3] <= least + ACTIVE_SLACK]
    rest = [p for p in pairs if p[3] > least + ACTIVE_SLACK]
    models = sorted({m for p in pairs for m in p[1:3]})
    index = {m: i for i, m in enumerate(models)}
    wins = np.zeros((len(models), len(models)))
    for _, lo, hi, _, _, judged, lo_score, *_ in pairs:
        wins[index[lo], index[hi]] += lo_score
        wins[index[hi], index[lo]] += judged - lo_score
    # A ranking of uncertainty needs θ to a few decimals, not docs/methods.md's 1e-6: a loose tolerance
    # keeps a serve fast.
    pi, _, _ = mm(wins, prior=ACTIVE_PRIOR, tol=1e-4, max_iter=500)
    theta = np.log(pi)
    compared = (wins + wins.T).sum(axis=1)

    def certainty(pair: tuple) -> float:
        i, j = index[pair[1]], index[pair[2]]
        return abs(theta[i] - theta[j]) / np.sqrt(1 / (compared[i] + 1) + 1 / (compared[j] + 1))

    allowed.sort(key=lambda p: (round(certainty(p), 9), own.get(p[0], 0), rng.random()))
    return allowed + rest


def _unseen_query(conn, pair_id: int, digest: str, rng: random.Random) -> str | None:
    rows = conn.execute(
        "SELECT query_id, shown FROM campaign_pair_queries pq WHERE pair_id = ? AND NOT EXISTS ("
        "SELECT 1 FROM campaign_assignments a WHERE a.token_hash = ? AND a.pair_id = pq.pair_id "
        "AND a.query_id = pq.query_id) ORDER BY shown LIMIT 16", [pair_id, digest]).fetchall()
    if not rows:
        return None
    least = [q for q, shown in rows if shown == rows[0][1]]
    return rng.choice(least)


def _lo_goes_left(conn, campaign: Campaign, lo: str, hi: str, shown: int, lo_left: int, rng: random.Random) -> bool:
    lo_right = shown - lo_left
    if lo_left != lo_right:
        return lo_left < lo_right
    sides = dict(conn.execute("SELECT model, n_left - n_right FROM campaign_model_sides WHERE campaign_id = ? "
                              "AND model IN (?, ?)", [campaign.id, lo, hi]).fetchall())
    if sides[lo] != sides[hi]:
        return sides[lo] < sides[hi]
    return rng.random() < 0.5


def _answer(conn, campaign: Campaign, query_id: str, model: str) -> str:
    return conn.execute("SELECT clean_text FROM campaign_answers WHERE campaign_id = ? AND query_id = ? AND model = ?",
                        [campaign.id, query_id, model]).fetchone()[0]


def _item(conn, campaign: Campaign, assignment_id: int, done: int) -> ServedItem:
    query_id, golden_id, left, right = conn.execute(
        "SELECT query_id, golden_id, left_model, right_model FROM campaign_assignments WHERE id = ?",
        [assignment_id]).fetchone()
    if golden_id is not None:
        question, correct, wrong = conn.execute(
            "SELECT question, correct_clean, wrong_clean FROM campaign_golden WHERE id = ?", [golden_id]).fetchone()
        text_a, text_b = (correct, wrong) if left == GOLDEN_CORRECT else (wrong, correct)
        prompt = question
    else:
        prompt = conn.execute("SELECT prompt FROM campaign_queries WHERE campaign_id = ? AND query_id = ?",
                              [campaign.id, query_id]).fetchone()[0]
        text_a, text_b = _answer(conn, campaign, query_id, left), _answer(conn, campaign, query_id, right)
    return ServedItem(assignment_id, prompt, text_a, text_b, campaign.dimensions, done, campaign.target)
