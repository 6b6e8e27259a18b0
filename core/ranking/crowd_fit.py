"""Crowd-BT (docs/methods.md §16): model strengths θ and one reliability η per annotator, fitted jointly.

Annotator k votes i over j with probability q = η_k σ(θ_i − θ_j) + (1 − η_k) σ(θ_j − θ_i) (Chen, Bennett,
Collins-Thompson & Horvitz, WSDM 2013). The fit maximises the log posterior

    Σ_cells [ y log q + (n − y) log(1 − q) ] + Σ_k [(a − 1) log η_k + (b − 1) log(1 − η_k)]
        + Σ_i ½ [log σ(θ_i) + log σ(−θ_i)]

over θ and φ_k = logit η_k by damped Newton (the φ block of the Hessian is diagonal, so each step solves an
M × M Schur complement whatever the number of annotators). The likelihood depends on the votes only through
the cells (annotator, i, j) with y the weighted wins of i (ties count half) and n the weighted votes, so a
million votes become at most annotators × pairs cells before anything is fitted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# docs/methods.md §16: Beta(a, b) prior on every η with mode (a − 1)/(a + b − 2) = 0.9 and the weight of two
# votes (a + b − 2 = 2); it keeps η inside (0, 1) and breaks the symmetry θ → −θ, η → 1 − η towards honesty.
PRIOR_A = 2.8
PRIOR_B = 1.2
# One virtual tie per model against a reference of strength 0 (the remedy of docs/methods.md §2, and the virtual
# node of Chen et al.): the ratings exist even when a model never loses, and the strengths cannot run off while
# every η falls to absorb them (the scale confound of docs/methods.md §16).
VIRTUAL_TIES = 1.0
TOLERANCE = 1e-8  # stop once no parameter moves more than this in one step
MAX_ITERATIONS = 200
MAX_STEP = 5.0  # cap |Δ| per parameter and step, so a cold start cannot overshoot
_TINY = 1e-300


def expit(x: np.ndarray) -> np.ndarray:
    """σ(x) = 1/(1 + e^−x) with full relative precision in both tails (numpy only: scipy is not loaded for
    a ranking that does not need it)."""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0, e) / (1.0 + e)


@dataclass(frozen=True)
class CrowdCells:
    """Votes summed per (annotator, left model, right model): y weighted wins of the left model (ties
    half), n weighted votes. ``votes``: each annotator's number of votes (unweighted)."""

    annotator: np.ndarray = field(repr=False)
    left: np.ndarray = field(repr=False)
    right: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    n: np.ndarray = field(repr=False)
    n_models: int
    n_annotators: int
    votes: np.ndarray = field(repr=False)
    pair_key: np.ndarray = field(repr=False)  # left·M + right: the θθ block
    left_key: np.ndarray = field(repr=False)  # left·K + annotator, right·K + annotator: the θφ block
    right_key: np.ndarray = field(repr=False)

    def __len__(self) -> int:
        return len(self.n)


def crowd_cells(annotator: np.ndarray, left: np.ndarray, right: np.ndarray, left_score: np.ndarray,
                weight: np.ndarray | None, n_models: int, n_annotators: int) -> CrowdCells:
    """Aggregate votes (integer codes; ``left_score`` 1, 0.5 or 0) to (annotator, i, j) cells with i < j."""
    annotator, left, right = (np.asarray(a, dtype=np.int64) for a in (annotator, left, right))
    score = np.asarray(left_score, dtype=np.float64)
    weight = np.ones(len(score)) if weight is None else np.asarray(weight, dtype=np.float64)
    swap = left > right  # one orientation per pair: the likelihood of "j beats i" is that of "i loses to j"
    low, high = np.where(swap, right, left), np.where(swap, left, right)
    score = np.where(swap, 1.0 - score, score)
    key = (annotator * n_models + low) * n_models + high
    cells, index = np.unique(key, return_inverse=True)
    return _with_keys(cells // (n_models * n_models), (cells // n_models) % n_models, cells % n_models,
                      np.bincount(index, weights=weight * score, minlength=len(cells)),
                      np.bincount(index, weights=weight, minlength=len(cells)), n_models, n_annotators,
                      np.bincount(annotator, minlength=n_annotators))


def _with_keys(annotator, left, right, y, n, n_models: int, n_annotators: int, votes) -> CrowdCells:
    """Cells with the flat indices every Newton step scatters into, computed once."""
    return CrowdCells(annotator, left, right, y, n, n_models, n_annotators, votes, left * n_models + right,
                      left * n_annotators + annotator, right * n_annotators + annotator)


@dataclass(frozen=True)
class CrowdFit:
    theta: np.ndarray  # strengths (logit units; only differences matter to the ratings)
    eta: np.ndarray  # reliability per annotator
    cov_theta: np.ndarray  # inverse observed information, θ block
    var_phi: np.ndarray  # inverse observed information, diagonal of the logit-η block
    iterations: int
    converged: bool
    log_posterior: float


