"""The arithmetic of a votes plan (docs/methods.md §14): Fisher information of a Bradley–Terry fit, the variance
of a gap θ_a − θ_b as votes are added, the power of a Wald test, and a simulation that checks it.

Arrays only; the caller (core.decisions.plan) turns votes into pair cells and reads the answer back.

Basis: without a prior the likelihood sees only differences of θ, and the information matrix
I = Σ_pairs n_ij p_ij (1 − p_ij) (e_i − e_j)(e_i − e_j)ᵀ is a graph Laplacian, singular along (1, …, 1).
The fit holds θ_0 at 0, so the information is taken in that reduced basis (θ_1 … θ_{K−1}): positive
definite when the comparison graph is connected. A gap c = e_a − e_b is orthogonal to (1, …, 1), so cᵀ I⁺ c
(pseudo-inverse) and the reduced-basis cᵀ I_r⁻¹ c are the same number: the anchor does not matter. With the
virtual-tie prior of a non-identifiable fit (docs/methods.md §2) every θ moves and the prior's curvature is
added, as core.ranking.bradley_terry.covariance does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

import core.ranking.bradley_terry as bt

# No plan asks for more than this many extra votes: beyond it the answer is "not reachable" (None).
MAX_EXTRA_VOTES = 10**9
BISECTION_STEPS = 200  # geometric bisection on n in [1e-6, MAX_EXTRA_VOTES]: far below one vote at the end
_NORMAL = NormalDist()


@dataclass(frozen=True)
class Information:
    """The information of a fit in its basis, and what adding votes under the scheduler's pattern does."""

    theta: np.ndarray = field(repr=False)  # (K,) the fit
    first: int  # 1: θ_0 held at 0 (reduced basis); 0: a prior fixes the scale (full basis)
    matrix: np.ndarray = field(repr=False)  # (K − first, K − first), positive definite
    covariance: np.ndarray = field(repr=False)  # (K, K) its inverse, zero row/column for a held θ_0


def win_probability(theta: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(theta[b] - theta[a]))


def laplacian(i: np.ndarray, j: np.ndarray, value: np.ndarray, k: int) -> np.ndarray:
    """Σ value · (e_i − e_j)(e_i − e_j)ᵀ over the pairs (i, j)."""
    off = np.bincount(i * k + j, weights=value, minlength=k * k).reshape(k, k)
    off = off + off.T
    return np.diag(off.sum(axis=1)) - off


def information(theta: np.ndarray, i: np.ndarray, j: np.ndarray, votes: np.ndarray, prior: float) -> Information:
    """Fisher information of θ at the fit from the (weighted) votes per pair (i, j): each vote adds
    p(1 − p)(e_i − e_j)(e_i − e_j)ᵀ; a prior adds 2·prior·σ(θ)(1 − σ(θ)) on the diagonal."""
    k = len(theta)
    p = win_probability(theta, i, j)
    full = laplacian(i, j, votes * p * (1.0 - p), k)
    if prior > 0:
        sig = 1.0 / (1.0 + np.exp(-theta))
        full[np.diag_indices(k)] += 2.0 * prior * sig * (1.0 - sig)
    first = 0 if prior > 0 else 1
    matrix = full[first:, first:]
    covariance = np.zeros((k, k))
    covariance[first:, first:] = np.linalg.pinv(matrix, hermitian=True)
    return Information(theta, first, matrix, covariance)


