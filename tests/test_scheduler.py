"""Scheduler properties on a simulated campaign: 50 annotators × 200 votes, interleaved in time.

Checked: pair counts within one of uniform at every moment, each pair's and each model's left/right
balance, the golden rate within its binomial range (per annotator and overall), the correct golden
answer on a random side, and no item served twice to one annotator.
"""

from __future__ import annotations

import math
import random
import secrets
from collections import Counter

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from core.campaign import (
    GOLDEN_CORRECT,
    create_campaign,
    get_campaign,
    issue_tokens,
    record_vote,
    serve_next,
    vote_records,
)
from core.campaign.scheduler import ACTIVE_SLACK
from core.store.connection import connect

N_ANNOTATORS, N_VOTES = 50, 200
MODELS = ["m0", "m1", "m2", "m3", "m4"]
GOLDEN_RATE = 0.1
ALPHA = 1e-4  # two-sided tail per binomial check; the run is seeded, so the test is deterministic


def answers_table(models, n_queries: int, missing: set[tuple[int, str]] = frozenset()) -> pd.DataFrame:
    rows = [(f"q{q}", f"prompt {q}", m, f"answer {q} {i}", None, "all")
            for q in range(n_queries) for i, m in enumerate(models) if (q, m) not in missing]
    return pd.DataFrame(rows, columns=["query_id", "prompt", "model", "answer", "category", "game_id"])


def golden_table(n: int) -> pd.DataFrame:
    return pd.DataFrame([(f"golden question {i}", f"right {i}", f"wrong {i}", None) for i in range(n)],
                        columns=["question", "correct_answer", "wrong_answer", "category"])


def simulate(conn, tokens, votes_each: int, seed: int = 0) -> None:
    """Annotators take turns in random order (as they would arrive at a server), voting at random."""
    rng = random.Random(seed)
    remaining = {t: votes_each for t in tokens}
    while remaining:
        token = rng.choice(sorted(remaining))
        item = serve_next(conn, token)
        if item is None:
            del remaining[token]
            continue
        record_vote(conn, token, item.assignment_id,
                    {d: rng.choice(["model_a", "model_b", "tie", "tie (bothbad)"]) for d in item.dimensions})
        remaining[token] -= 1
        if remaining[token] == 0:
            del remaining[token]


@pytest.fixture(scope="module")
def campaign_run(tmp_path_factory):
    db = tmp_path_factory.mktemp("scheduler") / "evalboard.db"
    conn = connect(db)
    campaign = create_campaign(conn, "sim", answers_table(MODELS, 120), golden_table(80), golden_rate=GOLDEN_RATE,
                               target=N_VOTES, seed=7)
    with pytest.MonkeyPatch.context() as patch:  # tokens feed the per-annotator draws: fix them too
        numbers = iter(range(N_ANNOTATORS))
        patch.setattr(secrets, "token_urlsafe", lambda n: f"token-{next(numbers)}")
        tokens = [t.token for t in issue_tokens(conn, campaign, N_ANNOTATORS)]
    simulate(conn, tokens, N_VOTES)
    assignments = pd.read_sql_query("SELECT * FROM campaign_assignments ORDER BY id", conn)
    votes = vote_records(conn, campaign)
    yield conn, campaign, assignments, votes
    conn.close()


def test_every_annotator_reached_the_target_and_every_vote_is_stored_once(campaign_run):
    _, _, assignments, votes = campaign_run
    assert len(votes) == N_ANNOTATORS * N_VOTES
    assert votes["vote_id"].is_unique
    assert (votes.groupby("annotator_id").size() == N_VOTES).all()
    assert assignments["voted"].all()


def test_pair_counts_stay_within_one_of_uniform_at_every_moment(campaign_run):
    _, _, assignments, _ = campaign_run
    pairs = assignments.dropna(subset=["pair_id"])
    counts = Counter({p: 0 for p in pairs["pair_id"].unique()})
    assert len(counts) == 10
    for pair_id in pairs["pair_id"]:
        counts[pair_id] += 1
        assert max(counts.values()) - min(counts.values()) <= 1


