"""Drift ratings and tests on arrays (docs/methods.md §15): the per-period fits anchored to the overall fit
through the models that do not change, and each model's likelihood-ratio test of constancy, Holm-adjusted;
the anchor set is purified of the models found to change until it stops changing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2, norm

from core.decisions.drift_fit import PeriodCells, fit_periods, pooled
from core.decisions.drift_lr import likelihood_ratios
from core.stats.significance import holm

MAX_ANCHOR_ROUNDS = 10


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
    overall = fit_periods(pooled(cells))[0][0]
    overall = overall - overall.mean()
    rated = cells.counts >= min_votes
    anchor, rounds = np.ones(cells.n_models, dtype=bool), 0
    while True:  # until the models found to change are the ones left out of the anchor (a few rounds at most)
        rounds += 1
        tests = _tests(cells, theta, overall, rated, anchor, alpha)
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
    """Ratings θ[p, m] − mean over the period's anchor models of (θ[p, k] − overall[k]), and their SEs; NaN where
    m is not rated or is the only model rated in the period (nothing to compare it with)."""
    mask = _anchor_mask(rated, anchor).astype(np.float64)
    size = np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
    weights = mask / size
    offset = ((theta - overall[None, :]) * weights).sum(axis=1, keepdims=True)
    sigma_w = np.einsum("pkl,pl->pk", cov, weights)
    diagonal = np.einsum("pkk->pk", cov)
    variance = diagonal - 2.0 * sigma_w + (weights * sigma_w).sum(axis=1, keepdims=True)
    compared = rated & ((rated.sum(axis=1, keepdims=True) - rated) > 0)  # another rated model to compare with
    rating = np.where(compared, theta - offset, np.nan)
    return rating, np.where(compared, np.sqrt(np.maximum(variance, 0.0)), np.nan)


def _tests(cells: PeriodCells, theta, overall, rated, anchor, alpha):
    """Each model's likelihood-ratio test that its strength against the period's other anchor models,
    d_p = θ[p, m] − mean over those k of (θ[p, k] − overall[k]), is the same in every period where it is rated,
    the other strengths free per period: χ² with (periods − 1) df; Holm over the models tested."""
    p_count, k = theta.shape
    mask = _anchor_mask(rated, anchor)
    usable = (rated & ((mask.sum(axis=1, keepdims=True) - mask) > 0)).T  # (K, P): m rated, another anchor there
    df = usable.sum(axis=1) - 1
    tested = np.flatnonzero(df >= 1)
    others = np.repeat(mask[None, :, :], len(tested), axis=0).astype(np.float64)  # (M, P, K)
    others[np.arange(len(tested)), :, tested] = 0.0
    others /= np.maximum(others.sum(-1, keepdims=True), 1.0)
    contrast = -others
    contrast[np.arange(len(tested)), :, tested] += 1.0
    offset = others @ overall
    statistic = np.full(k, np.nan)
    statistic[tested] = likelihood_ratios(cells, theta, contrast, offset, usable[tested])
    p_value = np.full(k, np.nan)
    p_value[tested] = chi2.sf(statistic[tested], df[tested])
    p_adjusted = np.full(k, np.nan)
    if len(tested):
        p_adjusted[tested] = holm(p_value[tested])
    changed = np.nan_to_num(p_adjusted, nan=1.0) < alpha
    return statistic, np.maximum(df, 0), p_value, p_adjusted, changed


def z_value(alpha: float) -> float:
    return float(norm.ppf(1.0 - alpha / 2.0))
