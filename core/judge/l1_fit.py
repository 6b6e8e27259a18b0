"""AlpacaEval's own per-model fit of the length-controlled GLM (docs/methods.md §12, "The per-model fit").

AlpacaEval's ``fit_LogisticRegressionCV`` (``src/alpaca_eval/metrics/glm_winrate.py``) fits each model's
logit P = a·tanh(Δ) + b·γ + c with scikit-learn's ``LogisticRegressionCV(penalty="l1", solver="liblinear",
fit_intercept=False, Cs=10, cv=GroupKFold(5))``: every coefficient, c included, carries an L1 penalty, and the
penalty weight 1/C is chosen from ``numpy.logspace(-4, 4, 10)`` by 5-fold cross-validation on the soft log
loss, the folds grouping each prompt's two soft-label rows. Reproduced here with numpy only:

* :func:`fold_of_rows`: scikit-learn's GroupKFold split rule on the model's rows in file order;
* :func:`fit_l1`: the exact minimiser of ‖w‖₁ − C·Σₓ wₓ [pₓ ηₓ − log(1 + e^ηₓ)] by proximal Newton steps
  (each 3-coefficient subproblem solved exactly over its 27 sign patterns), batched over models and folds;
* :func:`choose_penalty`: every C on every fold, scored as AlpacaEval's ``logloss_continuous`` (σ clipped to
  [10⁻¹⁵, 1 − 10⁻¹⁵], mean over the held-out prompts), the C with the largest summed score (the first on a
  tie: the smallest), then one refit on all of the model's prompts.
"""

from __future__ import annotations

import numpy as np

from core.judge.difficulty import MAX_HALVINGS, logistic_parts
from core.ranking.bradley_terry import ConvergenceError

PENALTY_GRID = np.logspace(-4, 4, 10)  # LogisticRegressionCV(Cs=10): the C values tried
N_SPLITS = 5  # GlM_INFO["length_controlled_v1"]["kwargs"]["n_splits"]
LOGLOSS_CLIP = 1e-15  # AlpacaEval's logloss clips the prediction to [ε, 1 − ε]
LOGIT_CLIP = float(np.log((1.0 - LOGLOSS_CLIP) / LOGLOSS_CLIP))
L1_TOLERANCE = 1e-10  # proximal Newton stops when no coefficient moves by more than this (relative to the largest)
# The fits that only score a C: their held-out log loss is exact to ~1e-12 when the coefficients are to 1e-6, far
# below the gaps between the scores of neighbouring Cs; the refit at the chosen C is exact to L1_TOLERANCE.
CV_TOLERANCE = 1e-6
# Members fitted together: a chunk's (members × prompts) arrays stay in the CPU cache through an iteration's dozens
# of passes (2-3 times faster than one batch of every member at 250 models × 805 prompts).
CHUNK = 64
L1_MAX_ITER = 200
ARMIJO = 1e-4  # sufficient decrease of the line search


def fold_of_rows(n_rows: int, n_splits: int = N_SPLITS) -> np.ndarray:
    """The fold (0 … n_splits − 1) of each of a model's rows, in the order the file gives them.

    AlpacaEval duplicates each row (label 1 weighted p, label 0 weighted 1 − p) and groups the two copies, so
    every group has size 2. scikit-learn's GroupKFold (≥ 1.6) sorts the groups by size with a stable
    ``numpy.argsort``, reverses that order (largest first) and puts each group into the fold with the fewest
    samples so far, the first such fold on a tie: with equal sizes a round robin over the rows in reverse order,
    row r of n in fold (n − 1 − r) mod n_splits.
    """
    if n_rows < n_splits:
        raise ValueError(f"{n_rows} rows cannot be split into {n_splits} folds")
    sizes = np.full(n_rows, 2, dtype=np.int64)
    order = np.argsort(sizes, kind="stable")[::-1]
    folds = np.empty(n_rows, dtype=np.int64)
    folds[order] = np.arange(n_rows) % n_splits
    return folds


