"""Leaderboard from per-(model, task) scores in [0, 1] (docs/methods.md §8) with task-bootstrap CIs (§3).

:mod:`core.leaderboard.scores` turns EvalRuns into a models × tasks matrix (NaN = not scored); ``aggregate`` ranks the
models by mean score or win rate and adds, from one seed: a percentile CI of each mean (row protocol
over the model's own tasks), a paired and an unpaired CI for the difference of every pair (tasks
scored by both), rank intervals and P(rank 1) (tasks scored by all, one shared draw) and the Friedman
/ Nemenyi analysis (:mod:`core.stats.friedman`).

Speed comes from sharing draws (:mod:`core.leaderboard.subset_draws`): every quantity on the full task set (every
complete model, every complete pair) takes the one literal draw ``default_rng(seed).integers(0, n,
(B, n))`` and one ``counts @ columns`` product; a paired replicate is the difference of the two
models' replicate means under that draw, which is mean(d[I_b]) exactly in exact arithmetic. Task sets
of at least half the tasks (a model or pair with a few missing cells, the tasks scored by all) derive
their draws from the full one, i.i.d. uniform on the set like the literal protocol; smaller sets, and
every set when stratified, get the literal draw on their own shape.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.leaderboard.scores import LeaderboardError, ScoreMatrix, parse_runs, score_matrix
from core.leaderboard.subset_draws import SubsetDraws
from core.leaderboard.task_bootstrap import EPS, RankCI, rank_summary, task_wins
from core.schema import RANK_BY
from core.stats.evidence import check_intervals, rank_ranges_with_evidence
from core.stats.friedman import FriedmanResult, friedman
from core.stats.resampling import percentile_interval
from core.validation import check_alpha, check_replicates, check_seed

__all__ = ["RANK_BY", "Leaderboard", "LeaderboardRow", "LeaderboardSettings", "PairwiseRow", "aggregate",
           "bootstrap_intervals", "point_estimates", "rank_one_probability", "ranking_order"]

PAIR_CHUNK = 1024  # pairs whose (B, chunk) replicate differences are held at once (8 MB at B = 1000)


@dataclass(frozen=True)
class LeaderboardSettings:
    """How :func:`aggregate` ranks (``rank_by`` in RANK_BY) and resamples (B, α, seed; docs/methods.md §3)."""

    rank_by: str = "mean"
    replicates: int = 500
    alpha: float = 0.05
    seed: int = 0
    stratified: bool = False  # resample tasks within each category (docs/methods.md §3 "Stratified")
    metric: str | None = None  # which metric_name when a (model, task) has several


@dataclass(frozen=True)
class LeaderboardRow:
    """One model: position, mean with its percentile CI, win rate, coverage and rank interval."""

    rank: int
    model_id: str
    mean_score: float
    mean_ci_lo: float
    mean_ci_hi: float
    win_rate: float
    tasks_completed: int
    categories: dict[str, float]  # per-category mean (sorted categories), NaN where the model has none
    rank_lo: int | None  # None when no task is scored by every model
    rank_hi: int | None
    tie_group: int  # see aggregate(): adjacent models whose paired difference is not significant
    tasks_missing: int
    interval_note: str | None = None  # why the mean has no interval (one task, scores that never vary)


@dataclass(frozen=True)
class PairwiseRow:
    """Paired (docs/methods.md §3) and unpaired CIs of mean(a) − mean(b) over the tasks both scored."""

    model_a: str  # ranked above model_b
    model_b: str
    diff: float  # mean over common tasks of a − b
    ci_lo: float
    ci_hi: float
    significant: bool
    n_tasks: int  # tasks scored by both
    unpaired_ci_lo: float
    unpaired_ci_hi: float
    note: str | None = None  # why the pair has no interval (and so no verdict)


@dataclass(frozen=True)
class Leaderboard:
    """Rows best first, every pair, Friedman/Nemenyi (None for < 2 models or < 2 complete tasks)."""

    settings: LeaderboardSettings
    rows: tuple[LeaderboardRow, ...]
    pairwise: tuple[PairwiseRow, ...]
    friedman: FriedmanResult | None
    n_models: int
    n_tasks: int
    metric: str | None
    categories: tuple[str, ...]
    significant_pairs: int
    weighted: bool


@dataclass(frozen=True)
class Points:
    means: np.ndarray
    win_rates: np.ndarray
    completed: np.ndarray
    category_means: np.ndarray  # (M, C)


@dataclass(frozen=True)
class Intervals:
    mean_lo: np.ndarray
    mean_hi: np.ndarray
    pair_a: np.ndarray  # model indices, a ranked above b
    pair_b: np.ndarray
    pair_n: np.ndarray
    pair_lo: np.ndarray
    pair_hi: np.ndarray
    unpaired_lo: np.ndarray
    unpaired_hi: np.ndarray
    ranks: RankCI | None


def _check_settings(settings: LeaderboardSettings) -> None:
    if not isinstance(settings, LeaderboardSettings):
        raise LeaderboardError(f"`settings` must be a LeaderboardSettings, not {type(settings).__name__}")
    if settings.rank_by not in RANK_BY:
        raise LeaderboardError(f"`rank_by` must be one of {RANK_BY}, not {settings.rank_by!r}")
    check_replicates(settings.replicates, error=LeaderboardError)
    check_alpha(settings.alpha, error=LeaderboardError)
    check_seed(settings.seed, error=LeaderboardError)
    if not isinstance(settings.stratified, (bool, np.bool_)):
        raise LeaderboardError(f"`stratified` must be True or False, not {settings.stratified!r}")
    if settings.metric is not None and not isinstance(settings.metric, str):
        raise LeaderboardError(f"`metric` must be a metric name or None, not {settings.metric!r}")


def _wmean(values: np.ndarray, mask: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Row-wise (weighted) mean of values over mask; NaN where nothing (or zero weight) is there."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if w is None:
            return np.where(mask, values, 0.0).sum(axis=1) / mask.sum(axis=1)
        den = mask @ w
        return np.where(den > 0, np.where(mask, values, 0.0) @ w / np.where(den > 0, den, 1.0), np.nan)


def point_estimates(matrix: ScoreMatrix) -> Points:
    """Means, win rates (docs/methods.md §8 convention) and per-category means, weighted by task weight."""
    x, present, w = matrix.scores, matrix.present, matrix.weights
    wins = task_wins(x)
    cats = np.column_stack([_wmean(x[:, matrix.category == c], present[:, matrix.category == c],
                                   None if w is None else w[matrix.category == c])
                            for c in range(len(matrix.categories))]) if matrix.categories else \
        np.empty((len(x), 0))
    return Points(_wmean(x, present, w), _wmean(wins.astype(float), present, w), present.sum(axis=1), cats)


def ranking_order(values: np.ndarray) -> np.ndarray:
    """Model indices best first: higher value first, NaN last, ties by model id (= index order)."""
    values = np.asarray(values, dtype=np.float64)
    nan = np.isnan(values)
    return np.lexsort((np.arange(len(values)), -np.where(nan, 0.0, values), nan))


def _ci(samples: list[np.ndarray], alpha: float) -> tuple[np.ndarray, np.ndarray]:
    if not samples:
        return np.empty(0), np.empty(0)
    with warnings.catch_warnings():  # an all-NaN column (every replicate weightless) is a NaN bound
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = percentile_interval(np.column_stack(samples), alpha)
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)


def bootstrap_intervals(matrix: ScoreMatrix, settings: LeaderboardSettings, order: np.ndarray, *,
                        means: bool = True, pairs: bool = True, ranks: bool = True) -> Intervals:
    """Mean CIs, paired/unpaired CIs of every pair (in ``order``), rank CIs (the stages of aggregate)."""
    m, t = matrix.scores.shape
    present = matrix.present
    complete = present.all(axis=1)
    wins = task_wins(matrix.scores).astype(np.float64) if ranks and settings.rank_by == "win_rate" else None
    values = matrix.scores if wins is None else np.vstack([matrix.scores, wins])
    engine = SubsetDraws(values, matrix.weights, matrix.strata if settings.stratified else None,
                         settings.replicates, settings.seed)
    full = engine.subset(np.ones(t, dtype=bool)) if t else None
    mean_req = {i: engine.need(full if complete[i] else engine.subset(present[i], rows=(i,)), i)
                for i in range(m) if means and present[i].any()}
    pos = np.asarray(order)
    ia, ib = np.triu_indices(m, 1) if pairs else (np.empty(0, int), np.empty(0, int))
    ia, ib = pos[ia], pos[ib]
    pair_n = (present[ia] & present[ib]).sum(axis=1) if len(ia) else np.zeros(0, dtype=int)
    pair_req = {}
    for p, (a, b) in enumerate(zip(ia, ib)):
        if pair_n[p]:
            parts = tuple(int(r) for r in (a, b) if not complete[r])  # the rows whose gaps shape the subset
            sid = engine.subset(present[a] & present[b], rows=parts) if parts else full
            pair_req[p] = (engine.need(sid, a), engine.need(sid, b), engine.need(sid, b, 1))
    common = present.all(axis=0)
    rank_req = []
    if ranks and m and common.any():
        sid = engine.subset(common)
        rank_req = [engine.need(sid, i if wins is None else m + i) for i in range(m)]
    mean_lo, mean_hi = np.full(m, np.nan), np.full(m, np.nan)
    plo, phi, ulo, uhi = (np.full(len(ia), np.nan) for _ in range(4))
    rank_ci = None
    means_at, pairs_at = {}, {}
    for i, r in mean_req.items():
        means_at.setdefault(engine.group(r[0]), []).append(i)
    for p, r in pair_req.items():
        pairs_at.setdefault(engine.group(r[0][0]), []).append(p)
    for shape, out in engine.run():
        done = means_at.get(shape, [])
        mean_lo[done], mean_hi[done] = _ci([out[mean_req[i]] for i in done], settings.alpha)
        here = pairs_at.get(shape, [])
        for lo in range(0, len(here), PAIR_CHUNK):
            chunk = here[lo:lo + PAIR_CHUNK]
            plo[chunk], phi[chunk] = _ci([out[pair_req[p][0]] - out[pair_req[p][1]] for p in chunk], settings.alpha)
            ulo[chunk], uhi[chunk] = _ci([out[pair_req[p][0]] - out[pair_req[p][2]] for p in chunk], settings.alpha)
        if rank_req and rank_req[0] in out:
            rank_ci = rank_summary(np.column_stack([out[r] for r in rank_req]), settings.alpha)
    return Intervals(mean_lo, mean_hi, ia, ib, pair_n, plo, phi, ulo, uhi, rank_ci)


def _pair_diffs(matrix: ScoreMatrix, points: Points, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """Mean of d_t = a − b over the tasks both scored (= mean_a − mean_b when both are complete)."""
    present = matrix.present
    complete = present.all(axis=1)
    diff = points.means[ia] - points.means[ib]
    for p in np.flatnonzero(~(complete[ia] & complete[ib])):
        both = (present[ia[p]] & present[ib[p]])[None, :]
        diff[p] = _wmean((matrix.scores[ia[p]] - matrix.scores[ib[p]])[None, :], both, matrix.weights)[0]
    return diff


def aggregate(runs: pd.DataFrame, settings: LeaderboardSettings = LeaderboardSettings()) -> Leaderboard:
    """Leaderboard of EvalRuns (docs/methods.md §8) with task-bootstrap uncertainty (docs/methods.md §3).

    Rows are ordered by ``settings.rank_by`` (higher first, NaN last, ties by model id); ``rank`` is
    the position. Undefined quantities are NaN (docs/methods.md §0): a model without tasks, a pair without
    common tasks, rank intervals without a task scored by all (``rank_lo``/``rank_hi`` None).

    Tie groups: walking down the ranking, a model joins the group of the model just above it when
    their paired difference is not significant (including no common task), else opens the next group
    (numbered 1, 2, …). Groups chain: A ~ B and B ~ C put A, B, C together although A − C may be
    significant; for ``rank_by="win_rate"`` the test is still the paired test of means.

    Pairwise rows list every pair, ``model_a`` ranked above ``model_b``. The unpaired CI resamples
    a's and b's scores on their common tasks independently: ``default_rng(seed)`` draws a's indices,
    the same generator continues for b's. Friedman (unweighted) uses the tasks scored by all models.
    With ``stratified`` every resample (means, pairs, ranks) is stratified by category, tasks without
    a category forming one more stratum, sorted last.

    Parameters
    ----------
    runs : pandas.DataFrame
        EvalRuns (see :func:`core.leaderboard.scores.pivot`).
    settings : LeaderboardSettings
        Ranking scheme, B, alpha, seed, stratification and metric.

    Returns
    -------
    Leaderboard
        Empty (no rows) for empty runs; never raises for undefined statistics.
    """
    _check_settings(settings)
    scores, category, weight, metric = parse_runs(runs, settings.metric)
    matrix = score_matrix(scores, category, weight)
    m, t = matrix.scores.shape
    points = point_estimates(matrix)
    order = ranking_order(points.means if settings.rank_by == "mean" else points.win_rates)
    iv = bootstrap_intervals(matrix, settings, order)
    diffs = _pair_diffs(matrix, points, iv.pair_a, iv.pair_b)
    # core.stats.evidence: no interval (and so no verdict) from one task or from resamples that cannot vary.
    mean_ev = check_intervals(points.means, iv.mean_lo, iv.mean_hi, points.completed, "task")
    pair_ev = check_intervals(diffs, iv.pair_lo, iv.pair_hi, iv.pair_n, "shared task")
    unpaired = check_intervals(diffs, iv.unpaired_lo, iv.unpaired_hi, iv.pair_n, "shared task")
    sig = (pair_ev.low > EPS) | (pair_ev.high < -EPS)
    pairwise = tuple(PairwiseRow(matrix.models[a], matrix.models[b], float(d), float(lo), float(hi), bool(s), int(n),
                                 float(ul), float(uh), note)
                     for a, b, d, lo, hi, s, n, ul, uh, note in zip(iv.pair_a, iv.pair_b, diffs, pair_ev.low,
                                                                    pair_ev.high, sig, iv.pair_n, unpaired.low,
                                                                    unpaired.high, pair_ev.notes))
    rank_lo = rank_hi = None
    if iv.ranks is not None:
        rank_lo, rank_hi = rank_ranges_with_evidence(
            iv.ranks.rank_lo, iv.ranks.rank_hi, points.means if settings.rank_by == "mean" else points.win_rates,
            iv.pair_a, iv.pair_b, pair_ev.missing, int(matrix.present.all(axis=0).sum()))
    # np.triu_indices order: the pair of ranks (i, i + 1) sits at i·(2m − i − 1)/2.
    adjacent = [bool(sig[i * (2 * m - i - 1) // 2]) for i in range(m - 1)]
    groups = np.concatenate([[1], 1 + np.cumsum(adjacent)]).astype(int) if m else np.empty(0, int)
    rows = []
    for position, i in enumerate(order):
        rows.append(LeaderboardRow(
            position + 1, matrix.models[i], float(points.means[i]), float(mean_ev.low[i]), float(mean_ev.high[i]),
            float(points.win_rates[i]), int(points.completed[i]),
            {c: float(points.category_means[i, j]) for j, c in enumerate(matrix.categories)},
            None if rank_lo is None else int(rank_lo[i]), None if rank_hi is None else int(rank_hi[i]),
            int(groups[position]), int(t - points.completed[i]), mean_ev.notes[i]))
    return Leaderboard(settings, tuple(rows), pairwise, friedman(scores, settings.alpha), m, t, metric,
                       matrix.categories, int(sig.sum()), matrix.weights is not None)


def rank_one_probability(runs: pd.DataFrame, settings: LeaderboardSettings = LeaderboardSettings()) -> dict:
    """P(rank 1) per model from the leaderboard's rank bootstrap (tasks scored by all; NaN if none)."""
    _check_settings(settings)
    scores, category, weight, _ = parse_runs(runs, settings.metric)
    matrix = score_matrix(scores, category, weight)
    iv = bootstrap_intervals(matrix, settings, np.arange(len(matrix.models)), means=False, pairs=False)
    p = np.full(len(matrix.models), np.nan) if iv.ranks is None else iv.ranks.p_first
    return dict(zip(matrix.models, map(float, p)))
