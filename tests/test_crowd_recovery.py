"""docs/methods.md §16, the check of scheme crowd: 30 % of the annotators vote reversed and 10 % at random,
with no golden questions. Crowd-BT recovers the true order with a Kendall τ at least 0.1 above plain
Bradley–Terry's on the same votes (mean over 50 seeds)."""

from __future__ import annotations

import numpy as np
from scipy.stats import kendalltau

from core.io.votes import votes_from_frame
from core.ranking import RankSettings, rank_votes
from core.samples.crowd import crowd_votes

SEEDS = range(50)


def tau(ranking, sample) -> float:
    rating = {r.model: r.rating for r in ranking.rows}
    return float(kendalltau([rating[m] for m in sample.models], sample.theta).statistic)


def test_crowd_recovers_the_true_order_better_than_plain_bt():
    crowd, plain = [], []
    for seed in SEEDS:
        sample = crowd_votes(10, 20, 50, reversed_share=0.3, random_share=0.1, seed=seed)
        ranking = rank_votes(votes_from_frame(sample.votes, "crowd votes")[0], RankSettings("crowd", ci="none"))
        crowd.append(tau(ranking, sample))
        plain.append(tau(ranking.plain, sample))
    assert np.mean(crowd) >= np.mean(plain) + 0.1, (np.mean(crowd), np.mean(plain))
    assert np.mean(crowd) > 0.8
