"""Ranking any loaded input: votes (with the annotator policy and groups), counts tables and win-rate
matrices. This is what ``evalboard rank`` and the dashboard call."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

import core.ranking.bradley_terry as bt
from core.annotators.quality import FAST_SECONDS, MAX_FAST_RATE, MIN_GOLDEN_ACCURACY
from core.ranking import analysed_votes, rank_cells, rank_used, rank_votes, votes_to_rank, without_absent_models
from core.ranking.cells import Cells, battle_matrix, cells_from_counts, compress_votes, observed_win_rates
from core.ranking.render import ELO_SCHEMES
from core.ranking.request import (
    DimensionChoice,
    PreparedVotes,
    choose_dimension,
    count_items,
    dimension_order,
    dimension_rows,
    prepare_votes,
)
from core.ranking.rows import anchor_index, build_rows, normal_intervals
from core.ranking.schemes.bt import mm_info, with_convergence_note
from core.ranking.types import Ranking, RankingError, RankSettings
from core.schema import COUNT_STRATA, STYLE_COUNT_COLUMNS

GROUPABLE = ("game_id", "dimension", "category", *COUNT_STRATA)


def parse_by(text: str | None) -> list[str]:
    by = [b.strip() for b in (text or "").split(",") if b.strip()]
    unknown = [b for b in by if b not in GROUPABLE]
    if unknown:
        raise RankingError(f"--by takes {', '.join(GROUPABLE)}; not {', '.join(unknown)}")
    return by


def rank_input(kind: str, frame: pd.DataFrame, settings: RankSettings, by: list[str] | None = None,
               annotators: str = "exclude", dimension: str | None = None,
               prepared: PreparedVotes | None = None, qualify: str | None = None) -> Ranking | dict[tuple, Ranking]:
    """Rank a validated input of any pairwise kind; with ``by``, one ranking per group.

    Votes go through :func:`core.ranking.request.prepare_votes` (one dimension unless ``by`` has it, the
    annotator policy ``annotators``, the qualification rules ``qualify``) unless ``prepared`` already holds them."""
    by = by or []
    if kind == "votes":
        prepared = prepared or prepare_votes(frame, annotators, dimension=dimension, by=by, qualify=qualify)
        if not by:
            return rank_prepared(prepared, settings)[0]
        require_votes_after_policy(prepared.before_policy, prepared.votes, prepared.policy.legacy())
        votes = prepared.all_dimensions if "dimension" in by else prepared.votes
        return {key: with_request(r, prepared, group)
                for key, (r, group) in rank_groups(votes, by, settings, with_votes=True).items()}
    if kind == "counts":
        if settings.scheme not in ("bt", "winrate"):
            raise RankingError(f"scheme {settings.scheme!r} needs individual votes; a counts table supports bt "
                               "and winrate")
        # a counts table with a dimension stratum: one dimension at a time too (core.ranking.request)
        choice = choose_dimension(frame, dimension, by)
        frame = dimension_rows(frame, choice)
        shown = choice if len(choice.available) > 1 else None
        if by:
            return {key: _with_dimension(rank_cells(cells_from_counts(group), settings), shown)
                    for key, group in vote_groups(frame, by)}
        return _with_dimension(rank_cells(cells_from_counts(frame), settings), shown)
    if kind == "winrate_matrix":
        if by or settings.scheme != "bt":
            raise RankingError("a win-rate matrix is ranked with scheme bt and without --by")
        return rank_matrix(frame, settings)
    raise RankingError(f"a {kind.replace('_', ' ')} dataset is not pairwise: rank votes, counts or a win-rate "
                       "matrix (score tables go to `evalboard leaderboard`)")


def rank_prepared(prepared: PreparedVotes, settings: RankSettings) -> tuple[Ranking, pd.DataFrame]:
    """The ranking of a request's prepared votes, with the request's policy, dimension and items, and
    the votes it fitted (golden-question votes and models without votes left out: a million-row copy
    made once, which the caller may reuse, e.g. for the win-rate matrices of :func:`win_rate_frames`)."""
    require_votes_after_policy(prepared.before_policy, prepared.votes, prepared.policy.legacy())
    used, golden, unrated = votes_to_rank(prepared.votes)
    return with_request(rank_used(used, golden, unrated, settings), prepared, prepared.votes), used


# Columns a scheme reads beyond the pair, the outcome and the weight: the period (side × period strata,
# propensities) comes from the timestamp; the adjusted model's length feature from the lengths.
SCHEME_COLUMNS = {"stratified": ("timestamp",), "ipw": ("timestamp",), "adjusted": ("len_a", "len_b"),
                  "style": ("len_a", "len_b", *STYLE_COUNT_COLUMNS), "crowd": ("annotator_id",)}


def rank_prepared_groups(prepared: PreparedVotes, by: str, settings: RankSettings) -> dict[tuple, Ranking]:
    """The rankings of ``rank_input(..., by=[by])`` without the request's summary, for a quick side by
    side: golden-question votes and models without votes leave once, and the groups carry only the
    columns the scheme reads (a million-row frame's free text costs time in every group copy)."""
    kept = prepared.all_dimensions if by == "dimension" else prepared.votes
    used = without_absent_models(analysed_votes(kept)[0])[0]
    columns = ("model_a", "model_b", "winner", "weight", *SCHEME_COLUMNS.get(settings.scheme, ()), by)
    return rank_groups(used[[c for c in columns if c in used.columns]], [by], settings)


def win_rate_frames(ranking: Ranking, used: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Observed and BT-predicted win rates (row beats column) and battle counts, models in the
    ranking's order. The predicted rates need BT ratings: for a win-rate scheme, a plain fit of the
    same cells (no second pass over the votes)."""
    cells = compress_votes(used)
    order = [r.model for r in ranking.rows if r.model in cells.models]
    if ranking.settings.scheme in ELO_SCHEMES:
        elo = pd.Series({r.model: r.rating for r in ranking.rows})
    else:
        elo = pd.Series({r.model: r.rating for r in rank_cells(cells, RankSettings(ci="none")).rows})
    elo = elo.reindex(order)
    return {"observed": pd.DataFrame(observed_win_rates(cells), cells.models, cells.models).loc[order, order],
            "battles": pd.DataFrame(battle_matrix(cells), cells.models, cells.models).loc[order, order],
            "predicted": pd.DataFrame(bt.predicted_win_rates(elo.to_numpy()), order, order)}


def require_votes_after_policy(frame: pd.DataFrame, kept: pd.DataFrame, summary: dict) -> None:
    """Say so when the annotator policy, not the golden questions, left nothing to rank."""
    if len(analysed_votes(kept)[0]) or not len(analysed_votes(frame)[0]):
        return
    names = summary.get("unqualified_annotators", [])
    shown = ", ".join(map(str, names[:5])) + (f" … ({len(names)} annotators)" if len(names) > 5 else "")
    raise RankingError(
        f"the annotator policy '{summary.get('annotators')}' left no votes to rank: all "
        f"{summary.get('unqualified_votes', 0):,} votes come from unqualified annotators ({shown}; golden accuracy "
        f"below {MIN_GOLDEN_ACCURACY:.2f} or more than {MAX_FAST_RATE:.0%} of answers under {FAST_SECONDS:g} s). "
        "To rank them anyway, keep their votes (--annotators keep) or count them half (--annotators downweight).")


def rank_groups(votes: pd.DataFrame, by: list[str], settings: RankSettings, with_votes: bool = False) -> dict:
    """One ranking per group of votes the annotator policy has already been applied to
    (``with_votes``: each value is (ranking, the group's votes))."""
    return {key: ((rank_votes(group, settings), group) if with_votes else rank_votes(group, settings))
            for key, group in vote_groups(votes, by)}


def vote_groups(frame: pd.DataFrame, by: list[str]):
    """(key, votes) per group of ``by``, keys as text, each group without the models absent from it."""
    missing = [b for b in by if b not in frame]
    if missing:
        raise RankingError(f"--by {','.join(by)}: the data has no column {', '.join(missing)}")
    for key, group in frame.groupby(by, observed=True, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        # models absent from this group must not appear as unrated rows (a categorical recode, no strings)
        yield tuple(str(k) for k in key), without_absent_models(group)[0] if "model_a" in group else group


def _with_dimension(ranking: Ranking, choice: DimensionChoice | None) -> Ranking:
    return replace(ranking, policy=replace(ranking.policy, dimension=choice)) if choice else ranking


def with_request(ranking: Ranking, prepared: PreparedVotes, votes: pd.DataFrame | None = None) -> Ranking:
    """The ranking with the request's policy and dimension, and the items behind its votes
    (``votes``: the rows it ranked; golden rows are not counted)."""
    choice = prepared.dimension
    if votes is not None and len(choice.available) > 1:
        shown = tuple(dimension_order(votes))
        if shown and shown != choice.analysed:  # a group of a per-dimension ranking
            choice = DimensionChoice(shown, choice.available, "by")
    policy = replace(ranking.policy, outcome=prepared.policy, dimension=choice)
    if votes is not None:
        used = analysed_votes(votes)[0]
        policy = replace(policy, n_items=count_items(used), n_judgements=int(len(used)))
    return replace(ranking, policy=policy)


def rank_matrix(frame: pd.DataFrame, settings: RankSettings) -> Ranking:
    """BT from a win-rate matrix (docs/methods.md §2); intervals from the observed information (there are no
    votes to resample), rank intervals from the normal approximation."""
    models = sorted(set(frame["model_row"]) | set(frame["model_col"]))
    index = {m: i for i, m in enumerate(models)}
    k = len(models)
    rates = np.full((k, k), np.nan)
    counts = np.zeros((k, k))
    i = frame["model_row"].map(index).to_numpy()
    j = frame["model_col"].map(index).to_numpy()
    rates[i, j] = frame["rate"].to_numpy()
    has_counts = frame["n"].notna().any()
    counts[i, j] = np.nan_to_num(frame["n"].to_numpy())
    w, notes = bt.win_matrix_from_rates(rates, counts if has_counts else None)
    fit = bt.fit(w, models)
    anchor = anchor_index(models, settings.anchor)
    elo = bt.elo_from_pi(fit.pi, anchor)
    cells = _matrix_cells(w, models)
    low = high = np.full(k, np.nan)
    rank_low = rank_high = None
    info = mm_info(fit).with_(notes=tuple(notes))
    if settings.ci != "none":
        theta = np.log(fit.pi)
        cov = bt.covariance(cells.left, cells.right, cells.s, cells.count, cells.weight, theta - theta[0],
                            "observed", fit.prior)
        low, high, rank_low, rank_high = normal_intervals(elo, bt.elo_covariance(theta, cov, anchor and anchor[0]),
                                                          settings)
        info = info.with_(interval="observed information (a matrix has no votes to resample)")
    return Ranking(settings, int(round(cells.n_votes)), k, fit.identifiable,
                   build_rows(cells, elo, fit.pi, low, high, rank_low, rank_high, anchor=anchor),
                   fit=with_convergence_note(info))


def _matrix_cells(w: np.ndarray, models) -> Cells:
    """W as cells (i, j, s = 1, count W_ij) for the shared row builder and the covariance."""
    i, j = np.nonzero(w)
    return Cells(tuple(models), i, j, np.ones(len(i)), np.ones(len(i)), w[i, j])


