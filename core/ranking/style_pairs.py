"""Votes grouped by ordered pair (left model, right model): the layout every pass of the style-controlled fit
runs on (:mod:`core.ranking.style_model`, :mod:`core.ranking.style_bootstrap`).

With the rows sorted by pair (a stable sort, once per fit), θ enters a row only through its pair's
θ_left − θ_right, and every sum the fit needs over the rows of one pair (score, information) is a
contiguous ``np.add.reduceat``, so no pass scatters into per-model bins and no n × (K + p) design matrix
is built. The features are held transposed, one contiguous row per feature, so zβ and zᵀg read them
in order.

Row weights handed to these functions are in the layout's (pair) order: :meth:`PairLayout.sort` puts a
per-vote array into it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class PairLayout:
    """Rows in pair order: ``order[i]`` is the original row at position i; group g holds positions
    ``starts[g] : starts[g] + sizes[g]``, all votes of ``group_left[g]`` (left) against ``group_right[g]``."""

    order: np.ndarray = field(repr=False)
    starts: np.ndarray = field(repr=False)
    sizes: np.ndarray = field(repr=False)
    group_left: np.ndarray = field(repr=False)
    group_right: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    zt: np.ndarray = field(repr=False)  # (p, n), C-contiguous: feature j of the rows in pair order
    n_models: int

    def sort(self, values: np.ndarray) -> np.ndarray:
        """A per-row array (original order) in the layout's order."""
        return np.take(np.asarray(values, dtype=np.float64), self.order)

    def group_sums(self, values: np.ndarray) -> np.ndarray:
        """Σ over the rows of each group, along the last axis (rows in the layout's order)."""
        return np.add.reduceat(values, self.starts, axis=-1)

    def model_sums(self, by_group: np.ndarray) -> np.ndarray:
        """Per model: Σ over the groups it leads minus Σ over the groups it trails."""
        k = self.n_models
        return np.bincount(self.group_left, by_group, k) - np.bincount(self.group_right, by_group, k)


def pair_layout(left: np.ndarray, right: np.ndarray, y: np.ndarray, z: np.ndarray, n_models: int) -> PairLayout:
    """The rows (model indices, scores y, features z as n × p) sorted by (left, right), stably."""
    k = int(n_models)
    pair = left * k + right
    # the pair index fits 16 bits for up to 256 models, where numpy's stable sort is a radix sort
    order = np.argsort(pair.astype(np.uint16) if k * k <= 1 << 16 else pair, kind="stable")
    per_pair = np.bincount(pair, minlength=k * k)
    group_pair = np.flatnonzero(per_pair)
    sizes = per_pair[group_pair]
    starts = np.cumsum(sizes) - sizes
    z = np.asarray(z, dtype=np.float64)
    zt = np.empty((z.shape[1], len(order)))
    for j in range(z.shape[1]):  # column by column: one contiguous gather each
        np.take(np.ascontiguousarray(z[:, j]), order, out=zt[j])
    y_sorted = np.take(np.asarray(y, np.float64), order)
    return PairLayout(order, starts, sizes, group_pair // k, group_pair % k, y_sorted, zt, k)


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """Σ aᵢbᵢ over a long vector, in numpy's own (single-threaded, vectorised) loop: a threaded BLAS dot
    costs 10-100× more wall time than it saves when the cores are busy with other work."""
    return float(np.einsum("i,i->", a, b))


def linear_predictor(layout: PairLayout, theta: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """η = θ_left − θ_right + zβ per row (layout order)."""
    eta = np.repeat(theta[layout.group_left] - theta[layout.group_right], layout.sizes)
    for j, coefficient in enumerate(beta):
        eta += coefficient * layout.zt[j]
    return eta


def probability_and_softplus(eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """μ = σ(η) and ln(1 + e^η), both from one e^−|η| (no overflow for any finite η)."""
    e = np.exp(-np.abs(eta))
    one_plus = 1.0 + e
    mu = np.where(eta >= 0, 1.0, e) / one_plus
    return mu, np.maximum(eta, 0.0) + np.log1p(e)


def score(layout: PairLayout, g: np.ndarray) -> np.ndarray:
    """Σ gᵢ xᵢ with xᵢ = (e_left − e_right, zᵢ)."""
    return np.r_[layout.model_sums(layout.group_sums(g)), layout.zt @ g]


def information(layout: PairLayout, w: np.ndarray) -> np.ndarray:
    """Σ wᵢ xᵢ xᵢᵀ: the θθ block from per-pair sums of w, θβ from per-pair sums of w·z, ββ = zᵀ(w z)."""
    k, p = layout.n_models, layout.zt.shape[0]
    info = np.zeros((k + p, k + p))
    pair = np.bincount(layout.group_left * k + layout.group_right, layout.group_sums(w), k * k).reshape(k, k)
    info[:k, :k] = np.diag(pair.sum(axis=0) + pair.sum(axis=1)) - pair - pair.T
    if p:
        wz = layout.zt * w
        cross = np.stack([layout.model_sums(s) for s in layout.group_sums(wz)], axis=1)
        info[:k, k:], info[k:, :k] = cross, cross.T
        for j in range(p):
            for m in range(j, p):
                info[k + j, k + m] = info[k + m, k + j] = dot(wz[j], layout.zt[m])
    return info


def evaluate(layout: PairLayout, b: np.ndarray, cw: np.ndarray, penalty: float, prior: float,
             hessian: bool = True) -> tuple[float, np.ndarray, np.ndarray | None]:
    """Penalised log-likelihood Σ cw [yη − ln(1 + e^η)] − (λ/2)‖β‖² (+ the §2 prior), its gradient and its
    Hessian (``None`` unless ``hessian``) in b = (θ, β); ``cw`` in the layout's order."""
    k = layout.n_models
    theta, beta = b[:k], b[k:]
    eta = linear_predictor(layout, theta, beta)
    mu, softplus = probability_and_softplus(eta)
    value = dot(cw, layout.y * eta - softplus) - 0.5 * penalty * float(beta @ beta)
    grad = score(layout, cw * (layout.y - mu))
    grad[k:] -= penalty * beta
    hess = None
    if hessian:
        hess = -information(layout, cw * mu * (1.0 - mu))
        hess[k:, k:] -= penalty * np.eye(len(beta))
    if prior > 0:
        value += prior * float(np.sum(-np.logaddexp(0.0, -theta) - np.logaddexp(0.0, theta)))
        sig = 0.5 * (1.0 + np.tanh(0.5 * theta))
        grad[:k] += prior * (1.0 - 2.0 * sig)
        if hessian:
            hess[np.diag_indices(k)] -= 2.0 * prior * sig * (1.0 - sig)
    return value, grad, hess
