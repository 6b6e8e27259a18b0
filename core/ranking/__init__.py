"""Rankings from pairwise votes: the schemes of ``evalboard rank`` on one set of votes.

``rank_votes`` (a votes frame) and ``rank_cells`` (compressed cells, e.g. from a counts table) fit
the chosen scheme (one module each in :mod:`core.ranking.schemes`), attach uncertainty and return a
:class:`Ranking` that records its settings. Golden-question votes never enter a ranking (docs/methods.md §0).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from core.annotators.golden_names import is_internal
from core.ranking.cells import Cells, compress_votes
from core.ranking.rows import model_weights, refuse_weightless
from core.ranking.schemes.adjusted import rank_adjusted
from core.ranking.schemes.bt import rank_bt
from core.ranking.schemes.crowd import rank_crowd
from core.ranking.schemes.davidson import rank_davidson
from core.ranking.schemes.ipw import as_ipw, ipw_votes
from core.ranking.schemes.stratified import rank_stratified
from core.ranking.schemes.style import rank_style
from core.ranking.schemes.winrate import rank_winrate
from core.ranking.types import Covariate, FitInfo, ModelRow, PolicySummary, Ranking, RankingError, RankSettings
from core.schema import CI_METHODS, SCHEMES, TIE_MODELS


def analysed_votes(votes: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The votes a ranking uses: golden-question votes are left out (docs/methods.md §0); returns their count."""
    if "is_golden" in votes:
        golden = votes["is_golden"].to_numpy(dtype=bool)
        n_golden = int(golden.sum())
        return (votes[~golden] if n_golden else votes), n_golden  # no copy of a million rows for nothing
    return votes, 0


def rank_votes(votes: pd.DataFrame, settings: RankSettings = RankSettings()) -> Ranking:
    """Rank the models of a canonical votes frame (core.io / core.store output)."""
    return rank_used(*votes_to_rank(votes), settings)


def votes_to_rank(votes: pd.DataFrame) -> tuple[pd.DataFrame, int, tuple[str, ...]]:
    """The votes a ranking fits (golden-question votes and models left without votes out), the number of
    golden-question votes left out and the models left without votes; refuses votes that leave nothing
    to rank or that weigh nothing."""
    used, golden = analysed_votes(votes)
    if len(used) == 0:
        raise RankingError(f"no votes to rank: all {golden:,} votes are golden-question votes, which are not used "
                           "for rankings" if golden else "no votes to rank")
    used, unrated = without_absent_models(used)
    check_vote_weights(used)
    return used, golden, tuple(m for m in unrated if not is_internal(m))  # golden stand-ins are not models


def rank_used(used: pd.DataFrame, golden: int, unrated: tuple[str, ...], settings: RankSettings) -> Ranking:
    """Rank what :func:`votes_to_rank` returned with the chosen scheme."""
    plain_bt = replace(settings, scheme="bt", features=None)
    if settings.scheme == "adjusted":
        ranking = rank_adjusted(used, settings, rank_cells(compress_votes(used), plain_bt))
    elif settings.scheme == "style":
        ranking = rank_style(used, settings, rank_cells(compress_votes(used), plain_bt))
    elif settings.scheme == "crowd":
        ranking = rank_crowd(used, settings, rank_cells(compress_votes(used), plain_bt))
    elif settings.scheme == "ipw":
        weighted, weighting = ipw_votes(used)
        ranking = as_ipw(rank_cells(compress_votes(weighted), plain_bt), settings, weighting)
    elif settings.scheme == "stratified":
        ranking = rank_stratified(used, settings)
    else:
        ranking = rank_cells(compress_votes(used), settings)
    return replace(ranking, policy=replace(ranking.policy, golden_votes_excluded=golden,
                                           models_without_votes=unrated or None))


def check_vote_weights(votes: pd.DataFrame) -> None:
    """Refuse votes whose weights leave a model (or everything) without weight: a weighted estimate of
    zero weight is 0/0, and a fit would put such a model anywhere (e.g. every model at 1500)."""
    if "weight" not in votes or len(votes) == 0:
        return
    weight = votes["weight"].to_numpy(dtype=np.float64)
    if (weight > 0).all():
        return
    a, b = votes["model_a"], votes["model_b"]
    if isinstance(a.dtype, pd.CategoricalDtype):
        models = [str(m) for m in a.cat.categories]
        left, right = a.cat.codes.to_numpy(), b.cat.codes.to_numpy()
    else:
        models = sorted(set(map(str, a)) | set(map(str, b)))
        index = {m: i for i, m in enumerate(models)}
        left, right = a.astype(str).map(index).to_numpy(), b.astype(str).map(index).to_numpy()
    per_model = (np.bincount(left, weights=weight, minlength=len(models))
                 + np.bincount(right, weights=weight, minlength=len(models)))
    refuse_weightless(models, per_model, "vote")


def without_absent_models(votes: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Drop models left with no analysed vote (e.g. seen only in golden questions) from the shared
    model categories; a model without votes has no rating and would break identifiability."""
    a, b = votes["model_a"], votes["model_b"]
    if not isinstance(a.dtype, pd.CategoricalDtype):
        return votes, []
    codes = np.concatenate([a.cat.codes.to_numpy(), b.cat.codes.to_numpy()])
    seen = np.bincount(codes[codes >= 0], minlength=len(a.cat.categories)) > 0
    if seen.all():
        return votes, []
    categories = list(a.cat.categories)
    present = [m for m, s in zip(categories, seen) if s]
    return (votes.assign(model_a=a.cat.set_categories(present), model_b=b.cat.set_categories(present)),
            [str(m) for m, s in zip(categories, seen) if not s])


def rank_cells(cells: Cells, settings: RankSettings = RankSettings()) -> Ranking:
    """Rank from compressed cells (schemes bt and winrate; both tie treatments)."""
    refuse_weightless(cells.models, model_weights(cells, cells.weight), "vote", model_weights(cells, 1.0) > 0)
    if settings.scheme == "winrate":
        return rank_winrate(cells, settings)
    if settings.scheme != "bt":
        raise RankingError(f"scheme {settings.scheme!r} needs the individual votes, not a counts table")
    if cells.n_models < 2:
        raise RankingError("a ranking needs at least two models")
    if settings.ties == "davidson":
        return rank_davidson(cells, settings)
    return rank_bt(cells, settings)


__all__ = ["CI_METHODS", "SCHEMES", "TIE_MODELS", "Covariate", "FitInfo", "ModelRow", "PolicySummary", "RankSettings",
           "Ranking", "RankingError", "analysed_votes", "rank_cells", "rank_used", "rank_votes", "votes_to_rank",
           "without_absent_models"]
