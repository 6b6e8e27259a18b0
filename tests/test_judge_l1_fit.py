"""AlpacaEval's per-model fit of the length-controlled GLM (docs/methods.md §12): the fold rule, the exact L1
solver, the choice of C, and equality with scikit-learn's LogisticRegressionCV as AlpacaEval calls it."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from core.judge.difficulty import preference_grid, row_weights, tanh_length_gap
from core.judge.l1_fit import (
    PENALTY_GRID,
    choose_penalty,
    fit_l1,
    fold_of_rows,
    greedy_group_folds,
    held_out_score,
)
from core.judge.length_control import cross_validation_folds, held_at_zero, length_controlled
from tests.test_judge_length_control import alpaca_prefs, synthetic

COEF_ATOL = 1e-6  # our proximal Newton vs a smooth bound-constrained reformulation solved by scipy
SKLEARN_ATOL = 1e-6  # vs liblinear run to tol 1e-10 (at its default 1e-4 liblinear itself is off by ~1e-2)


def model_arrays(prefs, gamma_seed=0):
    grid = preference_grid(prefs)
    weights = row_weights(grid, None)
    tanh_gap, flat = tanh_length_gap(grid, weights)
    gamma = np.random.default_rng(gamma_seed).normal(0, 1, len(grid.prompts))
    return grid, weights, tanh_gap, flat, gamma


def design_of(tanh_gap, gamma):
    return np.stack([tanh_gap, np.broadcast_to(gamma, tanh_gap.shape), np.ones_like(tanh_gap)], axis=-1)


# --- folds -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_rows", [5, 6, 12, 644, 803, 805])
def test_folds_follow_groupkfolds_greedy_rule(n_rows):
    folds = fold_of_rows(n_rows)
    np.testing.assert_array_equal(folds, greedy_group_folds(np.full(n_rows, 2)))
    np.testing.assert_array_equal(folds, (n_rows - 1 - np.arange(n_rows)) % 5)
    assert np.bincount(folds).max() - np.bincount(folds).min() <= 1


def test_greedy_rule_puts_large_groups_first():
    # sizes 5, 1, 1, 1, 4, 2 into 2 folds: 5 → fold 0, 4 → fold 1, 2 → fold 1, then the ones fill fold 1, 0 …
    folds = greedy_group_folds(np.array([5, 1, 1, 1, 4, 2]), n_splits=2)
    loads = np.bincount(folds, weights=[5, 1, 1, 1, 4, 2])
    assert folds[0] != folds[4] and abs(loads[0] - loads[1]) <= 1


def test_folds_match_scikit_learns_groupkfold_on_duplicated_rows():
    model_selection = pytest.importorskip("sklearn.model_selection")
    n = 805
    groups = np.r_[np.arange(n), np.arange(n)]  # AlpacaEval: each row twice (label 1 and label 0), one group
    ours = fold_of_rows(n)
    for k, (_, test) in enumerate(model_selection.GroupKFold(5).split(np.zeros(2 * n), groups=groups)):
        assert set(np.flatnonzero(ours == k)) == set(groups[test])


def test_folds_follow_the_files_row_order():
    prefs = synthetic(n_models=2, n_prompts=40, seed=1)
    shuffled = prefs.sample(frac=1.0, random_state=3).reset_index(drop=True)
    grid = preference_grid(shuffled)
    folds = cross_validation_folds(grid)
    for m, model in enumerate(grid.models):
        file_order = shuffled.loc[shuffled["model"] == model, "query_id"].tolist()
        by_prompt = pd.Series(folds[m], index=grid.prompts)
        np.testing.assert_array_equal(by_prompt[file_order].to_numpy(), fold_of_rows(len(file_order)))


# --- the L1 solver ------------------------------------------------------------------------------------------------


def brute_force_l1(design, p, weights, c):
    """min ‖w‖₁ + C Σ w (log(1 + e^η) − p η) with w = u − v, u, v ≥ 0: smooth, solved by L-BFGS-B."""
    def objective(z):
        u, v = z[:3], z[3:]
        eta = design @ (u - v)
        grad_w = c * design.T @ (weights * (1 / (1 + np.exp(-eta)) - p))
        value = z.sum() + c * np.sum(weights * (np.logaddexp(0, eta) - p * eta))
        return value, np.concatenate([1 + grad_w, 1 - grad_w])

    best = minimize(objective, np.zeros(6), jac=True, method="L-BFGS-B", bounds=[(0, None)] * 6,
                    options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10_000})
    return best.x[:3] - best.x[3:]


@pytest.mark.parametrize("c", [1e-3, 0.05, 0.3593813663804626, 2.782559402207126, 1e4])
def test_l1_solver_equals_a_brute_force_minimisation(c):
    grid, weights, tanh_gap, flat, gamma = model_arrays(synthetic(n_models=4, n_prompts=90, seed=4))
    weights = weights * np.random.default_rng(1).integers(0, 3, weights.shape)  # bootstrap-like multiplicities
    design = design_of(tanh_gap, gamma)
    ours = fit_l1(tanh_gap, gamma, grid.preference, weights, np.full(len(grid.models), c),
                  held_at_zero(flat, gamma, weights))
    for i in range(len(grid.models)):
        np.testing.assert_allclose(ours[i], brute_force_l1(design[i], grid.preference[i], weights[i], c),
                                   atol=COEF_ATOL * max(1.0, c))
    if c == 1e-3:  # a tiny C: the penalty wins and every coefficient is exactly 0
        assert np.all(ours == 0.0)


def test_a_copy_of_the_baseline_ties_every_c_and_gets_the_smallest():
    prefs = synthetic(n_models=2, n_prompts=60, seed=2)
    twin = prefs[prefs["model"] == "base"].assign(model="twin")
    grid, weights, tanh_gap, flat, _ = model_arrays(pd.concat([prefs, twin], ignore_index=True))
    gamma = np.random.default_rng(0).normal(0, 1, len(grid.prompts))
    coef, chosen = choose_penalty(tanh_gap, gamma, grid.preference, weights, cross_validation_folds(grid),
                                  held_at_zero(flat, gamma, weights))
    twin_row = grid.models.index("twin")
    assert chosen[twin_row] == PENALTY_GRID[0]  # p = ½ everywhere: w = 0 at every C, equal scores, first wins
    assert np.all(coef[twin_row] == 0.0)


def test_chosen_c_maximises_the_summed_held_out_score():
    grid, weights, tanh_gap, flat, gamma = model_arrays(synthetic(n_models=3, n_prompts=80, seed=9))
    fixed = held_at_zero(flat, gamma, weights)
    folds = cross_validation_folds(grid)
    _, chosen = choose_penalty(tanh_gap, gamma, grid.preference, weights, folds, fixed)
    for m in range(len(grid.models)):
        totals = []
        for c in PENALTY_GRID:
            score = 0.0
            for k in range(5):
                train = weights[m:m + 1] * (folds[m:m + 1] != k)
                w = fit_l1(tanh_gap[m:m + 1], gamma, grid.preference[m:m + 1], train, np.array([c]), fixed[m:m + 1])
                score += held_out_score(w, tanh_gap[m:m + 1], gamma, grid.preference[m:m + 1],
                                        (folds[m:m + 1] == k).astype(float))[0]
            totals.append(score)
        assert chosen[m] == PENALTY_GRID[int(np.argmax(totals))]


# --- equality with scikit-learn, as AlpacaEval calls it -----------------------------------------------------------


def sklearn_alpaca_fit(x, p, tol):
    """AlpacaEval's fit_LogisticRegressionCV with is_ytrue_proba=True, written with scikit-learn: duplicated rows
    weighted p and 1 − p, GroupKFold(5) by row, liblinear L1 without intercept, Cs=10, logloss_continuous."""
    linear_model = pytest.importorskip("sklearn.linear_model")
    model_selection = pytest.importorskip("sklearn.model_selection")
    n = len(p)
    xd, yd = np.vstack([x, x]), np.r_[np.ones(n), np.zeros(n)]
    sw, groups = np.r_[p, 1 - p], np.r_[np.arange(n), np.arange(n)]

    def model(c):
        return linear_model.LogisticRegression(C=c, l1_ratio=1.0, solver="liblinear", fit_intercept=False,
                                               random_state=123, tol=tol)

    scores = np.zeros(len(PENALTY_GRID))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for train, test in model_selection.GroupKFold(5).split(xd, yd, groups):
            for i, c in enumerate(PENALTY_GRID):
                fitted = model(c).fit(xd[train], yd[train], sample_weight=sw[train])
                pred = np.clip(fitted.predict_proba(xd[test])[:, 1], 1e-15, 1 - 1e-15)
                y_true = np.where(yd[test] == 1, sw[test], 1 - sw[test])
                scores[i] += np.mean(y_true * np.log(pred) + (1 - y_true) * np.log(1 - pred))
        best = int(np.argmax(scores))
        return model(PENALTY_GRID[best]).fit(xd, yd, sample_weight=sw).coef_[0], PENALTY_GRID[best]


def check_against_sklearn(grid, weights, tanh_gap, flat, gamma, models):
    coef, chosen = choose_penalty(tanh_gap, gamma, grid.preference, weights, cross_validation_folds(grid),
                                  held_at_zero(flat, gamma, weights))
    for model in models:
        m = grid.models.index(model)
        cells = np.flatnonzero(grid.present[m] > 0)
        cells = cells[np.argsort(grid.position[m, cells])]
        x = np.column_stack([tanh_gap[m, cells], gamma[cells], np.ones(len(cells))])
        expected, c = sklearn_alpaca_fit(x, grid.preference[m, cells], tol=1e-10)
        assert chosen[m] == c
        np.testing.assert_allclose(coef[m], expected, atol=SKLEARN_ATOL)


def test_equals_scikit_learns_logisticregressioncv_on_synthetic_models():
    pytest.importorskip("sklearn")
    grid, weights, tanh_gap, flat, gamma = model_arrays(synthetic(n_models=3, n_prompts=100, seed=12))
    check_against_sklearn(grid, weights, tanh_gap, flat, gamma, grid.models)


def test_equals_scikit_learns_logisticregressioncv_on_alpacaeval_models():
    pytest.importorskip("sklearn")
    prefs = alpaca_prefs()
    result = length_controlled(prefs)
    grid = preference_grid(prefs)
    weights = row_weights(grid, None)
    tanh_gap, flat = tanh_length_gap(grid, weights)
    gamma = result.difficulty.reindex(grid.prompts).to_numpy()
    check_against_sklearn(grid, weights, tanh_gap, flat, gamma, ["gpt4_gamed", "claude-2", "jina-chat"])
