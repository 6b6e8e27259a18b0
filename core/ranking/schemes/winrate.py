"""Scheme ``winrate``: each model's win rate against the field (ties half) with a Wilson interval
(docs/methods.md §1); rank intervals from the multinomial bootstrap of the cells."""

from __future__ import annotations

import numpy as np

from core.ranking.bootstrap import multinomial_counts
from core.ranking.cells import Cells
from core.ranking.rows import build_rows
from core.ranking.types import FitInfo, Ranking, RankSettings
from core.ranking.winrate import win_rates
from core.stats.evidence import zero_width
from core.stats.resampling import rank_interval


def rank_winrate(cells: Cells, settings: RankSettings) -> Ranking:
    rates = win_rates(cells.left, cells.right, cells.s, cells.count, cells.n_models, weight=cells.weight,
                      alpha=settings.alpha)
    rate = rates.win_rate
    rank_low = rank_high = flat = None
    info = FitInfo().with_(interval="wilson")
    if settings.ci == "none":
        low = high = np.full(len(rate), np.nan)
    else:
        low, high = rates.low, rates.high
        if settings.ci == "bootstrap":
            counts = multinomial_counts(cells, settings.replicates, np.random.default_rng(settings.seed))
            replicate_rates = _replicate_win_rates(cells, counts)
            rank_low, rank_high = rank_interval(replicate_rates, settings.alpha)
            flat = zero_width(rate, np.nanmin(replicate_rates, axis=0), np.nanmax(replicate_rates, axis=0))
            info = info.with_(replicates=settings.replicates, rank_intervals="multinomial bootstrap")
    return Ranking(settings, int(cells.n_votes), cells.n_models, True,
                   build_rows(cells, rate, rate, low, high, rank_low, rank_high, flat), fit=info)


def _replicate_win_rates(cells: Cells, counts: np.ndarray) -> np.ndarray:
    k = cells.n_models
    won = np.zeros((len(cells), k))
    seen = np.zeros((len(cells), k))
    rows = np.arange(len(cells))
    won[rows, cells.left] += cells.weight * cells.s
    won[rows, cells.right] += cells.weight * (1.0 - cells.s)
    seen[rows, cells.left] += cells.weight
    seen[rows, cells.right] += cells.weight
    with np.errstate(invalid="ignore", divide="ignore"):
        return (counts @ won) / (counts @ seen)
