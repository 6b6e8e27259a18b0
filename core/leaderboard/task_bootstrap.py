"""Bootstrap over tasks for per-(model, task) scores (docs/methods.md §3, used by the leaderboard of §8).

Two layers. The helpers (:func:`bootstrap_mean_ci`, :func:`paired_ci`, :func:`unpaired_ci`,
:func:`poisson_mean_ci`) are the literal docs/methods.md §3 protocols on one or two score vectors: a fresh
``default_rng(seed)``, ``I = rng.integers(0, n, size=(B, n))`` (or the stratified loop), a statistic
per row of ``I``. They are the reference the leaderboard's fast path is tested against.

The engine (:class:`core.leaderboard.subset_draws.SubsetDraws`, on
:func:`core.leaderboard.draws.draw_counts`) serves many score vectors at once. A draw depends only on
the *shape* of the task set, the stratum sizes in sorted stratum order (just ``(n,)`` without strata),
never on which tasks or scores it is applied to. So every vector whose task set has the same shape can
share the draw of a fresh ``default_rng(seed)``, and its replicate sums are one ``counts @ columns``
product, where ``counts[b, i]`` is how often position ``i`` was drawn in replicate ``b``; large subsets
of the task set are derived from the full set's draw instead (see that module).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.errors import EvalBoardError
from core.leaderboard.draws import bootstrap_indices, strata_codes, stratified_indices
from core.leaderboard.subset_draws import SubsetDraws
from core.stats.resampling import percentile_interval
from core.validation import check_alpha, check_replicates, check_seed

DEFAULT_REPLICATES = 1000
EPS = 1e-12  # docs/methods.md §3: a paired CI must clear 0 by more than float noise to be significant


class TaskBootstrapError(EvalBoardError, ValueError):
    """A task-bootstrap argument is malformed; the message names the argument."""


@dataclass(frozen=True)
class MeanCI:
    """Percentile CI of a (weighted) mean of task scores; unpacks as ``(mean, lo, hi)``."""

    mean: float
    lo: float
    hi: float
    n: int  # tasks used (scored, i.e. not NaN)
    n_valid: int  # replicates with a defined mean (Poisson: nonzero total weight)
    dropped: int  # replicates dropped as undefined (docs/methods.md §3)
    replicates: int
    alpha: float
    seed: int
    protocol: str  # "rows", "stratified" or "poisson"
    weighted: bool
    samples: np.ndarray = field(repr=False)

    def __iter__(self):
        return iter((self.mean, self.lo, self.hi))


@dataclass(frozen=True)
class PairedCI:
    """CI of mean(x) − mean(y) over the tasks scored for both; unpacks as ``(diff, lo, hi, significant)``."""

    diff: float
    lo: float
    hi: float
    significant: bool  # lo > EPS or hi < −EPS
    n: int  # tasks scored for both
    replicates: int
    alpha: float
    seed: int
    paired: bool  # False: x and y resampled independently (unpaired_ci)
    weighted: bool
    samples: np.ndarray = field(repr=False)

    def __iter__(self):
        return iter((self.diff, self.lo, self.hi, self.significant))


@dataclass(frozen=True)
class RankCI:
    """Rank intervals from replicate statistics that share each replicate's indices (docs/methods.md §3)."""

    rank_lo: np.ndarray  # (K,) int; 0 when undefined (n_valid = 0)
    rank_hi: np.ndarray  # (K,) int
    p_first: np.ndarray  # (K,) share of replicates in which the model ranks 1 ("min" ties: may sum to > 1)
    n_valid: int


def check_settings(replicates: int, alpha: float, seed: int) -> None:
    """Raise :class:`TaskBootstrapError` naming the first bad setting."""
    check_replicates(replicates, error=TaskBootstrapError)
    check_alpha(alpha, error=TaskBootstrapError)
    check_seed(seed, error=TaskBootstrapError)


def significant(lo: float, hi: float) -> bool:
    """docs/methods.md §3: the CI excludes 0 by more than EPS (a CI touching 0 is not significant)."""
    return bool(lo > EPS or hi < -EPS)


def _prepare(x, weights, strata=None) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise TaskBootstrapError(f"`x` must be one-dimensional, not shape {x.shape}")
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    if w is not None and (w.shape != x.shape or not np.all(np.isfinite(w)) or np.any(w < 0)):
        raise TaskBootstrapError("`weights` must be finite, non-negative and as long as `x`")
    s = None if strata is None else np.asarray(strata, dtype=object)
    if s is not None and s.shape != x.shape:
        raise TaskBootstrapError("`strata` must give one label per score")
    return x, w, s


def _weighted_mean(values: np.ndarray, w: np.ndarray | None) -> float:
    total = len(values) if w is None else w.sum()
    return float((values if w is None else w * values).sum() / total) if total > 0 else float("nan")


