"""Style-controlled Bradley–Terry (Chatbot Arena's style control), the model: features, objective,
Newton fit and sandwich covariance. :mod:`core.ranking.style_fit` turns them into a rated result.

Model (Chiang et al. 2024 and the Chatbot Arena post "Does style matter?", Aug 2024; FastChat PR #3495;
lmarena/arena-rank ``ContextualBradleyTerry``)::

    P(A beats B) = σ(θ_A − θ_B + βᵀz),

with, per feature, d = (a − b)/(a + b + 1) from the two answers' counts (core.io.style_features) and z the
d standardised over the analysed votes (mean 0, population sd 1; a feature with zero spread is dropped
and the notes say so). Ties and both-bad votes score y = ½. The estimate maximises

    Σᵢ wᵢ [yᵢ ηᵢ − ln(1 + e^ηᵢ)] − (λ/2)‖β‖²,   λ = ``penalty`` (1 by default), θ unpenalised, Σθ = 0,

with vote weights rescaled to mean 1 so that λ keeps one meaning whatever the weights' unit. Ratings
are Elo = 1500 + (400/ln 10)·θ (or anchored: a named model at a given rating).

``position`` may be added as a feature: a column of ones (left = 1, right = 0), not standardised, whose
coefficient is the left slot's advantage δ of scheme ``adjusted``. With ``penalty=0`` and the features
(position, length) this is exactly ``adjusted``'s model and estimates (same θ differences, δ, β and
observed-information SEs); with the default penalty δ and β are shrunk by O(1/n). ``adjusted`` itself
normalises mean(π) = 1 rather than Σθ = 0, so its Elo differ from these by one constant unless anchored.

Identifiability follows scheme ``bt``: the penalty keeps β finite, so a finite, unique θ exists iff the
"i beat j" graph (ties count both ways) is strongly connected (Ford 1957). Otherwise the fit adds the
docs/methods.md §2 prior (one virtual tie per model against a fixed reference, c = 0.5) and says
``identifiable=False``. With ``penalty=0`` features can also separate the outcomes; Newton then fails to
converge and :class:`ConvergenceError` says so.

Standard errors: the sandwich H⁻¹JH⁻¹ of the penalised objective (docs/methods.md §2/§9: H = the negative
Hessian including the penalty, J = Σ w²(y − μ)² x xᵀ over votes). Bootstrap intervals: see
:mod:`core.ranking.style_bootstrap`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from core.errors import EvalBoardError
from core.ranking.bradley_terry import NONIDENTIFIABLE_PRIOR, ConvergenceError, strong_components
from core.ranking.style_pairs import (
    PairLayout,
    evaluate,
    information,
    linear_predictor,
    pair_layout,
    probability_and_softplus,
)

STYLE_FEATURES = ("length", "headers", "lists", "bold")
POSITION = "position"
DEFAULT_PENALTY = 1.0
# Newton stops after a full step smaller than this; convergence is quadratic, so the error left after
# that step is ~ its square (≈ 1e-14), as for core.ranking.bradley_terry's Newton solver.
NEWTON_TOL = 1e-7
NEWTON_MAX_ITER = 100
MAX_STEP = 5.0  # cap on |Δ| per Newton step, so a cold start cannot overshoot into overflow
MAX_HALVINGS = 60

__all__ = ["DEFAULT_PENALTY", "POSITION", "STYLE_FEATURES", "ConvergenceError", "StyleDesign", "StyleInputError",
           "StyleRows", "fit_rows", "fit_sorted", "fit_with_sandwich", "gradient", "objective", "sandwich",
           "style_design", "style_rows", "win_graph"]


class StyleInputError(EvalBoardError, ValueError):
    """Votes or feature counts a style-controlled fit cannot use; the message names what and where."""


@dataclass(frozen=True)
class StyleDesign:
    """Standardised feature columns and what standardising used (per kept feature, d's mean and sd)."""

    z: np.ndarray = field(repr=False)  # (n, p)
    names: tuple[str, ...]
    mean: np.ndarray
    sd: np.ndarray
    dropped: tuple[str, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class StyleRows:
    """Votes as arrays: model indices (sorted names), left score y, count·weight per row, features z."""

    left: np.ndarray = field(repr=False)
    right: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    cw: np.ndarray = field(repr=False)  # count × weight, weights rescaled to mean 1 over the votes
    count: np.ndarray = field(repr=False)
    weight: np.ndarray = field(repr=False)
    z: np.ndarray = field(repr=False)
    n_models: int

    @cached_property
    def pairs(self) -> PairLayout:
        """The rows sorted by pair (built on first use, then kept): what every pass of the fit runs on."""
        return pair_layout(self.left, self.right, self.y, self.z, self.n_models)


def style_design(sides: Mapping[str, tuple[Sequence[float], Sequence[float]]], n_votes: int,
                 features: Sequence[str] = STYLE_FEATURES) -> StyleDesign:
    """z-scored d = (a − b)/(a + b + 1) for each requested feature, from per-side counts.

    ``sides[name] = (values_a, values_b)`` for every style feature in ``features``; ``position`` needs
    no counts and becomes a column of ones; no features at all gives the plain BT model. Counts must be
    finite and ≥ 0 (the error names the rows)."""
    names = tuple(features)
    unknown = [f for f in names if f not in STYLE_FEATURES + (POSITION,)]
    if unknown or len(set(names)) != len(names):
        raise StyleInputError(f"`features` must be distinct names among {', '.join(STYLE_FEATURES + (POSITION,))}; "
                              f"got {', '.join(names) or 'none'}")
    n = int(n_votes)
    columns, kept, means, sds, dropped, notes = [], [], [], [], [], []
    for name in names:
        if name == POSITION:
            continue
        if name not in sides:
            raise StyleInputError(f"feature {name!r}: no counts for the two sides were given")
        a, b = (np.asarray(v, dtype=np.float64) for v in sides[name])
        if a.shape != (n,) or b.shape != (n,):
            raise StyleInputError(f"feature {name!r}: both sides need one value per vote ({n:,})")
        bad = np.flatnonzero(~np.isfinite(a) | ~np.isfinite(b) | (a < 0) | (b < 0))
        if bad.size:
            rows = ", ".join(str(i + 1) for i in bad[:20]) + (f" … ({bad.size:,} votes)" if bad.size > 20 else "")
            raise StyleInputError(f"feature {name!r}: votes {rows} have a missing, negative or non-finite count")
        d = (a - b) / (a + b + 1.0)
        mean, sd = float(d.mean()), float(d.std())
        if not sd > 0:
            dropped.append(name)
            notes.append(f"feature {name!r} is dropped: d = (a − b)/(a + b + 1) is {mean:g} in every vote, so its "
                         "effect cannot be told apart from the ratings")
            continue
        columns.append((d - mean) / sd)
        kept.append(name)
        means.append(mean)
        sds.append(sd)
    if POSITION in names:
        columns.append(np.ones(n))
        kept.append(POSITION)
        means.append(1.0)
        sds.append(0.0)  # not standardised: the coefficient is the advantage of the left slot itself
    z = np.column_stack(columns) if columns else np.zeros((n, 0))
    return StyleDesign(z, tuple(kept), np.array(means), np.array(sds), tuple(dropped), tuple(notes))


def style_rows(left, right, y, z, n_models: int, *, count=None, weight=None) -> StyleRows:
    """Validated arrays; weights (× counts) rescaled to mean 1 over the votes they stand for."""
    if isinstance(n_models, bool) or int(n_models) != n_models or n_models < 2:
        raise StyleInputError(f"`n_models` must be an integer >= 2, got {n_models!r}")
    k = int(n_models)
    left, right = np.asarray(left), np.asarray(right)
    n = left.shape[0] if left.ndim == 1 else -1
    if n <= 0 or right.shape != (n,):
        raise StyleInputError("`left` and `right` must be non-empty 1-D arrays of the same length")
    for name, v in (("left", left), ("right", right)):
        if not np.issubdtype(v.dtype, np.integer) or v.min() < 0 or v.max() >= k:
            raise StyleInputError(f"`{name}` must hold model indices in 0..{k - 1}")
    same = np.flatnonzero(left == right)
    if same.size:
        raise StyleInputError(f"votes {', '.join(str(i + 1) for i in same[:20])}: a model cannot meet itself")
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (n,) or not np.all((y >= 0) & (y <= 1)):
        raise StyleInputError(f"`y` must be {n:,} scores in [0, 1] (1 = left won, ½ = tie)")
    # column-major: every pass reads one feature column at a time (zβ, zᵀg), 3–4× faster than row-major
    z = np.asfortranarray(np.asarray(z, dtype=np.float64).reshape(n, -1))
    if not np.all(np.isfinite(z)):
        raise StyleInputError("`z` must be finite")
    count = np.ones(n) if count is None else np.asarray(count, dtype=np.float64)
    weight = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)
    for name, v in (("count", count), ("weight", weight)):
        if v.shape != (n,) or not np.all(np.isfinite(v)) or np.any(v < 0):
            raise StyleInputError(f"`{name}` must be {n:,} finite, non-negative numbers")
    total = float((count * weight).sum())
    if not total > 0:
        raise StyleInputError("every vote has weight 0: there is nothing to fit")
    weight = weight * (count.sum() / total)  # mean weight 1 over the votes: λ means the same in any unit
    seen = np.bincount(left, count * weight, k) + np.bincount(right, count * weight, k) > 0
    if not seen.all():
        raise StyleInputError(f"models {', '.join(map(str, np.flatnonzero(~seen)[:20]))} have no vote of positive "
                              "weight: leave them out of the model list")
    return StyleRows(left.astype(np.int64), right.astype(np.int64), y, count * weight, count, weight, z, k)


def win_graph(rows: StyleRows, cw: np.ndarray | None = None) -> np.ndarray:
    """W[i, j] = weight of i's (half) wins over j: a tie is half a win for each side."""
    pairs = rows.pairs
    cw = pairs.sort(rows.cw if cw is None else cw)
    return _win_graph(pairs, cw)


def _win_graph(pairs: PairLayout, cw: np.ndarray) -> np.ndarray:
    k = pairs.n_models
    won = pairs.group_sums(cw * pairs.y)
    lost = pairs.group_sums(cw) - won
    return (np.bincount(pairs.group_left * k + pairs.group_right, won, k * k)
            + np.bincount(pairs.group_right * k + pairs.group_left, lost, k * k)).reshape(k, k)


def fit_rows(rows: StyleRows, penalty: float = DEFAULT_PENALTY, prior: float | None = None, *, cw=None, start=None,
             tol: float = NEWTON_TOL, max_iter: int = NEWTON_MAX_ITER) -> tuple[np.ndarray, float, int]:
    """Maximise the penalised objective by Newton's method with step halving.

    Returns (b, prior, iterations) with b = (θ₀..θ_{K−1}, β), Σθ = 0. ``prior=None`` applies the policy of
    docs/methods.md §2: 0 when the win graph is strongly connected, else 0.5. ``cw`` replaces the rows' weights
    (bootstrap replicates); ``start`` warm-starts."""
    pairs = rows.pairs
    return fit_sorted(pairs, pairs.sort(rows.cw if cw is None else cw), penalty, prior, start=start, tol=tol,
                      max_iter=max_iter)


def fit_sorted(pairs: PairLayout, cw: np.ndarray, penalty: float = DEFAULT_PENALTY, prior: float | None = None, *,
               start=None, tol: float = NEWTON_TOL, max_iter: int = NEWTON_MAX_ITER) -> tuple[np.ndarray, float, int]:
    """:func:`fit_rows` on rows already in pair order (``cw`` in that order)."""
    return _newton(pairs, cw, penalty, prior, start, tol, max_iter)[:3]


def fit_with_sandwich(rows: StyleRows, penalty: float = DEFAULT_PENALTY) -> tuple[np.ndarray, float, int, np.ndarray]:
    """:func:`fit_rows` and :func:`sandwich` at its estimate: (b, prior, iterations, covariance). The Newton
    iteration's last Hessian is the bread, unless the prior (which sees θ's level) was needed."""
    pairs = rows.pairs
    b, prior, iterations, hess = _newton(pairs, pairs.sort(rows.cw), penalty, None, None, NEWTON_TOL, NEWTON_MAX_ITER)
    return b, prior, iterations, sandwich(rows, b, penalty, prior, hess if prior == 0 else None)


def _newton(pairs: PairLayout, cw: np.ndarray, penalty: float, prior: float | None, start, tol: float,
            max_iter: int) -> tuple[np.ndarray, float, int, np.ndarray]:
    if not (np.isfinite(penalty) and penalty >= 0):
        raise StyleInputError(f"`penalty` must be a non-negative number, got {penalty!r}")
    if prior is None:
        prior = 0.0 if strong_components(_win_graph(pairs, cw)) == 1 else NONIDENTIFIABLE_PRIOR
    k, p = pairs.n_models, pairs.zt.shape[0]
    free = np.arange(k + p) if prior > 0 else np.arange(1, k + p)  # without a prior θ₀ ≡ 0 fixes the shift
    b = np.zeros(k + p) if start is None else np.array(start, dtype=np.float64)
    b[:k] -= b[0] if prior == 0 else 0.0
    value, grad, hess = evaluate(pairs, b, cw, penalty, prior)
    for iteration in range(1, max_iter + 1):
        step = np.zeros_like(b)
        step[free] = np.linalg.solve(-hess[np.ix_(free, free)], grad[free])
        step *= min(1.0, MAX_STEP / max(np.abs(step).max(), 1e-300))
        full_step = True
        for _ in range(MAX_HALVINGS):  # the objective is concave: halving finds an ascent
            trial = evaluate(pairs, b + step, cw, penalty, prior)
            if trial[0] >= value - 1e-12 * abs(value):
                break
            step /= 2
            full_step = False
        b = b + step
        value, grad, hess = trial  # the next iteration starts from the accepted point's derivatives
        if full_step and np.abs(step).max() < tol:
            b[:k] -= b[:k].mean()
            return b, prior, iteration, hess
    raise ConvergenceError(f"the style-controlled fit did not converge to tol={tol} (with penalty {penalty:g} "
                           "the features may separate the outcomes)", max_iter)


def objective(rows: StyleRows, b: np.ndarray, penalty: float, prior: float, cw=None):
    """Penalised log-likelihood, its gradient and Hessian in b = (θ, β) (``cw`` in the rows' order)."""
    pairs = rows.pairs
    return evaluate(pairs, b, pairs.sort(rows.cw if cw is None else cw), penalty, prior)


def gradient(rows: StyleRows, b: np.ndarray, penalty: float, prior: float, cw: np.ndarray) -> np.ndarray:
    """Gradient of the penalised objective alone: a third of the work of :func:`objective`."""
    pairs = rows.pairs
    return evaluate(pairs, b, pairs.sort(cw), penalty, prior, hessian=False)[1]


def sandwich(rows: StyleRows, b: np.ndarray, penalty: float, prior: float, hessian: np.ndarray | None = None
             ) -> np.ndarray:
    """Covariance of (θ, β) at the estimate b: H⁻¹ J H⁻¹, H the negative Hessian of the penalised
    objective (``hessian``: the objective's Hessian at b when the caller has it), J = Σ_votes w²(y − μ)² x xᵀ
    (a row of count c holds c votes with the same score). θ is reported with Σθ = 0, so the covariance is
    that of the centred θ."""
    k, p, pairs = rows.n_models, rows.z.shape[1], rows.pairs
    hess = evaluate(pairs, b, pairs.sort(rows.cw), penalty, prior)[2] if hessian is None else hessian
    mu = probability_and_softplus(linear_predictor(pairs, b[:k], b[k:]))[0]
    meat = information(pairs, pairs.sort(rows.count * rows.weight ** 2) * (pairs.y - mu) ** 2)
    free = np.arange(k + p) if prior > 0 else np.arange(1, k + p)
    h_inv = np.linalg.inv(-hess[np.ix_(free, free)])
    cov = np.zeros((k + p, k + p))
    cov[np.ix_(free, free)] = h_inv @ meat[np.ix_(free, free)] @ h_inv
    centre = np.eye(k + p)
    centre[:k, :k] -= 1.0 / k  # θ − mean(θ): the likelihood does not see a common shift
    return centre @ cov @ centre.T
