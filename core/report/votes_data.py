"""The numbers behind the votes report: rankings per scope and the frames the figures plot.

Scopes: ``global`` (the analysed dimension's votes), ``game`` (per game_id), ``dimension`` (per
dimension, over all games) and ``game_dimension``. Every ranking is scheme bt, ties half, bootstrap
intervals, after the request's annotator policy; golden-question votes never enter (docs/methods.md §0).

Definitions used by the figures (documented in the report too):

- *Stratified head-to-head win rate* of A vs B (docs/methods.md §5 "A vs B"): A's win rate against B in
  each (side of A × period) stratum, averaged over the non-empty strata; period = before / after the
  median timestamp (side only without timestamps). The *raw* rate pools all of A's votes against B.
  Both count votes (not vote weights) and ties as half.
- *Gap share*: in game g, the top model T is rank 1 of g's ranking. For model M and dimension d,
  gap_d = rating_d(T) − rating_d(M) in the (g, d) ranking (Elo, or observed win rate against the
  field). Its *share* is gap_d / D (D = the game's number of dimensions), so a model's stacked bar
  sums to its mean gap over dimensions. The ``gap`` column handed to the chart holds the share.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from core.bias.diagnose import LengthTest, PositionTest, TableTest
from core.ranking import (
    Ranking,
    RankingError,
    RankSettings,
    analysed_votes,
    rank_votes,
    without_absent_models,
)
from core.ranking.bradley_terry import predicted_win_rates
from core.ranking.cells import battle_matrix, compress, compress_votes, observed_win_rates
from core.ranking.inputs import vote_groups, with_request
from core.ranking.periods import early_period
from core.ranking.schemes.stratified import stratified_win_rates

SCOPES = {"game": ["game_id"], "dimension": ["dimension"], "game_dimension": ["game_id", "dimension"]}


def analysed(votes: pd.DataFrame) -> pd.DataFrame:
    return without_absent_models(analysed_votes(votes)[0])[0]


def has_column(votes: pd.DataFrame, col: str) -> bool:
    return col in votes and not votes[col].isna().all()


def rank_scope(votes: pd.DataFrame, by: list[str], settings: RankSettings, notes: list[str],
               prepared=None) -> dict[tuple, Ranking]:
    """One bootstrap BT ranking per group; a group that cannot be ranked is skipped with a note.
    ``prepared`` (core.ranking.request.PreparedVotes) adds the request's policy, dimension and item counts."""
    out: dict[tuple, Ranking] = {}
    for key, group in vote_groups(votes, by):
        try:
            ranking = rank_votes(group, settings)
        except (RankingError, ValueError) as exc:
            notes.append(f"{', '.join(f'{b} = {k}' for b, k in zip(by, key))}: not ranked ({exc})")
            continue
        out[key] = ranking if prepared is None else with_request(ranking, prepared, group)
    return out


def ordered_frame(matrix: np.ndarray, models: list[str], order: list[str]) -> pd.DataFrame:
    df = pd.DataFrame(matrix, index=models, columns=models)
    keep = [m for m in order if m in df.index] + [m for m in models if m not in order]
    return df.loc[keep, keep]


