"""Leaderboard from per-(model, task) scores in [0, 1] (METHODS §8) with task-bootstrap CIs (§3).

``pivot`` turns EvalRuns into a models × tasks matrix (NaN = not scored); ``aggregate`` ranks the
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
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.stats.resampling import percentile_interval
from core.schema import RANK_BY
from core.stats.evidence import check_intervals, rank_ranges_with_evidence
from core.stats.friedman import FriedmanResult, friedman
from core.leaderboard.subset_draws import SubsetDraws
from core.leaderboard.task_bootstrap import EPS, RankCI, rank_summary, task_wins

__all__ = ["RANK_BY", "Leaderboard", "LeaderboardError", "LeaderboardRow", "LeaderboardSettings", "PairwiseRow",
           "ScoreMatrix", "aggregate", "bootstrap_intervals", "pivot", "point_estimates", "rank_one_probability",
           "ranking_order", "score_matrix"]

PAIR_CHUNK = 1024  # pairs whose (B, chunk) replicate differences are held at once (8 MB at B = 1000)


class LeaderboardError(ValueError):
    """Runs or settings a leaderboard cannot be built from; the message names the argument."""


@dataclass(frozen=True)
class LeaderboardSettings:
    """How :func:`aggregate` ranks (``rank_by`` in RANK_BY) and resamples (B, α, seed; METHODS §3)."""

    rank_by: str = "mean"
    replicates: int = 500
    alpha: float = 0.05
    seed: int = 0
    stratified: bool = False  # resample tasks within each category (METHODS §3 "Stratified")
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
    """Paired (METHODS §3) and unpaired CIs of mean(a) − mean(b) over the tasks both scored."""

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
class ScoreMatrix:
    """Arrays behind a leaderboard; models sorted, tasks in ``pivot`` column order."""

    models: tuple[str, ...]
    tasks: tuple[str, ...]
    scores: np.ndarray = field(repr=False)  # (M, T), NaN = not scored
    weights: np.ndarray | None = field(repr=False)  # (T,), None = unweighted
    category: np.ndarray = field(repr=False)  # (T,) index into categories, −1 = none
    categories: tuple[str, ...]

    @property
    def present(self) -> np.ndarray:
        return ~np.isnan(self.scores)

    @property
    def strata(self) -> np.ndarray:
        """Stratum per task: category index, uncategorised tasks last (their own stratum)."""
        return np.where(self.category < 0, len(self.categories), self.category)


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
    b = settings.replicates
    if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1:
        raise LeaderboardError(f"`replicates` must be a positive integer, not {b!r}")
    a = settings.alpha
    if isinstance(a, bool) or not isinstance(a, (int, float, np.floating)) or not 0 < a < 1:
        raise LeaderboardError(f"`alpha` must lie strictly between 0 and 1, not {a!r}")
    s = settings.seed
    if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
        raise LeaderboardError(f"`seed` must be a non-negative integer, not {s!r}")
    if not isinstance(settings.stratified, (bool, np.bool_)):
        raise LeaderboardError(f"`stratified` must be True or False, not {settings.stratified!r}")
    if settings.metric is not None and not isinstance(settings.metric, str):
        raise LeaderboardError(f"`metric` must be a metric name or None, not {settings.metric!r}")


def _select_metric(runs: pd.DataFrame, metric: str | None) -> tuple[pd.DataFrame, str | None]:
    """The rows of one metric, and its name (None when several tasks use differently named metrics)."""
    if not isinstance(runs, pd.DataFrame):
        raise LeaderboardError(f"`runs` must be a pandas DataFrame, not {type(runs).__name__}")
    if len(runs) == 0:
        return runs, metric
    missing = [c for c in ("model_id", "task_id", "score") if c not in runs.columns]
    if missing:
        raise LeaderboardError(f"`runs` lacks the column(s) {', '.join(missing)}; it has "
                               f"{', '.join(map(str, runs.columns))}")
    if "metric_name" not in runs.columns:
        if metric is not None:
            raise LeaderboardError(f"`metric` {metric!r} was given but `runs` has no metric_name column")
        return runs, None
    names = sorted(map(str, pd.unique(runs["metric_name"])))
    if metric is not None:
        if metric not in names:
            raise LeaderboardError(f"`metric` {metric!r} is not in the runs; they have: {', '.join(names)}")
        return runs[runs["metric_name"].astype(str) == metric], metric
    if len(names) > 1 and (runs.groupby(["model_id", "task_id"], sort=False)["metric_name"].nunique() > 1).any():
        raise LeaderboardError(f"some (model, task) pairs have several metrics; choose one with `metric` "
                               f"(one of: {', '.join(names)})")
    return runs, names[0] if len(names) == 1 else None


def _labels(column: pd.Series, what: str) -> tuple[np.ndarray, list[str]]:
    """Integer codes into the sorted (as text) distinct labels."""
    codes, uniques = pd.factorize(column, sort=False)
    if (codes < 0).any():
        raise LeaderboardError(f"`runs` has empty {what} values on rows "
                               f"{np.flatnonzero(codes < 0)[:10].tolist()}")
    labels = [str(u) for u in uniques]
    if len(set(labels)) < len(labels):
        raise LeaderboardError(f"`runs` has {what} values that read the same as text")
    rank = np.argsort(labels, kind="stable")
    remap = np.empty(len(labels), dtype=np.int64)
    remap[rank] = np.arange(len(labels))
    return remap[codes], [labels[i] for i in rank]


def _per_task(values: np.ndarray, task: np.ndarray, column: str, n_tasks: int) -> np.ndarray:
    """One value per task from a per-row array (NaN where no row has one); two values are an error."""
    codes, uniques = pd.factorize(values, sort=False)  # NaN -> -1
    per_task = np.full(n_tasks, -1, dtype=np.int64)
    known = codes >= 0
    per_task[task[known]] = codes[known]
    clash = known & (per_task[task] != codes)
    if clash.any():
        raise LeaderboardError(f"`runs` gives some tasks more than one {column} (rows "
                               f"{np.flatnonzero(clash)[:10].tolist()})")
    out = np.asarray(uniques, dtype=object)[np.maximum(per_task, 0)] if len(uniques) else \
        np.full(n_tasks, np.nan, dtype=object)
    out[per_task < 0] = np.nan
    return out


def _pivot(runs: pd.DataFrame, metric: str | None):
    frame, name = _select_metric(runs, metric)
    if len(frame) == 0:
        empty = pd.DataFrame(np.empty((0, 0)), index=pd.Index([], dtype=object), columns=pd.Index([], dtype=object))
        return empty, pd.Series([], dtype=object), pd.Series([], dtype=np.float64), name
    model, models = _labels(frame["model_id"], "model_id")
    task, tasks = _labels(frame["task_id"], "task_id")
    try:
        score = pd.to_numeric(frame["score"]).to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise LeaderboardError(f"`runs` column score must hold numbers: {exc}") from None
    if np.isinf(score).any():
        raise LeaderboardError("`runs` column score holds infinite values")
    cell = np.sort(model * len(tasks) + task)
    if (cell[1:] == cell[:-1]).any():
        raise LeaderboardError("`runs` scores the same (model, task) more than once for this metric")
    matrix = np.full((len(models), len(tasks)), np.nan)
    matrix[model, task] = score  # NaN scores stay missing cells and are counted as such
    category = (_per_task(frame["category"].to_numpy(dtype=object), task, "category", len(tasks))
                if "category" in frame.columns else np.full(len(tasks), np.nan, dtype=object))
    weight = np.ones(len(tasks))
    if "weight" in frame.columns:
        w = pd.to_numeric(frame["weight"], errors="coerce").to_numpy(dtype=np.float64)
        if not np.all(np.isfinite(w)) or (w < 0).any():
            raise LeaderboardError("`runs` column weight must hold finite, non-negative numbers on every row")
        weight = _per_task(w, task, "weight", len(tasks)).astype(np.float64)
        _refuse_weightless(matrix, weight, models)
    index = pd.Index(tasks, dtype=object, name="task_id")
    scores = pd.DataFrame(matrix, index=pd.Index(models, dtype=object, name="model_id"), columns=index)
    return scores, pd.Series(category, index=index, name="category"), pd.Series(weight, index=index, name="weight"), \
        name


def _refuse_weightless(matrix: np.ndarray, weight: np.ndarray, models: list[str]) -> None:
    """A weighted mean over tasks of total weight 0 is 0/0: refuse it, naming the models."""
    if not (weight > 0).any():
        raise LeaderboardError("every task has weight 0: there is nothing to average (give the tasks positive "
                               "weights, or drop the weight column)")
    scored = ~np.isnan(matrix)
    names = [m for m, bad in zip(models, scored.any(axis=1) & ~(scored & (weight > 0)).any(axis=1)) if bad]
    if names:
        raise LeaderboardError(f"{', '.join(names[:8])}{' …' if len(names) > 8 else ''}: every scored task has "
                               "weight 0, so there is no mean to rank (give those tasks positive weights)")


def pivot(runs: pd.DataFrame, metric: str | None = None) -> tuple[pd.DataFrame, pd.Series, pd.Series]:
    """Models × tasks score matrix of EvalRuns, with each task's category and weight.

    Parameters
    ----------
    runs : pandas.DataFrame
        Columns model_id, task_id, score and optionally metric_name, category, weight. Ids are read
        as text; a NaN score is a missing cell.
    metric : str, optional
        Keep this metric_name only. Required when a (model, task) has several metrics.

    Returns
    -------
    scores : pandas.DataFrame
        Index = sorted model ids, columns = sorted task ids, NaN = not scored.
    category : pandas.Series
        Task → category (NaN when none).
    weight : pandas.Series
        Task → weight (1.0 when the runs carry no weights).
    """
    scores, category, weight, _ = _pivot(runs, metric)
    return scores, category, weight


def score_matrix(scores: pd.DataFrame, category: pd.Series, weight: pd.Series) -> ScoreMatrix:
    """Arrays from :func:`pivot`'s output. Equal positive weights are dropped (they change nothing)."""
    w = weight.to_numpy(dtype=np.float64)
    weights = None if len(w) == 0 or (w[0] > 0 and np.all(w == w[0])) else w
    present = category.notna().to_numpy()
    names = sorted({str(c) for c in category[present]})
    lookup = {c: i for i, c in enumerate(names)}
    codes = np.array([lookup[str(c)] if ok else -1 for c, ok in zip(category, present)], dtype=np.int64)
    return ScoreMatrix(tuple(map(str, scores.index)), tuple(map(str, scores.columns)),
                       scores.to_numpy(dtype=np.float64), weights, codes, tuple(names))


