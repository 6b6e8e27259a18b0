"""Rankings from pairwise votes: the schemes of ``evalboard rank`` on one set of votes.

``rank_votes`` (a votes frame) and ``rank_cells`` (compressed cells, e.g. from a counts table) fit
the chosen scheme, attach uncertainty and return a :class:`Ranking` that records its settings.
Golden-question votes never enter a ranking (METHODS §0).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from core.errors import EvalBoardError
from core.ranking import bradley_terry as bt
from core.ranking.bootstrap import DEFAULT_REPLICATES, arena_rank, bootstrap_bt, check_settings, multinomial_counts, \
    rank_interval, ranks_of
from core.schema import CI_METHODS, SCHEMES, TIE_MODELS
from core.stats.evidence import check_intervals, widen_rank_ranges, zero_width
from core.stats.intervals import z_value
from core.ranking.cells import Cells, compress_votes, win_matrix
from core.annotators.golden_names import is_internal
from core.ranking.winrate import win_rates
from core.validation import check_choice, check_seed


class RankingError(EvalBoardError, ValueError):
    """Settings or data a ranking cannot be computed from; the message says which and why."""


@dataclass(frozen=True)
class RankSettings:
    scheme: str = "bt"
    ties: str = "half"
    ci: str = "bootstrap"
    replicates: int = DEFAULT_REPLICATES
    alpha: float = 0.05
    seed: int = 0
    anchor: tuple[str, float] | None = None  # (model, rating): that model is shown at that rating

    def __post_init__(self):
        for name, value, allowed in (("scheme", self.scheme, SCHEMES), ("ties", self.ties, TIE_MODELS),
                                     ("ci", self.ci, CI_METHODS)):
            check_choice(value, name, allowed, error=RankingError)
        check_settings(self.replicates, self.alpha)
        check_seed(self.seed, error=RankingError)
        if self.ties == "davidson" and self.scheme != "bt":
            raise RankingError("`ties davidson` is a Bradley–Terry tie model: use it with scheme bt")


@dataclass(frozen=True)
class ModelRow:
    model: str
    rank: int  # 1 + number of models rated strictly higher
    rating: float  # Elo for bt/ipw/adjusted; a win rate in [0, 1] for winrate/stratified
    strength: float  # π with mean 1 (BT schemes); the win rate again otherwise
    ci_low: float
    ci_high: float
    rank_low: int | None
    rank_high: int | None
    arena_rank: int | None  # 1 + number of models whose CI lies wholly above this one's
    win_rate: float  # observed win rate against the field, ties half
    n_votes: int
    interval_note: str | None = None  # why there is no interval (too few votes, resamples that cannot vary)


@dataclass(frozen=True)
class Covariate:
    name: str
    estimate: float
    se: float


@dataclass(frozen=True)
class Ranking:
    settings: RankSettings
    n_votes: int
    n_models: int
    identifiable: bool
    rows: tuple[ModelRow, ...]
    covariates: tuple[Covariate, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)  # iterations, prior, ν, replicates refitted …
    plain: Ranking | None = None  # for scheme adjusted: the plain BT ranking of the same votes

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([asdict(r) for r in self.rows])


def analysed_votes(votes: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The votes a ranking uses: golden-question votes are left out (METHODS §0); returns their count."""
    if "is_golden" in votes:
        golden = votes["is_golden"].to_numpy(dtype=bool)
        n_golden = int(golden.sum())
        return (votes[~golden] if n_golden else votes), n_golden  # no copy of a million rows for nothing
    return votes, 0


def rank_votes(votes: pd.DataFrame, settings: RankSettings = RankSettings()) -> Ranking:
    """Rank the models of a canonical votes frame (core.io / core.store output)."""
    used, golden = analysed_votes(votes)
    if len(used) == 0:
        raise RankingError(f"no votes to rank: all {golden:,} votes are golden-question votes, which are not used "
                           "for rankings" if golden else "no votes to rank")
    used, unrated = without_absent_models(used)
    check_vote_weights(used)
    if settings.scheme == "adjusted":
        from core.ranking.adjusted import rank_adjusted

        ranking = rank_adjusted(used, settings, rank_cells(compress_votes(used), replace(settings, scheme="bt")))
    elif settings.scheme in ("stratified", "ipw"):
        from core.ranking.corrections import rank_corrected

        ranking = rank_corrected(used, settings)
    else:
        ranking = rank_cells(compress_votes(used), settings)
    details = {**ranking.details, "golden_votes_excluded": golden}
    unrated = [m for m in unrated if not is_internal(m)]  # golden questions' stand-ins are not models
    if unrated:
        details["models_without_votes"] = unrated
    return replace(ranking, details=details)


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
    _refuse_weightless(models, per_model, "vote")


