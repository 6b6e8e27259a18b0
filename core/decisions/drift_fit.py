"""The drift kernel on arrays (docs/methods.md §15): Bradley–Terry strengths per (model, period), their Fisher
covariance, ratings anchored to the overall fit, and each model's test of constancy over the periods.

Everything is vectorised over periods (one batched Newton solve per iteration) and over models (the tests), so
the cost does not grow with the number of votes once they are cells (period, model i, model j).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2, norm

from core.stats.significance import holm

RIDGE = 0.01  # a weak N(0, 100) prior per (model, period) strength: finite when a model wins or loses everything
NEWTON_TOL = 1e-9
NEWTON_MAX_ITER = 100
MAX_STEP = 5.0  # cap |Δθ| per step so a cold start cannot overshoot
MAX_ANCHOR_ROUNDS = 10


@dataclass(frozen=True)
class PeriodCells:
    """Votes summed per (period, i, j) with i < j: ``wins`` of i (ties half, weighted), ``total`` weight."""

    period: np.ndarray
    i: np.ndarray
    j: np.ndarray
    wins: np.ndarray
    total: np.ndarray
    n_periods: int
    n_models: int
    counts: np.ndarray  # (n_periods, n_models): votes (unweighted) of each model in each period


def period_cells(period: np.ndarray, left: np.ndarray, right: np.ndarray, score: np.ndarray, weight: np.ndarray,
                 n_periods: int, n_models: int) -> PeriodCells:
    """Compress votes (period code, left and right model codes, the left model's score 1/½/0, weight)."""
    period, left, right = (np.asarray(x, dtype=np.int64) for x in (period, left, right))
    low, high = np.minimum(left, right), np.maximum(left, right)
    score_low = np.where(left == low, score, 1.0 - score)
    key = (period * n_models + low) * n_models + high
    unique, inverse = np.unique(key, return_inverse=True)
    wins = np.bincount(inverse, weights=weight * score_low, minlength=len(unique))
    total = np.bincount(inverse, weights=weight, minlength=len(unique))
    counts = (np.bincount(period * n_models + left, minlength=n_periods * n_models)
              + np.bincount(period * n_models + right, minlength=n_periods * n_models))
    return PeriodCells(unique // (n_models * n_models), unique // n_models % n_models, unique % n_models,
                       wins, total, n_periods, n_models, counts.reshape(n_periods, n_models))


def fit_periods(cells: PeriodCells) -> tuple[np.ndarray, np.ndarray]:
    """(θ, Σ): strengths (n_periods, K), each period fitted on its own votes with the weak prior, and each
    period's covariance (n_periods, K, K), the inverse of its Fisher information (prior included)."""
    p_count, k = cells.n_periods, cells.n_models
    theta = np.zeros((p_count, k))
    flat_i, flat_j = cells.period * k + cells.i, cells.period * k + cells.j
    diag_i = cells.period * k * k + cells.i * (k + 1)
    diag_j = cells.period * k * k + cells.j * (k + 1)
    off_ij = cells.period * k * k + cells.i * k + cells.j
    off_ji = cells.period * k * k + cells.j * k + cells.i
    flat_index = np.concatenate([diag_i, diag_j, off_ij, off_ji])
    ridge = RIDGE * np.eye(k)
    for _ in range(NEWTON_MAX_ITER):
        information, gradient = _information(theta, cells, flat_i, flat_j, flat_index, ridge)
        step = np.linalg.solve(information, gradient[..., None])[..., 0]
        step = np.clip(step, -MAX_STEP, MAX_STEP)
        theta = theta + step
        if np.max(np.abs(step)) < NEWTON_TOL:
            break
    information, _ = _information(theta, cells, flat_i, flat_j, flat_index, ridge)
    return theta, np.linalg.inv(information)


def _information(theta, cells, flat_i, flat_j, flat_index, ridge):
    p_count, k = cells.n_periods, cells.n_models
    flat = theta.ravel()
    prob = 1.0 / (1.0 + np.exp(flat[flat_j] - flat[flat_i]))
    residual = cells.wins - cells.total * prob
    gradient = (np.bincount(flat_i, weights=residual, minlength=p_count * k)
                - np.bincount(flat_j, weights=residual, minlength=p_count * k)).reshape(p_count, k)
    info = cells.total * prob * (1.0 - prob)
    values = np.concatenate([info, info, -info, -info])
    information = np.bincount(flat_index, weights=values, minlength=p_count * k * k).reshape(p_count, k, k)
    return information + ridge, gradient - RIDGE * theta


@dataclass(frozen=True)
class DriftArrays:
    """The kernel's answer. Ratings in θ units (log-odds), anchored: NaN where a model is not rated."""

    rating: np.ndarray  # (P, K)
    se: np.ndarray  # (P, K)
    rated: np.ndarray  # (P, K) bool: at least min_votes votes
    counts: np.ndarray  # (P, K) votes of each model in each period
    statistic: np.ndarray  # (K,) NaN where untested
    df: np.ndarray  # (K,) int, 0 where untested
    p_value: np.ndarray  # (K,) NaN where untested
    p_adjusted: np.ndarray  # (K,)
    changed: np.ndarray  # (K,) bool
    anchor: np.ndarray  # (K,) bool: models the final anchoring uses
    overall: np.ndarray  # (K,) pooled strengths, mean 0
    rounds: int


def drift_arrays(cells: PeriodCells, alpha: float, min_votes: int) -> DriftArrays:
    """Per-period fits, anchored ratings and Holm-adjusted homogeneity tests, the anchor set purified of the
    models found to change (docs/methods.md §15)."""
    theta, cov = fit_periods(cells)
    pooled = PeriodCells(np.zeros_like(cells.period), cells.i, cells.j, cells.wins, cells.total, 1,
                         cells.n_models, cells.counts.sum(axis=0, keepdims=True))
    overall = fit_periods(pooled)[0][0]
    overall = overall - overall.mean()
    rated = cells.counts >= min_votes
    anchor, rounds = np.ones(cells.n_models, dtype=bool), 0
    while True:  # until the models found to change are the ones left out of the anchor (a few rounds at most)
        rounds += 1
        tests = _tests(theta, cov, overall, rated, anchor, alpha)
        new_anchor = ~tests[-1]
        if not new_anchor.any():  # every model changes: keep anchoring to them all
            new_anchor = np.ones_like(anchor)
        if np.array_equal(new_anchor, anchor) or rounds == MAX_ANCHOR_ROUNDS:
            break
        anchor = new_anchor
    rating, se = _anchored(theta, cov, overall, rated, anchor)
    return DriftArrays(rating, se, rated, cells.counts, *tests, anchor, overall, rounds)


def _anchor_mask(rated: np.ndarray, anchor: np.ndarray) -> np.ndarray:
    """(P, K): the models anchoring each period: anchor models rated in it (all rated ones if none is)."""
    mask = rated & anchor[None, :]
    empty = ~mask.any(axis=1)
    mask[empty] = rated[empty]
    return mask


def _anchored(theta, cov, overall, rated, anchor) -> tuple[np.ndarray, np.ndarray]:
    """Ratings θ[p, m] − mean over the period's anchor models of (θ[p, k] − overall[k]), and their SEs."""
    mask = _anchor_mask(rated, anchor).astype(np.float64)
    size = np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
    weights = mask / size
    offset = ((theta - overall[None, :]) * weights).sum(axis=1, keepdims=True)
    sigma_w = np.einsum("pkl,pl->pk", cov, weights)
    diagonal = np.einsum("pkk->pk", cov)
    variance = diagonal - 2.0 * sigma_w + (weights * sigma_w).sum(axis=1, keepdims=True)
    rating = np.where(rated, theta - offset, np.nan)
    return rating, np.where(rated, np.sqrt(np.maximum(variance, 0.0)), np.nan)


def _tests(theta, cov, overall, rated, anchor, alpha):
    """Each model's Wald test that its strength relative to the period's other anchor models is the same in
    every period where it is rated: Q = Σ_p (d_p − d̄)² / v_p, χ² with (periods − 1) df; Holm over models."""
    mask = _anchor_mask(rated, anchor).astype(np.float64)
    own = mask.astype(bool)  # (P, K): is the model itself part of its period's anchor
    size = mask.sum(axis=1, keepdims=True) - own  # anchor models other than m
    centred = theta - overall[None, :]
    total = (centred * mask).sum(axis=1, keepdims=True)
    offset = (total - np.where(own, centred, 0.0)) / np.maximum(size, 1.0)
    contrast = theta - offset
    sigma_u = np.einsum("pkl,pl->pk", cov, mask)  # Σ u
    quad_u = (mask * sigma_u).sum(axis=1, keepdims=True)  # uᵀ Σ u
    diagonal = np.einsum("pkk->pk", cov)
    own_f = own.astype(np.float64)
    sigma_w = (sigma_u - own_f * diagonal) / np.maximum(size, 1.0)  # (Σ w)_m, w = (u − e_m[m in anchor]) / size
    quad_w = (quad_u - 2.0 * own_f * sigma_u + own_f * diagonal) / np.maximum(size, 1.0) ** 2
    variance = np.maximum(diagonal - 2.0 * sigma_w + quad_w, 1e-300)
    usable = rated & (size > 0)
    precision = np.where(usable, 1.0 / variance, 0.0)
    df = usable.sum(axis=0) - 1
    tested = df >= 1
    mean = (precision * contrast).sum(axis=0) / np.where(precision.sum(axis=0) > 0, precision.sum(axis=0), 1.0)
    statistic = np.where(tested, (precision * (contrast - mean[None, :]) ** 2).sum(axis=0), np.nan)
    p_value = np.full(theta.shape[1], np.nan)
    p_value[tested] = chi2.sf(statistic[tested], df[tested])
    p_adjusted = np.full(theta.shape[1], np.nan)
    if tested.any():
        p_adjusted[tested] = holm(p_value[tested])
    changed = tested & (np.nan_to_num(p_adjusted, nan=1.0) < alpha)
    return statistic, np.maximum(df, 0), p_value, p_adjusted, changed


def z_value(alpha: float) -> float:
    return float(norm.ppf(1.0 - alpha / 2.0))