def _wmean(values: np.ndarray, mask: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Row-wise (weighted) mean of values over mask; NaN where nothing (or zero weight) is there."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if w is None:
            return np.where(mask, values, 0.0).sum(axis=1) / mask.sum(axis=1)
        den = mask @ w
        return np.where(den > 0, np.where(mask, values, 0.0) @ w / np.where(den > 0, den, 1.0), np.nan)


def point_estimates(matrix: ScoreMatrix) -> Points:
    """Means, win rates (METHODS §8 convention) and per-category means, weighted by task weight."""
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
    """Leaderboard of EvalRuns (METHODS §8) with task-bootstrap uncertainty (METHODS §3).

    Rows are ordered by ``settings.rank_by`` (higher first, NaN last, ties by model id); ``rank`` is
    the position. Undefined quantities are NaN (METHODS §0): a model without tasks, a pair without
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
        EvalRuns (see :func:`pivot`).
    settings : LeaderboardSettings
        Ranking scheme, B, alpha, seed, stratification and metric.

    Returns
    -------
    Leaderboard
        Empty (no rows) for empty runs; never raises for undefined statistics.
    """
    _check_settings(settings)
    scores, category, weight, metric = _pivot(runs, settings.metric)
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
    scores, category, weight, _ = _pivot(runs, settings.metric)
    matrix = score_matrix(scores, category, weight)
    iv = bootstrap_intervals(matrix, settings, np.arange(len(matrix.models)), means=False, pairs=False)
    p = np.full(len(matrix.models), np.nan) if iv.ranks is None else iv.ranks.p_first
    return dict(zip(matrix.models, map(float, p)))