def _replicates(values, w, idx) -> np.ndarray:
    """mean(values[I_b]) per row, weighted Σw x / Σw (NaN when the drawn weight is 0)."""
    if w is None:
        return values[idx].mean(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        den = w[idx].sum(axis=1)
        return np.where(den > 0, (w * values)[idx].sum(axis=1) / np.where(den > 0, den, 1.0), np.nan)


def _draw(n, strata, replicates, rng):
    return bootstrap_indices(n, replicates, rng) if strata is None else stratified_indices(strata, replicates, rng)


def _interval(samples: np.ndarray, alpha: float) -> tuple[float, float]:
    finite = samples[~np.isnan(samples)]
    if finite.size == 0:
        return float("nan"), float("nan")
    lo, hi = percentile_interval(finite, alpha)
    return float(lo), float(hi)


def bootstrap_mean_ci(x, replicates: int = DEFAULT_REPLICATES, alpha: float = 0.05, seed: int = 0,
                      weights=None, strata=None) -> MeanCI:
    """Percentile CI of the (weighted) mean of ``x`` by resampling tasks (docs/methods.md §3 row protocol).

    Parameters
    ----------
    x : array_like, shape (n,)
        Scores; NaN = not scored (left out and not counted in ``n``).
    replicates, alpha, seed : int, float, int
        B, the two-sided level and the seed of a fresh ``numpy.random.default_rng``.
    weights : array_like, optional
        Task weights: each replicate is Σ w x / Σ w over the drawn tasks.
    strata : array_like, optional
        A label per task: resample within each stratum (docs/methods.md §3 "Stratified").

    Returns
    -------
    MeanCI
        ``(mean, lo, hi)`` and the settings; NaN bounds when no task is scored (docs/methods.md §0).
    """
    check_settings(replicates, alpha, seed)
    x, w, s = _prepare(x, weights, strata)
    keep = ~np.isnan(x)
    x, w, s = x[keep], None if w is None else w[keep], None if s is None else s[keep]
    rng = np.random.default_rng(seed)
    samples = _replicates(x, w, _draw(len(x), s, replicates, rng)) if len(x) else np.full(replicates, np.nan)
    lo, hi = _interval(samples, alpha)
    dropped = int(np.isnan(samples).sum())
    return MeanCI(_weighted_mean(x, w), lo, hi, len(x), replicates - dropped, dropped, replicates, alpha, seed,
                  "rows" if s is None else "stratified", w is not None, samples)


def _common(x, y, weights, strata):
    x, w, s = _prepare(x, weights, strata)
    y = np.asarray(y, dtype=np.float64)
    if y.shape != x.shape:
        raise TaskBootstrapError(f"`y` must have the shape of `x` {x.shape}, not {y.shape}")
    both = ~np.isnan(x) & ~np.isnan(y)
    return x[both], y[both], None if w is None else w[both], None if s is None else s[both]


def paired_ci(x, y, replicates: int = DEFAULT_REPLICATES, alpha: float = 0.05, seed: int = 0,
              weights=None, strata=None) -> PairedCI:
    """docs/methods.md §3 paired bootstrap of mean(x) − mean(y) over the tasks scored for both.

    d_t = x_t − y_t is formed first; replicate b is the (weighted) mean of ``d[I_b]``; significant iff
    lower > 1e-12 or upper < −1e-12. Arguments as :func:`bootstrap_mean_ci`, ``y`` aligned with ``x``.
    """
    check_settings(replicates, alpha, seed)
    x, y, w, s = _common(x, y, weights, strata)
    d = x - y
    rng = np.random.default_rng(seed)
    samples = _replicates(d, w, _draw(len(d), s, replicates, rng)) if len(d) else np.full(replicates, np.nan)
    lo, hi = _interval(samples, alpha)
    return PairedCI(_weighted_mean(d, w), lo, hi, significant(lo, hi), len(d), replicates, alpha, seed, True,
                    w is not None, samples)


def unpaired_ci(x, y, replicates: int = DEFAULT_REPLICATES, alpha: float = 0.05, seed: int = 0,
                weights=None, strata=None) -> PairedCI:
    """The same difference with x and y resampled independently, as if the tasks were unrelated.

    Uses the tasks scored for both (so only the pairing differs from :func:`paired_ci`). One fresh
    ``default_rng(seed)`` draws x's indices, then the same generator continues for y's.
    """
    check_settings(replicates, alpha, seed)
    x, y, w, s = _common(x, y, weights, strata)
    if len(x) == 0:
        samples = np.full(replicates, np.nan)
    else:
        rng = np.random.default_rng(seed)
        first = _replicates(x, w, _draw(len(x), s, replicates, rng))
        samples = first - _replicates(y, w, _draw(len(y), s, replicates, rng))
    lo, hi = _interval(samples, alpha)
    diff = _weighted_mean(x - y, w)
    return PairedCI(diff, lo, hi, significant(lo, hi), len(x), replicates, alpha, seed, False, w is not None, samples)


def poisson_mean_ci(x, replicates: int = DEFAULT_REPLICATES, alpha: float = 0.05, seed: int = 0,
                    weights=None) -> MeanCI:
    """docs/methods.md §3 Poisson bootstrap of the (weighted) mean: counts ``rng.poisson(1.0, size=(B, n))``.

    A replicate whose total (weighted) count is 0 has no mean: it is dropped and counted in ``dropped``.
    """
    check_settings(replicates, alpha, seed)
    x, w, _ = _prepare(x, weights)
    keep = ~np.isnan(x)
    x, w = x[keep], None if w is None else w[keep]
    rng = np.random.default_rng(seed)
    counts = rng.poisson(1.0, size=(replicates, len(x))).astype(np.float64)
    wc = counts if w is None else counts * w
    total = wc.sum(axis=1)
    ok = total > 0
    samples = np.full(replicates, np.nan)
    samples[ok] = (wc[ok] @ x) / total[ok]
    lo, hi = _interval(samples, alpha)
    return MeanCI(_weighted_mean(x, w), lo, hi, len(x), int(ok.sum()), int((~ok).sum()), replicates, alpha, seed,
                  "poisson", w is not None, samples)


def task_wins(scores: np.ndarray, tol: float = EPS) -> np.ndarray:
    """(K, T) bool: model k wins task t iff it is scored and |score − best| ≤ tol (docs/methods.md §8)."""
    scores = np.asarray(scores, dtype=np.float64)
    present = ~np.isnan(scores)
    best = np.max(np.where(present, scores, -np.inf), axis=0) if scores.size else np.empty(scores.shape[1:])
    with np.errstate(invalid="ignore"):
        return present & (np.abs(scores - best) <= tol)


def tied_ranks(samples: np.ndarray, eps: float = EPS) -> np.ndarray:
    """rank_i = 1 + #{j : T_j > T_i + eps} per row: :func:`core.stats.resampling.ranks_of` with float noise
    treated as a tie. Replicate means of discrete scores tie exactly in exact arithmetic, and whether
    float rounding splits such a tie depends on the summation order (docs/methods.md §3 D3 references)."""
    samples = np.asarray(samples, dtype=np.float64)
    return 1 + (samples[..., None, :] > samples[..., :, None] + eps).sum(axis=-1)


def rank_summary(samples: np.ndarray, alpha: float) -> RankCI:
    """Rank intervals (docs/methods.md §3 lower/higher quantiles) and P(rank 1) from (B, K) replicate
    statistics, ranked by :func:`tied_ranks`; replicates with a NaN are dropped."""
    samples = np.asarray(samples, dtype=np.float64)
    samples = samples[~np.isnan(samples).any(axis=1)]
    k = samples.shape[1]
    if len(samples) == 0:
        return RankCI(np.zeros(k, dtype=int), np.zeros(k, dtype=int), np.full(k, np.nan), 0)
    ranks = tied_ranks(samples)
    low = np.quantile(ranks, alpha / 2.0, axis=0, method="lower").astype(int)
    high = np.quantile(ranks, 1.0 - alpha / 2.0, axis=0, method="higher").astype(int)
    return RankCI(low, high, (ranks == 1).mean(axis=0), len(samples))


def rank_bootstrap(scores, replicates: int = DEFAULT_REPLICATES, alpha: float = 0.05, seed: int = 0,
                   rank_by: str = "mean", weights=None, strata=None) -> RankCI:
    """Rank CIs on the tasks scored by every model, all models sharing each replicate's indices.

    ``scores`` is (K, T) with NaN = missing; columns with a NaN are left out. ``rank_by`` "mean"
    ranks replicate (weighted) means, "win_rate" replicate win rates (wins of :func:`task_wins`).
    """
    check_settings(replicates, alpha, seed)
    if rank_by not in ("mean", "win_rate"):
        raise TaskBootstrapError(f"`rank_by` must be 'mean' or 'win_rate', not {rank_by!r}")
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    keep = ~np.isnan(scores).any(axis=0)
    if not len(scores) or not keep.any():
        return rank_summary(np.full((replicates, len(scores)), np.nan), alpha)
    values = scores if rank_by == "mean" else task_wins(scores).astype(np.float64)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    codes = None if strata is None else strata_codes(strata)
    draws = SubsetDraws(values, w, codes, replicates, seed)
    sid = draws.subset(keep)
    requests = [draws.need(sid, row) for row in range(len(values))]
    _, out = next(draws.run())
    return rank_summary(np.column_stack([out[r] for r in requests]), alpha)