def _terms(theta, phi, cells: CrowdCells):
    d = theta[cells.left] - theta[cells.right]
    s, t = expit(d), expit(-d)  # σ(d) and 1 − σ(d), each without cancellation
    eta, not_eta = expit(phi)[cells.annotator], expit(-phi)[cells.annotator]
    q = np.maximum(eta * s + not_eta * t, _TINY)  # P(left wins); both sums of positive terms
    r = np.maximum(eta * t + not_eta * s, _TINY)  # P(right wins) = 1 − q
    return s, t, eta, not_eta, q, r


def theta_prior(theta: np.ndarray):
    """Per model: the log prior of θ_i (one virtual tie against a reference of strength 0), its first and
    its second derivative."""
    s = expit(theta)
    return (VIRTUAL_TIES * 0.5 * (-np.logaddexp(0.0, -theta) - np.logaddexp(0.0, theta)),
            VIRTUAL_TIES * (0.5 - s), -VIRTUAL_TIES * s * (1.0 - s))


def log_posterior(theta: np.ndarray, phi: np.ndarray, cells: CrowdCells, terms=None) -> float:
    """The objective of docs/methods.md §16 at (θ, φ = logit η)."""
    *_, q, r = _terms(theta, phi, cells) if terms is None else terms
    likelihood = float(np.dot(cells.y, np.log(q)) + np.dot(cells.n - cells.y, np.log(r)))
    prior = float(((PRIOR_A - 1.0) * -np.logaddexp(0.0, -phi) + (PRIOR_B - 1.0) * -np.logaddexp(0.0, phi)).sum())
    return likelihood + prior + float(theta_prior(theta)[0].sum())


def derivatives(theta: np.ndarray, phi: np.ndarray, cells: CrowdCells, hessian: bool = True, terms=None):
    """Gradient (gθ, gφ) and, with ``hessian``, the Hessian blocks (A: θθ, M × M; B: θφ, M × K; D: the
    diagonal of the φφ block) of :func:`log_posterior`."""
    m, k = cells.n_models, cells.n_annotators
    s, t, eta, not_eta, q, r = _terms(theta, phi, cells) if terms is None else terms
    st, en, sign_eta, sign_s = s * t, eta * not_eta, eta - not_eta, s - t
    q_d = sign_eta * st  # ∂q/∂d, d = θ_i − θ_j
    q_phi = sign_s * en  # ∂q/∂φ
    losses = cells.n - cells.y
    g = cells.y / q - losses / r  # ∂ℓ/∂q
    e_phi, not_e_phi = expit(phi), expit(-phi)
    gq_d = g * q_d
    grad_theta = (np.bincount(cells.left, weights=gq_d, minlength=m)
                  - np.bincount(cells.right, weights=gq_d, minlength=m) + theta_prior(theta)[1])
    grad_phi = (np.bincount(cells.annotator, weights=g * q_phi, minlength=k)
                + (PRIOR_A - 1.0) * not_e_phi - (PRIOR_B - 1.0) * e_phi)
    if not hessian:
        return grad_theta, grad_phi
    h = -cells.y / q ** 2 - losses / r ** 2  # ∂²ℓ/∂q²
    l_dd = h * q_d * q_d - gq_d * sign_s  # ∂²q/∂d² = (2η − 1)·s(1 − s)(1 − 2s)
    l_pp = h * q_phi * q_phi - g * q_phi * sign_eta  # ∂²q/∂φ² = (2s − 1)·η(1 − η)(1 − 2η)
    l_dp = h * q_d * q_phi + g * 2.0 * st * en  # ∂²q/∂d∂φ = 2·s(1 − s)·η(1 − η)
    a = np.bincount(cells.pair_key, weights=l_dd, minlength=m * m).reshape(m, m)
    a = -(a + a.T)
    a[np.diag_indices(m)] = (np.bincount(cells.left, weights=l_dd, minlength=m)
                             + np.bincount(cells.right, weights=l_dd, minlength=m) + theta_prior(theta)[2])
    b = (np.bincount(cells.left_key, weights=l_dp, minlength=m * k)
         - np.bincount(cells.right_key, weights=l_dp, minlength=m * k)).reshape(m, k)
    d = (np.bincount(cells.annotator, weights=l_pp, minlength=k)
         - (PRIOR_A + PRIOR_B - 2.0) * e_phi * not_e_phi)
    return grad_theta, grad_phi, a, b, d