def greedy_group_folds(group_sizes: np.ndarray, n_splits: int = N_SPLITS) -> np.ndarray:
    """scikit-learn's GroupKFold rule written out for any group sizes (the reference :func:`fold_of_rows` is
    tested against)."""
    order = np.argsort(group_sizes, kind="stable")[::-1]
    fold_load = np.zeros(n_splits, dtype=np.int64)
    folds = np.empty(len(group_sizes), dtype=np.int64)
    for group in order:
        lightest = int(np.argmin(fold_load))
        folds[group] = lightest
        fold_load[lightest] += group_sizes[group]
    return folds


def _linear(coef: np.ndarray, tanh_gap: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """(B, X) η = a·tanh Δ + b·γ + c for each member's coefficients (B, 3)."""
    return coef[:, 0:1] * tanh_gap + coef[:, 1:2] * gamma[None, :] + coef[:, 2:3]


def _objective(coef, tanh_gap, gamma, preference, weights, penalty):
    eta = _linear(coef, tanh_gap, gamma)
    softplus, sigmoid = logistic_parts(eta)
    loss = (weights * (softplus - preference * eta)).sum(axis=1)
    return np.abs(coef).sum(axis=1) + penalty * loss, sigmoid


def _derivatives(tanh_gap, gamma, preference, weights, mu, penalty):
    """Gradient (B, 3) and Hessian (B, 3, 3) of C·Σ w [log(1 + e^η) − p η]: sums written out, γ's by matrix
    products (the columns are tanh Δ, γ, 1)."""
    resid = weights * (mu - preference)
    curv = weights * mu * (1.0 - mu)
    curv_t = curv * tanh_gap
    grad = np.stack([np.einsum("bx,bx->b", resid, tanh_gap), resid @ gamma, resid.sum(1)], axis=1)
    h_tt, h_tg, h_t1 = np.einsum("bx,bx->b", curv_t, tanh_gap), curv_t @ gamma, curv_t.sum(1)
    h_gg, h_g1, h_11 = curv @ (gamma * gamma), curv @ gamma, curv.sum(1)
    hess = np.stack([np.stack([h_tt, h_tg, h_t1], 1), np.stack([h_tg, h_gg, h_g1], 1),
                     np.stack([h_t1, h_g1, h_11], 1)], axis=1)
    return penalty[:, None] * grad, penalty[:, None, None] * hess


_SIGNS = np.array(np.meshgrid([-1.0, 0.0, 1.0], [-1.0, 0.0, 1.0], [-1.0, 0.0, 1.0], indexing="ij")).reshape(3, -1).T


def _subproblem(coef, grad, hess, fixed):
    """argmin_z gᵀ(z − w) + ½ (z − w)ᵀ H (z − w) + ‖z‖₁ per batch member, exactly.

    Each of the 27 sign patterns s ∈ {−1, 0, 1}³ fixes the coordinates with s = 0 at 0 and solves the
    stationarity equations H_FF z_F = H_F· w − g_F − s_F of the others; the candidates whose signs agree with
    their pattern are points where the model equals the true objective, and the minimiser is one of them.
    """
    n = len(coef)
    free = _SIGNS != 0.0  # (27, 3)
    allowed = ~(free[None, :, :] & fixed[:, None, :]).any(axis=2)  # (B, 27): no sign on a coefficient held at 0
    mask = free[None, :, :, None] & free[None, :, None, :]
    system = np.where(mask, hess[:, None, :, :], np.eye(3)[None, None])  # the identity on the held coordinates
    rhs = np.einsum("bkl,bl->bk", hess, coef)[:, None, :] - grad[:, None, :] - _SIGNS[None, :, :]
    rhs = np.where(free[None], rhs, 0.0)
    scale = np.maximum(np.abs(np.einsum("bkk->b", hess)), 1e-300)[:, None, None, None]
    system = system + 1e-14 * scale * np.where(mask, np.eye(3)[None, None], 0.0)  # keeps a singular H solvable
    z = np.linalg.solve(system, rhs[..., None])[..., 0]  # (B, 27, 3)
    consistent = np.all(z * _SIGNS[None] >= 0.0, axis=2) & allowed
    d = z - coef[:, None, :]
    value = np.einsum("bk,bpk->bp", grad, d) + 0.5 * np.einsum("bpk,bkl,bpl->bp", d, hess, d) + np.abs(z).sum(2)
    value = np.where(consistent, value, np.inf)
    return z[np.arange(n), np.argmin(value, axis=1)]


def _take(rows, n, *arrays):
    """The members ``rows`` of each (B, …) array; the arrays themselves (no copy) when that is all of them."""
    if len(rows) == n:
        return arrays
    return tuple(a[rows] for a in arrays)


def fit_l1(tanh_gap: np.ndarray, gamma: np.ndarray, preference: np.ndarray, weights: np.ndarray,
           penalty: np.ndarray, fixed: np.ndarray, start: np.ndarray | None = None,
           tolerance: float = L1_TOLERANCE) -> np.ndarray:
    """(B, 3) minimisers of ‖w‖₁ + C·Σₓ wₓ [log(1 + e^η) − p η], η = a·tanh Δ + b·γ + c, one per batch member.

    ``tanh_gap``, ``preference`` and ``weights`` (B, X) (weight 0 leaves a row out), ``gamma`` (X,), ``penalty``
    (B,) the C of each member, ``fixed`` (B, 3) coefficients held at 0 (a length term that does not vary).
    liblinear's objective with sample weights (docs/methods.md §12); proximal Newton with a backtracking line
    search, exact to ``tolerance``. Fitted :data:`CHUNK` members at a time.
    """
    coef = np.zeros((len(penalty), 3)) if start is None else np.where(fixed, 0.0, start)
    for part in np.array_split(np.arange(len(penalty)), max(1, -(-len(penalty) // CHUNK))):
        if len(part):
            coef[part] = _fit_chunk(tanh_gap[part], gamma, preference[part], weights[part], penalty[part],
                                    fixed[part], coef[part], tolerance)
    return coef


def _fit_chunk(tanh_gap, gamma, preference, weights, penalty, fixed, coef, tolerance):
    n = len(penalty)
    value, mu = _objective(coef, tanh_gap, gamma, preference, weights, penalty)
    active = np.arange(n)
    for _ in range(L1_MAX_ITER):
        if not len(active):
            return coef
        t_r, p_r, w_r, mu_r = _take(active, n, tanh_gap, preference, weights, mu)
        grad, hess = _derivatives(t_r, gamma, p_r, w_r, mu_r, penalty[active])
        fix = fixed[active]
        grad = np.where(fix, 0.0, grad)
        target = _subproblem(coef[active], grad, hess, fix)
        step = target - coef[active]
        small = np.abs(step).max(axis=1) < tolerance * np.maximum(1.0, np.abs(coef[active]).max(axis=1))
        coef[active[small]] = target[small]
        rows, step, grad = active[~small], step[~small], grad[~small]
        if not len(rows):
            return coef
        decrease = (grad * step).sum(axis=1) + np.abs(coef[rows] + step).sum(axis=1) - np.abs(coef[rows]).sum(axis=1)
        # A predicted decrease below rounding: the member is at its minimum (a separated fit creeps on forever).
        flat = -decrease <= 1e-13 * np.maximum(1.0, np.abs(value[rows]))
        coef[rows[flat]] = coef[rows[flat]] + step[flat]
        rows, step, decrease = rows[~flat], step[~flat], decrease[~flat]
        if not len(rows):
            return coef
        t = np.ones(len(rows))
        pending = np.ones(len(rows), dtype=bool)
        for _ in range(MAX_HALVINGS):
            sub = np.flatnonzero(pending)
            members = rows[sub]
            cand = coef[members] + t[sub, None] * step[sub]
            t_m, p_m, w_m = _take(members, n, tanh_gap, preference, weights)
            cand_value, cand_mu = _objective(cand, t_m, gamma, p_m, w_m, penalty[members])
            slack = 1e-13 * np.maximum(1.0, np.abs(value[members]))
            ok = cand_value <= value[members] + ARMIJO * t[sub] * decrease[sub] + slack
            done = members[ok]
            coef[done], value[done], mu[done] = cand[ok], cand_value[ok], cand_mu[ok]
            pending[sub[ok]] = False
            if not pending.any():
                break
            t[pending] *= 0.5
        active = rows[~pending]  # a member no step improves sits at its minimum up to rounding
    raise ConvergenceError("length-controlled L1 GLM: proximal Newton did not converge", L1_MAX_ITER)


def held_out_score(coef: np.ndarray, tanh_gap: np.ndarray, gamma: np.ndarray, preference: np.ndarray,
                   held_out: np.ndarray) -> np.ndarray:
    """AlpacaEval's CV score of each member: minus the mean soft log loss over its held-out rows."""
    # p log σ + (1 − p) log(1 − σ) = p η − log(1 + e^η); clipping σ to [ε, 1 − ε] is clipping η to ±logit(1 − ε).
    eta = np.clip(_linear(coef, tanh_gap, gamma), -LOGIT_CLIP, LOGIT_CLIP)
    loss = preference * eta - logistic_parts(eta)[0]
    return np.einsum("bx,bx->b", held_out, loss) / held_out.sum(axis=1)


def choose_penalty(tanh_gap: np.ndarray, gamma: np.ndarray, preference: np.ndarray, weights: np.ndarray,
                   folds: np.ndarray, fixed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every model's C by grouped K-fold cross-validation over :data:`PENALTY_GRID`, and the refit at it.

    ``tanh_gap``, ``preference``, ``weights`` (M, X); ``gamma`` (X,); ``folds`` (M, X) each row's fold (−1 where
    the model has no row); ``fixed`` (M, 3). Returns ``(coef (M, 3), C (M,))``. The Cs are fitted in increasing
    order, each fold warm-started at the previous C's solution (the solutions are exact, so only the speed
    depends on it).
    """
    n_models, n_prompts = preference.shape
    n_splits = int(folds.max()) + 1 if folds.size else N_SPLITS
    held = np.stack([(folds == k) & (weights > 0) for k in range(n_splits)], axis=1)  # (M, K, X)
    batch = (n_models * n_splits, n_prompts)
    tanh_rep = np.repeat(tanh_gap, n_splits, axis=0)
    pref = np.repeat(preference, n_splits, axis=0)
    train = (np.repeat(weights, n_splits, axis=0) * ~held.reshape(batch))
    test = held.reshape(batch).astype(float)
    fix = np.repeat(fixed, n_splits, axis=0)
    scores = np.empty((len(PENALTY_GRID), n_models))
    paths = np.empty((len(PENALTY_GRID), n_models * n_splits, 3))
    # At w = 0 (σ = ½) the gradient of the loss per unit C is g₀; while C·|g₀| ≤ 1 in every coordinate, w = 0 is
    # the exact minimiser (the L1 optimality condition) and that member needs no fit at that C.
    resid0 = train * (0.5 - pref)
    g0 = np.abs(np.stack([np.einsum("bx,bx->b", resid0, tanh_rep), resid0 @ gamma, resid0.sum(1)], axis=1))
    g0 = np.where(fix, 0.0, g0).max(axis=1)
    coef = np.zeros((batch[0], 3))
    for i, c in enumerate(PENALTY_GRID):
        moving = np.flatnonzero(c * g0 > 1.0)
        if len(moving):
            coef[moving] = fit_l1(tanh_rep[moving], gamma, pref[moving], train[moving], np.full(len(moving), c),
                                  fix[moving], start=coef[moving], tolerance=CV_TOLERANCE)
        paths[i] = coef
        scores[i] = held_out_score(coef, tanh_rep, gamma, pref, test).reshape(n_models, n_splits).sum(axis=1)
    best = np.argmax(scores, axis=0)  # the first maximum: the smallest C on a tie, as scikit-learn's argmax
    chosen = PENALTY_GRID[best]
    start = paths[best, np.arange(n_models) * n_splits]  # any fold's solution is a close start
    full = fit_l1(tanh_gap, gamma, preference, weights, chosen, fixed, start=start)
    return full, chosen


def refit_l1(tanh_gap: np.ndarray, gamma: np.ndarray, preference: np.ndarray, weights: np.ndarray,
             penalty: np.ndarray, fixed: np.ndarray, start: np.ndarray | None = None,
             tolerance: float = L1_TOLERANCE) -> np.ndarray:
    """Every model's L1 GLM at a given C (M,): the bootstrap's refit at the C chosen on the full data."""
    return fit_l1(tanh_gap, gamma, preference, weights, penalty, fixed, start=start, tolerance=tolerance)
