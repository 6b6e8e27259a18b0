"""Covariate-adjusted BT (core.ranking.covariates): docs/methods.md §2 (plain BT), §8 (style control), §9 (position)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from core.ranking.covariates import (
    ConvergenceError,
    CovariateInputError,
    NotIdentifiableError,
    SeparationError,
    bt_covariance,
    elo_standard_errors,
    fit_adjusted,
    style_features,
)
from tests.reference_values import (
    BASEBALL_HOME,
    BASEBALL_HOME_PI_SHARES,
    BASEBALL_HOME_THETA,
    BASEBALL_HOME_THETA_SE,
    BASEBALL_THETA,
    BASEBALL_THETA_SE,
    D1,
    D1_ELO,
    D1_MLE_PI,
    D4_BETA,
    D4_BETA_SE,
    D4_ELO,
    D4_FEATURE_MEAN_SD,
    D4_LEFT,
    D4_LEN_L,
    D4_LEN_R,
    D4_OUTCOME,
    D4_PI,
    D4_PLAIN_PI,
    D4_RIGHT,
    D4_THETA,
)

RTOL_REF = 1e-6  # docs/methods.md §0: point estimates with rtol 1e-6
RTOL_GLM = 1e-7  # statsmodels IRLS (tol 1e-8 on the deviance) vs our Newton (step < 1e-10)
RTOL_EXACT = 1e-9  # the same likelihood written two ways
ATOL_R4 = 5e-5  # R's summary() prints 4 decimals
RTOL_SANDWICH = 0.10  # sandwich vs observed SE under the true model: O(1/√n) sampling noise
RTOL_MONTE_CARLO = 0.15  # 300 replicates: the SD of an SD estimate is about 1/√600 ≈ 4 %

BASEBALL = Path(__file__).resolve().parents[2] / "shared" / "data" / "bradleyterry2_classic" / "baseball.csv"

# docs/methods.md §8, Reference D4, and §2, Reference D1, with their worked values: tests/reference_values.py.


@pytest.fixture
def d4():
    left = np.array([ord(c) - ord("A") for c in D4_LEFT])
    right = np.array([ord(c) - ord("A") for c in D4_RIGHT])
    y = np.array([{"L": 1.0, "R": 0.0, "T": 0.5}[c] for c in D4_OUTCOME])
    return left, right, y


def d1_cells():
    """D1 compressed: one row per (pair, outcome) with its count."""
    rows = [(i, j, s, n) for i, j, wi, wj, t in D1 for s, n in ((1.0, wi), (0.0, wj), (0.5, t)) if n > 0]
    left, right, y, count = (np.array(c) for c in zip(*rows))
    return left.astype(int), right.astype(int), y, count.astype(float)


def d1_votes():
    left, right, y, count = d1_cells()
    reps = count.astype(int)
    return np.repeat(left, reps), np.repeat(right, reps), np.repeat(y, reps)


def glm_design(left, right, k, position, z=None):
    x = np.zeros((left.size, k))
    x[np.arange(left.size), left] += 1
    x[np.arange(left.size), right] -= 1
    parts = [x[:, 1:]] + ([np.ones((left.size, 1))] if position else []) + ([z] if z is not None else [])
    return np.hstack(parts)


# --- docs/methods.md §8 reference D4 --------------------------------------------------------------------------


def test_style_features_match_reference_d4():
    # docs/methods.md §8, Reference D4: f mean −0.0447973, population sd 0.3132236.
    sf = style_features(D4_LEN_L, D4_LEN_R)
    assert_allclose([sf.mean, sf.sd], D4_FEATURE_MEAN_SD, rtol=RTOL_REF)
    assert sf.z.shape == (24, 1)
    assert_allclose([sf.z.mean(), sf.z.std()], [0, 1], atol=1e-12)


def test_style_features_constant_f_keeps_sd_one():
    sf = style_features([100, 100], [50, 50])
    assert sf.sd == 1.0 and np.all(sf.z == 0)


def test_style_only_fit_matches_reference_d4(d4):
    # docs/methods.md §8, Reference D4 (statsmodels GLM binomial, fractional y; scipy agrees).
    z = style_features(D4_LEN_L, D4_LEN_R).z
    res = fit_adjusted(*d4, 3, features=z, position=False, feature_names=["length"])
    assert_allclose(res.theta, D4_THETA, rtol=RTOL_REF)
    assert_allclose(res.beta, [D4_BETA], rtol=RTOL_REF)
    assert_allclose(res.beta_se, [D4_BETA_SE], rtol=RTOL_REF)
    assert_allclose(res.pi, D4_PI, rtol=RTOL_REF)
    assert_allclose(res.elo, D4_ELO, rtol=RTOL_REF)
    assert res.feature_names == ("length",) and res.n_obs == 24 and not res.position
    assert res.delta == 0.0 and res.delta_se == 0.0 and res.theta_se[0] == 0.0


def test_plain_bt_matches_reference_d4(d4):
    # docs/methods.md §8: plain BT on D4 (ties as half wins).
    res = fit_adjusted(*d4, 3, position=False)
    assert_allclose(res.pi, D4_PLAIN_PI, rtol=RTOL_REF)


@pytest.mark.parametrize("position, with_style", [(True, True), (True, False), (False, True)])
def test_agrees_with_statsmodels_glm(d4, position, with_style):
    # docs/methods.md §8/§9: the model is a binomial GLM with fractional y; SEs = inverse Fisher information.
    left, right, y = d4
    z = style_features(D4_LEN_L, D4_LEN_R).z if with_style else None
    res = fit_adjusted(left, right, y, 3, features=z, position=position)
    glm = sm.GLM(y, glm_design(left, right, 3, position, z), family=sm.families.Binomial()).fit(tol=1e-12)
    ours = np.r_[res.theta[1:], [res.delta] if position else [], res.beta]
    ours_se = np.r_[res.theta_se[1:], [res.delta_se] if position else [], res.beta_se]
    assert_allclose(ours, glm.params, rtol=RTOL_GLM)
    assert_allclose(ours_se, glm.bse, rtol=RTOL_GLM)


def test_counts_and_weights_agree_with_statsmodels_freq_weights(d4):
    left, right, y = d4
    rng = np.random.default_rng(0)
    count, weight = rng.integers(1, 4, y.size).astype(float), rng.uniform(0.5, 2.0, y.size)
    z = style_features(D4_LEN_L, D4_LEN_R).z
    res = fit_adjusted(left, right, y, 3, count=count, weight=weight, features=z)
    glm = sm.GLM(y, glm_design(left, right, 3, True, z), family=sm.families.Binomial(),
                 freq_weights=count * weight).fit(tol=1e-12)
    assert_allclose(np.r_[res.theta[1:], res.delta, res.beta], glm.params, rtol=RTOL_GLM)
    assert_allclose(np.r_[res.theta_se[1:], res.delta_se, res.beta_se], glm.bse, rtol=RTOL_GLM)
    assert res.n_obs == count.sum()


# --- docs/methods.md §9: reduction to plain BT, compression ---------------------------------------------------


def test_without_delta_and_beta_it_is_the_plain_bt_mle():
    # docs/methods.md §2, Reference D1: exact MLE π (scipy BFGS and statsmodels GLM agree).
    res = fit_adjusted(*d1_votes(), 4, position=False)
    assert_allclose(res.pi, D1_MLE_PI, rtol=RTOL_REF)
    assert_allclose(res.elo, D1_ELO, rtol=RTOL_REF)


@pytest.mark.parametrize("position", [False, True])
def test_compressed_cells_equal_expanded_rows(position):
    # docs/methods.md §9: compressed cells remain valid for position (no per-vote feature).
    left, right, y, count = d1_cells()
    # Swap sides of some cells so δ is identified (in D1 the first model is always on the left).
    flip = np.arange(left.size) % 3 == 0
    left, right, y = np.where(flip, right, left), np.where(flip, left, right), np.where(flip, 1 - y, y)
    reps = count.astype(int)
    cells = fit_adjusted(left, right, y, 4, count=count, position=position)
    votes = fit_adjusted(np.repeat(left, reps), np.repeat(right, reps), np.repeat(y, reps), 4, position=position)
    assert_allclose(cells.theta, votes.theta, rtol=RTOL_EXACT, atol=1e-12)
    assert_allclose(cells.covariance, votes.covariance, rtol=RTOL_EXACT, atol=1e-14)
    assert_allclose(cells.delta, votes.delta, rtol=RTOL_EXACT, atol=1e-12)
    assert_allclose(cells.log_likelihood, votes.log_likelihood, rtol=RTOL_EXACT)
    for kind in ("observed", "sandwich"):
        # Sandwich too: rows of a cell are identical votes (ties compressed only with ties).
        assert_allclose(bt_covariance(left, right, y, 4, count=count, kind=kind),
                        bt_covariance(np.repeat(left, reps), np.repeat(right, reps), np.repeat(y, reps), 4,
                                      kind=kind), rtol=RTOL_EXACT, atol=1e-14)


def test_rescaling_weights_keeps_the_mle_and_scales_the_information(d4):
    # docs/methods.md §2: the pure MLE is invariant to rescaling w; the information scales with it.
    base = fit_adjusted(*d4, 3)
    scaled = fit_adjusted(*d4, 3, weight=np.full(24, 3.0))
    assert_allclose(scaled.theta, base.theta, rtol=RTOL_EXACT, atol=1e-12)
    assert_allclose(scaled.covariance, base.covariance / 3, rtol=RTOL_EXACT, atol=1e-14)


# --- docs/methods.md §9 classic check: Agresti's baseball ------------------------------------------------------


def baseball_votes():
    if not BASEBALL.exists():
        pytest.skip(f"real dataset not available: {BASEBALL}")
    with BASEBALL.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    teams = sorted({r["home.team"] for r in rows} | {r["away.team"] for r in rows})
    idx = {t: n for n, t in enumerate(teams)}
    home = np.array([idx[r["home.team"]] for r in rows])
    away = np.array([idx[r["away.team"]] for r in rows])
    hw = np.array([float(r["home.wins"]) for r in rows])
    aw = np.array([float(r["away.wins"]) for r in rows])
    # Home team = the left slot; each pairing gives a row of home wins (y = 1) and one of away wins (y = 0).
    return teams, np.r_[home, home], np.r_[away, away], np.r_[np.ones(home.size), np.zeros(home.size)], np.r_[hw, aw]


def test_baseball_home_advantage_matches_bradleyterry2():
    # Agresti (2002) §10.6; BradleyTerry2 tests/baseball.Rout.save, `baseballModel2` (~ team + at.home):
    # at.home 0.3023 (SE 0.1309), PROVENANCE.md of the data folder quotes the same values.
    teams, left, right, y, count = baseball_votes()
    assert teams[0] == "Baltimore"  # BradleyTerry2's reference level, as our θ₀ = 0
    res = fit_adjusted(left, right, y, len(teams), count=count, position=True)
    assert_allclose(res.delta, BASEBALL_HOME[0], atol=ATOL_R4)
    assert_allclose(res.delta_se, BASEBALL_HOME[1], atol=ATOL_R4)
    # Boston, Cleveland, Detroit, Milwaukee, New York, Toronto.
    assert_allclose(res.theta[1:], BASEBALL_HOME_THETA, atol=ATOL_R4)
    assert_allclose(res.theta_se[1:], BASEBALL_HOME_THETA_SE, atol=ATOL_R4)
    # Agresti Table 10.11, column 5 (abilities normalised to sum 1, 3 decimals; test-baseball.R).
    assert_allclose(np.sort(res.pi / res.pi.sum()), BASEBALL_HOME_PI_SHARES,
                    atol=5e-4)


def test_baseball_without_home_advantage_matches_bradleyterry2():
    # BradleyTerry2 tests/baseball.Rout.save, `baseballModel1` (plain BT).
    teams, left, right, y, count = baseball_votes()
    res = fit_adjusted(left, right, y, len(teams), count=count, position=False)
    assert_allclose(res.theta[1:], BASEBALL_THETA, atol=ATOL_R4)
    assert_allclose(res.theta_se[1:], BASEBALL_THETA_SE, atol=ATOL_R4)


# --- covariance: observed vs sandwich, Elo SEs ------------------------------------------------------


def simulate_bt(rng, theta, n):
    k = theta.size
    left = rng.integers(0, k, n)
    right = (left + rng.integers(1, k, n)) % k  # uniform over the other models
    y = (rng.random(n) < 1 / (1 + np.exp(theta[right] - theta[left]))).astype(float)
    return left, right, y


def test_sandwich_agrees_with_observed_under_the_true_model():
    rng = np.random.default_rng(1)
    left, right, y = simulate_bt(rng, np.array([0.0, -0.4, 0.3, -1.0, 0.8]), 20_000)
    observed = bt_covariance(left, right, y, 5)
    sandwich = bt_covariance(left, right, y, 5, kind="sandwich")
    assert_allclose(np.sqrt(np.diag(sandwich)[1:]), np.sqrt(np.diag(observed)[1:]), rtol=RTOL_SANDWICH)
    theta = fit_adjusted(left, right, y, 5, position=False).theta
    for cov in (observed, sandwich):
        se = elo_standard_errors(theta, cov)
        assert np.all(np.isfinite(se)) and np.all(se > 0)


def test_observed_se_matches_monte_carlo_spread():
    # Against-theory check (STYLE: analytic SE ≈ simulation SD).
    rng = np.random.default_rng(2)
    truth = np.array([0.0, 0.5, -0.5, 1.0])
    fits = []
    for _ in range(300):
        fits.append(fit_adjusted(*simulate_bt(rng, truth, 1500), 4, position=False))
    spread = np.std([f.theta[1:] for f in fits], axis=0)
    assert_allclose(np.mean([f.theta_se[1:] for f in fits], axis=0), spread, rtol=RTOL_MONTE_CARLO)


def test_elo_standard_errors_equal_a_numerical_delta_method(d4):
    res = fit_adjusted(*d4, 3, position=False)

    def elo(theta):
        pi = np.exp(theta) / np.mean(np.exp(theta))
        return 400 * np.log10(pi) + 1500

    h = 1e-6
    jac = np.column_stack([(elo(res.theta + h * e) - elo(res.theta - h * e)) / (2 * h) for e in np.eye(3)])
    expected = np.sqrt(np.diag(jac @ res.covariance[:3, :3] @ jac.T))
    assert_allclose(res.elo_se, expected, rtol=1e-6)
    assert_allclose(elo_standard_errors(res.theta, res.covariance[:3, :3]), expected, rtol=1e-6)


def test_bt_covariance_at_the_mle_is_the_fit_covariance(d4):
    res = fit_adjusted(*d4, 3, position=False)
    assert_allclose(bt_covariance(*d4, 3), res.covariance[:3, :3], rtol=RTOL_EXACT)
    assert_allclose(bt_covariance(*d4, 3, theta=res.theta + 5.0), res.covariance[:3, :3], rtol=RTOL_EXACT)


# --- edge cases ---------------------------------------------------------------------------------------


def test_a_model_that_never_wins_is_rejected(d4):
    left, right, y = d4
    y = np.where(left == 2, 0.0, np.where(right == 2, 1.0, y))
    with pytest.raises(SeparationError, match="model 2 never wins"):
        fit_adjusted(left, right, y, 3, position=False)


def test_a_model_that_never_loses_is_rejected(d4):
    left, right, y = d4
    y = np.where(left == 0, 1.0, np.where(right == 0, 0.0, y))
    with pytest.raises(SeparationError, match="model 0 never loses"):
        fit_adjusted(left, right, y, 3, position=False)


def test_left_always_winning_separates_delta():
    # Each model wins and loses, but only ever from the left slot: δ → ∞ (quasi-complete separation).
    left, right, y = np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0]), np.array([1.0, 1.0, 1.0, 1.0])
    with pytest.raises(SeparationError, match="separated"):
        fit_adjusted(left, right, y, 2, position=True)
    assert_allclose(fit_adjusted(left, right, y, 2, position=False).theta, [0, 0], atol=1e-12)


def test_one_pair_only_has_closed_form():
    # 7 wins of model 0 out of 10: θ₁ = ln(3/7), SE = 1/√(n p (1 − p)).
    res = fit_adjusted([0, 0], [1, 1], [1.0, 0.0], 2, count=[7, 3], position=False)
    assert_allclose(res.theta, [0, np.log(3 / 7)], rtol=RTOL_EXACT)
    assert_allclose(res.theta_se[1], 1 / np.sqrt(10 * 0.7 * 0.3), rtol=RTOL_EXACT)


def test_all_ties_give_equal_strengths():
    left, right = np.array([0, 1, 1, 2, 2, 0]), np.array([1, 0, 2, 1, 0, 2])
    res = fit_adjusted(left, right, np.full(6, 0.5), 3, position=True)
    assert_allclose(res.pi, [1, 1, 1], rtol=RTOL_EXACT)
    assert abs(res.delta) < 1e-12 and np.all(np.isfinite(res.covariance))


def test_disconnected_graph_and_confounded_position_are_not_identifiable():
    with pytest.raises(NotIdentifiableError, match="rank deficient"):
        fit_adjusted([0, 1, 2, 3], [1, 0, 3, 2], [1.0, 1.0, 1.0, 1.0], 4, position=False)
    with pytest.raises(NotIdentifiableError, match="model 2 never appears"):
        fit_adjusted([0, 1], [1, 0], [1.0, 1.0], 3, position=False)
    with pytest.raises(NotIdentifiableError, match="position=False"):
        fit_adjusted([0, 0, 0], [1, 1, 1], [1.0, 0.0, 0.5], 2, position=True)


def test_non_convergence_raises_with_the_iteration_count(d4):
    with pytest.raises(ConvergenceError) as info:
        fit_adjusted(*d4, 3, max_iter=1)
    assert info.value.iterations == 1


@pytest.mark.parametrize("kwargs, match", [
    ({"left": [0, 3]}, "`left` must lie in 0..2"),
    ({"left": [0.5, 1]}, "`left` must hold integer"),
    ({"right": [1]}, "differ in length"),
    ({"right": [0, 0]}, "must differ in every row"),
    ({"y": [1.5, 0]}, "`y` must be 2 scores"),
    ({"count": [1, -1]}, "`count` must be 2 finite"),
    ({"weight": [np.nan, 1]}, "`weight` must be 2 finite"),
    ({"weight": [0, 0]}, "zero in every row"),
    ({"features": np.ones((3, 1))}, "`features` must be a finite"),
    ({"features": np.ones((2, 1)), "feature_names": ["a", "b"]}, "`feature_names`"),
    ({"n_models": 1}, "`n_models`"),
    ({"tol": -1}, "`tol`"),
    ({"max_iter": 2.5}, "`max_iter`"),
])
def test_bad_arguments_are_named(kwargs, match):
    args = {"left": [0, 1], "right": [1, 2], "y": [1.0, 0.0], "n_models": 3} | kwargs
    with pytest.raises(CovariateInputError, match=match):
        fit_adjusted(args.pop("left"), args.pop("right"), args.pop("y"), args.pop("n_models"), **args)


def test_bad_covariance_arguments_are_named(d4):
    with pytest.raises(CovariateInputError, match="`kind`"):
        bt_covariance(*d4, 3, kind="robust")
    with pytest.raises(CovariateInputError, match="`theta`"):
        bt_covariance(*d4, 3, theta=[0.0, 1.0])
    with pytest.raises(CovariateInputError, match="`covariance`"):
        elo_standard_errors([0.0, 1.0], np.eye(3))
    with pytest.raises(CovariateInputError, match="`len_left`"):
        style_features([1, 2], [1])
    with pytest.raises(CovariateInputError, match="`len_right`"):
        style_features([1, 2], [1, -2])


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 4), st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.sampled_from([0.0, 0.5, 1.0]),
                                             st.floats(-2, 2)), min_size=1, max_size=25), st.booleans(),
       st.integers(0, 1))
def test_the_reduced_rows_answer_rank_and_separation_like_all_rows(k, rows, position, n_features):
    """Keeping each (side, pair) group's extreme feature rows changes neither the rank nor the LP verdict."""
    from core.ranking.covariates import _cone_generators, _design
    from core.stats.newton import has_recession_direction

    rows = [(a % k, b % k, y, f) for a, b, y, f in rows if a % k != b % k]
    if not rows:
        return
    left, right = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
    y = np.array([r[2] for r in rows])
    z = np.array([[r[3]] for r in rows])[:, :n_features]
    x = _design(left, right, k, position, z)
    won, lost = y > 0, y < 1
    full = np.vstack([-x[won], x[lost]])
    pair = np.concatenate([left[won] * k + right[won], k * k + left[lost] * k + right[lost]])
    reduced = np.unique(full[_cone_generators(pair, full[:, -1] if n_features else None)], axis=0)
    assert len(reduced) <= len(np.unique(full, axis=0))
    assert np.linalg.matrix_rank(reduced) == np.linalg.matrix_rank(full)
    assert has_recession_direction(reduced) == has_recession_direction(np.unique(full, axis=0))
