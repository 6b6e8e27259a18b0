"""Wilson score intervals for a proportion, plain, continuity-corrected and weighted (docs/methods.md §1).

The Wilson interval is the set of π whose score test does not reject, so it never leaves [0, 1] and
behaves at x = 0 and x = n, where the Wald interval collapses. It is the CI the dashboard displays
next to every win rate and bias share (docs/methods.md §10.7); the binomial test stays the decision rule.

Both bounds are computed from the *lower* bound alone, using the symmetry
``upper(x, n) = 1 - lower(n - x, n)``, and the lower bound is written as the smaller root of the
score quadratic via the product of its roots (Vieta) instead of ``centre - half_width``. That form
has no cancellation, so x = 0 gives a lower bound of exactly 0 and x = n an upper bound of exactly 1
(the textbook ``centre + half_width`` gives 0.9999999999999999 there), and ``low <= x/n <= high`` holds
in floating point, not just on paper. It agrees with the docs/methods.md §1 formulas and with scipy to ~1e-16.

References
----------
Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion: comparison of
seven methods. Statistics in Medicine 17:857-872 (method 4 = continuity-corrected Wilson).
Kish, L. (1965). Survey Sampling (effective sample size of a weighted sample).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from core.errors import EvalBoardError, SettingError
from core.validation import check_alpha

__all__ = [
    "IntervalInputError",
    "WeightedProportion",
    "kish_n_eff",
    "weighted_wilson",
    "wilson",
    "wilson_array",
    "z_value",
]


class IntervalInputError(EvalBoardError, ValueError):
    """An argument of an interval function is outside its domain; the message names it."""


@dataclass(frozen=True)
class WeightedProportion:
    """Weighted proportion with its Kish effective sample size and Wilson interval.

    Attributes
    ----------
    p : float
        Weighted proportion ``sum(w*y) / sum(w)``; NaN when ``sum(w) == 0``.
    n_eff : float
        Kish effective sample size ``sum(w)**2 / sum(w**2)``; 0 when no row has positive weight.
    low, high : float
        Wilson bounds computed with ``n := n_eff`` and ``x := p * n_eff``; NaN when ``sum(w) == 0``.
    alpha : float
        Two-sided level used (the interval has nominal coverage ``1 - alpha``).
    continuity : bool
        Whether the continuity-corrected (Newcombe method 4) interval was used.
    """

    p: float
    n_eff: float
    low: float
    high: float
    alpha: float = 0.05
    continuity: bool = False


def z_value(alpha: float = 0.05) -> float:
    """Two-sided normal quantile ``z = Phi^-1(1 - alpha/2)`` (1.959963984540054 at alpha = 0.05).

    Raises
    ------
    IntervalInputError
        If `alpha` is not a number strictly between 0 and 1.
    """
    _check_alpha(alpha)
    # The standard library's quantile (Wichura's AS 241, ~1e-16 relative) equals scipy.stats.norm.ppf to
    # 1e-12 (tests/test_intervals.py) without importing scipy.stats, which costs a second per process.
    return NormalDist().inv_cdf(1.0 - alpha / 2.0)


def wilson(x: float, n: float, alpha: float = 0.05, continuity: bool = False) -> tuple[float, float]:
    """Wilson score interval for ``x`` successes out of ``n`` trials (docs/methods.md §1).

    Parameters
    ----------
    x : float
        Number of successes, ``0 <= x <= n``; need not be an integer (weighted or half-win counts).
    n : float
        Number of trials, ``n >= 0``; need not be an integer.
    alpha : float, default 0.05
        Two-sided level, strictly between 0 and 1.
    continuity : bool, default False
        Use the continuity-corrected interval (Newcombe 1998 method 4, identical to scipy's
        ``BinomTestResult.proportion_ci(method="wilsoncc")`` for integer ``x``).

    Returns
    -------
    (low, high) : tuple of float
        Bounds in [0, 1]. ``x == 0`` gives ``low == 0.0`` and ``x == n`` gives ``high == 1.0``
        exactly; ``n == 0`` gives ``(nan, nan)`` (undefined, never an error: docs/methods.md §0).

    Raises
    ------
    IntervalInputError
        If ``x < 0``, ``x > n``, ``n < 0``, either is not finite, or `alpha` is outside (0, 1).

    Examples
    --------
    >>> wilson(7, 20)  # doctest: +ELLIPSIS
    (0.18119182..., 0.56714572...)
    """
    low, high = wilson_array(x, n, alpha=alpha, continuity=continuity)
    return float(low), float(high)


def wilson_array(x, n, alpha: float = 0.05, continuity: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`wilson`: element-wise intervals for broadcastable arrays ``x`` and ``n``.

    Parameters
    ----------
    x, n : array_like
        Successes and trials, broadcast against each other; same domain as in :func:`wilson`.
    alpha : float, default 0.05
        Two-sided level, strictly between 0 and 1 (shared by all elements).
    continuity : bool, default False
        Continuity-corrected (Newcombe method 4) instead of the plain Wilson interval.

    Returns
    -------
    low, high : numpy.ndarray of float64
        Arrays of the broadcast shape; NaN where ``n == 0``.

    Raises
    ------
    IntervalInputError
        If any ``x < 0``, ``x > n``, ``n < 0``, any value is not finite, or `alpha` is outside (0, 1).
    """
    z = z_value(alpha)
    x_arr, n_arr = _check_counts(x, n)
    filled = n_arr > 0
    # n == 0 is undefined, not an error: give those cells a harmless n so the arithmetic stays quiet,
    # then overwrite them with NaN.
    safe_n = np.where(filled, n_arr, 1.0)
    p = np.where(filled, x_arr / safe_n, 0.0)
    # p <= 1 is guaranteed (x <= n and correctly rounded division is monotone), so 1 - p >= 0.
    low, high = _wilson_from_proportion(p, safe_n, z, continuity)
    low = np.where(filled, low, np.nan)
    high = np.where(filled, high, np.nan)
    return low, high


