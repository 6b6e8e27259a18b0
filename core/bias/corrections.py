"""The Bias page's comparison of corrections: per model, raw and stratified win rates (docs/methods.md §5) and
plain and IPW Bradley–Terry Elo (§6), with the ranks each gives and whether a correction moves the model."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.ranking import RankSettings, analysed_votes, rank_votes, without_absent_models
from core.ranking.periods import early_period
from core.ranking.schemes.stratified import stratified_win_rates


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
    """Per model: raw and stratified win rates (docs/methods.md §5), plain and IPW BT Elo (§6), their ranks."""
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
