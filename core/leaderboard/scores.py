"""EvalRuns as a models × tasks score matrix (docs/methods.md §8): the leaderboard's input, checked.

``pivot`` reads the runs of one metric into a models × tasks frame (NaN = not scored) with each task's
category and weight, refusing what cannot be averaged (clashing categories or weights, duplicate cells,
tasks of total weight 0); ``score_matrix`` turns that into the arrays :mod:`core.leaderboard.aggregate`
resamples.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.errors import EvalBoardError


class LeaderboardError(EvalBoardError, ValueError):
    """Runs or settings a leaderboard cannot be built from; the message names the argument."""


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
    if len(names) > 1 and not one_metric_per_task(runs):
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


def parse_runs(runs: pd.DataFrame, metric: str | None):
    """(scores, category, weight) as :func:`pivot` gives them, and the metric's name (None when several)."""
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
    scores, category, weight, _ = parse_runs(runs, metric)
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


def metric_names(runs: pd.DataFrame) -> list[str]:
    return sorted(map(str, pd.unique(runs["metric_name"].dropna()))) if "metric_name" in runs.columns else []


def one_metric_per_task(runs: pd.DataFrame) -> bool:
    """True when no (model, task) has several metrics: all metrics can be ranked together."""
    if "metric_name" not in runs.columns or len(runs) == 0:
        return True
    return not (runs.groupby(["model_id", "task_id"], sort=False)["metric_name"].nunique() > 1).any()
