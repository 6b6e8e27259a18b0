"""Scheme ``ipw``: Bradley–Terry on votes weighted by inverse propensity of their cell (docs/methods.md §6)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from core.ranking.periods import resolve_period
from core.ranking.types import FitInfo, Ranking, RankSettings
from core.stats.intervals import kish_n_eff

IPW_CLIP = (0.2, 5.0)  # docs/methods.md §6: truncate normalised weights to [0.2, 5], no renormalisation


def ipw_weights(votes: pd.DataFrame, early="median") -> tuple[np.ndarray, dict[str, Any]]:
    """Per-vote IPW weights w_v = N / (C_obs · n_c), truncated to [0.2, 5] (docs/methods.md §6).

    Cell c(v) = (unordered pair, model on the left, period); without timestamps (pair, left model).
    Also reports Kish n_eff, the design effect and the empty cells of the full grid (observed pairs ×
    2 sides [× 2 periods]), where positivity fails and weighting cannot help.
    """
    a = votes["model_a"].cat.codes.to_numpy().astype(np.int64)
    b = votes["model_b"].cat.codes.to_numpy().astype(np.int64)
    k = len(votes["model_a"].cat.categories)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    early = resolve_period(votes, early)
    periods = 1 if early is None else 2
    key = ((lo * k + hi) * 2 + (a == lo)) * periods + (0 if early is None else early.astype(np.int64))
    cells, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    n = len(key)
    raw = n / (len(cells) * counts[inverse])
    weights = np.clip(raw, *IPW_CLIP)
    pairs = len(np.unique(lo * k + hi))
    grid = pairs * 2 * periods
    info = {"n_eff": kish_n_eff(weights), "design_effect": n / kish_n_eff(weights),
            "empty_cells": int(grid - len(cells)), "grid_cells": int(grid), "truncated": int((raw != weights).sum()),
            "cell": "pair × left model × period" if early is not None else "pair × left model (no timestamps)"}
    return weights, info


def ipw_votes(votes: pd.DataFrame) -> tuple[pd.DataFrame, FitInfo]:
    """The votes with their IPW weights (times any vote weight) and what the weighting did."""
    weights, info = ipw_weights(votes)
    weighted = votes.assign(weight=weights * (votes["weight"].to_numpy() if "weight" in votes else 1.0))
    return weighted, FitInfo().with_(**info, weights="inverse propensity (docs/methods.md §6)")


def as_ipw(bt_ranking: Ranking, settings: RankSettings, weighting: FitInfo) -> Ranking:
    """The BT ranking of the IPW-weighted votes, as scheme ``ipw``. Weights are fixed per vote, computed
    once on all votes, so the cells keep them and the multinomial bootstrap stays exact (docs/methods.md §3,
    condition ii). Win rates shown are weighted."""
    fit = bt_ranking.fit.with_(**{name: getattr(weighting, name) for name in weighting.reported})
    return replace(bt_ranking, settings=settings, fit=fit)
