"""Scheme bt with ``--ties davidson``: ties as their own outcome (Davidson 1970), not half wins.

The plain BT fit of docs/methods.md §2 counts a tie as half a win for each side (the Chatbot Arena convention).
The Davidson model is the optional alternative of docs/methods.md §2 ("Tie models"), fitted by maximum
likelihood with Newton's method on log-strengths θ = ln π plus the tie parameter ln ν:

* Davidson (1970), "On extending the Bradley–Terry model to accommodate ties in paired comparison
  experiments", JASA 65:317–328: P(i≻j) = πᵢ/D, P(tie) = ν√(πᵢπⱼ)/D, D = πᵢ + πⱼ + ν√(πᵢπⱼ).

Inputs of :func:`fit_davidson` are count matrices over models 0..K−1 (the caller sorts names, docs/methods.md
§0): ``wins[i, j]`` = (weighted) decisive votes i won against j, ``ties`` symmetric (both_bad counts as a
tie). Strengths are reported with mean(π) = 1 and Elo = 400·log₁₀π + 1500 as in §2.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np

from core.errors import EvalBoardError
from core.ranking.bradley_terry import ConvergenceError, elo_from_pi  # one error type for every solver
from core.stats.newton import has_recession_direction, newton_maximise
from core.validation import check_max_iter, check_positive

SYMMETRY_TOLERANCE = 1e-9  # relative; a tie count matrix from float sums may be off in the last bits


class TieInputError(EvalBoardError, ValueError):
    """A count matrix that cannot be used (wrong shape, negative, non-finite, asymmetric ties)."""


class NotIdentifiableError(EvalBoardError, ValueError):
    """The data have no finite, unique MLE (a model never wins, a disconnected graph, only ties...)."""


@dataclass(frozen=True)
class DavidsonResult:
    """Davidson (1970) MLE (or MAP when ``prior`` > 0); π has mean 1, ν ≥ 0 (0 when no tie was seen)."""

    pi: np.ndarray = field(repr=False)
    nu: float
    log_likelihood: float  # of the real data only (virtual prior votes excluded)
    iterations: int
    converged: bool
    tol: float
    max_iter: int
    prior: float

    @property
    def elo(self) -> np.ndarray:
        return elo_from_pi(self.pi)


# ----------------------------------------------------------------------------------------------------
# Public fits


def fit_davidson(wins, ties, *, prior: float = 0.0, tol: float = 1e-10, max_iter: int = 500,
                 strict: bool = True) -> DavidsonResult:
    """Fit the Davidson (1970) tie model by maximum likelihood.

    Parameters
    ----------
    wins : (K, K) array_like
        ``wins[i, j]`` = (weighted) number of decisive votes in which model i beat model j.
    ties : (K, K) array_like
        Symmetric tie counts (both_bad counts as a tie, docs/methods.md §0). Diagonals of both are ignored.
    prior : float, default 0
        c ≥ 0 virtual wins and c virtual losses of every model against a reference with π_R ≡ 1
        (docs/methods.md §2, "Remedy"), scored under the Davidson model itself. c > 0 gives a finite MAP on
        any data; c = 0 is the pure MLE and raises :class:`NotIdentifiableError` when none exists.
        c is in the units of ``wins`` (no rescaling: the matrices do not say how many votes they hold).
    tol, max_iter : float, int
        Newton stops when the largest step in (θ, ln ν) is below ``tol``.
    strict : bool, default True
        Raise :class:`ConvergenceError` after ``max_iter``; with False, return ``converged=False``.

    Returns
    -------
    DavidsonResult
        π (mean 1), ν (0 when the data contain no tie: the MLE of ν is then on the boundary and the
        model reduces to plain BT), log-likelihood of the data, iteration count and settings.

    Notes
    -----
    Per pair, with d = θᵢ − θⱼ, the three outcomes are a softmax over (d/2, −d/2, ln ν), so the
    log-likelihood is concave in (θ, ln ν) and Newton's method is safe (Davidson 1970, eq. 2.1–2.3).
    """
    return _fit(wins, ties, prior, tol, max_iter, strict)


# ----------------------------------------------------------------------------------------------------
# Internals


def _validate(wins, ties, prior: float, tol: float, max_iter: int) -> tuple[np.ndarray, np.ndarray]:
    w = np.array(wins, dtype=float)
    t = np.array(ties, dtype=float)
    for name, m in (("wins", w), ("ties", t)):
        if m.ndim != 2 or m.shape[0] != m.shape[1]:
            raise TieInputError(f"`{name}` must be a square K×K matrix, got shape {m.shape}.")
        np.fill_diagonal(m, 0.0)
        if not np.all(np.isfinite(m)) or np.any(m < 0):
            raise TieInputError(f"`{name}` must hold finite, non-negative counts off the diagonal.")
    if w.shape != t.shape:
        raise TieInputError(f"`wins` {w.shape} and `ties` {t.shape} must have the same shape.")
    if w.shape[0] < 2:
        raise TieInputError(f"`wins` must cover at least 2 models, got {w.shape[0]}.")
    if np.any(np.abs(t - t.T) > SYMMETRY_TOLERANCE * max(1.0, t.max())):
        raise TieInputError("`ties` must be symmetric (ties[i, j] == ties[j, i]); pass the tie count of "
                            "each pair in both cells.")
    if not np.isfinite(prior) or prior < 0:
        raise TieInputError(f"`prior` must be a finite number >= 0, got {prior!r}.")
    check_positive(tol, "tol", error=TieInputError)
    check_max_iter(max_iter, error=TieInputError)
    return w, t


def _pairs(w: np.ndarray, t: np.ndarray, prior: float):
    """Unordered compared pairs (i < j) as arrays, plus the virtual reference pairs (index K)."""
    k = w.shape[0]
    i, j = np.triu_indices(k, 1)
    wij, wji, tij = w[i, j], w[j, i], t[i, j]
    keep = wij + wji + tij > 0
    i, j, wij, wji, tij = i[keep], j[keep], wij[keep], wji[keep], tij[keep]
    if prior > 0:
        m = np.arange(k)
        i, j = np.r_[i, m], np.r_[j, np.full(k, k)]
        wij, wji, tij = np.r_[wij, np.full(k, prior)], np.r_[wji, np.full(k, prior)], np.r_[tij, np.zeros(k)]
    return i, j, wij, wji, tij


def _davidson_terms(d, s, wij, wji, tij):
    """Per-pair log-likelihood, gradient and Hessian in (d, s = ln ν); s = −inf means ν = 0 (no ties)."""
    eta = np.stack([d / 2, -d / 2, np.broadcast_to(s, d.shape)])
    top = np.max(eta, axis=0)
    logp = eta - (top + np.log(np.exp(eta - top).sum(axis=0)))
    p = np.exp(logp)
    n = wij + wji + tij
    # Zero counts times log(0) (ν = 0) would give NaN; those outcomes contribute nothing.
    with np.errstate(invalid="ignore"):
        ll = np.sum(np.where(wij > 0, wij * logp[0], 0.0) + np.where(wji > 0, wji * logp[1], 0.0)
                    + np.where(tij > 0, tij * logp[2], 0.0))
    g_d = (wij - wji) / 2 - n * (p[0] - p[1]) / 2
    g_s = tij - n * p[2]
    h_dd = -n / 4 * (p[0] + p[1] - (p[0] - p[1]) ** 2)
    h_ds = n * p[2] * (p[0] - p[1]) / 2
    h_ss = -n * p[2] * (1 - p[2])
    return ll, g_d, g_s, h_dd, h_ds, h_ss


def _assemble(terms, n_theta, free, i, j, tie_fixed, tie_on):
    """Chain per-pair derivatives in (d, tie) to the free parameters (θ..., tie)."""

    def objective(x):
        theta = np.zeros(n_theta)
        theta[free] = x[: free.size]
        tie = x[-1] if tie_on else tie_fixed
        ll, g_d, g_s, h_dd, h_ds, h_ss = terms(theta[i] - theta[j], tie)
        g = np.bincount(i, g_d, n_theta) - np.bincount(j, g_d, n_theta)
        h = np.zeros((n_theta, n_theta))
        np.add.at(h, (i, i), h_dd)
        np.add.at(h, (j, j), h_dd)
        np.add.at(h, (i, j), -h_dd)
        np.add.at(h, (j, i), -h_dd)
        g, h = g[free], h[np.ix_(free, free)]
        if tie_on:
            h_t = (np.bincount(i, h_ds, n_theta) - np.bincount(j, h_ds, n_theta))[free]
            g = np.r_[g, g_s.sum()]
            h = np.block([[h, h_t[:, None]], [h_t[None, :], np.array([[h_ss.sum()]])]])
        return ll, g, h

    return objective


def _check_identifiable(w: np.ndarray, t: np.ndarray) -> None:
    """Raise unless the pure MLE is finite and unique (Ford 1957 for BT; see has_recession_direction)."""
    # scipy loads lazily: `evalboard rank` of plain BT never needs it (its import: ~2 s on a busy 2-core machine)
    from scipy.sparse.csgraph import connected_components

    k = w.shape[0]
    if w.sum() == 0:
        raise NotIdentifiableError("`wins` is all zero: with only ties the tie parameter is infinite and "
                                   "the strengths are undetermined; pass prior > 0 (e.g. 0.5).")
    n_comp, _ = connected_components(w > 0, directed=True, connection="strong")
    if n_comp == 1:
        return  # decisive wins alone pin every θ, and ties (if any) pin the tie parameter: sufficient
    tie_on = bool(np.any(t > 0))
    rows = []
    for a in range(k):
        for b in range(k):
            e = np.zeros(k)
            e[a], e[b] = 1.0, -1.0  # direction of d = θa − θb
            if a != b and w[a, b] > 0:  # "a beat b" keeps its probability iff d grows, ln ν no faster
                rows.append(np.r_[-e, 0.0])
                rows.append(np.r_[-e, 1.0])
            if a < b and t[a, b] > 0:  # a tie keeps its probability iff ln ν grows at least as fast as |d|
                rows.append(np.r_[e, -1.0])
                rows.append(np.r_[-e, -1.0])
    # θ₀ is fixed at 0; the tie column exists only when ties were seen (else ν = 0 is not a parameter).
    a_le = np.array(rows)[:, 1:] if tie_on else np.array(rows)[:, 1:k]
    if has_recession_direction(a_le):
        never = [m for m in range(k) if w[m].sum() == 0 and t[m].sum() == 0]
        hint = f" model(s) {never} never win or tie;" if never else ""
        raise NotIdentifiableError(
            "`wins`/`ties` have no finite, unique MLE:" + hint + " some strength or the tie parameter "
            "runs off to infinity (a model that never wins or never loses without ties to hold it, or a "
            "comparison graph that is not strongly connected; docs/methods.md §2, Ford 1957). Pass prior > 0 "
            "(e.g. 0.5) for a finite MAP.")


def _fit(wins, ties, prior, tol, max_iter, strict) -> DavidsonResult:
    w, t = _validate(wins, ties, prior, tol, max_iter)
    k = w.shape[0]
    if prior == 0:
        _check_identifiable(w, t)
    i, j, wij, wji, tij = _pairs(w, t, prior)
    tie_on = bool(tij.sum() > 0)
    n_theta = k + 1  # index k is the virtual reference (θ = 0), used only when prior > 0
    free = np.arange(k) if prior > 0 else np.arange(1, k)
    p_tie = tij.sum() / (wij + wji + tij).sum()
    terms = partial(_davidson_terms, wij=wij, wji=wji, tij=tij)
    # Equal strengths give P(tie) = ν/(2 + ν): start ν there.
    start = np.log(2 * p_tie / (1 - p_tie)) if tie_on else 0.0
    objective = _assemble(terms, n_theta, free, i, j, -np.inf, tie_on)
    x0 = np.r_[np.zeros(free.size), [start] if tie_on else []]
    x, iterations, converged = newton_maximise(objective, x0, tol, max_iter)
    if not converged and strict:
        raise ConvergenceError(f"davidson fit did not converge to tol={tol}; raise max_iter or pass "
                               "strict=False", iterations)
    theta = np.zeros(n_theta)
    theta[free] = x[: free.size]
    tie = float(x[-1]) if tie_on else -np.inf
    real = slice(0, i.size - (k if prior > 0 else 0))
    ll = _davidson_terms(theta[i[real]] - theta[j[real]], tie, wij[real], wji[real], tij[real])[0]
    pi = np.exp(theta[:k] - theta[:k].max())
    pi = pi / pi.mean()
    return DavidsonResult(pi=pi, nu=float(np.exp(tie)), log_likelihood=float(ll), iterations=iterations,
                          converged=converged, tol=tol, max_iter=int(max_iter), prior=float(prior))
