"""Scheme crowd on real crowd votes: LLMFAO (Ustalov 2023; 8,931 votes on 59 models by 124 crowd workers, no golden
questions). η is fitted from the ranking alone; the workers' agreement with the other workers who judged the same
pair is independent evidence of the same thing, and the two agree (docs/methods.md §16, "Real data")."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, spearmanr

from core.io import load
from core.ranking import RankSettings
from core.ranking.inputs import rank_input
from tests.conftest import shared_file


def pair_agreement(raw: pd.DataFrame, min_votes: int = 30) -> pd.Series:
    """Per worker: the mean share of the other workers' decisive votes on the same pair that pick the same
    model as this worker's decisive vote (workers with at least ``min_votes`` such comparisons)."""
    decisive = raw[raw["winner"] != "tie"].assign(
        chosen=lambda d: np.where(d["winner"] == "left", d["model_x"], d["model_y"]))
    rows = []
    for _, votes in decisive.groupby("id"):
        if len(votes) < 2:
            continue
        for index, vote in votes.iterrows():
            rows.append((str(vote["worker"]), float((votes.drop(index)["chosen"] == vote["chosen"]).mean())))
    agreement = pd.DataFrame(rows, columns=["worker", "agree"]).groupby("worker")["agree"].agg(["mean", "size"])
    return agreement.loc[agreement["size"] >= min_votes, "mean"]


def test_llmfao_reliability_follows_agreement_with_the_other_workers():
    path = shared_file("llmfao/crowd-comparisons.csv")
    started = time.perf_counter()
    ranking = rank_input("votes", load(path).frame, RankSettings("crowd", ci="sandwich"), annotators="keep")
    assert time.perf_counter() - started < 30
    assert ranking.fit.converged and ranking.n_models == 59 and len(ranking.annotators) == 124
    assert sum(a.n_votes for a in ranking.annotators) == ranking.n_votes == 8931
    assert all(0 <= a.ci_low <= a.reliability <= a.ci_high <= 1 for a in ranking.annotators)
    plain = {r.model: r.rating for r in ranking.plain.rows}
    crowd = {r.model: r.rating for r in ranking.rows}
    assert kendalltau([plain[m] for m in plain], [crowd[m] for m in plain]).statistic > 0.8  # measured 0.87
    eta = {a.annotator_id: a for a in ranking.annotators}
    agreement = pair_agreement(pd.read_csv(path))
    assert len(agreement) >= 35  # 39 workers
    rho = spearmanr([eta[w].reliability for w in agreement.index], agreement.to_numpy()).statistic
    assert rho > 0.6, rho  # measured 0.73
    # worker 15 (343 votes) agrees with the others on 47 % of shared pairs: η's whole interval is below 0.5
    assert eta["15"].ci_high < 0.5 and agreement["15"] < 0.5