def kish_n_eff(w) -> float:
    """Kish effective sample size ``(sum w)**2 / sum(w**2)`` of non-negative weights.

    Equal weights give the number of positive-weight rows; zero weights drop out; the value is
    invariant to rescaling ``w``. All-zero (or empty) weights give 0.0: no effective observation.

    Raises
    ------
    IntervalInputError
        If `w` is not one-dimensional, contains a non-finite or a negative value.
    """
    w_arr = _check_weights(w)
    return _kish(w_arr)


def weighted_wilson(y, w, alpha: float = 0.05, continuity: bool = False) -> WeightedProportion:
    """Weighted proportion with a Wilson interval at the Kish effective sample size (docs/methods.md §1, §6).

    ``p = sum(w*y) / sum(w)``, ``n_eff = (sum w)**2 / sum(w**2)``, then Wilson with ``n := n_eff`` and
    ``x := p * n_eff``. This effective-sample-size plug-in (Kish design effect; Franco et al. 2019)
    treats the weights as fixed and ignores clustering by annotator, so it is anti-conservative when
    annotators differ strongly.

    Parameters
    ----------
    y : array_like, shape (m,)
        Outcomes in [0, 1] (1 = success; 0.5 is allowed for a half win).
    w : array_like, shape (m,)
        Non-negative weights; rows with weight 0 drop out.
    alpha : float, default 0.05
        Two-sided level, strictly between 0 and 1.
    continuity : bool, default False
        Continuity-corrected (Newcombe method 4) interval with ``n := n_eff``.

    Returns
    -------
    WeightedProportion
        ``p``, ``n_eff``, ``low``, ``high`` and the settings; NaN estimates when ``sum(w) == 0``.

    Raises
    ------
    IntervalInputError
        If `y` and `w` differ in length, `y` leaves [0, 1], `w` is negative, a value is not finite,
        or `alpha` is outside (0, 1).
    """
    z = z_value(alpha)
    w_arr = _check_weights(w)
    y_arr = np.asarray(y, dtype=float)
    if y_arr.shape != w_arr.shape:
        raise IntervalInputError(
            f"`y` and `w` must have the same length; got {y_arr.shape} and {w_arr.shape}.")
    bad = ~np.isfinite(y_arr) | (y_arr < 0) | (y_arr > 1)
    if bad.any():
        raise IntervalInputError(f"`y` must lie in [0, 1]; bad values at rows {_first_rows(bad)}.")
    n_eff = _kish(w_arr)
    if n_eff == 0.0:
        return WeightedProportion(np.nan, 0.0, np.nan, np.nan, alpha, continuity)
    # Rescale by the largest weight (the ratio is scale invariant) so huge weights cannot overflow.
    scaled = w_arr / w_arr.max()
    # Same reduction for numerator and denominator: w*y <= w element-wise and rounding is monotone,
    # so p <= 1, and all-ones y gives p == 1.0 exactly (hence high == 1.0, as for x == n).
    p = float(np.sum(scaled * y_arr) / np.sum(scaled))
    low, high = _wilson_from_proportion(np.asarray(p), np.asarray(n_eff), z, continuity)
    return WeightedProportion(p, n_eff, float(low), float(high), alpha, continuity)


