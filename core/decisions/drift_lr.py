"""The likelihood-ratio test of one model's constancy over the periods (docs/methods.md §15).

Full model: every period has its own strengths (the per-period fits). Null model of model m: in every period
where m is rated, its contrast against the period's other anchor models, d_p = a_pᵀθ_p + e_p, takes one common
value c; the other models stay free per period. The constrained maximum comes from Newton steps on the
equality-constrained problem (the KKT system is block-diagonal over periods, so each step costs one inverse of
every period's information); the first step from the full fit is the Wald projection. All models tested are
fitted at once, in chunks that bound the memory.
"""

from __future__ import annotations

import numpy as np

from core.decisions.drift_fit import (
    MAX_STEP,
    NEWTON_MAX_ITER,
    PeriodCells,
    information_and_gradient,
    log_likelihood,
)

CONSTRAINED_TOL = 1e-8
CHUNK_ELEMENTS = 4_000_000  # models fitted together: (models × periods × K × K) floats at most


def likelihood_ratios(cells: PeriodCells, theta: np.ndarray, contrast: np.ndarray, offset: np.ndarray,
                      usable: np.ndarray) -> np.ndarray:
    """2·(ℓ(full) − ℓ(null of m)) for each row m of ``contrast`` (M, P, K), ``offset`` (M, P), ``usable`` (M, P)."""
    full = log_likelihood(theta, cells).sum()
    chunk = max(1, CHUNK_ELEMENTS // cells.wins.size)
    out = np.empty(len(contrast))
    for start in range(0, len(contrast), chunk):
        part = slice(start, start + chunk)
        null = _constrained(cells, theta, contrast[part], offset[part], usable[part])
        out[part] = np.maximum(2.0 * (full - null), 0.0)
    return out


def _constrained(cells: PeriodCells, theta: np.ndarray, contrast: np.ndarray, offset: np.ndarray,
                 usable: np.ndarray) -> np.ndarray:
    """The null models' maximised log-likelihoods (B,), by Newton on the KKT system from the full fit."""
    current = np.repeat(theta[None], len(contrast), axis=0)  # (B, P, K)
    weight = usable.astype(np.float64)
    for _ in range(NEWTON_MAX_ITER):
        information, gradient = information_and_gradient(current, cells)
        covariance = np.linalg.inv(information)
        free_step = np.einsum("bpkl,bpl->bpk", covariance, gradient)
        sigma_a = np.einsum("bpkl,bpl->bpk", covariance, contrast)
        variance = np.maximum((contrast * sigma_a).sum(-1), 1e-300)
        predicted = (contrast * (current + free_step)).sum(-1) + offset
        precision = weight / variance
        common = (precision * predicted).sum(1, keepdims=True) / np.maximum(precision.sum(1, keepdims=True), 1e-300)
        step = np.clip(free_step - (precision * (predicted - common))[..., None] * sigma_a, -MAX_STEP, MAX_STEP)
        current = current + step
        if np.max(np.abs(step)) < CONSTRAINED_TOL:
            break
    return log_likelihood(current, cells).sum(1)