def test_each_pair_is_shown_both_ways_equally(campaign_run):
    _, _, assignments, _ = campaign_run
    pairs = assignments.dropna(subset=["pair_id"])
    lo = pairs[["left_model", "right_model"]].min(axis=1)
    lo_left = (pairs["left_model"] == lo).groupby(pairs["pair_id"]).sum()
    shown = pairs.groupby("pair_id").size()
    assert ((lo_left - (shown - lo_left)).abs() <= 1).all()


def test_each_model_is_left_half_the_time(campaign_run):
    _, _, _, votes = campaign_run
    real = votes[~votes["is_golden"]]
    for model in MODELS:
        left, right = (real["model_a"] == model).sum(), (real["model_b"] == model).sum()
        assert abs(left / (left + right) - 0.5) <= 0.02, model


def test_models_are_shown_at_an_even_pace(campaign_run):
    _, _, assignments, _ = campaign_run
    pairs = assignments.dropna(subset=["pair_id"])
    shown = Counter()
    for left, right in zip(pairs["left_model"], pairs["right_model"]):
        shown[left] += 1
        shown[right] += 1
        # Each model is in 4 of the 10 pairs and pair counts differ by at most one, so model counts differ
        # by at most 4 at any moment.
        assert max(shown.values()) - min(shown.get(m, 0) for m in MODELS) <= 4


def test_golden_rate_lies_in_its_binomial_range(campaign_run):
    _, _, _, votes = campaign_run
    per_annotator = votes.groupby("annotator_id")["is_golden"].sum()
    low, high = binom.ppf(ALPHA / 2, N_VOTES, GOLDEN_RATE), binom.isf(ALPHA / 2, N_VOTES, GOLDEN_RATE)
    assert per_annotator.between(low, high).all()
    n = N_ANNOTATORS * N_VOTES
    total = int(votes["is_golden"].sum())
    assert binom.ppf(ALPHA / 2, n, GOLDEN_RATE) <= total <= binom.isf(ALPHA / 2, n, GOLDEN_RATE)


def test_golden_items_are_at_unpredictable_points(campaign_run):
    _, _, assignments, _ = campaign_run
    # Not a block schedule: the gaps between consecutive golden items of an annotator vary.
    gaps = []
    for _, serves in assignments.groupby("token_hash"):
        positions = serves.loc[serves["golden_id"].notna(), "seq"].to_numpy()
        gaps += list(positions[1:] - positions[:-1])
    assert len(set(gaps)) > 10
    assert min(gaps) == 1


def test_correct_golden_answer_is_on_a_random_side(campaign_run):
    _, _, assignments, votes = campaign_run
    golden = assignments.dropna(subset=["golden_id"])
    correct_left = (golden["left_model"] == GOLDEN_CORRECT).sum()
    n = len(golden)
    assert binom.ppf(ALPHA / 2, n, 0.5) <= correct_left <= binom.isf(ALPHA / 2, n, 0.5)
    published = votes[votes["is_golden"]]
    expected = published["model_a"].eq(GOLDEN_CORRECT).map({True: "model_a", False: "model_b"})
    assert (published["golden_answer"] == expected).all()


def test_no_item_is_served_twice_to_an_annotator(campaign_run):
    _, _, assignments, _ = campaign_run
    pairs = assignments.dropna(subset=["pair_id"])
    assert not pairs.duplicated(["token_hash", "pair_id", "query_id"]).any()
    golden = assignments.dropna(subset=["golden_id"])
    assert not golden.duplicated(["token_hash", "golden_id"]).any()


def test_an_annotator_who_has_seen_everything_is_done(tmp_path):
    conn = connect(tmp_path / "evalboard.db")
    # A pool of 3: the smallest a campaign is created with (core.campaign.golden.MIN_GOLDEN).
    campaign = create_campaign(conn, "tiny", answers_table(["a", "b", "c"], 2), golden_table(3), golden_rate=0.5,
                               target=100, seed=1)
    (token,) = [t.token for t in issue_tokens(conn, campaign, 1)]
    simulate(conn, [token], 100)
    served = pd.read_sql_query("SELECT * FROM campaign_assignments", conn)
    assert len(served) == 3 * 2 + 3  # every (pair, query) once, each golden item once
    assert serve_next(conn, token) is None


