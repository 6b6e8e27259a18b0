"""Covariate-adjusted Bradley–Terry: position (home) advantage and style/length control (docs/methods.md §8, §9).

One logistic model covers Agresti's home-advantage BT (Categorical Data Analysis, 2nd ed., §10.6) and the
Chatbot Arena style control (Chiang et al. 2024, arXiv 2403.04132; FastChat ``elo_analysis.py``):

    logit P(left ≻ right) = θ_left − θ_right + δ·1 + βᵀz,

with δ the advantage of the left slot and z per-vote, z-scored features. Ties enter as y = 0.5 (a
fractional binomial outcome, equivalent to FastChat's row duplication). The unpenalised MLE is found by
Newton's method (= IRLS for the canonical logit link) on (K−1) + [1] + p free parameters with θ₀ = 0;
standard errors come from the inverse observed information, which for the logit link equals the Fisher
information Σ c·w·μ(1−μ)·x xᵀ. :func:`bt_covariance` also offers the sandwich (robust) covariance
H⁻¹JH⁻¹ used by lmarena/arena-rank, and :func:`elo_standard_errors` maps a θ covariance to Elo SEs on the
mean-normalised scale of docs/methods.md §2 by the delta method.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from core.errors import EvalBoardError
from core.ranking.bradley_terry import ELO_BASE, ELO_SCALE, ConvergenceError
from core.ranking.ties import NotIdentifiableError
from core.stats.newton import has_recession_direction, newton_maximise
from core.validation import check_max_iter, check_positive

__all__ = ["AdjustedResult", "ConvergenceError", "CovariateInputError", "NotIdentifiableError",
           "SeparationError", "StyleFeatures", "bt_covariance", "elo_standard_errors", "fit_adjusted",
           "style_features"]


class CovariateInputError(EvalBoardError, ValueError):
    """Vote arrays that cannot be used (lengths differ, indices out of range, y outside [0, 1], ...)."""


class SeparationError(EvalBoardError, ValueError):
    """The outcomes are (quasi-)separated: the MLE is infinite (Albert & Anderson 1984)."""


class StyleFeatures(NamedTuple):
    """z-scored length feature of docs/methods.md §8 and the mean and sd used to standardise it."""

    z: np.ndarray  # (n, 1)
    mean: float
    sd: float


@dataclass(frozen=True)
class AdjustedResult:
    """MLE of the covariate-adjusted BT model (docs/methods.md §9).

    ``covariance`` is over the full vector (θ₀, …, θ_{K−1}, δ, β₁, …, β_p): the θ₀ row and column are zero
    (θ₀ ≡ 0), and so is the δ row and column when ``position`` is False (δ ≡ 0, reported with SE 0).
    ``theta_se[i]`` is the SE of θᵢ − θ₀; ``elo_se`` is the delta-method SE on the mean-normalised Elo scale.
    """

    theta: np.ndarray = field(repr=False)
    theta_se: np.ndarray = field(repr=False)
    pi: np.ndarray = field(repr=False)
    elo: np.ndarray = field(repr=False)
    elo_se: np.ndarray = field(repr=False)
    delta: float
    delta_se: float
    beta: np.ndarray = field(repr=False)
    beta_se: np.ndarray = field(repr=False)
    covariance: np.ndarray = field(repr=False)
    log_likelihood: float
    iterations: int
    converged: bool
    n_obs: float  # Σ count over the rows (observations represented), whatever their weights
    feature_names: tuple[str, ...]
    position: bool
    tol: float
    max_iter: int


def style_features(len_left, len_right) -> StyleFeatures:
    """Length feature f = (a − b)/(a + b + 1), z-scored with the population sd (docs/methods.md §8).

    The +1 follows FastChat's ``add_one`` so that two empty answers give f = 0; an sd of 0 (constant f)
    is replaced by 1 so the column stays finite (docs/methods.md §8).
    """
    a = np.asarray(len_left, dtype=float)
    b = np.asarray(len_right, dtype=float)
    if a.ndim != 1 or a.shape != b.shape or a.size == 0:
        raise CovariateInputError(f"`len_left` {a.shape} and `len_right` {b.shape} must be non-empty 1-D "
                                  "arrays of the same length.")
    for name, v in (("len_left", a), ("len_right", b)):
        if not np.all(np.isfinite(v)) or np.any(v < 0):
            raise CovariateInputError(f"`{name}` must hold finite, non-negative lengths.")
    f = (a - b) / (a + b + 1.0)
    mean, sd = float(f.mean()), float(f.std())
    sd = sd if sd > 0 else 1.0
    return StyleFeatures(((f - mean) / sd)[:, None], mean, sd)


def fit_adjusted(left, right, y, n_models: int, *, count=None, weight=None, features=None, position: bool = True,
                 feature_names=None, tol: float = 1e-10, max_iter: int = 100) -> AdjustedResult:
    """Fit logit P(left ≻ right) = θ_left − θ_right + δ + βᵀz by unpenalised maximum likelihood.

    Parameters
    ----------
    left, right : (n,) int array_like
        Model indices 0..n_models−1 (sorted names, docs/methods.md §0) on the left and right side of each row.
    y : (n,) array_like
        Score of the left model: 1 win, 0 loss, 0.5 tie or both_bad (docs/methods.md §0).
    n_models : int
        K ≥ 2. θ₀ is fixed at 0 for identifiability (docs/methods.md §8).
    count : (n,) array_like, optional
        Number of identical observations a row stands for (compressed cells), default 1.
    weight : (n,) array_like, optional
        Per-observation weight (e.g. IPW), default 1. A row contributes count·weight·ℓ(y; μ).
    features : (n, p) array_like, optional
        Per-row covariates, already z-scored (:func:`style_features`).
    position : bool, default True
        Estimate δ, the advantage of the left slot (Agresti's home advantage).
    feature_names : sequence of str, optional
        Labels for the columns of ``features`` (default ``x0, x1, ...``).
    tol, max_iter : float, int
        Newton stops when the largest step is below ``tol``; :class:`ConvergenceError` after ``max_iter``.

    Returns
    -------
    AdjustedResult

    Raises
    ------
    SeparationError
        A model never wins or never loses, or any other (quasi-)complete separation: the MLE is infinite.
    NotIdentifiableError
        The design is rank deficient (disconnected comparison graph, δ confounded with the pairing, ...).
    """
    left, right, y, cw, k = _validate_votes(left, right, y, n_models, count, weight)
    n_obs = float(_as_count(count, left.size).sum())
    z = _validate_features(features, left.size)
    p = z.shape[1]
    names = _feature_names(feature_names, p)
    check_positive(tol, "tol", error=CovariateInputError)
    check_max_iter(max_iter, error=CovariateInputError)
    keep = cw > 0  # zero-weight rows carry no information and must not trigger separation checks
    left, right, y, cw, z = left[keep], right[keep], y[keep], cw[keep], z[keep]
    _check_estimable(left, right, y, z, k, position)
    n_free = k - 1 + int(position) + p
    b, iterations, converged = newton_maximise(lambda v: _loglik(left, right, z, y, cw, v, k, position),
                                               np.zeros(n_free), tol, max_iter)
    if not converged:
        raise ConvergenceError(f"covariate-adjusted BT did not converge to tol={tol}", iterations)
    ll, _, hess = _loglik(left, right, z, y, cw, b, k, position)
    cov_free = np.linalg.inv(-hess)
    # Full layout (θ₀..θ_{K−1}, δ, β): zeros where a parameter is fixed, so indices never shift.
    slots = np.r_[np.arange(1, k), [k] if position else [], np.arange(k + 1, k + 1 + p)].astype(int)
    full = np.zeros(k + 1 + p)
    full[slots] = b
    cov = np.zeros((k + 1 + p, k + 1 + p))
    cov[np.ix_(slots, slots)] = cov_free
    se = np.sqrt(np.diag(cov))
    theta = full[:k]
    pi = np.exp(theta - theta.max())
    pi = pi / pi.mean()
    return AdjustedResult(
        theta=theta, theta_se=se[:k], pi=pi, elo=ELO_SCALE * np.log(pi) + ELO_BASE,
        elo_se=elo_standard_errors(theta, cov[:k, :k]), delta=float(full[k]), delta_se=float(se[k]),
        beta=full[k + 1:], beta_se=se[k + 1:], covariance=cov, log_likelihood=float(ll), iterations=iterations,
        converged=converged, n_obs=n_obs, feature_names=names, position=bool(position), tol=tol,
        max_iter=int(max_iter))


def bt_covariance(left, right, y, n_models: int, count=None, weight=None, theta=None,
                  kind: str = "observed") -> np.ndarray:
    """K×K covariance of θ (θ₀ ≡ 0, zero row and column) for the plain BT model at ``theta``.

    ``kind="observed"``: inverse observed information H⁻¹, H = Σ c·w·μ(1−μ)·x xᵀ. ``kind="sandwich"``:
    H⁻¹ J H⁻¹ with J = Σ c·w²·(y − μ)²·x xᵀ, the per-vote score outer products (Huber 1967; the robust
    covariance of arena-rank). Compress only identical votes into one row: a row with a fractional y and
    count c stands for c votes that all scored y, which the sandwich treats differently from a mix.
    ``theta`` (length K, any additive shift) defaults to the MLE of :func:`fit_adjusted` without δ and β.
    """
    if kind not in ("observed", "sandwich"):
        raise CovariateInputError(f"`kind` must be 'observed' or 'sandwich', got {kind!r}.")
    left, right, y, cw, k = _validate_votes(left, right, y, n_models, count, weight)
    if theta is None:
        theta = fit_adjusted(left, right, y, k, count=count, weight=weight, position=False).theta
    theta = np.asarray(theta, dtype=float)
    if theta.shape != (k,) or not np.all(np.isfinite(theta)):
        raise CovariateInputError(f"`theta` must be {k} finite numbers, got shape {theta.shape}.")
    x = _design(left, right, k, False, np.zeros((left.size, 0)))
    mu = _sigmoid(x @ (theta[1:] - theta[0]))
    h = x.T @ (x * (cw * mu * (1 - mu))[:, None])
    try:
        h_inv = np.linalg.inv(h)
    except np.linalg.LinAlgError as exc:
        raise NotIdentifiableError("`left`/`right` give a singular information matrix: the comparison graph "
                                   "is disconnected or a model never appears.") from exc
    if kind == "sandwich":
        w = np.ones(left.size) if weight is None else np.asarray(weight, dtype=float)
        # A row of count c holds c votes with the same score w·(y − μ)·x: c·w² per outer product.
        r = _as_count(count, left.size) * w**2 * (y - mu) ** 2
        h_inv = h_inv @ (x.T @ (x * r[:, None])) @ h_inv
    cov = np.zeros((k, k))
    cov[1:, 1:] = h_inv
    return cov


def elo_standard_errors(theta, covariance) -> np.ndarray:
    """Delta-method SEs of Eloᵢ = (400/ln 10)(θᵢ − ln mean e^θ) + 1500 (mean(π) = 1, docs/methods.md §2).

    ∂Eloᵢ/∂θ = (400/ln 10)(eᵢ − s), s = softmax(θ), so Var = gᵀΣg; ``covariance`` is K×K over θ with a zero
    row and column for the fixed θ₀. Unlike θᵢ − θ₀, every model (model 0 included) gets a positive SE.
    """
    theta = np.asarray(theta, dtype=float)
    cov = np.asarray(covariance, dtype=float)
    if theta.ndim != 1 or not np.all(np.isfinite(theta)):
        raise CovariateInputError("`theta` must be a 1-D array of finite numbers.")
    if cov.shape != (theta.size, theta.size) or not np.all(np.isfinite(cov)):
        raise CovariateInputError(f"`covariance` must be a finite {theta.size}×{theta.size} matrix, "
                                  f"got shape {cov.shape}.")
    s = np.exp(theta - theta.max())
    s /= s.sum()
    g = ELO_SCALE * (np.eye(theta.size) - s[None, :])  # row i = gradient of Elo_i
    var = np.einsum("ij,jk,ik->i", g, cov, g)
    return np.sqrt(np.clip(var, 0.0, None))


# ----------------------------------------------------------------------------------------------------
# Internals


def _sigmoid(eta: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * eta))  # overflow-free logistic


def _as_count(count, n: int) -> np.ndarray:
    return np.ones(n) if count is None else np.asarray(count, dtype=float)


def _validate_votes(left, right, y, n_models, count, weight):
    if isinstance(n_models, bool) or int(n_models) != n_models or n_models < 2:
        raise CovariateInputError(f"`n_models` must be an integer >= 2, got {n_models!r}.")
    k = int(n_models)
    arrays = {}
    for name, v in (("left", left), ("right", right)):
        a = np.asarray(v)
        if a.ndim != 1 or a.size == 0:
            raise CovariateInputError(f"`{name}` must be a non-empty 1-D array of model indices.")
        if not (np.issubdtype(a.dtype, np.integer) or np.all(np.mod(a, 1) == 0)):
            raise CovariateInputError(f"`{name}` must hold integer model indices.")
        a = a.astype(np.int64)
        if a.min() < 0 or a.max() >= k:
            raise CovariateInputError(f"`{name}` must lie in 0..{k - 1} (n_models={k}).")
        arrays[name] = a
    n = arrays["left"].size
    if arrays["right"].size != n:
        raise CovariateInputError(f"`left` ({n}) and `right` ({arrays['right'].size}) differ in length.")
    if np.any(arrays["left"] == arrays["right"]):
        raise CovariateInputError("`left` and `right` must differ in every row (a model cannot meet itself).")
    yy = np.asarray(y, dtype=float)
    if yy.shape != (n,) or not np.all(np.isfinite(yy)) or np.any((yy < 0) | (yy > 1)):
        raise CovariateInputError(f"`y` must be {n} scores in [0, 1] (1 = left won, 0.5 = tie).")
    cw = np.ones(n)
    for name, v in (("count", count), ("weight", weight)):
        if v is None:
            continue
        a = np.asarray(v, dtype=float)
        if a.shape != (n,) or not np.all(np.isfinite(a)) or np.any(a < 0):
            raise CovariateInputError(f"`{name}` must be {n} finite, non-negative numbers.")
        cw = cw * a
    if not np.any(cw > 0):
        raise CovariateInputError("`count`·`weight` is zero in every row: nothing to fit.")
    return arrays["left"], arrays["right"], yy, cw, k


def _validate_features(features, n: int) -> np.ndarray:
    if features is None:
        return np.zeros((n, 0))
    z = np.asarray(features, dtype=float)
    z = z[:, None] if z.ndim == 1 else z
    if z.ndim != 2 or z.shape[0] != n or not np.all(np.isfinite(z)):
        raise CovariateInputError(f"`features` must be a finite ({n}, p) array, got shape {z.shape}.")
    return z


def _feature_names(feature_names, p: int) -> tuple[str, ...]:
    if feature_names is None:
        return tuple(f"x{m}" for m in range(p))
    names = tuple(str(s) for s in feature_names)
    if len(names) != p:
        raise CovariateInputError(f"`feature_names` has {len(names)} names for {p} feature columns.")
    return names


def _design(left, right, k, position, z) -> np.ndarray:
    """Columns θ₁..θ_{K−1} (+1 left, −1 right), then δ (all ones), then the features."""
    rows = np.arange(left.size)
    theta = np.zeros((left.size, k))
    theta[rows, left] += 1.0
    theta[rows, right] -= 1.0
    parts = [theta[:, 1:]] + ([np.ones((left.size, 1))] if position else []) + [z]
    return np.hstack(parts)


def _loglik(left, right, z, y, cw, b, k: int, position: bool):
    """Fractional-binomial log-likelihood Σ c·w·[y·η − ln(1 + e^η)], gradient and Hessian in the free
    parameters (θ₁..θ_{K−1}, δ, β), with η = θ_left − θ_right + δ + zβ.

    Each row's design is (e_left − e_right, 1, z) as :func:`_design` builds it, so every sum over rows
    is a per-model or per-pair total (bincount) or a zᵀ(…)z product: no n × (K + p) matrix is built,
    which keeps a million-vote fit to a few passes over the rows."""
    p = z.shape[1]
    theta = np.r_[0.0, b[:k - 1]]
    delta = b[k - 1] if position else 0.0
    beta = b[k - 1 + int(position):]
    eta = theta[left] - theta[right] + delta + (z @ beta if p else 0.0)
    mu = _sigmoid(eta)
    ll = float(np.sum(cw * (y * eta - np.logaddexp(0.0, eta))))
    g = cw * (y - mu)
    w = cw * mu * (1 - mu)

    def by_model(v):  # Σ v·(e_left − e_right), without θ₀
        return (np.bincount(left, v, k) - np.bincount(right, v, k))[1:]

    pair = np.bincount(left * k + right, w, k * k).reshape(k, k)
    info = np.zeros((b.size, b.size))
    info[:k - 1, :k - 1] = (np.diag(pair.sum(axis=0) + pair.sum(axis=1)) - pair - pair.T)[1:, 1:]
    grad = [by_model(g)]
    cols = [by_model(w)] if position else []
    cols += [by_model(w * z[:, j]) for j in range(p)]
    if cols:
        cross = np.column_stack(cols)  # θ rows × (δ, β) columns
        info[:k - 1, k - 1:] = cross
        info[k - 1:, :k - 1] = cross.T
    start = k - 1
    if position:
        grad.append([g.sum()])
        info[start, start] = w.sum()
        if p:
            info[start, start + 1:] = info[start + 1:, start] = w @ z
        start += 1
    if p:
        grad.append(z.T @ g)
        info[start:, start:] = z.T @ (z * w[:, None])
    return ll, np.concatenate([np.ravel(part) for part in grad]), -info


def _cone_generators(group: np.ndarray, feature: np.ndarray | None) -> np.ndarray:
    """Indices of rows generating the same cone as all rows (so the same rank and the same LP answer).

    The design rows of one (outcome side, left, right) group differ only in the feature. With at most
    one feature, every row of a group is a convex combination of the group's rows with the smallest and
    the largest feature value, so those two generate the group's cone: a million votes come down to at
    most 4·K² rows. (With several features every row is kept; a convex hull is not worth it here.)"""
    if len(group) == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((np.zeros(len(group)) if feature is None else feature, group))
    grouped = group[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    if feature is None:
        return order[starts]
    ends = np.r_[starts[1:], len(order)] - 1
    return order[np.concatenate([starts, ends])]


def _check_estimable(left, right, y, z, k: int, position: bool) -> None:
    """Raise unless the MLE is finite and unique: never-win/never-lose models, rank, then the exact LP.
    The rank and LP run on rows generating the same cone as the design's (:func:`_cone_generators`)."""
    appears = np.bincount(left, minlength=k) + np.bincount(right, minlength=k) > 0
    won_any = np.bincount(left[y > 0], minlength=k) + np.bincount(right[y < 1], minlength=k) > 0
    lost_any = np.bincount(left[y < 1], minlength=k) + np.bincount(right[y > 0], minlength=k) > 0
    for m in range(k):
        if not appears[m]:
            raise NotIdentifiableError(f"`left`/`right`: model {m} never appears (with positive weight), so "
                                       f"its θ is undetermined; pass n_models without it.")
        if not (won_any[m] and lost_any[m]):
            what = "never wins" if not won_any[m] else "never loses"
            raise SeparationError(f"`y`: model {m} {what} (ties count as half a win and half a loss), so its "
                                  "θ is infinite; drop the model or use a penalised fit (docs/methods.md §2 prior).")
    won, lost = np.flatnonzero(y > 0), np.flatnonzero(y < 1)
    rows = np.concatenate([won, lost])
    sign = np.r_[-np.ones(len(won)), np.ones(len(lost))]
    pair = np.concatenate([left[won] * k + right[won], k * k + left[lost] * k + right[lost]])
    p = z.shape[1]
    pick = _cone_generators(pair, z[rows, 0] if p == 1 else None) if p <= 1 else np.arange(len(rows))
    a_le = sign[pick, None] * _design(left[rows[pick]], right[rows[pick]], k, position, z[rows[pick]])
    a_le = np.unique(a_le, axis=0)
    if np.linalg.matrix_rank(a_le) < k - 1 + int(position) + p:  # these rows span what the design spans
        raise NotIdentifiableError("`left`/`right`/`features`: the design is rank deficient (a disconnected "
                                   "comparison graph, or δ/a feature confounded with the pairing); "
                                   "try position=False or drop the collinear feature.")
    # A row keeps positive likelihood along v iff x·v ≥ 0 when the left side won, ≤ 0 when it lost,
    # = 0 for a tie; so the MLE is finite iff no v ≠ 0 meets all (Albert & Anderson 1984).
    if has_recession_direction(a_le):
        raise SeparationError("`y` is quasi-completely separated by the models, δ and the features: the MLE "
                              "is infinite (Albert & Anderson 1984). Drop a feature or use a penalised fit.")