def _refuse_weightless(models, per_model: np.ndarray, what: str, seen: np.ndarray | None = None) -> None:
    """``per_model``: each model's total weight; ``seen``: which models have votes at all (default all)."""
    seen = np.ones(len(per_model), bool) if seen is None else seen
    if (per_model[seen] > 0).all():
        return
    if not (per_model > 0).any():
        raise RankingError(f"every {what} has weight 0: there is nothing to rank (give the {what}s positive "
                           "weights, or drop the weight column)")
    names = [m for m, w, v in zip(models, per_model, seen) if v and not w > 0]
    shown = ", ".join(names[:8]) + (f" … ({len(names)} models)" if len(names) > 8 else "")
    raise RankingError(f"every {what} of {shown} has weight 0: such a model has no evidence to rate it; give "
                       f"those {what}s positive weights or leave the model out")


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
    _refuse_weightless(cells.models, _model_weights(cells, cells.weight), "vote", _model_weights(cells, 1.0) > 0)
    if settings.scheme == "winrate":
        return _rank_winrate(cells, settings)
    if settings.scheme != "bt":
        raise RankingError(f"scheme {settings.scheme!r} needs the individual votes, not a counts table")
    if cells.n_models < 2:
        raise RankingError("a ranking needs at least two models")
    if settings.ties == "davidson":
        from core.ranking.davidson import rank_davidson

        return rank_davidson(cells, settings)
    return _rank_bt(cells, settings)


def _model_weights(cells: Cells, weight) -> np.ndarray:
    cw = cells.count * weight
    return (np.bincount(cells.left, weights=cw, minlength=cells.n_models)
            + np.bincount(cells.right, weights=cw, minlength=cells.n_models))


def anchor_index(models, anchor) -> tuple[int, float] | None:
    if anchor is None:
        return None
    name, rating = anchor
    if name not in models:
        raise RankingError(f"--anchor names {name!r}, which is not among the models ({', '.join(models[:8])}"
                           f"{' …' if len(models) > 8 else ''})")
    return list(models).index(name), float(rating)


def weight_scale(cells: Cells) -> float:
    """Rescale weights to mean 1 so the identifiability prior keeps its meaning (METHODS §2)."""
    total = float((cells.count * cells.weight).sum())
    return cells.n_votes / total if total > 0 else 1.0


def _rank_bt(cells: Cells, settings: RankSettings) -> Ranking:
    scale = weight_scale(cells)
    fit = bt.fit(win_matrix(cells), cells.models, weight_scale=scale)
    anchor = anchor_index(cells.models, settings.anchor)
    elo = bt.elo_from_pi(fit.pi, anchor)
    details = {"method": "mm", "iterations": fit.iterations, "converged": fit.converged, "prior": fit.prior,
               "components": fit.n_components, "tolerance": fit.tol}
    theta = np.log(fit.pi)
    if settings.ci == "bootstrap":
        boot = bootstrap_bt(cells, theta, settings.replicates, settings.seed, settings.alpha, scale, anchor)
        low, high, rank_low, rank_high = boot.ci_low, boot.ci_high, boot.rank_low, boot.rank_high
        details.update(replicates=boot.replicates, nonidentifiable_replicates=boot.nonidentifiable,
                       replicates_not_converged=boot.not_converged, protocol=boot.protocol)
    elif settings.ci == "sandwich":
        cov = bt.covariance(cells.left, cells.right, cells.s, cells.count, cells.weight * scale, theta - theta[0],
                            "sandwich", fit.prior)
        low, high, rank_low, rank_high = normal_intervals(elo, bt.elo_covariance(theta, cov, anchor and anchor[0]),
                                                          settings)
        details.update(covariance="sandwich (observed information, robust)")
    else:
        low = high = np.full(len(elo), np.nan)
        rank_low = rank_high = None
    return Ranking(settings, int(cells.n_votes), cells.n_models, fit.identifiable,
                   build_rows(cells, elo, fit.pi, low, high, rank_low, rank_high, anchor=anchor), details=details)


