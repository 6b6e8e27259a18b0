"""Scheme ``bt``: Bradley–Terry by Hunter's MM with the identifiability policy of docs/methods.md §2, and
bootstrap (docs/methods.md §3) or sandwich intervals."""

from __future__ import annotations

import numpy as np

import core.ranking.bradley_terry as bt
from core.ranking.bootstrap import bootstrap_bt
from core.ranking.cells import Cells, win_matrix
from core.ranking.rows import anchor_index, build_rows, normal_intervals, weight_scale
from core.ranking.types import FitInfo, Ranking, RankSettings


def rank_bt(cells: Cells, settings: RankSettings) -> Ranking:
    scale = weight_scale(cells)
    fit = bt.fit(win_matrix(cells), cells.models, weight_scale=scale)
    anchor = anchor_index(cells.models, settings.anchor)
    elo = bt.elo_from_pi(fit.pi, anchor)
    info = mm_info(fit).with_(components=fit.n_components, tolerance=fit.tol)
    theta = np.log(fit.pi)
    if settings.ci == "bootstrap":
        boot = bootstrap_bt(cells, theta, settings.replicates, settings.seed, settings.alpha, scale, anchor)
        low, high, rank_low, rank_high = boot.ci_low, boot.ci_high, boot.rank_low, boot.rank_high
        info = info.with_(replicates=boot.replicates, nonidentifiable_replicates=boot.nonidentifiable,
                          replicates_not_converged=boot.not_converged, protocol=boot.protocol)
    elif settings.ci == "sandwich":
        cov = bt.covariance(cells.left, cells.right, cells.s, cells.count, cells.weight * scale, theta - theta[0],
                            "sandwich", fit.prior)
        low, high, rank_low, rank_high = normal_intervals(elo, bt.elo_covariance(theta, cov, anchor and anchor[0]),
                                                          settings)
        info = info.with_(covariance="sandwich (observed information, robust)")
    else:
        low = high = np.full(len(elo), np.nan)
        rank_low = rank_high = None
    return Ranking(settings, int(cells.n_votes), cells.n_models, fit.identifiable,
                   build_rows(cells, elo, fit.pi, low, high, rank_low, rank_high, anchor=anchor),
                   fit=with_convergence_note(info))


def mm_info(fit: bt.BTFit) -> FitInfo:
    return FitInfo().with_(method="mm", iterations=fit.iterations, converged=fit.converged, prior=fit.prior)


def with_convergence_note(info: FitInfo) -> FitInfo:
    """An MM fit that stopped at its iteration limit says so among the notes (docs/methods.md §2 asks for
    max |π' − π| < 1e-6; the ratings shown are the last iterate's)."""
    if info.converged is not False:
        return info
    note = (f"the MM fit stopped at its iteration limit ({info.iterations:,} iterations) before the strengths "
            f"settled (max |π' − π| < {bt.MM_TOL:g}): the ratings are the last iterate's and may move with more "
            "iterations")
    return info.with_(notes=(*(info.notes or ()), note))
