"""docs/methods.md §16, the check of scheme crowd: 30 % of the annotators vote reversed and 10 % at random,
with no golden questions. Crowd-BT recovers the true order with a Kendall τ at least 0.1 above plain
Bradley–Terry's on the same votes (mean over 50 seeds). And the Elo intervals cover the truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from core.io.votes import votes_from_frame
from core.ranking import RankSettings, rank_votes
from core.ranking.bradley_terry import ELO_SCALE
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


def test_elo_intervals_cover_the_truth():
    """Votes drawn from the Crowd-BT model itself (η 0.95 for 7 annotators, 0.15 for 3, 0.6 for 2): the 95 %
    observed-information intervals of the Elo ratings cover the true ratings (40 data sets, 240 intervals;
    docs/methods.md §16 reports 95.1 % over 200 sets)."""
    n_models, per_annotator = 6, 200
    theta = np.linspace(-1.5, 1.5, n_models)
    eta = np.array([0.95] * 7 + [0.15] * 3 + [0.6] * 2)
    models = [f"m{i}" for i in range(n_models)]
    names = [f"a{k:02d}" for k in range(len(eta))]
    truth = ELO_SCALE * (theta - np.log(np.mean(np.exp(theta)))) + 1500
    covered = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        annotator = np.repeat(np.arange(len(eta)), per_annotator)
        left = rng.integers(0, n_models, len(annotator))
        right = rng.integers(0, n_models - 1, len(annotator))
        right += right >= left
        p = 1 / (1 + np.exp(theta[right] - theta[left]))
        left_wins = rng.random(len(annotator)) < eta[annotator] * p + (1 - eta[annotator]) * (1 - p)
        frame = pd.DataFrame({"model_a": np.array(models)[left], "model_b": np.array(models)[right],
                              "winner": np.where(left_wins, "model_a", "model_b"),
                              "annotator_id": np.array(names)[annotator]})
        ranking = rank_votes(votes_from_frame(frame, "t")[0], RankSettings("crowd", ci="sandwich", replicates=50))
        covered += [r.ci_low <= truth[models.index(r.model)] <= r.ci_high for r in ranking.rows]
    assert np.mean(covered) >= 0.9, np.mean(covered)
