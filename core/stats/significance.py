"""The statistical tests behind the bias diagnostics (docs/methods.md §4): exact binomials with Wilson
intervals, Holm's adjustment, the pooled two-proportion test, the IPW score test, the one-covariate
logistic fit and the pairing χ²."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.stats import binomtest, chisquare, fisher_exact, norm

from core.formats import p_text
from core.stats.intervals import kish_n_eff, wilson


@dataclass(frozen=True)
class Binomial:
    # k successes of n against p0: exact binomial p decides, the Wilson CI describes (docs/methods.md §4)
    k: int
    n: int
    p0: float
    share: float
    p_value: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class TwoProportions:
    """x1/n1 versus x2/n2: pooled z (= χ² 2×2 without Yates, docs/methods.md §4b) and Fisher's exact p."""
    x1: int
    n1: int
    x2: int
    n2: int
    z: float
    p_value: float
    chi2: float
    fisher_p: float


@dataclass(frozen=True)
class Logit:
    """Unpenalised logistic MLE of y on [1, f] with Wald SEs; NaN and a flag when no MLE exists."""
    beta: tuple[float, float]
    se: tuple[float, float]
    p: tuple[float, float]
    n: int
    flag: str | None = None  # "separation", "no_convergence" or "too_few_votes"


@dataclass(frozen=True)
class PairingTest:
    chi2: float
    df: int
    p_value: float
    n_pairs: int
    zero_pairs: int
    min_count: int
    max_count: int
    verdict: str
    detected: bool = False  # p < alpha: pairs are not shown uniformly


def binomial(k: int, n: int, p0: float = 0.5, alpha: float = 0.05) -> Binomial:
    """docs/methods.md §4: scipy ``binomtest`` two-sided; n = 0 gives NaN (docs/methods.md §0), never an error."""
    if (n := int(n)) == 0:
        return Binomial(k, n, p0, np.nan, np.nan, np.nan, np.nan)
    low, high = wilson(k, n, alpha)
    return Binomial(int(k), n, p0, k / n, float(binomtest(int(k), n, p0).pvalue), low, high)


def holm(p) -> np.ndarray:
    """Holm step-down adjusted p-values; NaN entries are neither counted nor adjusted."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adjusted
    return out


def two_proportions(x1: int, n1: int, x2: int, n2: int) -> TwoProportions:
    """Pooled two-proportion z-test (docs/methods.md §4b); χ² = z²; Fisher exact as the small-sample option."""
    x1, n1, x2, n2 = int(x1), int(n1), int(x2), int(n2)
    if n1 == 0 or n2 == 0:
        return TwoProportions(x1, n1, x2, n2, np.nan, np.nan, np.nan, np.nan)
    pooled = (x1 + x2) / (n1 + n2)
    var = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    fisher = float(fisher_exact([[x1, n1 - x1], [x2, n2 - x2]]).pvalue)
    if var == 0:  # both groups all 0 or all 1: no difference to test
        return TwoProportions(x1, n1, x2, n2, np.nan, np.nan, np.nan, fisher)
    z = (x1 / n1 - x2 / n2) / np.sqrt(var)
    return TwoProportions(x1, n1, x2, n2, float(z), float(2 * norm.sf(abs(z))), float(z * z), fisher)


def weighted_score_test(y, w) -> tuple[float, float, float, float]:
    """(p̂_w, n_eff, z, p) of docs/methods.md §4a: z = (p̂_w − 0.5)/√(0.25/n_eff), normal two-sided p."""
    y, w = np.asarray(y, dtype=float), np.asarray(w, dtype=float)
    n_eff = kish_n_eff(w) if len(w) else 0.0
    if n_eff == 0:
        return np.nan, 0.0, np.nan, np.nan
    share = float(np.dot(w, y) / w.sum())
    z = (share - 0.5) / np.sqrt(0.25 / n_eff)
    return share, n_eff, float(z), float(2 * norm.sf(abs(z)))


def logit_fit(f, y, max_iter: int = 50, tol: float = 1e-10) -> Logit:
    """Newton–Raphson MLE of logit P(y=1) = β₀ + β₁ f (same MLE as statsmodels Logit, docs/methods.md §4e).

    With one covariate and an intercept the MLE fails to exist exactly when a threshold on f separates
    the classes (complete or quasi-complete separation), or y is constant; that is checked first, so
    the report says *why* there is no estimate instead of showing a diverged β.
    """
    f, y = np.asarray(f, dtype=float), np.asarray(y, dtype=float)
    nan2 = (np.nan, np.nan)
    if (n := len(y)) < 3 or np.ptp(f) == 0:
        return Logit(nan2, nan2, nan2, n, "too_few_votes")
    ones, zeros = f[y == 1], f[y == 0]
    if len(ones) == 0 or len(zeros) == 0 or zeros.max() <= ones.min() or ones.max() <= zeros.min():
        return Logit(nan2, nan2, nan2, n, "separation")
    beta = np.array([np.log(y.mean() / (1 - y.mean())), 0.0])
    for _ in range(max_iter):
        p = expit(beta[0] + beta[1] * f)
        w, resid = p * (1 - p), y - p
        step = np.linalg.solve(np.array([[w.sum(), w @ f], [w @ f, w @ (f * f)]]), np.array([resid.sum(), resid @ f]))
        beta = beta + step
        if np.max(np.abs(step)) < tol:
            break
    else:
        return Logit(nan2, nan2, nan2, n, "no_convergence")
    w = expit(beta[0] + beta[1] * f) * (1 - expit(beta[0] + beta[1] * f))
    se = np.sqrt(np.diag(np.linalg.inv(np.array([[w.sum(), w @ f], [w @ f, w @ (f * f)]]))))
    pv = 2 * norm.sf(np.abs(beta / se))
    return Logit((float(beta[0]), float(beta[1])), (float(se[0]), float(se[1])), (float(pv[0]), float(pv[1])), n)


def pairing_test(counts, alpha: float = 0.05) -> PairingTest:
    """Counts of all unordered pairs (zeros included) against uniform: scipy ``chisquare``, df = P − 1."""
    counts = np.asarray(counts, dtype=np.int64)
    zero, low, high = int((counts == 0).sum()), int(counts.min(initial=0)), int(counts.max(initial=0))
    if len(counts) < 2 or counts.sum() == 0:
        return PairingTest(np.nan, max(len(counts) - 1, 0), np.nan, len(counts), zero, low, high,
                           "Fewer than two pairs.")
    res = chisquare(counts)
    p = float(res.pvalue)
    detected = bool(p < alpha)
    verdict = (f"Pair counts range from {counts.min()} to {counts.max()} over {len(counts)} pairs "
               f"({(counts == 0).sum()} never shown; χ² = {res.statistic:.1f}, {p_text(p)}): "
               + ("pairs are not shown uniformly (a pairing bias)." if detected
                  else "consistent with uniform pairing."))
    return PairingTest(float(res.statistic), len(counts) - 1, p, len(counts), zero, low, high, verdict, detected)
