"""Scheme ``adjusted``: BT with the left-position advantage δ and, when answer lengths are known, the
length (style) effect β (docs/methods.md §9), shown next to the plain ranking of the same votes."""

from __future__ import annotations

import numpy as np
import pandas as pd

import core.ranking.bradley_terry as bt
from core.ranking.cells import compress_votes
from core.ranking.covariates import (
    ConvergenceError,
    NotIdentifiableError,
    SeparationError,
    fit_adjusted,
    style_features,
)
from core.ranking.rows import anchor_index, build_rows, normal_intervals
from core.ranking.types import Covariate, FitInfo, Ranking, RankingError, RankSettings

LEFT_SCORE = np.array([1.0, 0.0, 0.5, 0.5])  # by outcome code: model_a, model_b, tie, tie (bothbad)


def rank_adjusted(votes: pd.DataFrame, settings: RankSettings, plain: Ranking) -> Ranking:
    left = votes["model_a"].cat.codes.to_numpy().astype(np.int64)
    right = votes["model_b"].cat.codes.to_numpy().astype(np.int64)
    y = LEFT_SCORE[votes["winner"].cat.codes.to_numpy()]
    weight = votes["weight"].to_numpy(dtype=float) if "weight" in votes else np.ones(len(votes))
    models = [str(m) for m in votes["model_a"].cat.categories]
    columns = [left, right, y, weight]
    names: tuple[str, ...] = ()
    info = FitInfo()
    have_lengths = {"len_a", "len_b"} <= set(votes.columns) and votes[["len_a", "len_b"]].notna().all().all()
    if have_lengths:
        style = style_features(votes["len_a"].to_numpy(float), votes["len_b"].to_numpy(float))
        columns.append(style.z[:, 0])
        names = ("length",)
        info = info.with_(length_feature="(len_a − len_b)/(len_a + len_b + 1), z-scored", length_mean=style.mean,
                          length_sd=style.sd)
    else:
        info = info.with_(length_feature="not available (no len_a/len_b for every vote)")
    # Identical votes collapse into one row with a count: exact, and far fewer rows to fit.
    rows, count = _collapse(np.column_stack(columns))
    try:
        fit = fit_adjusted(rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64), rows[:, 2], len(models),
                           count=count.astype(float), weight=rows[:, 3], features=rows[:, 4:] if names else None,
                           position=True, feature_names=names)
    except (SeparationError, NotIdentifiableError, ConvergenceError) as exc:
        raise RankingError(f"the adjusted model has no finite estimate on these votes: {exc}") from None
    k = len(models)
    anchor = anchor_index(models, settings.anchor)
    elo = bt.elo_from_pi(fit.pi, anchor)
    low = high = np.full(k, np.nan)
    rank_low = rank_high = None
    if settings.ci != "none":
        cov = bt.elo_covariance(fit.theta, fit.covariance[:k, :k], anchor and anchor[0])
        low, high, rank_low, rank_high = normal_intervals(elo, cov, settings)
        info = info.with_(interval="observed information" + (" (bootstrap refits are not offered for this scheme)"
                                                             if settings.ci == "bootstrap" else ""))
    covariates = [Covariate("position (left)", fit.delta, fit.delta_se)]
    covariates += [Covariate(n, float(b), float(se)) for n, b, se in zip(names, fit.beta, fit.beta_se)]
    info = info.with_(iterations=fit.iterations, converged=fit.converged, rows_fitted=len(rows))
    cells = compress_votes(votes)
    return Ranking(settings, int(len(votes)), k, True,
                   build_rows(cells, elo, fit.pi, low, high, rank_low, rank_high, anchor=anchor),
                   covariates=tuple(covariates), fit=info, plain=plain)


def _collapse(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows (in order of first appearance) and how often each occurs. Hash-based: several
    times faster than sorting a million rows with ``np.unique(axis=0)``."""
    codes = pd.DataFrame(matrix).groupby(list(range(matrix.shape[1])), sort=False).ngroup().to_numpy()
    count = np.bincount(codes)
    first = np.empty(len(count), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    return matrix[first], count
