"""Scheme ``crowd``: Crowd-BT (docs/methods.md §16), Bradley–Terry strengths fitted jointly with every
annotator's reliability η, shown next to the plain ranking of the same votes.

Intervals: Wald intervals from the observed information of the fitted objective (``ci`` sandwich, the
scheme's default, names this normal approximation; for η on the logit scale, so the interval stays inside
[0, 1]) or none. Bootstrap refits of the joint fit are not offered: :class:`RankSettings` refuses them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import core.ranking.bradley_terry as bt
from core.ranking.cells import compress_votes
from core.ranking.crowd_fit import PRIOR_A, PRIOR_B, crowd_cells, expit, fit_crowd
from core.ranking.rows import anchor_index, build_rows, normal_intervals
from core.ranking.types import AnnotatorReliability, FitInfo, Ranking, RankingError, RankSettings
from core.stats.intervals import z_value

LEFT_SCORE = np.array([1.0, 0.0, 0.5, 0.5])  # by outcome code: model_a, model_b, tie, tie (bothbad)
INTERVAL = "observed information (Wald; logit scale for η)"
ANNOTATOR_HINT = ("give who cast each vote in an annotator_id column (or one of its aliases: judge, worker, "
                  "evaluator, user_id, annotator)")


def annotator_codes(votes: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Integer codes and sorted names of the annotators; refuses votes without an annotator."""
    if "annotator_id" not in votes:
        raise RankingError(f"scheme crowd needs to know who cast each vote, and the votes have no annotator_id "
                           f"column: {ANNOTATOR_HINT}")
    column = votes["annotator_id"]
    missing = np.flatnonzero(column.isna().to_numpy())
    if len(missing):
        shown = ", ".join(str(i + 1) for i in missing[:8]) + (" …" if len(missing) > 8 else "")
        raise RankingError(f"scheme crowd needs to know who cast each vote: column annotator_id is empty in "
                           f"{len(missing):,} of {len(votes):,} votes (rows {shown} of the analysed votes); "
                           f"{ANNOTATOR_HINT}, or rank these votes with another scheme")
    if isinstance(column.dtype, pd.CategoricalDtype):  # core.io's output: the codes cost nothing
        column = column.cat.remove_unused_categories()
        return column.cat.codes.to_numpy().astype(np.int64), [str(c) for c in column.cat.categories]
    codes, names = pd.factorize(column.astype(str), sort=True)
    return codes.astype(np.int64), [str(n) for n in names]


def rank_crowd(votes: pd.DataFrame, settings: RankSettings, plain: Ranking) -> Ranking:
    models = [str(m) for m in votes["model_a"].cat.categories]
    if len(models) < 2:
        raise RankingError("a ranking needs at least two models")
    anchor = anchor_index(models, settings.anchor)
    annotators, names = annotator_codes(votes)
    weight = votes["weight"].to_numpy(dtype=float) if "weight" in votes else None
    if weight is not None:  # mean weight 1, so the prior keeps its weight of two votes
        weight = weight * (len(weight) / weight.sum())
    cells = crowd_cells(annotators, votes["model_a"].cat.codes.to_numpy(), votes["model_b"].cat.codes.to_numpy(),
                        LEFT_SCORE[votes["winner"].cat.codes.to_numpy()], weight, len(models), len(names))
    fit = fit_crowd(cells)
    pi = np.exp(fit.theta - fit.theta.max())
    strength = pi / pi.mean()
    elo = bt.elo_from_pi(strength, anchor)
    low = high = np.full(len(models), np.nan)
    rank_low = rank_high = None
    info = FitInfo().with_(method="newton (joint θ and η)", iterations=fit.iterations, converged=fit.converged)
    if settings.ci != "none":
        cov = bt.elo_covariance(fit.theta, fit.cov_theta, anchor and anchor[0])
        low, high, rank_low, rank_high = normal_intervals(elo, cov, settings)
        info = info.with_(interval=INTERVAL)
    info = info.with_(notes=(f"reliability prior Beta({PRIOR_A:g}, {PRIOR_B:g}) on every annotator (mode 0.9, the "
                             "weight of two votes); one virtual tie per model against a reference; "
                             "ties count half a win to each side",)
                      + (() if fit.converged else (_not_converged(fit.iterations),)))
    reliability = tuple(_reliability(names, fit, cells.votes, settings))
    rows = build_rows(compress_votes(votes), elo, strength, low, high, rank_low, rank_high, anchor=anchor)
    return Ranking(settings, int(len(votes)), len(models), True, rows, fit=info, plain=plain,
                   annotators=reliability)


def _reliability(names, fit, votes, settings: RankSettings):
    """η per annotator, most reliable first, with its Wald interval on the logit scale (inside [0, 1])."""
    phi = np.log(fit.eta) - np.log1p(-fit.eta)
    half = z_value(settings.alpha) * np.sqrt(fit.var_phi)
    for k in np.lexsort((np.arange(len(names)), -fit.eta)):
        if settings.ci == "none":
            low = high = None
        else:
            low, high = float(expit(phi[k] - half[k])), float(expit(phi[k] + half[k]))
        yield AnnotatorReliability(names[k], float(fit.eta[k]), low, high, int(votes[k]))


def _not_converged(iterations: int) -> str:
    return (f"the joint fit stopped at its iteration limit ({iterations:,} steps) before the estimates settled: "
            "the ratings and reliabilities are the last step's and may move with more steps")