def test_queries_missing_an_answer_only_pair_the_models_that_answered(tmp_path):
    conn = connect(tmp_path / "evalboard.db")
    answers = answers_table(["a", "b", "c"], 3, missing={(0, "c"), (1, "a")})
    campaign = create_campaign(conn, "gaps", answers, golden_rate=0, target=100, seed=1)
    (token,) = [t.token for t in issue_tokens(conn, campaign, 1)]
    simulate(conn, [token], 100)
    served = pd.read_sql_query("SELECT query_id, left_model, right_model FROM campaign_assignments", conn)
    seen = {(q, *sorted((a, b))) for q, a, b in served.itertuples(index=False)}
    assert seen == {("q0", "a", "b"), ("q1", "b", "c"), ("q2", "a", "b"), ("q2", "a", "c"), ("q2", "b", "c")}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n_models=st.integers(2, 5), n_queries=st.integers(1, 6), n_annotators=st.integers(1, 4),
       votes_each=st.integers(1, 25), seed=st.integers(0, 1000))
def test_small_campaigns_never_repeat_and_stay_balanced(tmp_path_factory, n_models, n_queries, n_annotators,
                                                        votes_each, seed):
    conn = connect(tmp_path_factory.mktemp("small") / "evalboard.db")
    models = [f"m{i}" for i in range(n_models)]
    campaign = create_campaign(conn, "small", answers_table(models, n_queries), golden_rate=0, target=votes_each,
                               seed=seed)
    tokens = [t.token for t in issue_tokens(conn, campaign, n_annotators)]
    simulate(conn, tokens, votes_each, seed)
    served = pd.read_sql_query("SELECT token_hash, pair_id, query_id, left_model FROM campaign_assignments", conn)
    assert not served.duplicated(["token_hash", "pair_id", "query_id"]).any()
    n_items = n_models * (n_models - 1) // 2 * n_queries
    assert (served.groupby("token_hash").size() == min(votes_each, n_items)).all()
    if votes_each <= n_queries:  # no annotator can exhaust a pair, so every draw is the least-shown pair
        counts = served.groupby("pair_id").size().reindex(range(1, n_models * (n_models - 1) // 2 + 1),
                                                           fill_value=0)
        assert counts.max() - counts.min() <= 1
    conn.close()


def test_active_sampling_prefers_uncertain_pairs_within_its_slack(tmp_path, monkeypatch):
    numbers = iter(range(100))
    monkeypatch.setattr(secrets, "token_urlsafe", lambda n: f"token-{next(numbers)}")
    conn = connect(tmp_path / "evalboard.db")
    strengths = {"m0": 0.0, "m1": 0.05, "m2": 0.1, "m3": 3.0, "m4": 6.0}
    campaign = create_campaign(conn, "active", answers_table(list(strengths), 120), golden_rate=0, target=150,
                               seed=3, active_sampling=True)
    tokens = [t.token for t in issue_tokens(conn, campaign, 10)]
    rng = random.Random(5)
    counts: Counter = Counter()
    for token in rng.sample(tokens * 150, 150 * len(tokens)):  # annotators arrive in random order
        item_row = serve_next(conn, token)
        left, right = conn.execute("SELECT left_model, right_model FROM campaign_assignments WHERE id = ?",
                                   [item_row.assignment_id]).fetchone()
        counts[tuple(sorted((left, right)))] += 1
        assert max(counts.values()) - min(counts.get(p, 0) for p in combinations(strengths)) <= ACTIVE_SLACK + 1
        p_left = 1 / (1 + math.exp(strengths[right] - strengths[left]))
        record_vote(conn, token, item_row.assignment_id, {"overall": "model_a" if rng.random() < p_left
                                                          else "model_b"})
    close_pairs = [counts[p] for p in (("m0", "m1"), ("m0", "m2"), ("m1", "m2"))]
    far_pairs = [counts[p] for p in (("m0", "m4"), ("m1", "m4"), ("m2", "m4"))]
    assert min(close_pairs) > max(far_pairs)
    assert get_campaign(conn, "active").active_sampling
    per_annotator = pd.read_sql_query("SELECT token_hash, pair_id FROM campaign_assignments", conn)
    share = per_annotator.groupby("token_hash")["pair_id"].value_counts(normalize=True)
    assert share.max() < 0.25  # no annotator is stuck on one pair (10 pairs: 0.1 each on average)


def combinations(strengths) -> list[tuple[str, str]]:
    names = sorted(strengths)
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