def winrate_frames(votes: pd.DataFrame, order: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(observed win rates, battle counts) K×K: row beats column; models in ``order`` first."""
    cells = compress_votes(analysed(votes))
    models = list(cells.models)
    return ordered_frame(observed_win_rates(cells), models, order), ordered_frame(battle_matrix(cells), models, order)


def predicted_frame(ranking: Ranking) -> pd.DataFrame:
    models = [r.model for r in ranking.rows]
    elo = np.array([r.rating for r in ranking.rows])
    return pd.DataFrame(predicted_win_rates(elo), index=models, columns=models)


def head_to_head(votes: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(stratified, raw) K×K head-to-head win rates (row vs column; see the module docstring)."""
    used = analysed(votes)
    early = early_period(used)
    period = np.ones(len(used)) if early is None else np.where(early, 1.0, 2.0)
    a, b = used["model_a"], used["model_b"]
    models = [str(m) for m in a.cat.categories]
    cells = compress(a.cat.codes.to_numpy(), b.cat.codes.to_numpy(), used["winner"].cat.codes.to_numpy(), models,
                     period)
    k, p = len(models), 2
    pidx = cells.weight.astype(np.int64) - 1
    wins = np.zeros((k, k, 2, p))
    seen = np.zeros((k, k, 2, p))
    np.add.at(wins, (cells.left, cells.right, 0, pidx), cells.count * cells.s)  # row model on the left
    np.add.at(seen, (cells.left, cells.right, 0, pidx), cells.count)
    np.add.at(wins, (cells.right, cells.left, 1, pidx), cells.count * (1.0 - cells.s))  # row model on the right
    np.add.at(seen, (cells.right, cells.left, 1, pidx), cells.count)
    wins, seen = wins.reshape(k, k, -1), seen.reshape(k, k, -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(seen > 0, wins / np.where(seen > 0, seen, 1.0), 0.0)
        used_strata = (seen > 0).sum(axis=2)
        strat = np.where(used_strata > 0, rate.sum(axis=2) / np.maximum(used_strata, 1), np.nan)
        total = seen.sum(axis=2)
        raw = np.where(total > 0, wins.sum(axis=2) / np.where(total > 0, total, 1.0), np.nan)
    np.fill_diagonal(strat, np.nan)
    np.fill_diagonal(raw, np.nan)
    return strat, raw, models


def head_to_head_diff(votes: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Stratified minus raw head-to-head win rate, K×K (row vs column), models in ``order`` first."""
    strat, raw, models = head_to_head(votes)
    return ordered_frame(strat - raw, models, order)


def scatter_series(votes: pd.DataFrame, order: list[str]) -> tuple[pd.Series, pd.Series]:
    """(raw, stratified) win rate against the field per model (docs/methods.md §5)."""
    used = analysed(votes)
    models = [str(m) for m in used["model_a"].cat.categories]
    result = stratified_win_rates(used)
    raw = pd.Series(result["raw"], index=models, name="raw")
    strat = pd.Series(result["corrected"], index=models, name="stratified")
    keep = [m for m in order if m in raw.index]
    return raw.loc[keep], strat.loc[keep]


def gap_shares(game_rank: dict[tuple, Ranking], cell_rank: dict[tuple, Ranking], value: str) -> pd.DataFrame:
    """Rows (game_id, model, dimension, gap = share) — see the module docstring; value 'elo' or 'winrate'."""
    rows = []
    for (game,), ranking in game_rank.items():
        top = ranking.rows[0].model
        dims = {key[1]: r for key, r in cell_rank.items() if key[0] == game}
        if not dims:
            continue
        for row in ranking.rows:
            for dim, r in dims.items():
                by_model = {x.model: (x.rating if value == "elo" else x.win_rate) for x in r.rows}
                if top in by_model and row.model in by_model:
                    rows.append((game, row.model, dim, (by_model[top] - by_model[row.model]) / len(dims)))
    return pd.DataFrame(rows, columns=["game_id", "model", "dimension", "gap"])


def dimension_frames(dim_rank: dict[tuple, Ranking], order: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(Elo strength, rank) models × dimensions, from the per-dimension BT fits over all games."""
    strength = pd.DataFrame({key[0]: {r.model: r.rating for r in rk.rows} for key, rk in dim_rank.items()})
    ranks = pd.DataFrame({key[0]: {r.model: r.rank for r in rk.rows} for key, rk in dim_rank.items()})
    keep = [m for m in order if m in strength.index] + [m for m in strength.index if m not in order]
    return strength.loc[keep], ranks.loc[keep]


def forest_rows(ranking: Ranking) -> pd.DataFrame:
    return pd.DataFrame([(r.model, r.rating, r.ci_low, r.ci_high) for r in ranking.rows],
                        columns=["model", "rating", "ci_low", "ci_high"])


def bias_panel_args(report) -> dict[str, Any]:
    """The bias_panel inputs from a core.bias.diagnose.BiasReport (None for a test that could not run)."""
    def shares(test):
        if not isinstance(test, TableTest) or not test.per_model:
            return None
        return pd.Series({r.model: r.test.share for r in test.per_model})

    pos, length = report.position, report.length
    return {"position_share": pos.test.share if isinstance(pos, PositionTest) else None,
            "position_ci": (pos.test.ci_low, pos.test.ci_high) if isinstance(pos, PositionTest) else None,
            "model_left_share": shares(report.model_position), "model_early_share": shares(report.time_exposure),
            "length_share": length.test.share if isinstance(length, LengthTest) else None,
            "length_ci": (length.test.ci_low, length.test.ci_high) if isinstance(length, LengthTest) else None,
            "early_share_expected": (report.time_exposure.p0 if isinstance(report.time_exposure, TableTest)
                                     else 0.5)}
