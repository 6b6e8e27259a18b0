"""Scheme ``stratified``: each model's win rate averaged over its (side × period) strata (docs/methods.md §5), so
that where and when a model was shown weigh equally. Periods: docs/methods.md §4 (:mod:`core.ranking.periods`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.ranking.bootstrap import multinomial_counts
from core.ranking.cells import Cells, compress, compress_votes
from core.ranking.periods import resolve_period
from core.ranking.rows import build_rows
from core.ranking.types import FitInfo, Ranking, RankSettings
from core.stats.intervals import z_value
from core.stats.resampling import rank_interval


def stratified_win_rates(votes: pd.DataFrame, strict: bool = False, early="median") -> dict[str, np.ndarray]:
    """Each model's win rate against the field, averaged over its non-empty (side × period) strata
    (docs/methods.md §5); ``strict`` gives NaN unless all strata are non-empty."""
    return _stratified(_strata_cells(votes, early), None, strict)


def _strata_cells(votes: pd.DataFrame, early="median") -> tuple[Cells, np.ndarray, int, np.ndarray]:
    """Cells keyed by (left, right, s, period, vote weight): the weight slot carries the code of the
    (period, weight) combination; returns (cells, period per cell, number of periods, weight per cell)."""
    early = resolve_period(votes, early)
    period = np.zeros(len(votes), np.int64) if early is None else np.where(early, 0, 1)
    if "weight" in votes:
        values, w_code = np.unique(votes["weight"].to_numpy(dtype=np.float64), return_inverse=True)
    else:
        values, w_code = np.ones(1), np.zeros(len(votes), np.int64)
    code = period * len(values) + np.ravel(w_code)  # the (period, weight) combination
    a, b = votes["model_a"], votes["model_b"]
    cells = compress(a.cat.codes.to_numpy(), b.cat.codes.to_numpy(), votes["winner"].cat.codes.to_numpy(),
                     [str(m) for m in a.cat.categories], code.astype(np.float64))
    cell_period, cell_weight = np.divmod(cells.weight.astype(np.int64), len(values))
    return cells, cell_period, 1 if early is None else 2, values[cell_weight]


def _stratified(strata, counts: np.ndarray | None, strict: bool) -> dict[str, np.ndarray]:
    cells, period, periods, weight = strata
    k = cells.n_models
    counts = cells.count[None] if counts is None else counts
    n_strata = 2 * periods
    won = np.zeros((len(cells), k * n_strata))
    seen = np.zeros((len(cells), k * n_strata))
    rows = np.arange(len(cells))
    # stratum index: side (0 left, 1 right) × period
    left_col = cells.left * n_strata + 0 * periods + period
    right_col = cells.right * n_strata + 1 * periods + period
    # Vote weights enter as in the weighted win rate: r_s = Σ w·s / Σ w within the stratum; a stratum
    # whose votes all weigh 0 counts as empty. The variance uses the stratum's Kish n_eff.
    won[rows, left_col] = weight * cells.s
    won[rows, right_col] = weight * (1.0 - cells.s)
    seen[rows, left_col] = weight
    seen[rows, right_col] = weight
    w = (counts @ won).reshape(len(counts), k, n_strata)
    n = (counts @ seen).reshape(len(counts), k, n_strata)
    seen[rows, left_col] = seen[rows, right_col] = weight ** 2
    n2 = (counts @ seen).reshape(len(counts), k, n_strata)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = w / n
        n_eff = n ** 2 / n2
        used = (n > 0).sum(axis=2)
        # mean over non-empty strata; NaN (no warning) for a model without votes (docs/methods.md §0)
        corrected = np.where(used > 0, np.where(n > 0, rate, 0.0).sum(axis=2) / np.maximum(used, 1), np.nan)
        var = np.where(used > 0, np.where(n > 0, rate * (1 - rate) / n_eff, 0.0).sum(axis=2)
                       / np.maximum(used, 1) ** 2, np.nan)
        raw = w.sum(axis=2) / n.sum(axis=2)
    if strict:
        corrected = np.where(used == n_strata, corrected, np.nan)
    return {"corrected": corrected.squeeze(0) if len(counts) == 1 else corrected, "raw": raw.squeeze(0)
            if len(counts) == 1 else raw, "strata_used": used.squeeze(0) if len(counts) == 1 else used,
            "variance": var.squeeze(0) if len(counts) == 1 else var}


def rank_stratified(votes: pd.DataFrame, settings: RankSettings) -> Ranking:
    """Scheme ``stratified``: corrected win rates, intervals from the bootstrap or the stratum variances."""
    strata = _strata_cells(votes)
    result = _stratified(strata, None, False)
    rate = result["corrected"]
    low = high = np.full(len(rate), np.nan)
    rank_low = rank_high = None
    info = FitInfo().with_(strata="side × period" if strata[2] == 2 else "side (no timestamps)",
                           weighted="weight" in votes,
                           strata_used={m: int(u) for m, u in zip(strata[0].models, result["strata_used"])})
    if settings.ci == "bootstrap":
        counts = multinomial_counts(strata[0], settings.replicates, np.random.default_rng(settings.seed))
        reps = _stratified(strata, counts, False)["corrected"]
        low, high = np.nanquantile(reps, [settings.alpha / 2, 1 - settings.alpha / 2], axis=0)
        rank_low, rank_high = rank_interval(np.nan_to_num(reps, nan=-np.inf), settings.alpha)
        info = info.with_(replicates=settings.replicates)
    elif settings.ci == "sandwich":
        half = z_value(settings.alpha) * np.sqrt(result["variance"])
        low, high = np.clip(rate - half, 0, 1), np.clip(rate + half, 0, 1)
        info = info.with_(interval="normal, stratum variances")
    cells = compress_votes(votes)
    return Ranking(settings, int(cells.n_votes), cells.n_models, True,
                   build_rows(cells, rate, rate, low, high, rank_low, rank_high), fit=info)