def gap_variance(info: Information, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Var(θ̂_a − θ̂_b) = cᵀ I⁻¹ c with c = e_a − e_b."""
    cov = info.covariance
    return np.maximum(cov[a, a] + cov[b, b] - 2.0 * cov[a, b], 0.0)


def power_ratio(alpha: float, power: float) -> float:
    """r with Φ(r − z) + Φ(−r − z) = power, z = z_{1−α/2}: a two-sided Wald test of a gap δ at level α has
    this power when δ / SE = r (r ≈ z_{1−α/2} + z_power; the second tail adds at most α/2)."""
    z = _NORMAL.inv_cdf(1.0 - alpha / 2.0)
    low, high = 0.0, z + _NORMAL.inv_cdf(power) + 1.0
    for _ in range(100):
        mid = 0.5 * (low + high)
        if wald_power(mid, alpha) < power:
            low = mid
        else:
            high = mid
    return high


def critical_ratio(alpha: float) -> float:
    """z_{1−α/2}: the two-sided Wald test rejects when |gap| / SE exceeds it."""
    return _NORMAL.inv_cdf(1.0 - alpha / 2.0)


def two_sided_p(ratio: float) -> float:
    return 2.0 * _NORMAL.cdf(-abs(ratio))


def wald_power(ratio: float, alpha: float) -> float:
    """Power of the two-sided Wald test at level α when the true gap is ``ratio`` standard errors."""
    z = _NORMAL.inv_cdf(1.0 - alpha / 2.0)
    return _NORMAL.cdf(ratio - z) + _NORMAL.cdf(-ratio - z)


def extra_direct(variance: np.ndarray, target: np.ndarray, per_vote: np.ndarray) -> np.ndarray:
    """Extra votes on the pair itself that bring Var(θ̂_a − θ̂_b) down to ``target`` (NaN: never).

    A vote on the pair adds q = p(1 − p) along c, and by Sherman–Morrison cᵀ(I + n q c cᵀ)⁻¹c = V / (1 + n q V),
    so 1/V grows by q per vote: n = (1/target − 1/V) / q."""
    with np.errstate(divide="ignore", invalid="ignore"):
        need = (1.0 / target - 1.0 / variance) / per_vote
    return np.where(np.isfinite(need), np.maximum(need, 0.0), np.nan)


@dataclass(frozen=True)
class Schedule:
    """Var(θ̂_a − θ̂_b) after n extra votes spread evenly over every pair of the models:
    Σ_k coef_k / (1 + n·rate_k) (a generalised eigendecomposition of the current and the added information)."""

    coef: np.ndarray = field(repr=False)  # (pairs asked, basis)
    rate: np.ndarray = field(repr=False)  # (basis,) ≥ 0
    n_pairs: int

    def variance(self, n: np.ndarray) -> np.ndarray:
        n = np.asarray(n, dtype=np.float64)
        return (self.coef / (1.0 + n[..., None] * self.rate)).sum(axis=-1)


def schedule(info: Information, a: np.ndarray, b: np.ndarray) -> Schedule:
    """The scheduler's pattern: each extra vote goes to one of the K(K−1)/2 pairs in turn, so n votes add
    (n / P)·Σ_pairs p_ij(1 − p_ij)(e_i − e_j)(e_i − e_j)ᵀ. With I = RᵀR and R⁻ᵀ L R⁻¹ = U Λ Uᵀ,
    cᵀ(I + nL)⁻¹c = Σ_k (Uᵀ R⁻ᵀ c)_k² / (1 + n λ_k)."""
    k = len(info.theta)
    i, j = np.triu_indices(k, 1)
    p = win_probability(info.theta, i, j)
    added = laplacian(i, j, p * (1.0 - p) / len(i), k)[info.first:, info.first:]
    upper = np.linalg.cholesky(info.matrix).T  # I = Rᵀ R
    left = np.linalg.solve(upper.T, added)  # R⁻ᵀ L
    rate, vectors = np.linalg.eigh(np.linalg.solve(upper.T, left.T).T)  # R⁻ᵀ L R⁻¹ (symmetric)
    contrast = np.zeros((k, len(a)))
    contrast[a, np.arange(len(a))] += 1.0
    contrast[b, np.arange(len(a))] -= 1.0
    projected = vectors.T @ np.linalg.solve(upper.T, contrast[info.first:])
    return Schedule((projected ** 2).T, np.maximum(rate, 0.0), len(i))


def extra_scheduled(plan: Schedule, target: np.ndarray) -> np.ndarray:
    """The fewest extra votes n (continuous) with plan.variance(n) ≤ target, NaN beyond MAX_EXTRA_VOTES."""
    target = np.asarray(target, dtype=np.float64)
    low = np.full(len(target), 1e-6)
    high = np.full(len(target), float(MAX_EXTRA_VOTES))
    reachable = plan.variance(high) <= target
    done = plan.variance(np.zeros(len(target))) <= target
    for _ in range(BISECTION_STEPS):
        mid = np.sqrt(low * high)
        enough = plan.variance(mid) <= target
        high = np.where(enough, mid, high)
        low = np.where(enough, low, mid)
    return np.where(done, 0.0, np.where(reachable, high, np.nan))


def simulate_power(theta: np.ndarray, i: np.ndarray, j: np.ndarray, count: np.ndarray, weight: np.ndarray,
                   pair: tuple[int, int], extra: int, alpha: float, prior: float, replicates: int,
                   rng: np.random.Generator) -> float:
    """Share of ``replicates`` data sets drawn from the fit θ in which the Wald test of θ_a − θ_b rejects at α.

    Each data set redraws every current vote (same pairs, counts and weights; a win or a loss with the fitted
    probability, so a tie is drawn as one or the other) and adds ``extra`` unit votes on ``pair``; then BT is
    refitted (batched Newton from θ) and the gap is tested with its information-based standard error."""
    k = len(theta)
    pi, pj = np.triu_indices(k, 1)
    slot = np.full((k, k), -1)
    slot[pi, pj] = np.arange(len(pi))
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    p_first = win_probability(theta, lo, hi)
    wins = np.zeros((replicates, len(pi)))
    games = np.zeros(len(pi))
    for cell in range(len(count)):
        drawn = rng.binomial(int(count[cell]), p_first[cell], size=replicates) * weight[cell]
        wins[:, slot[lo[cell], hi[cell]]] += drawn
        games[slot[lo[cell], hi[cell]]] += count[cell] * weight[cell]
    a, b = min(pair), max(pair)
    if extra > 0:
        wins[:, slot[a, b]] += rng.binomial(extra, float(win_probability(theta, np.array([a]), np.array([b]))[0]),
                                            size=replicates)
        games[slot[a, b]] += extra
    fitted, converged = _refits(pi, pj, wins, games, k, theta, prior)
    z = _NORMAL.inv_cdf(1.0 - alpha / 2.0)
    rejected = 0
    for row in range(replicates):
        if not converged[row] or not np.all(np.isfinite(fitted[row])):
            continue  # a draw with a separated model has no finite MLE: its test does not reject
        info = information(fitted[row], pi, pj, games, prior)
        se = float(np.sqrt(gap_variance(info, np.array([a]), np.array([b]))[0]))
        gap = abs(fitted[row, a] - fitted[row, b])
        rejected += bool(se > 0 and gap / se > z)
    return rejected / replicates


def _refits(i: np.ndarray, j: np.ndarray, wins: np.ndarray, games: np.ndarray, k: int, theta: np.ndarray,
            prior: float) -> tuple[np.ndarray, np.ndarray]:
    """BT of every drawn data set (batched Newton from θ); when a draw leaves a model without a finite MLE
    the batch's information turns singular, and each draw is then fitted alone (a failed one: not converged)."""
    start = np.nan_to_num(theta)
    try:
        fitted, converged, _ = bt.newton_pairs(i, j, wins, np.broadcast_to(games, wins.shape), k, start, prior)
        return fitted, converged
    except np.linalg.LinAlgError:
        pass
    fitted, converged = np.zeros_like(wins[:, :0], shape=(len(wins), k)), np.zeros(len(wins), dtype=bool)
    for row in range(len(wins)):
        try:
            theta_row, ok, _ = bt.newton_pairs(i, j, wins[row:row + 1], games[None], k, start, prior)
        except np.linalg.LinAlgError:
            continue
        fitted[row], converged[row] = theta_row[0], bool(ok[0])
    return fitted, converged
