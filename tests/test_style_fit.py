"""Style-controlled Bradley–Terry (core.ranking.style_fit): the fit against an independent maximiser
(scipy L-BFGS-B on the full row likelihood, dense design), the sandwich against a numerical-Hessian
sandwich, docs/methods.md §8's reference D4, the agreement with scheme ``adjusted``, a planted-effect simulation,
the bootstrap against a loop of full Newton refits, and the edge cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.stats import kendalltau

from core.io.style_features import SIDE_COLUMNS, pair_features
from core.ranking.bradley_terry import ELO_SCALE
from core.ranking.covariates import fit_adjusted, style_features
from core.ranking.style_bootstrap import bootstrap, collapse
from core.ranking.style_fit import fit_style
from core.ranking.style_model import StyleInputError, fit_rows, style_design, style_rows
from core.samples.style import PLANTED_FEATURES, style_votes
from tests.conftest import shared_file

FIT_ATOL = 1e-6  # issue: θ and β equal the independent maximiser's to 1e-6
SANDWICH_ATOL = 1e-4  # issue: sandwich SEs equal a numerical-Hessian sandwich to 1e-4
FEATURES = ("length", "headers", "lists", "bold")


# ---------------------------------------------------------------------------------------------------
# Independent reference: dense design, scipy L-BFGS-B, finite differences.

def dense_design(left, right, z, k):
    x = np.zeros((len(left), k))
    x[np.arange(len(left)), left] += 1.0
    x[np.arange(len(left)), right] -= 1.0
    return np.hstack([x, z])


def penalised_loss(b, x, y, w, k, penalty):
    """−(Σ wᵢ ℓᵢ − (λ/2)‖β‖²) and its gradient, θ = all K (shift-free; centred afterwards)."""
    eta = x @ b
    loss = -np.sum(w * (y * eta - np.logaddexp(0.0, eta))) + 0.5 * penalty * b[k:] @ b[k:]
    mu = 1.0 / (1.0 + np.exp(-eta))
    grad = -x.T @ (w * (y - mu))
    grad[k:] += penalty * b[k:]
    return loss, grad


def lbfgs_fit(left, right, y, z, k, penalty, w=None):
    w = np.ones(len(y)) if w is None else w / w.mean()
    x = dense_design(left, right, z, k)
    scale = 1.0 / len(y)  # a per-vote loss keeps L-BFGS's tolerances meaningful
    res = minimize(lambda b: tuple(v * scale for v in penalised_loss(b, x, y, w, k, penalty)), np.zeros(x.shape[1]),
                   jac=True, method="L-BFGS-B", options={"maxiter": 20000, "maxcor": 50, "ftol": 1e-15, "gtol": 1e-11})
    b = res.x.copy()
    b[:k] -= b[:k].mean()
    return b


def numerical_sandwich(left, right, y, z, k, penalty, b, w=None):
    """H by central differences of the (independent) gradient, J from per-vote scores; θ₀ fixed, then centred."""
    w = np.ones(len(y)) if w is None else w / w.mean()
    x = dense_design(left, right, z, k)
    free = np.arange(1, x.shape[1])
    h = np.zeros((len(free), len(free)))
    step = 1e-5
    for col, j in enumerate(free):
        up, down = b.copy(), b.copy()
        up[j] += step
        down[j] -= step
        h[:, col] = (penalised_loss(up, x, y, w, k, penalty)[1]
                     - penalised_loss(down, x, y, w, k, penalty)[1])[free] / (2 * step)
    mu = 1.0 / (1.0 + np.exp(-(x @ b)))
    scores = (w * (y - mu))[:, None] * x[:, free]
    h_inv = np.linalg.inv((h + h.T) / 2)
    cov = np.zeros((x.shape[1], x.shape[1]))
    cov[np.ix_(free, free)] = h_inv @ (scores.T @ scores) @ h_inv
    centre = np.eye(x.shape[1])
    centre[:k, :k] -= 1.0 / k
    return centre @ cov @ centre.T


def random_votes(seed, n=600, k=5, effects=(0.6, 0.0, 0.4, 0.2), tie_share=0.15):
    rng = np.random.default_rng(seed)
    left = rng.integers(0, k, n)
    right = (left + rng.integers(1, k, n)) % k
    sides = {f: (rng.poisson(lam, n).astype(float), rng.poisson(lam, n).astype(float))
             for f, lam in zip(FEATURES, (800, 2, 5, 3))}
    design = style_design(sides, n, FEATURES)
    theta = np.linspace(1.0, -1.0, k)
    p = 1 / (1 + np.exp(-(theta[left] - theta[right] + design.z @ np.array(effects))))
    y = (rng.random(n) < p).astype(float)
    y[rng.random(n) < tie_share] = 0.5
    return left, right, y, sides, design, k


# ---------------------------------------------------------------------------------------------------

def test_reference_d4_unpenalised_matches_methods_8():
    """docs/methods.md §8, reference D4 (statsmodels GLM, fractional y):
    θ = (0, −0.9663681, −2.2595600), β = −0.7576722."""
    left = np.array(["ABC".index(c) for c in "ABCABCABCABCBCABCAACBBCA"])
    right = np.array(["ABC".index(c) for c in "BCABCACABCABAABCBCBACAAB"])
    y = np.array([{"L": 1.0, "R": 0.0, "T": 0.5}[c] for c in "LLRLTRLLRRLTLRLLRTLRLLRL"])
    len_l = [900, 300, 500, 1200, 350, 450, 800, 250, 600, 1000, 400, 700, 300, 650, 1100, 320, 480, 950, 500, 300,
             700, 280, 520, 1000]
    len_r = [400, 600, 900, 500, 400, 800, 300, 700, 500, 450, 500, 650, 900, 1000, 500, 900, 500, 600, 800, 500, 900,
             700, 600, 400]
    fit = fit_style(left, right, y, {"length": (len_l, len_r)}, "ABC", features=("length",), penalty=0)
    np.testing.assert_allclose(fit.theta - fit.theta[0], [0, -0.9663681, -2.2595600], atol=1e-6)
    np.testing.assert_allclose(fit.beta, [-0.7576722], atol=1e-6)
    np.testing.assert_allclose([fit.feature_mean[0], fit.feature_sd[0]], [-0.0447973, 0.3132236], atol=1e-7)
    assert abs(fit.theta.sum()) < 1e-12 and fit.identifiable
    np.testing.assert_allclose(fit.elo, 1500 + ELO_SCALE * fit.theta)


@pytest.mark.parametrize("seed, penalty", [(0, 1.0), (1, 1.0), (2, 0.0), (3, 25.0)])
def test_fit_equals_an_independent_lbfgs_maximiser(seed, penalty):
    left, right, y, sides, design, k = random_votes(seed)
    weight = np.random.default_rng(seed + 100).uniform(0.2, 3.0, len(y)) if seed == 1 else None
    fit = fit_style(left, right, y, sides, [f"m{i}" for i in range(k)], penalty=penalty, weight=weight)
    reference = lbfgs_fit(left, right, y, design.z, k, penalty, weight)
    np.testing.assert_allclose(fit.theta, reference[:k], atol=FIT_ATOL)
    np.testing.assert_allclose(fit.beta, reference[k:], atol=FIT_ATOL)
    numeric = numerical_sandwich(left, right, y, design.z, k, penalty, np.r_[fit.theta, fit.beta], weight)
    np.testing.assert_allclose(np.sqrt(np.diag(fit.covariance)), np.sqrt(np.diag(numeric)), atol=SANDWICH_ATOL)
    np.testing.assert_allclose(fit.beta_se, np.sqrt(np.diag(numeric))[k:], atol=SANDWICH_ATOL)
    np.testing.assert_allclose(fit.elo_se, ELO_SCALE * np.sqrt(np.diag(numeric))[:k], atol=SANDWICH_ATOL * ELO_SCALE)


def llmfao_crowd():
    votes = pd.read_csv(shared_file("llmfao/crowd-comparisons.csv"))
    answers = pd.read_json(shared_file("llmfao/results.jsonl"), lines=True)[["prompt", "model", "result"]]
    for side, column in (("x", "answer_a"), ("y", "answer_b")):
        votes = votes.merge(answers.rename(columns={"model": f"model_{side}", "result": column}),
                            on=["prompt", f"model_{side}"], how="left")
    y = votes["winner"].map({"left": 1.0, "right": 0.0, "tie": 0.5}).to_numpy()
    return votes["left"], votes["right"], y, votes["answer_a"], votes["answer_b"]


def tulu1():
    votes = pd.read_csv(shared_file("tulu1_human_eval/annotations.csv"))
    votes = votes[votes["completion_a"].notna() & votes["completion_b"].notna()]
    y = votes["preference"].map(lambda p: 0.5 if p == "tie" else 1.0 if p.startswith("a-") else 0.0).to_numpy()
    return votes["model_a"], votes["model_b"], y, votes["completion_a"], votes["completion_b"]


@pytest.mark.parametrize("load", [llmfao_crowd, tulu1], ids=["llmfao_crowd", "tulu1"])
def test_real_data_fit_equals_the_independent_maximiser(load):
    a, b, y, text_a, text_b = load()
    models = sorted(set(a) | set(b))
    left, right = a.map(models.index).to_numpy(), b.map(models.index).to_numpy()
    counts = pair_features(text_a.reset_index(drop=True), text_b.reset_index(drop=True))
    sides = {f: (counts[ca].to_numpy(float), counts[cb].to_numpy(float)) for f, (ca, cb) in SIDE_COLUMNS.items()}
    fit = fit_style(left, right, y, sides, models)
    design = style_design(sides, len(y), FEATURES)
    reference = lbfgs_fit(left, right, y, design.z, len(models), 1.0)
    np.testing.assert_allclose(fit.theta, reference[:len(models)], atol=FIT_ATOL)
    np.testing.assert_allclose(fit.beta, reference[len(models):], atol=FIT_ATOL)
    assert np.all(np.isfinite(fit.elo_se)) and np.all(fit.beta_se > 0)


def test_position_and_length_with_no_penalty_is_scheme_adjusted():
    left, right, y, sides, design, k = random_votes(7, n=500)
    fit = fit_style(left, right, y, sides, list("ABCDE"), features=("length", "position"), penalty=0.0)
    adjusted = fit_adjusted(left, right, y, k, features=style_features(*sides["length"]).z, position=True)
    np.testing.assert_allclose(fit.theta - fit.theta[0], adjusted.theta, atol=1e-8)
    np.testing.assert_allclose(fit.beta, [adjusted.beta[0], adjusted.delta], atol=1e-8)
    assert fit.features == ("length", "position")
    penalised = fit_style(left, right, y, sides, list("ABCDE"), features=("length", "position"))
    assert 0 < abs(penalised.beta[1]) < abs(fit.beta[1])  # the penalty shrinks δ, a little
    assert abs(penalised.beta[1] - fit.beta[1]) < 0.01


def test_anchor_moves_every_rating_by_one_constant():
    left, right, y, sides, _, k = random_votes(4)
    plain = fit_style(left, right, y, sides, list("ABCDE"))
    anchored = fit_style(left, right, y, sides, list("ABCDE"), anchor=("C", 1000.0))
    assert anchored.elo[2] == 1000.0 and np.isnan(anchored.elo_low[2])
    np.testing.assert_allclose(anchored.elo - plain.elo, np.full(k, 1000.0 - plain.elo[2]))
    with pytest.raises(StyleInputError, match="anchor"):
        fit_style(left, right, y, sides, list("ABCDE"), anchor=("Z", 1000.0))


def test_zero_spread_feature_is_dropped_and_said():
    left, right, y, sides, _, k = random_votes(5)
    sides = {**sides, "headers": (np.zeros(len(y)), np.zeros(len(y)))}
    fit = fit_style(left, right, y, sides, list("ABCDE"))
    assert fit.features == ("length", "lists", "bold") and fit.dropped == ("headers",)
    assert "headers" in fit.notes[0] and "dropped" in fit.notes[0]


def test_a_model_that_never_loses_gets_the_prior_and_the_flag():
    left, right, y, sides, _, k = random_votes(6)
    y = np.where(left == 0, 1.0, np.where(right == 0, 0.0, y))  # model 0 wins every vote it is in
    fit = fit_style(left, right, y, sides, list("ABCDE"))
    assert not fit.identifiable and fit.prior == 0.5 and any("virtual tie" in n for n in fit.notes)
    assert np.all(np.isfinite(fit.elo)) and fit.elo[0] == fit.elo.max()


@pytest.mark.parametrize("change, message", [
    (dict(features=("length", "style")), "features"),
    (dict(interval="wald"), "interval"),
    (dict(replicates=0), "replicates"),
    (dict(penalty=-1.0), "penalty"),
    (dict(weight=-np.ones(600)), "weight"),
])
def test_bad_settings_are_named(change, message):
    left, right, y, sides, _, _ = random_votes(8)
    with pytest.raises(StyleInputError, match=message):
        fit_style(left, right, y, sides, list("ABCDE"), **change)


def test_bad_votes_are_named():
    left, right, y, sides, _, _ = random_votes(8)
    bad = {**sides, "lists": (np.r_[np.nan, sides["lists"][0][1:]], sides["lists"][1])}
    with pytest.raises(StyleInputError, match=r"'lists': votes 1 have a missing"):
        fit_style(left, right, y, bad, list("ABCDE"))
    with pytest.raises(StyleInputError, match="cannot meet itself"):
        fit_style(left, left, y, sides, list("ABCDE"))
    with pytest.raises(StyleInputError, match=r"models 5"):
        fit_style(left, right, y, sides, list("ABCDEF"))


def test_bootstrap_chord_refits_equal_full_newton_refits():
    left, right, y, sides, design, k = random_votes(9, n=400)
    rows = style_rows(left, right, y, design.z, k)
    estimate, prior, _ = fit_rows(rows, 1.0)
    draws = bootstrap(rows, estimate, 1.0, prior, 20, seed=3)
    distinct = collapse(rows)
    rng = np.random.default_rng(3)
    row_of_vote = np.repeat(np.arange(len(distinct.count)), distinct.count.astype(int))
    for r in range(20):
        cw = np.bincount(row_of_vote[rng.integers(0, len(y), len(y))], minlength=len(distinct.count)) * distinct.weight
        expected = fit_rows(distinct, 1.0, None, cw=cw)[0]
        np.testing.assert_allclose(draws.b[r], expected, atol=1e-7)


def test_bootstrap_intervals_contain_the_estimate_and_match_the_sandwich_roughly():
    left, right, y, sides, _, k = random_votes(10, n=1500)
    fit = fit_style(left, right, y, sides, list("ABCDE"), interval="bootstrap", replicates=300, seed=1)
    sandwich = fit_style(left, right, y, sides, list("ABCDE"))
    assert np.all(fit.elo_low <= fit.elo) and np.all(fit.elo <= fit.elo_high)
    assert np.all(fit.beta_low <= fit.beta) and np.all(fit.beta <= fit.beta_high)
    width, expected = fit.beta_high - fit.beta_low, sandwich.beta_high - sandwich.beta_low
    np.testing.assert_allclose(width, expected, rtol=0.25)


def test_collapsing_identical_votes_keeps_the_fit():
    left, right, y, sides, design, k = random_votes(11, n=300)
    twice = [np.r_[v, v] for v in (left, right, y)]
    rows = style_rows(*twice, np.r_[design.z, design.z], k)
    distinct = collapse(rows)
    assert len(distinct.y) == len(np.unique(np.column_stack([left, right, y, design.z]), axis=0))
    np.testing.assert_allclose(fit_rows(distinct, 1.0)[0], fit_rows(rows, 1.0)[0], atol=1e-10)


def test_simulation_recovers_planted_effects_and_the_true_order():
    """30 seeds here (bench/bench_style.py --sections simulation runs 200): each β's 95% sandwich CI covers the
    planted value in ≥ 90% of seeds, and the controlled ranking is closer to the true order than plain BT."""
    covered, tau_controlled, tau_plain = np.zeros(2), [], []
    seeds = range(30)
    for seed in seeds:
        votes = style_votes(seed)
        names = [f"m{i}" for i in range(len(votes.theta))]
        fit = fit_style(votes.left, votes.right, votes.y, votes.sides, names, features=PLANTED_FEATURES)
        plain = fit_style(votes.left, votes.right, votes.y, votes.sides, names, features=())
        covered += (fit.beta_low <= votes.beta) & (votes.beta <= fit.beta_high)
        tau_controlled.append(kendalltau(fit.theta, votes.theta).statistic)
        tau_plain.append(kendalltau(plain.theta, votes.theta).statistic)
    assert np.all(covered >= 0.9 * len(seeds)), covered
    assert np.mean(tau_controlled) > np.mean(tau_plain) + 0.1, (np.mean(tau_controlled), np.mean(tau_plain))
