"""Friedman test, Iman–Davenport F and the Nemenyi critical difference over tasks (docs/methods.md §8).

Demšar (2006, JMLR 7:1) compares k models over N tasks by their ranks within each task. Only the
tasks scored by all k models enter (a rank among a subset of models is not comparable). Ranks run
from 1 = best (highest score), ties share the average rank. Task weights do not enter: the test is
about how often and how consistently one model outranks another, task by task.

The recommended statistic is the tie-corrected χ²_F, which is what ``scipy.stats.friedmanchisquare``
returns (it divides Demšar's χ²_F by C = 1 − Σ(t³ − t)/(N k (k² − 1)), identical when no task has
ties); it is computed here by that formula because scipy refuses k = 2. Iman–Davenport's F_F is
formed from the recommended χ²_F. Demšar: the Nemenyi post-hoc comparison is made only after the
Friedman test rejects, so :attr:`FriedmanResult.different_pairs` is empty unless ``reject``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from core.errors import EvalBoardError
from core.validation import check_alpha

__all__ = ["FriedmanError", "FriedmanResult", "friedman", "iman_davenport", "nemenyi_q"]


class FriedmanError(EvalBoardError, ValueError):
    """A Friedman argument is malformed; the message names the argument."""


@dataclass(frozen=True)
class FriedmanResult:
    """Friedman / Iman–Davenport / Nemenyi over the N tasks scored by all k models.

    ``mean_ranks`` maps model → R_j (1 = best) in the order of the input's index. ``chi2`` and
    ``p_value`` are tie-corrected (recommended), ``chi2_uncorrected`` is Demšar's formula; NaN when
    every task is a complete tie (C = 0). ``ff``/``ff_p_value`` are Iman–Davenport with
    ``df1 = k − 1``, ``df2 = (k − 1)(N − 1)``; NaN when χ²_F reaches N(k − 1) (every task ranks the
    models identically: F_F divides by the within-task disagreement, which is zero, so it would be
    infinite with p = 0 whatever N). ``note`` says which statistic is undefined and why.
    ``q_alpha`` and ``cd`` are the Nemenyi critical value and difference. ``reject`` = p < alpha.
    ``different_pairs`` lists (model_i, model_j), i before j in input order, with |R_i − R_j| > CD,
    and only when ``reject`` (Demšar: post-hoc only after rejection); it is () otherwise.
    """

    n_tasks: int
    k: int
    mean_ranks: dict[str, float]
    chi2_uncorrected: float
    tie_factor: float
    chi2: float
    p_value: float
    ff: float
    ff_p_value: float
    df1: int
    df2: int
    q_alpha: float
    cd: float
    alpha: float
    reject: bool
    different_pairs: tuple[tuple[str, str], ...]
    note: str | None = None


def _check_alpha(alpha) -> float:
    return check_alpha(alpha, error=FriedmanError)


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Nemenyi critical value q_α = studentized_range.ppf(1 − α, k, ∞)/√2 (docs/methods.md §8, Demšar Table 5).

    Parameters
    ----------
    k : int
        Number of models compared, at least 2.
    alpha : float
        Family-wise level.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise FriedmanError(f"`k` must be an integer of at least 2, not {k!r}")
    alpha = _check_alpha(alpha)
    return float(_range_quantile(1.0 - alpha, int(k)) / np.sqrt(2.0))


# The studentized range of k standard normals (infinite degrees of freedom), which is what Nemenyi's
# q_α needs: P(range ≤ q) = k ∫ φ(z) [Φ(z) − Φ(z − q)]^(k−1) dz. Integrated on a fixed grid and inverted
# by bisection, it equals scipy.stats.studentized_range.ppf(…, k, inf) to 1e-9 (tests/test_friedman.py)
# without importing scipy.stats, which costs a command more than a second.
_GRID = np.linspace(-9.0, 9.0, 6001)
_STEP = _GRID[1] - _GRID[0]


def _range_cdf(q: float, k: int) -> float:
    inner = np.clip(special.ndtr(_GRID) - special.ndtr(_GRID - q), 0.0, 1.0)
    density = np.exp(-0.5 * _GRID ** 2) / np.sqrt(2.0 * np.pi)
    return float(k * np.sum(density * inner ** (k - 1)) * _STEP)


def _range_quantile(p: float, k: int) -> float:
    low, high = 0.0, 20.0
    for _ in range(80):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if _range_cdf(mid, k) < p else (low, mid)
    return 0.5 * (low + high)


def within_task_ranks(values: np.ndarray) -> np.ndarray:
    """(k, N) ranks within each column, 1 = highest score, average ranks for ties."""
    return pd.DataFrame(-np.asarray(values, dtype=np.float64)).rank(axis=0, method="average").to_numpy()


def tie_sum(values: np.ndarray) -> float:
    """Σ over tasks and tie groups of t³ − t (t = size of a group of exactly equal scores)."""
    k, n = values.shape
    ordered = np.sort(values, axis=0)
    starts = np.ones((k, n), dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    group = np.cumsum(starts.T.ravel()) - 1  # task-major, so groups never span two tasks
    t = np.bincount(group).astype(np.float64)
    return float((t ** 3 - t).sum())


def friedman(scores: pd.DataFrame, alpha: float = 0.05) -> FriedmanResult | None:
    """Friedman test on a models × tasks score table (NaN = missing), docs/methods.md §8.

    Parameters
    ----------
    scores : pandas.DataFrame
        One row per model (index = model ids), one column per task; higher is better.
    alpha : float
        Level of the test and of the Nemenyi critical difference.

    Returns
    -------
    FriedmanResult or None
        None when fewer than 2 models or fewer than 2 tasks scored by all of them.
    """
    if not isinstance(scores, pd.DataFrame):
        raise FriedmanError(f"`scores` must be a pandas DataFrame (models × tasks), not {type(scores).__name__}")
    alpha = _check_alpha(alpha)
    try:
        values = scores.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise FriedmanError(f"`scores` must hold numbers: {exc}") from None
    values = values[:, ~np.isnan(values).any(axis=0)] if values.size else values
    k, n = values.shape if values.ndim == 2 else (0, 0)
    if k < 2 or n < 2:
        return None
    models = [str(m) for m in scores.index]
    ranks = within_task_ranks(values).mean(axis=1)
    # Demšar (2006) eq. for χ²_F; C is scipy's tie factor.
    chi2_unc = 12.0 * n / (k * (k + 1)) * (float(np.sum(ranks ** 2)) - k * (k + 1) ** 2 / 4.0)
    tie_factor = 1.0 - tie_sum(values) / (n * k * (k * k - 1))
    chi2 = chi2_unc / tie_factor if tie_factor > 0 else float("nan")
    df1, df2 = k - 1, (k - 1) * (n - 1)
    p_value = float(special.chdtrc(df1, chi2)) if np.isfinite(chi2) else float("nan")
    ff, ff_p = iman_davenport(chi2, n, k)
    q = nemenyi_q(k, alpha)
    cd = q * np.sqrt(k * (k + 1) / (6.0 * n))
    reject = bool(p_value < alpha)
    pairs = tuple((models[i], models[j]) for i in range(k) for j in range(i + 1, k)
                  if abs(ranks[i] - ranks[j]) > cd) if reject else ()
    note = None
    if not np.isfinite(chi2):
        note = "every task ties all models: there are no ranks to compare, so no test"
    elif not np.isfinite(ff):
        note = (f"all {n} tasks rank the models identically, so Iman–Davenport's F would divide by a "
                "within-task disagreement of zero; the verdict uses Friedman's χ²")
    return FriedmanResult(n, k, dict(zip(models, map(float, ranks))), float(chi2_unc), float(tie_factor),
                          float(chi2), p_value, ff, ff_p, df1, df2, q, float(cd), alpha, reject, pairs, note)


def iman_davenport(chi2: float, n: int, k: int) -> tuple[float, float]:
    """(F_F, p) of Iman & Davenport (1980): F_F = (N − 1)χ²_F / (N(k − 1) − χ²_F),
    on (k − 1, (k − 1)(N − 1)) degrees of freedom."""
    if not np.isfinite(chi2):
        return float("nan"), float("nan")
    denominator = n * (k - 1) - chi2
    if denominator <= 1e-9 * n * (k - 1):  # every task ranks the models identically: F_F would be x/0
        return float("nan"), float("nan")
    ff = (n - 1) * chi2 / denominator
    return float(ff), float(special.fdtrc(k - 1, (k - 1) * (n - 1), ff))