def normal_intervals(estimate: np.ndarray, cov: np.ndarray, settings: RankSettings):
    """Estimate ± z·se, and rank intervals from draws of the normal approximation (seeded)."""
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    z = z_value(settings.alpha)
    draws = np.random.default_rng(settings.seed).multivariate_normal(estimate, cov, size=settings.replicates,
                                                                      method="eigh")
    rank_low, rank_high = rank_interval(draws, settings.alpha)
    return estimate - z * se, estimate + z * se, rank_low, rank_high


def _rank_winrate(cells: Cells, settings: RankSettings) -> Ranking:
    rates = win_rates(cells.left, cells.right, cells.s, cells.count, cells.n_models, weight=cells.weight,
                      alpha=settings.alpha)
    rate = rates.win_rate
    rank_low = rank_high = flat = None
    details: dict[str, Any] = {"interval": "wilson"}
    if settings.ci == "none":
        low = high = np.full(len(rate), np.nan)
    else:
        low, high = rates.low, rates.high
        if settings.ci == "bootstrap":
            counts = multinomial_counts(cells, settings.replicates, np.random.default_rng(settings.seed))
            replicate_rates = _replicate_win_rates(cells, counts)
            rank_low, rank_high = rank_interval(replicate_rates, settings.alpha)
            flat = zero_width(rate, np.nanmin(replicate_rates, axis=0), np.nanmax(replicate_rates, axis=0))
            details.update(replicates=settings.replicates, rank_intervals="multinomial bootstrap")
    return Ranking(settings, int(cells.n_votes), cells.n_models, True,
                   build_rows(cells, rate, rate, low, high, rank_low, rank_high, flat), details=details)


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


def build_rows(cells: Cells, rating, strength, low, high, rank_low, rank_high, flat=None,
               anchor: tuple[int, float] | None = None) -> tuple[ModelRow, ...]:
    """One row per model, best first; observed win rates and vote counts come from the cells.

    Every scheme's intervals pass the rules of :mod:`core.stats.evidence` here: no interval from fewer than
    two votes or from resamples that cannot vary (with the reason in ``interval_note``), the rating
    inside its interval, rank ranges covering every model the data cannot separate. ``flat`` marks
    models whose bootstrap statistic never varied although an analytic interval (Wilson) remains.
    The ``anchor`` model's rating is fixed by definition: it has no interval of its own (the others'
    are relative to it), but its rank range is the bootstrap's.
    """
    observed = win_rates(cells.left, cells.right, cells.s, cells.count, cells.n_models, weight=cells.weight)
    rating = np.asarray(rating, dtype=np.float64)
    low, high = np.array(low, dtype=np.float64), np.array(high, dtype=np.float64)
    requested = bool(np.isfinite(low).any())
    if anchor is not None:
        low[anchor[0]] = high[anchor[0]] = np.nan
    if requested:
        checked = check_intervals(rating, low, high, observed.n_votes)
        low, high = checked.low, checked.high
        missing, notes = checked.missing, list(checked.notes)
    else:  # no interval was computed at all (ci none): nothing to explain per model
        missing, notes = np.zeros(len(rating), bool), [None] * len(rating)
    if anchor is not None and requested and notes[anchor[0]] is None:
        notes[anchor[0]] = f"the anchor: its rating is fixed at {anchor[1]:g}; the other intervals are relative to it"
    rank_low, rank_high = widen_rank_ranges(rank_low, rank_high, missing, flat, low, high)
    ranks = ranks_of(np.nan_to_num(rating, nan=-np.inf))
    arena = arena_rank(low, high) if not np.isnan(low).all() else None
    order = np.lexsort((np.arange(len(rating)), ranks))
    rows = []
    for i in order:
        rows.append(ModelRow(
            cells.models[i], int(ranks[i]), float(rating[i]), float(strength[i]), float(low[i]), float(high[i]),
            None if rank_low is None else int(rank_low[i]), None if rank_high is None else int(rank_high[i]),
            None if arena is None or notes[i] else int(arena[i]), float(observed.win_rate[i]),
            int(round(observed.n_votes[i])), notes[i]))
    return tuple(rows)


__all__ = ["CI_METHODS", "SCHEMES", "TIE_MODELS", "Covariate", "ModelRow", "RankSettings", "Ranking",
           "RankingError", "analysed_votes", "rank_cells", "rank_votes"]
