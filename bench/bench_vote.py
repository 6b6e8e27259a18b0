"""Voting benchmark: serve the next item and store a vote with 100,000 votes already stored.

A campaign of 12 models × 500 queries (66 pairs, 33,000 pair items) and 500 annotators. The 100,000
stored votes are written in bulk by a fast equivalent of the serve/vote path: the same items the
scheduler would pick (least-shown pair, balanced sides, unseen query), with every counter the scheduler
reads (per pair, per model and side, per pair and query, per token) set to match. Then ``--iterations``
rounds of "serve next item" and "store vote" through the real code, for annotators who already have
200 votes each, on the store file (WAL), without and with active sampling, with an overlap share of
``--overlap`` (0.5 makes nearly every serve search for an overlap item), and with a rank target (top:3;
the random votes never reach it, so every serve scores the pairs); plus what one Vote page run
costs in the store (open a connection, serve the item on screen again). Prints median and p90 in
milliseconds.
Run: ``.venv/bin/python bench/bench_vote.py [--votes 100000] [--iterations 500] [--overlap 0.1]``.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import random
import statistics
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.campaign import create_campaign, issue_tokens, record_vote, serve_next  # noqa: E402
from core.store.connection import connect  # noqa: E402
from core.store.transactions import write_transaction  # noqa: E402


def answers(n_models: int, n_queries: int) -> pd.DataFrame:
    rows = [(f"q{q}", f"Question {q}?", f"model-{m:02d}", f"Answer {q} of {m}: " + "lorem ipsum " * 30, None, "all")
            for q in range(n_queries) for m in range(n_models)]
    return pd.DataFrame(rows, columns=["query_id", "prompt", "model", "answer", "category", "game_id"])


def golden(n: int) -> pd.DataFrame:
    return pd.DataFrame([(f"Golden {i}?", f"right {i}", f"wrong {i}", None) for i in range(n)],
                        columns=["question", "correct_answer", "wrong_answer", "category"])


def bulk_votes(conn, campaign, tokens: list[str], n_votes: int, rng: random.Random) -> None:
    """Store n_votes pair votes spread over the tokens, with every scheduler counter consistent."""
    from core.campaign.store import token_hash

    pairs = conn.execute("SELECT id, model_lo, model_hi FROM campaign_pairs WHERE campaign_id = ? ORDER BY id",
                         [campaign.id]).fetchall()
    queries = [r[0] for r in conn.execute("SELECT DISTINCT query_id FROM campaign_queries WHERE campaign_id = ?",
                                          [campaign.id])]
    per_token = n_votes // len(tokens)
    pair_shown = np.zeros(len(pairs), dtype=np.int64)
    lo_left = np.zeros(len(pairs), dtype=np.int64)
    lo_score = np.zeros(len(pairs))
    query_shown: dict[tuple[int, str], int] = {}
    first_token: dict[tuple[int, str], str] = {}  # who was served each item first (overlap candidates)
    judges: dict[tuple[int, str], list[str]] = {}
    sides = {m: [0, 0] for p in pairs for m in p[1:]}
    assignments, votes = [], []
    next_id = itertools.count(1)
    now = time.time() - 86_400
    cycle = itertools.cycle(range(len(pairs)))  # round robin = least-shown pair first
    for token in tokens:
        digest = token_hash(token)
        seen_queries = rng.sample(queries, per_token)
        for seq, query_id in enumerate(seen_queries, start=1):
            k = next(cycle)
            pair_id, lo, hi = pairs[k]
            lo_goes_left = lo_left[k] * 2 <= pair_shown[k]
            left, right = (lo, hi) if lo_goes_left else (hi, lo)
            pair_shown[k] += 1
            lo_left[k] += lo_goes_left
            sides[left][0] += 1
            sides[right][1] += 1
            query_shown[pair_id, query_id] = query_shown.get((pair_id, query_id), 0) + 1
            first_token.setdefault((pair_id, query_id), digest)
            judges.setdefault((pair_id, query_id), []).append(digest)
            assignment_id = next(next_id)
            assignments.append((assignment_id, campaign.id, digest, seq, pair_id, query_id, left, right, now, 400,
                                400, 1))
            winner = rng.choice(["model_a", "model_b", "tie"])
            left_score = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}[winner]
            lo_score[k] += left_score if lo_goes_left else 1.0 - left_score
            votes.append((assignment_id, "overall", winner, now + 5, 5.0))
    with write_transaction(conn):
        conn.executemany("INSERT INTO campaign_assignments (id, campaign_id, token_hash, seq, pair_id, query_id, "
                         "left_model, right_model, shown_at, len_a, len_b, voted) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                         assignments)
        conn.executemany("INSERT INTO campaign_votes (assignment_id, dimension, winner, voted_at, response_time_s) "
                         "VALUES (?, ?, ?, ?, ?)", votes)
        conn.executemany("UPDATE campaign_pairs SET shown = ?, lo_left = ?, judged = ?, lo_score = ? WHERE id = ?",
                         [(int(s), int(left), int(s), float(score), p[0])
                          for s, left, score, p in zip(pair_shown, lo_left, lo_score, pairs)])
        conn.executemany("UPDATE campaign_pair_queries SET shown = ?, first_token = ? WHERE pair_id = ? "
                         "AND query_id = ?", [(n, first_token[p, q], p, q) for (p, q), n in query_shown.items()])
        served = collections.Counter()  # (pair, at least n annotators) -> items
        for (p, _), n in query_shown.items():
            served.update((p, low) for low in {1, 2, campaign.overlap_k} if n >= low)
        conn.executemany("UPDATE campaign_pairs SET items_started = ?, items_shared = ?, items_complete = ? "
                         "WHERE id = ?", [(served[p[0], 1], served[p[0], 2], served[p[0], campaign.overlap_k], p[0])
                                          for p in pairs])
        shared = collections.Counter((a, b) for names in judges.values() for a in names for b in names if a != b)
        conn.executemany("INSERT INTO campaign_shared (token_hash, other, items) VALUES (?, ?, ?)",
                         [(a, b, n) for (a, b), n in shared.items()])
        conn.executemany("UPDATE campaign_model_sides SET n_left = ?, n_right = ? WHERE campaign_id = ? AND model = ?",
                         [(left, right, campaign.id, m) for m, (left, right) in sides.items()])
        conn.executemany("UPDATE campaign_tokens SET served = ?, done = ? WHERE token_hash = ?",
                         [(per_token, per_token, token_hash(t)) for t in tokens])


def percentile_ms(times: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(times) * 1000, q))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=12)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--annotators", type=int, default=500)
    parser.add_argument("--votes", type=int, default=100_000)
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--overlap", type=float, default=0.1, help="the campaign's overlap share (default 0.1)")
    args = parser.parse_args()
    for active, rank_target in ((False, None), (True, None), (False, "top:3")):
        serve_times, vote_times, page_times = run(args, active, rank_target)
        mode = "rank target top:3" if rank_target else "active sampling" if active else "balanced pairs"
        for label, times in (("serve next item", serve_times), ("store vote", vote_times),
                             ("page run", page_times)):
            print(f"{mode:>17} · {label:>15}: median {statistics.median(times) * 1000:.2f} ms, "
                  f"p90 {percentile_ms(times, 90):.2f} ms ({len(times)} iterations; goal ≤ 100 ms median)")


def run(args: argparse.Namespace, active: bool,
        rank_target: str | None = None) -> tuple[list[float], list[float], list[float]]:
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "evalboard.db"
        conn = connect(db)
        start = time.perf_counter()
        campaign = create_campaign(conn, "bench", answers(args.models, args.queries), golden(200), golden_rate=0.1,
                                   target=10_000, seed=0, active_sampling=active, overlap=args.overlap,
                                   rank_target=rank_target)
        tokens = [t.token for t in issue_tokens(conn, campaign, args.annotators)]
        bulk_votes(conn, campaign, tokens, args.votes, rng)
        stored = conn.execute("SELECT count(*) FROM campaign_votes").fetchone()[0]
        print(f"setup: {args.models} models × {args.queries} queries, {len(tokens)} annotators, "
              f"{stored:,} votes stored in {time.perf_counter() - start:.1f} s, overlap {args.overlap:g}")
        serve_times, vote_times, page_times = [], [], []
        for i in range(args.iterations):
            token = tokens[i % len(tokens)]
            start = time.perf_counter()
            item = serve_next(conn, token)
            serve_times.append(time.perf_counter() - start)
            # What a Vote page run costs in the store: its own connection, then the item on screen again
            # (before the vote: after it, the page run would serve the next item and the next "serve next
            # item" would only find it open).
            start = time.perf_counter()
            with closing(connect(db)) as page_conn:
                serve_next(page_conn, token, on_screen=item.assignment_id)
            page_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            record_vote(conn, token, item.assignment_id, {"overall": rng.choice(["model_a", "model_b", "tie"])})
            vote_times.append(time.perf_counter() - start)
        conn.close()
    return serve_times, vote_times, page_times


if __name__ == "__main__":
    main()
