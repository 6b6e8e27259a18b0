"""The pair-sorted passes of the style-controlled fit (core.ranking.style_pairs, used by style_model and
style_bootstrap) against a straightforward reference kept here: a dense design matrix, one row per vote,
the objective, gradient, Hessian, sandwich meat and win graph written as the formulas read. Random data
with ties, weights, duplicate rows, several features and the identifiability prior; Hypothesis varies the
shapes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit

from core.ranking.bradley_terry import NONIDENTIFIABLE_PRIOR, strong_components
from core.ranking.style_model import fit_rows, gradient, objective, sandwich, style_rows, win_graph

RTOL = 1e-9


# ---------------------------------------------------------------------------------------------------
# Reference: dense design x = (e_left − e_right, z), sums over the rows as written.

def dense_design(rows):
    x = np.zeros((len(rows.y), rows.n_models))
    x[np.arange(len(rows.y)), rows.left] += 1.0
    x[np.arange(len(rows.y)), rows.right] -= 1.0
    return np.hstack([x, rows.z])


def reference_objective(rows, b, penalty, prior, cw=None):
    cw = rows.cw if cw is None else cw
    k, x = rows.n_models, dense_design(rows)
    theta, beta = b[:k], b[k:]
    eta = x @ b
    mu = expit(eta)
    value = np.sum(cw * (rows.y * eta - np.logaddexp(0.0, eta))) - 0.5 * penalty * beta @ beta
    grad = x.T @ (cw * (rows.y - mu))
    grad[k:] -= penalty * beta
    hess = -(x * (cw * mu * (1 - mu))[:, None]).T @ x
    hess[k:, k:] -= penalty * np.eye(len(beta))
    if prior > 0:
        sig = expit(theta)
        value += prior * np.sum(np.log(sig) + np.log(1 - sig))
        grad[:k] += prior * (1 - 2 * sig)
        hess[np.diag_indices(k)] -= 2 * prior * sig * (1 - sig)
    return value, grad, hess


def reference_sandwich(rows, b, penalty, prior):
    k, x = rows.n_models, dense_design(rows)
    size = x.shape[1]
    mu = expit(x @ b)
    meat = (x * (rows.count * rows.weight ** 2 * (rows.y - mu) ** 2)[:, None]).T @ x
    free = np.arange(size) if prior > 0 else np.arange(1, size)
    h_inv = np.linalg.inv(-reference_objective(rows, b, penalty, prior)[2][np.ix_(free, free)])
    cov = np.zeros((size, size))
    cov[np.ix_(free, free)] = h_inv @ meat[np.ix_(free, free)] @ h_inv
    centre = np.eye(size)
    centre[:k, :k] -= 1.0 / k
    return centre @ cov @ centre.T


def reference_win_graph(rows, cw):
    w = np.zeros((rows.n_models, rows.n_models))
    for i, j, y, c in zip(rows.left, rows.right, rows.y, cw):
        w[i, j] += c * y
        w[j, i] += c * (1 - y)
    return w


def reference_newton(rows, penalty, prior):
    """Plain Newton on the reference objective (θ₀ fixed when there is no prior), to 1e-12."""
    k, size = rows.n_models, rows.n_models + rows.z.shape[1]
    free = np.arange(size) if prior > 0 else np.arange(1, size)
    b = np.zeros(size)
    for _ in range(200):
        _, grad, hess = reference_objective(rows, b, penalty, prior)
        step = np.linalg.solve(-hess[np.ix_(free, free)], grad[free])
        b[free] += step * min(1.0, 1.0 / np.abs(step).max())
        if np.abs(step).max() < 1e-12:
            break
    b[:k] -= b[:k].mean()
    return b


def messy_rows(seed, n=300, k=6, p=3, duplicates=60):
    """Random votes with both tie kinds' ½, weights, repeated rows, and counts > 1."""
    rng = np.random.default_rng(seed)
    left = np.r_[np.arange(k), rng.integers(0, k, n)]  # a cycle first: every model has votes
    right = np.r_[np.roll(np.arange(k), -1), (left[k:] + rng.integers(1, k, n)) % k]
    n += k
    z = rng.normal(size=(n, p))
    y = rng.choice([0.0, 1.0, 0.5], n, p=[0.4, 0.4, 0.2])
    again = rng.integers(0, n, duplicates)
    left, right, y, z = np.r_[left, left[again]], np.r_[right, right[again]], np.r_[y, y[again]], np.r_[z, z[again]]
    count = rng.integers(1, 4, len(y)).astype(float)
    weight = rng.uniform(0.1, 3.0, len(y))
    return style_rows(left, right, y, z, k, count=count, weight=weight)


