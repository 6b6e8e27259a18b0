"""AlpacaEval's own per-model fit of the length-controlled GLM (docs/methods.md §12, "The per-model fit").

AlpacaEval's ``fit_LogisticRegressionCV`` (``src/alpaca_eval/metrics/glm_winrate.py``) fits each model's
logit P = a·tanh(Δ) + b·γ + c with scikit-learn's ``LogisticRegressionCV(penalty="l1", solver="liblinear",
fit_intercept=False, Cs=10, cv=GroupKFold(5))``: every coefficient, c included, carries an L1 penalty, and the
penalty weight 1/C is chosen from ``numpy.logspace(-4, 4, 10)`` by 5-fold cross-validation on the soft log
loss, the folds grouping each prompt's two soft-label rows. Reproduced here with numpy only:

* :func:`fold_of_rows`: scikit-learn's GroupKFold split rule on the model's rows in file order;
* :func:`fit_l1`: the exact minimiser of ‖w‖₁ − C·Σₓ wₓ [pₓ ηₓ − log(1 + e^ηₓ)] by proximal Newton steps
  (each 3-coefficient subproblem solved by coordinate descent), batched over models and folds;
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
L1_TOLERANCE = 1e-10  # proximal Newton stops when no coefficient moves by more than this
L1_MAX_ITER = 200
CD_SWEEPS = 200  # coordinate-descent sweeps of one 3-coefficient subproblem (it stops earlier once exact)
ARMIJO = 1e-4  # sufficient decrease of the line search


def fold_of_rows(n_rows: int, n_splits: int = N_SPLITS) -> np.ndarray:
    """The fold (0 … n_splits − 1) of each of a model's rows, in the order the file gives them.

    AlpacaEval duplicates each row (label 1 weighted p, label 0 weighted 1 − p) and groups the two copies, so
    every group has size 2. scikit-learn's GroupKFold sorts the groups by size with ``numpy.argsort`` (called
    here the same way, so equal sizes come out in the same order on this machine), reverses that order
    (largest first) and puts each group into the fold with the fewest samples so far, the first such fold on a
    tie: with equal sizes that is a round robin over the reversed order.
    """
    if n_rows < n_splits:
        raise ValueError(f"{n_rows} rows cannot be split into {n_splits} folds")
    sizes = np.full(n_rows, 2, dtype=np.int64)
    order = np.argsort(sizes)[::-1]
    folds = np.empty(n_rows, dtype=np.int64)
    folds[order] = np.arange(n_rows) % n_splits
    return folds


def greedy_group_folds(group_sizes: np.ndarray, n_splits: int = N_SPLITS) -> np.ndarray:
    """scikit-learn's GroupKFold rule written out for any group sizes (the reference :func:`fold_of_rows` is
    tested against)."""
    order = np.argsort(group_sizes)[::-1]
    fold_load = np.zeros(n_splits, dtype=np.int64)
    folds = np.empty(len(group_sizes), dtype=np.int64)
    for group in order:
        lightest = int(np.argmin(fold_load))
        folds[group] = lightest
        fold_load[lightest] += group_sizes[group]
    return folds


def _design(tanh_gap: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """(…, X, 3): the columns tanh Δ, γ and 1 (AlpacaEval's not_gamed_baseline) of each row."""
    return np.stack([tanh_gap, np.broadcast_to(gamma, tanh_gap.shape), np.ones_like(tanh_gap)], axis=-1)


def _objective(coef, design, preference, weights, penalty):
    eta = np.einsum("bxk,bk->bx", design, coef)
    softplus, sigmoid = logistic_parts(eta)
    loss = -(weights * (preference * eta - softplus)).sum(axis=1)
    return np.abs(coef).sum(axis=1) + penalty * loss, sigmoid


def _subproblem(coef, grad, hess, fixed):
    """argmin_z gᵀ(z − w) + ½ (z − w)ᵀ H (z − w) + ‖z‖₁ per batch member, by cyclic coordinate descent."""
    z = coef.copy()
    diag = np.where(fixed, 1.0, np.einsum("bkk->bk", hess))
    for _ in range(CD_SWEEPS):
        moved = np.zeros(len(z))
        for j in range(3):
            r = grad[:, j] + np.einsum("bk,bk->b", hess[:, j, :], z - coef)
            target = z[:, j] - r / diag[:, j]
            new = np.sign(target) * np.maximum(np.abs(target) - 1.0 / diag[:, j], 0.0)
            new = np.where(fixed[:, j], 0.0, new)
            moved = np.maximum(moved, np.abs(new - z[:, j]))
            z[:, j] = new
        if moved.max(initial=0.0) <= 1e-15 * max(1.0, np.abs(z).max(initial=0.0)):
            break
    return z


def fit_l1(design: np.ndarray, preference: np.ndarray, weights: np.ndarray, penalty: np.ndarray,
           fixed: np.ndarray, start: np.ndarray | None = None, tolerance: float = L1_TOLERANCE) -> np.ndarray:
    """(B, 3) minimisers of ‖w‖₁ + C·Σₓ wₓ [log(1 + e^η) − p η], η = design · w, one per batch member.

    ``design`` (B, X, 3), ``preference`` and ``weights`` (B, X) (weight 0 leaves a row out), ``penalty`` (B,)
    the C of each member, ``fixed`` (B, 3) coefficients held at 0 (a length term that does not vary).
    liblinear's objective with sample weights (docs/methods.md §12); proximal Newton with a backtracking line
    search, exact to ``tolerance``.
    """
    n = len(penalty)
    coef = np.zeros((n, 3)) if start is None else np.where(fixed, 0.0, start)
    value, mu = _objective(coef, design, preference, weights, penalty)
    active = np.ones(n, dtype=bool)
    for _ in range(L1_MAX_ITER):
        rows = np.flatnonzero(active)
        if not len(rows):
            return coef
        d_r, c_r, w_r = design[rows], penalty[rows, None], weights[rows]
        resid = w_r * (mu[rows] - preference[rows])
        curv = w_r * mu[rows] * (1.0 - mu[rows])
        grad = c_r * np.einsum("bx,bxk->bk", resid, d_r)
        hess = c_r[:, :, None] * np.einsum("bx,bxk,bxl->bkl", curv, d_r, d_r)
        fix = fixed[rows]
        grad = np.where(fix, 0.0, grad)
        target = _subproblem(coef[rows], grad, hess, fix)
        step = target - coef[rows]
        small = np.abs(step).max(axis=1) < tolerance
        coef[rows[small]] = target[small]
        active[rows[small]] = False
        rows, step = rows[~small], step[~small]
        if not len(rows):
            continue
        decrease = (grad[~small] * step).sum(axis=1) + np.abs(coef[rows] + step).sum(axis=1) \
            - np.abs(coef[rows]).sum(axis=1)
        t = np.ones(len(rows))
        pending = np.ones(len(rows), dtype=bool)
        for _ in range(MAX_HALVINGS):
            sub = np.flatnonzero(pending)
            members = rows[sub]
            cand = coef[members] + t[sub, None] * step[sub]
            cand_value, cand_mu = _objective(cand, design[members], preference[members], weights[members],
                                             penalty[members])
            slack = 1e-13 * np.maximum(1.0, np.abs(value[members]))
            ok = cand_value <= value[members] + ARMIJO * t[sub] * decrease[sub] + slack
            done = members[ok]
            coef[done], value[done], mu[done] = cand[ok], cand_value[ok], cand_mu[ok]
            pending[sub[ok]] = False
            if not pending.any():
                break
            t[pending] *= 0.5
        active[rows[pending]] = False  # no step decreases the objective: at its minimum up to rounding
    raise ConvergenceError("length-controlled L1 GLM: proximal Newton did not converge", L1_MAX_ITER)


def held_out_score(coef: np.ndarray, design: np.ndarray, preference: np.ndarray, held_out: np.ndarray
                   ) -> np.ndarray:
    """AlpacaEval's CV score of each member: minus the mean soft log loss over its held-out rows."""
    eta = np.einsum("bxk,bk->bx", design, coef)
    pred = np.clip(logistic_parts(eta)[1], LOGLOSS_CLIP, 1.0 - LOGLOSS_CLIP)
    loss = preference * np.log(pred) + (1.0 - preference) * np.log(1.0 - pred)
    return (held_out * loss).sum(axis=1) / held_out.sum(axis=1)


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
    design = _design(np.repeat(tanh_gap, n_splits, axis=0), gamma)
    pref = np.repeat(preference, n_splits, axis=0)
    train = (np.repeat(weights, n_splits, axis=0) * ~held.reshape(batch))
    test = held.reshape(batch).astype(float)
    fix = np.repeat(fixed, n_splits, axis=0)
    scores = np.empty((len(PENALTY_GRID), n_models))
    paths = np.empty((len(PENALTY_GRID), n_models * n_splits, 3))
    coef = None
    for i, c in enumerate(PENALTY_GRID):
        coef = fit_l1(design, pref, train, np.full(batch[0], c), fix, start=coef)
        paths[i] = coef
        scores[i] = held_out_score(coef, design, pref, test).reshape(n_models, n_splits).sum(axis=1)
    best = np.argmax(scores, axis=0)  # the first maximum: the smallest C on a tie, as scikit-learn's argmax
    chosen = PENALTY_GRID[best]
    start = paths[best, np.arange(n_models) * n_splits]  # any fold's solution is a close start
    full = fit_l1(_design(tanh_gap, gamma), preference, weights, chosen, fixed, start=start)
    return full, chosen


def refit_l1(tanh_gap: np.ndarray, gamma: np.ndarray, preference: np.ndarray, weights: np.ndarray,
             penalty: np.ndarray, fixed: np.ndarray, start: np.ndarray | None = None,
             tolerance: float = L1_TOLERANCE) -> np.ndarray:
    """Every model's L1 GLM at a given C (M,): the bootstrap's refit at the C chosen on the full data."""
    return fit_l1(_design(tanh_gap, gamma), preference, weights, penalty, fixed, start=start, tolerance=tolerance)
