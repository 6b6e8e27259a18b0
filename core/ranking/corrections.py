"""Corrections for how votes were collected: the stratified 2×2 win rate (METHODS §5) and inverse
propensity weights (METHODS §6), and the rankings built on them (schemes ``stratified``, ``ipw``).

Period (METHODS §4): a vote is early iff its timestamp is below the median timestamp of the votes
analysed; without timestamps there is no period and only the side is balanced.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from core.ranking.bootstrap import multinomial_counts, rank_interval
from core.stats.intervals import kish_n_eff, z_value
from core.ranking.cells import Cells, compress, compress_votes

IPW_CLIP = (0.2, 5.0)  # METHODS §6: truncate normalised weights to [0.2, 5], no renormalisation


def early_period(votes: pd.DataFrame) -> np.ndarray | None:
    """True for votes before the median timestamp (METHODS §4); None without timestamps."""
    if "timestamp" not in votes or votes["timestamp"].isna().all():
        return None
    seconds = votes["timestamp"].astype("int64").to_numpy() / 1e9
    return seconds < np.median(seconds)


def resolve_period(votes: pd.DataFrame, early) -> np.ndarray | None:
    """``early="median"``: the METHODS §4 split; None: no period; a boolean array: given periods."""
    if isinstance(early, str):
        if early != "median":
            raise ValueError(f"early must be 'median', None or a boolean array, not {early!r}")
        return early_period(votes)
    return None if early is None else np.asarray(early, dtype=bool)


def ipw_weights(votes: pd.DataFrame, early="median") -> tuple[np.ndarray, dict[str, Any]]:
    """Per-vote IPW weights w_v = N / (C_obs · n_c), truncated to [0.2, 5] (METHODS §6).

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


def stratified_win_rates(votes: pd.DataFrame, strict: bool = False, early="median") -> dict[str, np.ndarray]:
    """Each model's win rate against the field, averaged over its non-empty (side × period) strata
    (METHODS §5); ``strict`` gives NaN unless all strata are non-empty."""
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
        # mean over non-empty strata; NaN (no warning) for a model without votes (METHODS §0)
        corrected = np.where(used > 0, np.where(n > 0, rate, 0.0).sum(axis=2) / np.maximum(used, 1), np.nan)
        var = np.where(used > 0, np.where(n > 0, rate * (1 - rate) / n_eff, 0.0).sum(axis=2)
                       / np.maximum(used, 1) ** 2, np.nan)
        raw = w.sum(axis=2) / n.sum(axis=2)
    if strict:
        corrected = np.where(used == n_strata, corrected, np.nan)
    return {"corrected": corrected.squeeze(0) if len(counts) == 1 else corrected, "raw": raw.squeeze(0)
            if len(counts) == 1 else raw, "strata_used": used.squeeze(0) if len(counts) == 1 else used,
            "variance": var.squeeze(0) if len(counts) == 1 else var}


def rank_corrected(votes: pd.DataFrame, settings):
    """Scheme ``stratified`` (corrected win rates) or ``ipw`` (weighted BT with IPW weights)."""
    from core.ranking import Ranking, build_rows, rank_cells  # core.ranking imports this module lazily

    if settings.scheme == "ipw":
        weights, info = ipw_weights(votes)
        weighted = votes.assign(weight=weights * (votes["weight"].to_numpy() if "weight" in votes else 1.0))
        # Weights are fixed per vote, computed once on all votes, so the cells keep them and the
        # multinomial bootstrap stays exact (METHODS §3, condition ii). Win rates shown are weighted.
        ranking = rank_cells(compress_votes(weighted), replace(settings, scheme="bt"))
        return replace(ranking, settings=settings,
                       details={**ranking.details, **info, "weights": "inverse propensity (METHODS §6)"})
    strata = _strata_cells(votes)
    result = _stratified(strata, None, False)
    rate = result["corrected"]
    low = high = np.full(len(rate), np.nan)
    rank_low = rank_high = None
    details: dict[str, Any] = {"strata": "side × period" if strata[2] == 2 else "side (no timestamps)",
                               "weighted": "weight" in votes,
                               "strata_used": {m: int(u) for m, u in zip(strata[0].models, result["strata_used"])}}
    if settings.ci == "bootstrap":
        counts = multinomial_counts(strata[0], settings.replicates, np.random.default_rng(settings.seed))
        reps = _stratified(strata, counts, False)["corrected"]
        low, high = np.nanquantile(reps, [settings.alpha / 2, 1 - settings.alpha / 2], axis=0)
        rank_low, rank_high = rank_interval(np.nan_to_num(reps, nan=-np.inf), settings.alpha)
        details["replicates"] = settings.replicates
    elif settings.ci == "sandwich":
        half = z_value(settings.alpha) * np.sqrt(result["variance"])
        low, high = np.clip(rate - half, 0, 1), np.clip(rate + half, 0, 1)
        details["interval"] = "normal, stratum variances"
    cells = compress_votes(votes)
    return Ranking(settings, int(cells.n_votes), cells.n_models, True,
                   build_rows(cells, rate, rate, low, high, rank_low, rank_high), details=details)


@dataclass(frozen=True)
class CorrectionRow:
    model: str
    n_votes: int
    raw_win_rate: float
    stratified_win_rate: float
    strata_used: int
    elo: float
    ipw_elo: float
    rank_raw: int  # by raw win rate
    rank_stratified: int
    rank_bt: int
    rank_ipw: int
    rank_changed: bool  # a correction moves the model: stratified vs raw rank, or IPW vs plain BT rank


@dataclass(frozen=True)
class Corrections:
    rows: tuple[CorrectionRow, ...]
    strict: bool
    details: dict = field(default_factory=dict, repr=False)


def corrections(votes: pd.DataFrame, strict: bool = False, early="median") -> Corrections | None:
    """Per model: raw and stratified win rates (METHODS §5), plain and IPW BT Elo (§6), their ranks."""
    from core.ranking import RankSettings, analysed_votes, rank_votes, without_absent_models  # imports this module

    used = without_absent_models(analysed_votes(votes)[0])[0]
    models = [str(m) for m in used["model_a"].cat.categories] if len(used) else []
    if len(models) < 2:
        return None  # corrections need votes between at least two models
    strat = stratified_win_rates(used, strict=strict, early=early)
    fast = RankSettings(ci="none")
    plain = {r.model: r for r in rank_votes(used, fast).rows}
    ipw = {r.model: r for r in rank_votes(used, RankSettings(scheme="ipw", ci="none")).rows}
    raw, corrected = strat["raw"], strat["corrected"]
    ranks = [_ranks(x) for x in (raw, corrected, [plain[m].rating for m in models], [ipw[m].rating for m in models])]
    rows = tuple(CorrectionRow(m, plain[m].n_votes, float(raw[i]), float(corrected[i]), int(strat["strata_used"][i]),
                               plain[m].rating, ipw[m].rating, *(int(r[i]) for r in ranks),
                               bool(ranks[0][i] != ranks[1][i] or ranks[2][i] != ranks[3][i]))
                 for i, m in enumerate(models))
    return Corrections(tuple(sorted(rows, key=lambda r: (r.rank_ipw, r.model))), strict,
                       {"periods": early_period(used) is not None})


def _ranks(values) -> np.ndarray:
    """1 + number of models rated strictly higher (ties share a rank; NaN ranks last), as in core.ranking."""
    v = np.nan_to_num(np.asarray(values, dtype=float), nan=-np.inf)
    return 1 + (v[None, :] > v[:, None]).sum(axis=1)