def assert_matches_reference(rows, b, penalty, prior, cw=None):
    value, grad, hess = objective(rows, b, penalty, prior, cw)
    ref_value, ref_grad, ref_hess = reference_objective(rows, b, penalty, prior, cw)
    scale = np.abs(ref_hess).max()
    np.testing.assert_allclose(value, ref_value, rtol=RTOL)
    np.testing.assert_allclose(grad, ref_grad, rtol=RTOL, atol=RTOL * scale)
    np.testing.assert_allclose(hess, ref_hess, rtol=RTOL, atol=RTOL * scale)
    np.testing.assert_allclose(gradient(rows, b, penalty, prior, rows.cw if cw is None else cw), ref_grad,
                               rtol=RTOL, atol=RTOL * scale)


@pytest.mark.parametrize("seed, penalty, prior", [(0, 1.0, 0.0), (1, 0.0, 0.0), (2, 5.0, NONIDENTIFIABLE_PRIOR)])
def test_objective_gradient_hessian_and_sandwich_equal_the_dense_reference(seed, penalty, prior):
    rows = messy_rows(seed)
    b = np.random.default_rng(seed + 50).normal(0, 0.7, rows.n_models + rows.z.shape[1])
    assert_matches_reference(rows, b, penalty, prior)
    cw = np.random.default_rng(seed + 60).poisson(1.0, len(rows.y)) * rows.weight  # replicate weights
    assert_matches_reference(rows, b, penalty, prior, cw)
    np.testing.assert_allclose(win_graph(rows, cw), reference_win_graph(rows, cw), rtol=RTOL, atol=1e-12)
    expected = reference_sandwich(rows, b, penalty, prior)
    np.testing.assert_allclose(sandwich(rows, b, penalty, prior), expected, rtol=1e-8,
                               atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize("seed", [3, 4])
def test_fit_equals_reference_newton(seed):
    rows = messy_rows(seed)
    b, prior, _ = fit_rows(rows, 1.0)
    assert prior == 0.0
    np.testing.assert_allclose(b, reference_newton(rows, 1.0, 0.0), atol=1e-9)


def test_fit_with_the_prior_equals_reference_newton():
    rows = messy_rows(5, k=4)
    y = np.where(rows.left == 0, 1.0, np.where(rows.right == 0, 0.0, rows.y))  # model 0 never loses
    rows = style_rows(rows.left, rows.right, y, rows.z, rows.n_models, count=rows.count, weight=rows.weight)
    b, prior, _ = fit_rows(rows, 1.0)
    assert prior == NONIDENTIFIABLE_PRIOR and strong_components(reference_win_graph(rows, rows.cw)) > 1
    np.testing.assert_allclose(b, reference_newton(rows, 1.0, prior), atol=1e-9)


def test_extreme_linear_predictors_stay_finite():
    rows = messy_rows(6, n=40, duplicates=0)
    b = np.r_[np.linspace(-400, 400, rows.n_models), 300.0, -300.0, 0.0]
    value, grad, hess = objective(rows, b, 1.0, 0.0)
    assert np.isfinite(value) and np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))
    # softplus(η) for |η| in the hundreds is exact as max(η, 0): the value is a plain sum
    np.testing.assert_allclose(value, reference_objective(rows, b, 1.0, 0.0)[0], rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(1, 40), k=st.integers(2, 5), p=st.integers(0, 3),
       duplicates=st.integers(0, 20), penalty=st.sampled_from([0.0, 1.0, 3.5]), prior=st.sampled_from([0.0, 0.5]))
def test_property_any_shape_equals_the_reference(seed, n, k, p, duplicates, penalty, prior):
    rows = messy_rows(seed, n=n, k=k, p=p, duplicates=duplicates)
    b = np.random.default_rng(seed).normal(0, 1.0, k + p)
    assert_matches_reference(rows, b, penalty, prior)
    cw = np.random.default_rng(seed + 1).poisson(1.0, len(rows.y)) * rows.weight
    np.testing.assert_allclose(win_graph(rows, cw), reference_win_graph(rows, cw), rtol=RTOL, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(2, 40))
def test_property_row_order_does_not_matter(seed, n):
    rows = messy_rows(seed, n=n, duplicates=5)
    shuffle = np.random.default_rng(seed).permutation(len(rows.y))
    shuffled = style_rows(rows.left[shuffle], rows.right[shuffle], rows.y[shuffle], rows.z[shuffle], rows.n_models,
                          count=rows.count[shuffle], weight=rows.weight[shuffle])
    b = np.random.default_rng(seed + 2).normal(0, 1.0, rows.n_models + rows.z.shape[1])
    for got, expected in zip(objective(shuffled, b, 1.0, 0.0), objective(rows, b, 1.0, 0.0)):
        np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-11)
