"""Scheme ``style``: Bradley–Terry net of answer length and markdown density (Chatbot Arena's style
control, docs/methods.md §11), with the coefficients, shown next to the plain ranking of the same votes.

The per-side counts come from the votes frame: ``len_a, len_b`` and :data:`core.schema.STYLE_COUNT_COLUMNS`
(given by the file, or counted by core.io in its ``answer_a/answer_b`` or ``completion_a/completion_b``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.ranking.bradley_terry import ELO_SCALE, ConvergenceError
from core.ranking.cells import compress_votes
from core.ranking.rows import anchor_index, build_rows, normal_intervals
from core.ranking.style_fit import fit_style
from core.ranking.style_model import StyleInputError
from core.ranking.types import Covariate, FitInfo, Ranking, RankingError, RankSettings
from core.schema import DEFAULT_STYLE_FEATURES, STYLE_FEATURE_CHOICES

LEFT_SCORE = np.array([1.0, 0.0, 0.5, 0.5])  # by outcome code: model_a, model_b, tie, tie (bothbad)
SIDES = {"length": ("len_a", "len_b"), "headers": ("headers_a", "headers_b"), "lists": ("lists_a", "lists_b"),
         "bold": ("bold_a", "bold_b")}
TEXT_HINT = ("give the answers as answer_a/answer_b (or completion_a/completion_b) or the per-side counts as "
             "len_a, len_b, headers_a, headers_b, lists_a, lists_b, bold_a, bold_b")


def rank_style(votes: pd.DataFrame, settings: RankSettings, plain: Ranking) -> Ranking:
    models = [str(m) for m in votes["model_a"].cat.categories]
    if len(models) < 2:
        raise RankingError("a ranking needs at least two models")
    anchor = anchor_index(models, settings.anchor)  # the usual message for a model that is not there
    features, notes = _features(votes, settings.features)
    sides = {f: tuple(votes[c].to_numpy(dtype=float) for c in SIDES[f]) for f in features if f in SIDES}
    weight = votes["weight"].to_numpy(dtype=float) if "weight" in votes else None
    interval = settings.ci if settings.ci in ("bootstrap", "none") else "sandwich"
    try:
        fit = fit_style(votes["model_a"].cat.codes.to_numpy().astype(np.int64),
                        votes["model_b"].cat.codes.to_numpy().astype(np.int64),
                        LEFT_SCORE[votes["winner"].cat.codes.to_numpy()], sides, models, features=features,
                        weight=weight, interval=interval, replicates=settings.replicates, alpha=settings.alpha,
                        seed=settings.seed, anchor=settings.anchor)
    except (StyleInputError, ConvergenceError) as exc:
        raise RankingError(f"the style-controlled model has no estimate on these votes: {exc}") from None
    pi = np.exp(fit.theta - fit.theta.max())
    strength = pi / pi.mean()
    low, high = fit.elo_low, fit.elo_high
    rank_low = rank_high = None
    if interval != "none":  # rank ranges: draws of the normal approximation of the Elo ratings
        rank_low, rank_high = normal_intervals(fit.elo, _elo_covariance(fit, models, settings), settings)[2:]
    info = FitInfo().with_(interval="sandwich (robust)") if interval == "sandwich" else FitInfo()
    info = info.with_(features=fit.features, features_dropped=fit.dropped, penalty=fit.penalty,
                      iterations=fit.iterations, converged=fit.converged, prior=fit.prior,
                      notes=tuple(notes) + fit.notes)
    if interval == "bootstrap":
        info = info.with_(replicates=fit.replicates, nonidentifiable_replicates=fit.nonidentifiable_replicates)
    covariates = tuple(Covariate(n, float(b), float(se), float(m), float(sd), float(lo), float(hi))
                       for n, b, se, m, sd, lo, hi in zip(fit.features, fit.beta, fit.beta_se, fit.feature_mean,
                                                          fit.feature_sd, fit.beta_low, fit.beta_high))
    rows = build_rows(compress_votes(votes), fit.elo, strength, low, high, rank_low, rank_high,
                      anchor=anchor)
    return Ranking(settings, int(len(votes)), len(models), fit.identifiable, rows, covariates=covariates, fit=info,
                   plain=plain)


def _elo_covariance(fit, models: list[str], settings: RankSettings) -> np.ndarray:
    """The sandwich covariance of the Elo ratings: Elo = 1500 + s·(θ − mean θ), or s·(θ − θ_anchor) + R."""
    k = len(models)
    jac = np.eye(k) - (1.0 / k if settings.anchor is None else 0.0)
    if settings.anchor is not None:
        jac[:, models.index(settings.anchor[0])] -= 1.0
    jac *= ELO_SCALE
    return jac @ fit.covariance[:k, :k] @ jac.T


def offered_features(columns) -> tuple[str, ...]:
    """The features a dataset with these columns can offer (its per-side count columns, and ``position``
    always), in :data:`core.schema.STYLE_FEATURE_CHOICES` order: a choice before anything is loaded."""
    return tuple(f for f in STYLE_FEATURE_CHOICES if f not in SIDES or set(SIDES[f]) <= set(columns))


def available_features(votes: pd.DataFrame) -> tuple[str, ...]:
    """The offered features whose counts both answers of every vote give (and ``position``)."""
    return tuple(f for f in offered_features(votes.columns)
                 if f not in SIDES or votes[list(SIDES[f])].notna().all().all())


def _features(votes: pd.DataFrame, chosen: tuple[str, ...] | None) -> tuple[tuple[str, ...], list[str]]:
    """The features to fit: the chosen ones (each must have its counts for every vote), or the default
    four that the votes carry (the notes name the ones left out)."""
    available = available_features(votes)
    if chosen is not None:
        absent = [f for f in chosen if f not in available]
        if absent:
            raise RankingError(f"feature{'s' if len(absent) > 1 else ''} {', '.join(absent)}: the votes do not give "
                               f"the counts of both answers for every vote; {TEXT_HINT}")
        return tuple(chosen), []
    features = tuple(f for f in DEFAULT_STYLE_FEATURES if f in available)
    if not features:
        raise RankingError(f"scheme style needs answer texts or per-side style counts: {TEXT_HINT}")
    left_out = [f for f in DEFAULT_STYLE_FEATURES if f not in features]
    notes = [f"not controlled for {', '.join(left_out)}: the votes do not give the counts of both answers for every "
             f"vote ({TEXT_HINT})"] if left_out else []
    return features, notes
