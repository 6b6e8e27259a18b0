"""The drift fit on arrays (docs/methods.md §15): votes as dense per-period tables (period, model i, model j),
Bradley–Terry strengths per (model, period) with a weak prior, their Fisher information and log-likelihood.

Vectorised over periods (one batched Newton solve per iteration) and, for the tests, over models too: every
function takes strengths of shape (..., P, K) against the (P, K, K) tables, so the cost does not grow with the
number of votes once they are tabled.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RIDGE = 0.01  # a weak N(0, 100) prior per (model, period) strength: finite when a model wins or loses everything
NEWTON_TOL = 1e-9
NEWTON_MAX_ITER = 100
MAX_STEP = 5.0  # cap |Δθ| per step so a cold start cannot overshoot


@dataclass(frozen=True)
class PeriodCells:
    """Votes summed per period: ``wins[p, i, j]`` the score of i against j (ties half, weighted), ``total[p, i, j]``
    the weight of their votes (symmetric), ``counts[p, m]`` the votes (unweighted) of model m in period p."""

    wins: np.ndarray
    total: np.ndarray
    counts: np.ndarray

    @property
    def n_periods(self) -> int:
        return self.wins.shape[0]

    @property
    def n_models(self) -> int:
        return self.wins.shape[1]


def period_cells(period: np.ndarray, left: np.ndarray, right: np.ndarray, score: np.ndarray, weight: np.ndarray,
                 n_periods: int, n_models: int) -> PeriodCells:
    """Table votes (period code, left and right model codes, the left model's score 1/½/0, weight)."""
    period, left, right = (np.asarray(x, dtype=np.int64) for x in (period, left, right))
    size = n_periods * n_models * n_models
    forward = (period * n_models + left) * n_models + right
    backward = (period * n_models + right) * n_models + left
    wins = (np.bincount(forward, weights=weight * score, minlength=size)
            + np.bincount(backward, weights=weight * (1.0 - score), minlength=size))
    total = np.bincount(forward, weights=weight, minlength=size) + np.bincount(backward, weights=weight,
                                                                                minlength=size)
    counts = (np.bincount(period * n_models + left, minlength=n_periods * n_models)
              + np.bincount(period * n_models + right, minlength=n_periods * n_models))
    shape = (n_periods, n_models, n_models)
    return PeriodCells(wins.reshape(shape), total.reshape(shape), counts.reshape(n_periods, n_models))


def pooled(cells: PeriodCells) -> PeriodCells:
    """All periods as one."""
    return PeriodCells(cells.wins.sum(0, keepdims=True), cells.total.sum(0, keepdims=True),
                       cells.counts.sum(0, keepdims=True))


def fit_periods(cells: PeriodCells) -> tuple[np.ndarray, np.ndarray]:
    """(θ, Σ): strengths (P, K), each period fitted on its own votes with the weak prior, and each period's
    covariance (P, K, K), the inverse of its Fisher information (prior included)."""
    theta = np.zeros((cells.n_periods, cells.n_models))
    for _ in range(NEWTON_MAX_ITER):
        information, gradient = information_and_gradient(theta, cells)
        step = np.clip(np.linalg.solve(information, gradient[..., None])[..., 0], -MAX_STEP, MAX_STEP)
        theta = theta + step
        if np.max(np.abs(step)) < NEWTON_TOL:
            break
    information, _ = information_and_gradient(theta, cells)
    return theta, np.linalg.inv(information)


def _win_probability(theta: np.ndarray) -> np.ndarray:
    """σ(θ_i − θ_j) for every ordered pair: (..., P, K, K)."""
    return 1.0 / (1.0 + np.exp(theta[..., None, :] - theta[..., :, None]))


def information_and_gradient(theta: np.ndarray, cells: PeriodCells) -> tuple[np.ndarray, np.ndarray]:
    """The penalised log-likelihood's negative Hessian (..., P, K, K) and gradient (..., P, K) at θ (..., P, K)."""
    prob = _win_probability(theta)
    gradient = (cells.wins - cells.total * prob).sum(-1) - RIDGE * theta
    weight = cells.total * prob * (1.0 - prob)
    information = -weight
    diagonal = np.einsum("...kk->...k", information)
    diagonal += weight.sum(-1) + RIDGE  # a writable view: the Laplacian's diagonal, plus the prior
    return information, gradient


def log_likelihood(theta: np.ndarray, cells: PeriodCells) -> np.ndarray:
    """The penalised log-likelihood of each period (..., P) at θ (..., P, K)."""
    diff = theta[..., :, None] - theta[..., None, :]
    return -(cells.wins * np.logaddexp(0.0, -diff)).sum((-1, -2)) - 0.5 * RIDGE * (theta ** 2).sum(-1)
