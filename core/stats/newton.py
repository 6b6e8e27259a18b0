"""Generic numerics for concave log-likelihoods: a damped Newton maximiser and an exact test for a
direction of recession, i.e. for data whose MLE is infinite or not unique (Albert & Anderson 1984,
Biometrika 71:1–10). Used by the Davidson tie model and the covariate-adjusted Bradley–Terry fit.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

LP_TOLERANCE = 1e-9  # HiGHS returns objective values accurate to ~1e-9 on these box-bounded LPs
MAX_HALVINGS = 60  # 2⁻⁶⁰ ≈ 1e-18: beyond this a step cannot change a double-precision parameter


def newton_maximise(objective: Callable, x0: np.ndarray, tol: float, max_iter: int,
                    feasible: Callable[[np.ndarray], bool] | None = None) -> tuple[np.ndarray, int, bool]:
    """Damped Newton ascent on a concave function; returns ``(x, iterations, converged)``.

    ``objective(x)`` returns ``(value, gradient, hessian)``. Full Newton steps are halved until the value
    does not decrease (and ``feasible`` holds), which makes the iteration globally convergent on a concave
    objective with a finite maximiser. Convergence: the largest Newton step is below ``tol``.
    """
    # scipy loads lazily: `evalboard rank` of plain BT never needs it (its import: ~2 s on a busy 2-core machine)
    from scipy.linalg import LinAlgError, lstsq, solve

    x = np.asarray(x0, dtype=float).copy()
    value, grad, hess = objective(x)
    for it in range(1, max_iter + 1):
        try:
            step = solve(-hess, grad, assume_a="pos")
        except (LinAlgError, ValueError):
            # A nearly singular Hessian far from the optimum: the minimum-norm step still ascends.
            step = lstsq(-hess, grad)[0]
        if np.max(np.abs(step)) < tol:
            return x + step, it, True
        t = 1.0
        for _ in range(MAX_HALVINGS):
            cand = x + t * step
            if feasible is None or feasible(cand):
                new = objective(cand)
                # Tiny relative slack: at the optimum rounding can make an exact ascent look like a loss.
                if np.isfinite(new[0]) and new[0] >= value - 1e-13 * max(1.0, abs(value)):
                    break
            t *= 0.5
        else:
            # No step improves the value: we sit at the maximum up to rounding.
            decrement = float(grad @ step)
            return x, it, decrement < 1e-9 * max(1.0, abs(value))
        x = cand
        value, grad, hess = new
    return x, max_iter, False


def has_recession_direction(a_le: np.ndarray) -> bool:
    """True when some v ≠ 0 satisfies ``a_le @ v <= 0`` (every row).

    For the models here each row is a limit condition under which one observed outcome's probability
    does not tend to 0 as the parameters move along v; such a v means the likelihood never decreases
    along it, so the MLE is infinite (separation) or not unique (a flat direction). Exact test: v ≠ 0
    exists iff ``a_le`` is rank deficient (a flat direction) or the LP max Σ(−a_le·v), |v| ≤ 1, is > 0.
    """
    # scipy loads lazily: `evalboard rank` of plain BT never needs it (its import: ~2 s on a busy 2-core machine)
    from scipy.optimize import linprog

    a_le = np.asarray(a_le, dtype=float)
    p = a_le.shape[1]
    if p == 0:
        return False
    if a_le.shape[0] == 0 or np.linalg.matrix_rank(a_le) < p:
        return True
    res = linprog(c=a_le.sum(axis=0), A_ub=a_le, b_ub=np.zeros(a_le.shape[0]), bounds=[(-1.0, 1.0)] * p,
                  method="highs")
    return bool(res.status == 0 and -res.fun > LP_TOLERANCE * max(1.0, np.abs(a_le).max()))
