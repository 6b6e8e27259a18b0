"""Win rates from pairwise votes: each model against the field, and each pair head to head.

This is the ``--scheme winrate`` ranking: the share of its comparisons a model won, ties and
both-bad counting as half a win (docs/methods.md §0, the Chatbot Arena convention of §2), with a Wilson
interval (docs/methods.md §1). It is the raw pooled rate; the position × period correction is docs/methods.md §5.

Input is the compressed form in which votes of any size reach the estimators: one row per cell
(left model, right model, score of the left model) with the number of votes in it, and optionally a
per-vote weight (IPW, docs/methods.md §6). Models are integer indices ``0 .. n_models-1``; names are the
caller's business (index once at the edge, arrays inside). Everything is a handful of
``np.bincount`` passes, so a million cells take tens of milliseconds.

Weighted win rates use the Kish effective sample size in the interval (docs/methods.md §1, §6): a cell of
``count`` votes of weight ``w`` contributes ``count*w`` to Σw and ``count*w²`` to Σw². Without weights
``n_eff`` equals the vote count and the interval is the ordinary Wilson interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import EvalBoardError
from core.stats.intervals import wilson_array, z_value

__all__ = ["WinRateInputError", "WinRates", "pairwise_win_rates", "win_rates"]


class WinRateInputError(EvalBoardError, ValueError):
    """A win-rate argument is malformed; the message names the argument and the offending rows."""


@dataclass(frozen=True, eq=False)
class WinRates:
    """Per-model win rate against the field, with its Wilson interval (arrays indexed by model).

    Attributes
    ----------
    win_rate : numpy.ndarray, shape (K,)
        ``wins / n``; NaN for a model without (positively weighted) votes.
    low, high : numpy.ndarray, shape (K,)
        Wilson bounds at level ``1 - alpha`` with ``n := n_eff``; NaN where ``n == 0``.
    wins : numpy.ndarray, shape (K,)
        Σ count·weight·sᵢ over the model's appearances, sᵢ its own score (s left, 1 - s right).
    n : numpy.ndarray, shape (K,)
        Σ count·weight over the model's appearances (the weighted number of comparisons).
    n_eff : numpy.ndarray, shape (K,)
        Kish effective sample size (Σ count·w)² / Σ count·w²; equals ``n_votes`` without weights.
    n_votes : numpy.ndarray, shape (K,)
        Σ count over the model's appearances (unweighted number of votes).
    alpha : float
        Two-sided level of the intervals.
    continuity : bool
        Whether the continuity-corrected Wilson interval was used.
    weighted : bool
        Whether per-vote weights were supplied.
    """

    win_rate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    wins: np.ndarray
    n: np.ndarray
    n_eff: np.ndarray
    n_votes: np.ndarray
    alpha: float = 0.05
    continuity: bool = False
    weighted: bool = False

    def __post_init__(self):
        # "Frozen" should hold for the contents too: a cached result must not be edited in place.
        for name in ("win_rate", "low", "high", "wins", "n", "n_eff", "n_votes"):
            getattr(self, name).setflags(write=False)


def win_rates(left, right, score, count, n_models: int, *, weight=None, alpha: float = 0.05,
              continuity: bool = False) -> WinRates:
    """Win rate of every model against the field, ties counting half (docs/methods.md §0, §1).

    Parameters
    ----------
    left, right : array_like of int, shape (m,)
        Model indices of the left and right answer of each cell, in ``0 .. n_models-1``, distinct.
    score : array_like of float, shape (m,)
        Score of the LEFT model: 1 (left won), 0 (right won), 0.5 (tie or both bad).
    count : array_like of float, shape (m,)
        Number of votes in the cell (non-negative; may be fractional).
    n_models : int
        Number of models K; models that never appear get NaN rates and zero counts.
    weight : array_like of float, shape (m,), optional
        Per-vote weight of the cell's votes (non-negative, default 1).
    alpha : float, default 0.05
        Two-sided level of the Wilson intervals.
    continuity : bool, default False
        Continuity-corrected Wilson intervals (docs/methods.md §10.7 displays the plain one).

    Returns
    -------
    WinRates
        Arrays of length ``n_models``.

    Raises
    ------
    WinRateInputError
        If lengths differ, an index is out of range or not an integer, a model meets itself,
        a score leaves [0, 1], or a count or weight is negative or not finite.
    core.stats.intervals.IntervalInputError
        If `alpha` is not strictly between 0 and 1 (also a ``ValueError``).
    """
    z_value(alpha)  # validates alpha before any work
    left, right, score, count, weight = _check_cells(left, right, score, count, n_models, weight)
    cw = count if weight is None else count * weight
    # Each cell counts once for the left model (score s) and once for the right one (1 - s).
    wins = _both_sides(left, right, cw * score, cw * (1.0 - score), n_models)
    n = _both_sides(left, right, cw, cw, n_models)
    n_votes = _both_sides(left, right, count, count, n_models)
    if weight is None:
        n_eff = n_votes.copy()
    else:
        n_eff = _kish_per_model(left, right, count, weight, n_models)
    rate = _ratio(wins, n, empty=np.nan)
    has = n > 0
    # x <= n_eff holds because wins <= n term by term (s <= 1, monotone rounding), so rate <= 1.
    x = np.where(has, rate, 0.0) * n_eff
    low, high = wilson_array(x, np.where(has, n_eff, 0.0), alpha=alpha, continuity=continuity)
    return WinRates(rate, low, high, wins, n, n_eff, n_votes, float(alpha), bool(continuity),
                    weight is not None)


def pairwise_win_rates(left, right, score, count, n_models: int) -> tuple[np.ndarray, np.ndarray]:
    """Head-to-head win-rate matrix and comparison counts, ties counting half.

    Parameters
    ----------
    left, right, score, count, n_models
        As in :func:`win_rates` (unweighted).

    Returns
    -------
    rate : numpy.ndarray, shape (K, K)
        ``rate[i, j]`` = share of the comparisons between i and j (either side) that i won, ties
        half; NaN where the pair was never compared (and on the diagonal).
        ``rate[i, j] + rate[j, i] == 1`` wherever compared.
    n : numpy.ndarray, shape (K, K)
        Symmetric number of comparisons between i and j (either side), zero diagonal.
        ``rate * n`` is the win matrix W of docs/methods.md §2.

    Raises
    ------
    WinRateInputError
        As in :func:`win_rates`.
    """
    left, right, score, count, _ = _check_cells(left, right, score, count, n_models, None)
    size = n_models * n_models
    cell = left * n_models + right  # flat index of (left, right) in row-major K×K
    left_wins = np.bincount(cell, weights=count * score, minlength=size).reshape(n_models, n_models)
    right_wins = np.bincount(cell, weights=count * (1.0 - score), minlength=size).reshape(n_models, n_models)
    seen = np.bincount(cell, weights=count, minlength=size).reshape(n_models, n_models)
    # right_wins[j, i] are wins of i when it sat on the right against j: transpose to i's row.
    won = left_wins + right_wins.T
    n = seen + seen.T
    return _ratio(won, n, empty=np.nan), n


def _both_sides(left, right, left_part, right_part, n_models: int) -> np.ndarray:
    """Per-model totals of a quantity credited to the left model and its mirror to the right one."""
    return (np.bincount(left, weights=left_part, minlength=n_models)
            + np.bincount(right, weights=right_part, minlength=n_models))


def _kish_per_model(left, right, count, weight, n_models: int) -> np.ndarray:
    """(Σ count·w)² / Σ count·w² per model, each model's weights first divided by its own largest.

    Kish's n_eff is scale invariant, and the per-model rescaling keeps w² from underflowing to 0
    (tiny weights) or overflowing (huge ones), which a single global scale cannot do when models'
    weights live on different scales.
    """
    active = count > 0
    top = np.zeros(n_models)
    np.maximum.at(top, left[active], weight[active])
    np.maximum.at(top, right[active], weight[active])
    top[top == 0] = 1.0
    w_left, w_right = weight / top[left], weight / top[right]
    total = _both_sides(left, right, count * w_left, count * w_right, n_models)
    squares = _both_sides(left, right, count * w_left**2, count * w_right**2, n_models)
    return _ratio(total**2, squares, empty=0.0)


def _ratio(num: np.ndarray, den: np.ndarray, empty: float) -> np.ndarray:
    """``num / den`` where ``den > 0``, ``empty`` elsewhere (no 0/0 warnings)."""
    out = np.full(np.shape(num), empty, dtype=float)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _check_cells(left, right, score, count, n_models, weight):
    """Validate the cell arrays once; return them as contiguous int64 / float64 arrays."""
    if isinstance(n_models, bool) or not isinstance(n_models, (int, np.integer)) or n_models < 0:
        raise WinRateInputError(f"`n_models` must be a non-negative integer; got {n_models!r}.")
    n_models = int(n_models)
    arrays = {"left": np.asarray(left), "right": np.asarray(right), "score": np.asarray(score),
              "count": np.asarray(count)}
    if weight is not None:
        arrays["weight"] = np.asarray(weight)
    for name, arr in arrays.items():
        if arr.ndim != 1:
            raise WinRateInputError(f"`{name}` must be one-dimensional; got shape {arr.shape}.")
    lengths = {name: arr.shape[0] for name, arr in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise WinRateInputError(f"cell arrays must have one length; got {lengths}.")
    for name in ("left", "right"):
        arr = arrays[name]
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise WinRateInputError(
                f"`{name}` must hold integer model indices; got dtype {arr.dtype}. "
                "Index model names once (e.g. pandas.factorize) before calling.")
        arr = arr.astype(np.int64, copy=False)
        _reject(name, (arr < 0) | (arr >= n_models), arr, f"must lie in 0..{n_models - 1} (n_models = {n_models})")
        arrays[name] = arr
    _reject("left", arrays["left"] == arrays["right"], arrays["left"],
            "must differ from `right`: a model compared with itself")
    for name, low, high in (("score", 0.0, 1.0), ("count", 0.0, np.inf), ("weight", 0.0, np.inf)):
        if name not in arrays:
            continue
        try:
            arr = arrays[name].astype(np.float64, copy=False)
        except (TypeError, ValueError) as exc:
            raise WinRateInputError(f"`{name}` must be numeric; got dtype {arrays[name].dtype}.") from exc
        rule = "must lie in [0, 1]" if name == "score" else "must be finite and >= 0"
        _reject(name, ~np.isfinite(arr) | (arr < low) | (arr > high), arr, rule)
        arrays[name] = arr
    return arrays["left"], arrays["right"], arrays["score"], arrays["count"], arrays.get("weight")


def _reject(name: str, bad: np.ndarray, values: np.ndarray, rule: str, limit: int = 5) -> None:
    if not bad.any():
        return
    rows = np.flatnonzero(bad)
    shown = ", ".join(f"{int(r)} ({values[r].item()!r})" for r in rows[:limit])
    more = f"; first {limit} of {rows.size} shown" if rows.size > limit else ""
    raise WinRateInputError(f"`{name}` {rule}; bad rows (0-based, value){more}: {shown}.")