def _wilson_from_proportion(p: np.ndarray, n: np.ndarray, z: float, continuity: bool):
    """Bounds for proportions ``p`` in [0, 1] and ``n > 0``; upper from lower by symmetry."""
    low = _lower_bound(p, n, z, continuity)
    high = 1.0 - _lower_bound(1.0 - p, n, z, continuity)
    # Clipping is a no-op in exact arithmetic; it only guards the last ulp (docs/methods.md §1 "clip").
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def _lower_bound(p: np.ndarray, n: np.ndarray, z: float, continuity: bool) -> np.ndarray:
    """Smaller root of the (corrected) score quadratic, as product-of-roots / larger root.

    Plain: roots of ``(1 + z²/n)π² - (2p + z²/n)π + p² = 0``; their product is ``p²/(1 + z²/n)``
    and the larger root is ``c + h`` of docs/methods.md §1, so
    ``low = p² / (p + z²/(2n) + z·sqrt(p(1-p)/n + z²/(4n²)))``.

    Continuity-corrected: with ``u = np - 1/2`` the roots of ``(u - nπ)² = z²nπ(1-π)`` give
    ``low = 2u² / (n(2u + z² + z·sqrt(z² + 4u - 4u²/n)))``, which is Newcombe's L rearranged
    (``z² + 4u - 4u²/n`` equals his ``z² - 2 - 1/n + 4p(n(1-p)+1)``).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        if not continuity:
            root = np.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n))
            return p * p / (p + z * z / (2.0 * n) + z * root)
        u = n * p - 0.5
        disc = np.maximum(z * z + 4.0 * u - 4.0 * u * u / n, 0.0)
        low = 2.0 * u * u / (n * (2.0 * u + z * z + z * np.sqrt(disc)))
    # Below half a success the corrected deviation max(|x - nπ| - 1/2, 0) is 0 for every π in
    # [0, p], so the bound is 0. For integer x this is scipy's "x == 0 => 0"; for fractional
    # weighted x in (0, 1/2) Newcombe's squared formula would wrongly exclude π = 0.
    return np.where(u < 0.0, 0.0, low)


def _kish(w: np.ndarray) -> float:
    total = w.sum()
    if total == 0.0:
        return 0.0
    # Scale to max 1 first: w**2 of tiny weights would underflow to 0 and of huge ones overflow.
    scaled = w / w.max()
    return float(scaled.sum() ** 2 / np.dot(scaled, scaled))


def _check_alpha(alpha) -> None:
    try:
        check_alpha(alpha)
    except SettingError:  # the rule is core.validation's; this module's callers match its own wording
        raise IntervalInputError(f"`alpha` must be a number strictly between 0 and 1; got {alpha!r}.") from None


def _check_counts(x, n) -> tuple[np.ndarray, np.ndarray]:
    try:
        x_arr, n_arr = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(n, dtype=float))
    except ValueError as exc:
        raise IntervalInputError(f"`x` and `n` must be broadcastable to one shape: {exc}") from exc
    for name, arr, bad in (("n", n_arr, ~np.isfinite(n_arr) | (n_arr < 0)), ("x", x_arr, ~np.isfinite(x_arr))):
        if bad.any():
            first = float(arr[tuple(np.argwhere(bad)[0])])
            where = f" (positions {_first_rows(bad)})" if arr.ndim else ""
            rule = "finite and >= 0" if name == "n" else "finite"
            raise IntervalInputError(f"`{name}` must be {rule}; got {name} = {first!r}{where}.")
    outside = (x_arr < 0) | (x_arr > n_arr)
    if outside.any():
        first = tuple(np.argwhere(outside)[0])
        where = f" (positions {_first_rows(outside)})" if x_arr.ndim else ""
        raise IntervalInputError(
            f"`x` must satisfy 0 <= x <= n; got x = {float(x_arr[first])!r} with"
            f" n = {float(n_arr[first])!r}{where}. Successes cannot be negative or exceed trials.")
    return x_arr, n_arr


def _check_weights(w) -> np.ndarray:
    w_arr = np.asarray(w, dtype=float)
    if w_arr.ndim != 1:
        raise IntervalInputError(f"`w` must be one-dimensional; got shape {w_arr.shape}.")
    bad = ~np.isfinite(w_arr) | (w_arr < 0)
    if bad.any():
        raise IntervalInputError(
            f"`w` must be finite and non-negative; bad values at rows {_first_rows(bad)}.")
    return w_arr


def _first_rows(mask: np.ndarray, limit: int = 5) -> str:
    """The first few offending positions, for error messages that point at the data."""
    hits = np.argwhere(np.atleast_1d(mask))
    shown = ", ".join(str(tuple(int(i) for i in h)) if len(h) > 1 else str(int(h[0])) for h in hits[:limit])
    more = f" and {len(hits) - limit} more" if len(hits) > limit else ""
    return f"[{shown}]{more}"