def _newton_step(grad_theta, grad_phi, a, b, d, damping: float, hold_phi: bool):
    """The step of damped Newton on −log posterior, (−H + μI) δ = g, through the Schur complement of the
    diagonal φ block; None when the damped matrix is not positive definite. Products by einsum: these small
    matrices do not gain from a threaded BLAS, which a busy machine slows down."""
    m = len(grad_theta)
    if hold_phi:
        a_f = -a + damping * np.eye(m)
        try:
            chol = np.linalg.cholesky(a_f)
        except np.linalg.LinAlgError:
            return None
        return _cho_solve(chol, grad_theta), np.zeros_like(grad_phi)
    d_f = -d + damping
    if not (d_f > 0).all():
        return None
    b_scaled = b / d_f  # B D⁻¹ (the φ block of −H is −B, but the signs cancel in B D⁻¹ Bᵀ)
    schur = -a + damping * np.eye(m) - np.einsum("ik,jk->ij", b_scaled, b)
    try:
        chol = np.linalg.cholesky(schur)
    except np.linalg.LinAlgError:
        return None
    step_theta = _cho_solve(chol, grad_theta + np.einsum("ik,k->i", b_scaled, grad_phi))
    step_phi = (grad_phi + np.einsum("ik,i->k", b, step_theta)) / d_f
    return step_theta, step_phi


def _cho_solve(chol: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    return np.linalg.solve(chol.T, np.linalg.solve(chol, rhs))


def _maximise(theta, phi, cells: CrowdCells, hold_phi: bool) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """Damped Newton (Levenberg–Marquardt on the Hessian) with a step accepted only when the objective
    rises: monotone, and plain Newton (quadratic) once the damping has fallen to zero near the mode."""
    terms = _terms(theta, phi, cells)
    value = log_posterior(theta, phi, cells, terms)
    damping = 0.0
    for iteration in range(1, MAX_ITERATIONS + 1):
        grad_theta, grad_phi, a, b, d = derivatives(theta, phi, cells, terms=terms)
        while True:
            step = _newton_step(grad_theta, grad_phi, a, b, d, damping, hold_phi)
            if step is not None:
                step_theta, step_phi = step
                largest = max(np.abs(step_theta).max(initial=0.0), np.abs(step_phi).max(initial=0.0))
                scale = min(1.0, MAX_STEP / largest) if largest > 0 else 1.0
                new_theta, new_phi = theta + scale * step_theta, phi + scale * step_phi
                new_terms = _terms(new_theta, new_phi, cells)
                new_value = log_posterior(new_theta, new_phi, cells, new_terms)
                if new_value >= value - 1e-12 * abs(value):
                    break
            if largest_damping_reached(damping):
                return theta, phi, iteration, False
            damping = max(1e-6, damping * 10.0) if damping else 1e-6 * (1.0 + np.abs(a).max())
        theta, phi, value, terms = new_theta, new_phi, new_value, new_terms
        damping = damping / 10.0 if damping > 1e-12 else 0.0
        if scale * largest < TOLERANCE:
            return theta, phi, iteration, True
    return theta, phi, MAX_ITERATIONS, False


def largest_damping_reached(damping: float) -> bool:
    return damping > 1e12


def fit_crowd(cells: CrowdCells) -> CrowdFit:
    """The joint mode of docs/methods.md §16: θ first with every η at the prior's mode (a BT fit whose
    orientation the majority of votes sets), then θ and η together from there."""
    mode = np.log((PRIOR_A - 1.0) / (PRIOR_B - 1.0))
    theta, _, first, _ = _maximise(np.zeros(cells.n_models), np.full(1, mode), _pooled(cells), hold_phi=True)
    theta, phi, iterations, converged = _maximise(theta, np.full(cells.n_annotators, mode), cells, hold_phi=False)
    cov_theta, var_phi = _inverse_information(*derivatives(theta, phi, cells)[2:])
    return CrowdFit(theta, expit(phi), cov_theta, var_phi, first + iterations, converged,
                    log_posterior(theta, phi, cells))


def _pooled(cells: CrowdCells) -> CrowdCells:
    """The cells summed over annotators: with one η for everyone the likelihood only needs the pairs."""
    pairs, index = np.unique(cells.pair_key, return_inverse=True)
    m = cells.n_models
    return _with_keys(np.zeros(len(pairs), dtype=np.int64), pairs // m, pairs % m,
                      np.bincount(index, weights=cells.y), np.bincount(index, weights=cells.n), m, 1,
                      np.array([cells.votes.sum()]))


def _inverse_information(a, b, d) -> tuple[np.ndarray, np.ndarray]:
    """The θ block and the φ diagonal of (−H)⁻¹ by block inversion (−H = [[−A, −B], [−Bᵀ, −D]], D diagonal)."""
    d_f = np.maximum(-d, 1e-12)
    b_scaled = b / d_f
    schur = -a - np.einsum("ik,jk->ij", b_scaled, b)
    cov_theta = np.linalg.pinv(schur, hermitian=True)
    var_phi = 1.0 / d_f + np.einsum("ik,ij,jk->k", b_scaled, cov_theta, b_scaled)
    return cov_theta, np.maximum(var_phi, 0.0)
