"""Crowd-BT's fit (docs/methods.md §16): derivatives against finite differences, the mode, the symmetry
break, the intervals, and a property over random small vote sets."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.io.votes import votes_from_frame
from core.ranking import RankingError, RankSettings, rank_votes
from core.ranking.crowd_fit import PRIOR_A, PRIOR_B, crowd_cells, derivatives, expit, fit_crowd, log_posterior
from core.samples.crowd import crowd_votes


def random_cells(seed: int, n_models: int = 5, n_annotators: int = 4, n_votes: int = 300):
    rng = np.random.default_rng(seed)
    left = rng.integers(0, n_models, n_votes)
    right = (left + rng.integers(1, n_models, n_votes)) % n_models
    score = rng.choice([0.0, 0.5, 1.0], n_votes, p=[0.45, 0.1, 0.45])
    weight = rng.uniform(0.5, 2.0, n_votes)
    return crowd_cells(rng.integers(0, n_annotators, n_votes), left, right, score, weight, n_models, n_annotators)


@pytest.mark.parametrize("seed", range(4))
def test_gradient_and_hessian_match_finite_differences(seed):
    cells = random_cells(seed)
    rng = np.random.default_rng(100 + seed)
    theta, phi = rng.normal(0, 1, cells.n_models), rng.normal(0.5, 1.5, cells.n_annotators)
    x = np.concatenate([theta, phi])
    m = cells.n_models

    def value(v):
        return log_posterior(v[:m], v[m:], cells)

    def gradient(v):
        return np.concatenate(derivatives(v[:m], v[m:], cells, hessian=False))

    h = 1e-6
    numeric = np.array([(value(x + h * e) - value(x - h * e)) / (2 * h) for e in np.eye(len(x))])
    np.testing.assert_allclose(gradient(x), numeric, rtol=1e-6, atol=1e-5)
    numeric_hessian = np.array([(gradient(x + h * e) - gradient(x - h * e)) / (2 * h) for e in np.eye(len(x))])
    _, _, a, b, d = derivatives(theta, phi, cells)
    analytic = np.block([[a, b], [b.T, np.diag(d)]])
    np.testing.assert_allclose(analytic, numeric_hessian, rtol=1e-5, atol=1e-4)


def test_the_fit_is_a_mode_of_the_objective():
    cells = random_cells(7)
    fit = fit_crowd(cells)
    phi = np.log(fit.eta / (1 - fit.eta))
    grad_theta, grad_phi = derivatives(fit.theta, phi, cells, hessian=False)
    assert fit.converged
    assert np.abs(grad_theta).max() < 1e-6 and np.abs(grad_phi).max() < 1e-6
    best = fit.log_posterior
    rng = np.random.default_rng(0)
    for _ in range(20):  # no nearby point is higher
        assert log_posterior(fit.theta + rng.normal(0, 0.05, len(fit.theta)),
                             phi + rng.normal(0, 0.05, len(phi)), cells) <= best


def test_cells_keep_the_likelihood_of_the_votes():
    """Aggregating to (annotator, pair) cells with one orientation per pair changes nothing."""
    rng = np.random.default_rng(3)
    n = 200
    left, right = rng.integers(0, 4, n), rng.integers(0, 4, n)
    keep = left != right
    left, right = left[keep], right[keep]
    score = rng.choice([0.0, 0.5, 1.0], len(left))
    annotator = rng.integers(0, 3, len(left))
    cells = crowd_cells(annotator, left, right, score, None, 4, 3)
    theta, phi = rng.normal(0, 1, 4), rng.normal(0, 1, 3)
    s = expit(theta[left] - theta[right])
    eta = expit(phi)[annotator]
    q = eta * s + (1 - eta) * (1 - s)
    direct = (score * np.log(q) + (1 - score) * np.log(1 - q)).sum()
    prior = ((PRIOR_A - 1) * np.log(expit(phi)) + (PRIOR_B - 1) * np.log(expit(-phi))).sum()
    virtual_ties = 0.5 * (np.log(expit(theta)) + np.log(expit(-theta))).sum()
    assert log_posterior(theta, phi, cells) == pytest.approx(direct + prior + virtual_ties, rel=1e-12)
    assert cells.votes.tolist() == np.bincount(annotator, minlength=3).tolist()


def test_expit_keeps_its_precision_in_both_tails():
    x = np.array([-800.0, -40.0, 0.0, 40.0, 800.0])
    assert expit(x).tolist()[2] == 0.5
    assert expit(np.array([-40.0]))[0] == pytest.approx(math.exp(-40), rel=1e-12)
    assert np.isfinite(expit(x)).all()


def votes(sample) -> pd.DataFrame:
    return votes_from_frame(sample.votes, "crowd test votes")[0]


def test_all_honest_annotators_give_the_plain_bt_order():
    sample = crowd_votes(8, 12, 150, reversed_share=0.0, random_share=0.0, seed=4)
    ranking = rank_votes(votes(sample), RankSettings("crowd", ci="none"))
    assert [r.model for r in ranking.rows] == [r.model for r in ranking.plain.rows]
    assert min(a.reliability for a in ranking.annotators) > 0.75


def test_reliability_separates_the_three_groups():
    sample = crowd_votes(10, 30, 400, spread=4.0, seed=1)
    ranking = rank_votes(votes(sample), RankSettings("crowd", ci="sandwich"))
    eta = {a.annotator_id: a for a in ranking.annotators}
    by_group = {g: [eta[name].reliability for name, grp in zip(sample.annotators, sample.group) if grp == g]
                for g in ("honest", "reversed", "random")}
    assert np.mean(by_group["honest"]) > 0.85 and min(by_group["honest"]) > 0.7
    assert np.mean(by_group["reversed"]) < 0.15 and max(by_group["reversed"]) < 0.3
    assert abs(np.mean(by_group["random"]) - 0.5) < 0.1
    for a in ranking.annotators:  # Wald on the logit scale: inside (0, 1) and around the estimate
        assert 0 < a.ci_low < a.reliability < a.ci_high < 1 and a.n_votes == 400
    truth = np.array([a.reliability for a in ranking.annotators])
    assert list(truth) == sorted(truth, reverse=True)  # most reliable first


def test_a_majority_of_reversed_votes_cannot_flip_the_orientation_alone():
    """θ → −θ, η → 1 − η leaves the likelihood unchanged; the prior (mode 0.9) decides the orientation, so
    with honest annotators in the majority the strongest model comes first."""
    sample = crowd_votes(6, 10, 300, reversed_share=0.4, random_share=0.0, spread=3.0, seed=2)
    ranking = rank_votes(votes(sample), RankSettings("crowd", ci="none"))
    assert ranking.rows[0].model == sample.models[int(np.argmax(sample.theta))]


def test_refusals_name_the_column_and_the_interval():
    sample = crowd_votes(4, 3, 20, seed=0)
    frame = votes(sample)
    with pytest.raises(RankingError, match="annotator_id column"):
        rank_votes(frame.drop(columns="annotator_id"), RankSettings("crowd", ci="sandwich"))
    gaps = sample.votes.assign(annotator_id=sample.votes["annotator_id"].where(np.arange(60) % 7 != 3))
    with pytest.raises(RankingError, match=r"annotator_id is empty in 9 of 60 votes \(rows 4, 11, 18"):
        rank_votes(votes_from_frame(gaps, "t")[0], RankSettings("crowd", ci="sandwich"))
    with pytest.raises(RankingError, match="bootstrap refits are not offered"):
        RankSettings("crowd", ci="bootstrap")


def test_weights_count_like_repeated_votes_and_their_scale_does_not_matter():
    rng = np.random.default_rng(5)
    n = 240
    left = rng.integers(0, 5, n)
    right = (left + rng.integers(1, 5, n)) % 5
    score, annotator = rng.choice([0.0, 1.0], n), rng.integers(0, 4, n)
    twice = annotator == 0  # annotator 0's votes: weight 2, or each given twice
    doubled = fit_crowd(crowd_cells(*(np.concatenate([x, x[twice]]) for x in (annotator, left, right, score)),
                                    None, 5, 4))
    weighted = fit_crowd(crowd_cells(annotator, left, right, score, np.where(twice, 2.0, 1.0), 5, 4))
    np.testing.assert_allclose(doubled.theta, weighted.theta, atol=1e-8)
    np.testing.assert_allclose(doubled.eta, weighted.eta, atol=1e-8)
    # the scheme rescales weights to mean 1 (the prior keeps the weight of two votes): any common factor is moot
    frame = crowd_votes(5, 4, 60, reversed_share=0.25, random_share=0.0, seed=5).votes
    weights = np.arange(len(frame)) % 3 + 1.0

    def ratings(weight):
        ranked = rank_votes(votes_from_frame(frame.assign(weight=weight), "t")[0], RankSettings("crowd", ci="none"))
        return [r.rating for r in ranked.rows]

    assert ratings(weights) == pytest.approx(ratings(7 * weights), abs=1e-6)
    assert ratings(weights) != pytest.approx(ratings(np.ones(len(frame))), abs=1e-3)  # the weights do count


MODELS = ["m1", "m2", "m3", "m4"]
vote_rows = st.lists(st.tuples(st.sampled_from(MODELS), st.sampled_from(MODELS),
                               st.sampled_from(["model_a", "model_b", "tie", "tie (bothbad)"]),
                               st.sampled_from(["x", "y", "z"]), st.floats(0.1, 5.0)),
                     min_size=1, max_size=25).map(lambda rows: [r for r in rows if r[0] != r[1]]).filter(bool)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=vote_rows, ci=st.sampled_from(["sandwich", "none"]))
def test_any_votes_give_finite_ratings_and_reliabilities_inside_0_1(rows, ci):
    frame = pd.DataFrame(rows, columns=["model_a", "model_b", "winner", "annotator_id", "weight"])
    try:
        ranking = rank_votes(votes_from_frame(frame, "t")[0], RankSettings("crowd", ci=ci))
    except RankingError as exc:
        assert "two models" in str(exc)
        return
    assert all(math.isfinite(r.rating) and math.isfinite(r.strength) for r in ranking.rows)
    for a in ranking.annotators:
        assert 0 < a.reliability < 1
        if ci == "none":
            assert a.ci_low is None and a.ci_high is None
        else:
            assert 0 <= a.ci_low <= a.reliability <= a.ci_high <= 1
    assert sum(a.n_votes for a in ranking.annotators) == ranking.n_votes
