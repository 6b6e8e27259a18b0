"""Scheme bt with ``--ties davidson``: ties as their own outcome (Davidson 1970), not half wins."""

from __future__ import annotations

import numpy as np

import core.ranking.bradley_terry as bt
from core.ranking.bootstrap import multinomial_counts
from core.ranking.cells import Cells, outcome_matrices
from core.ranking.rows import anchor_index, build_rows
from core.ranking.ties import ConvergenceError, NotIdentifiableError, fit_davidson
from core.ranking.types import FitInfo, Ranking, RankingError, RankSettings
from core.stats.resampling import percentile_interval, rank_interval


def davidson_policy(wins: np.ndarray, ties: np.ndarray):
    """The MLE when it exists, else the one-virtual-tie MAP (docs/methods.md §2 policy); (fit, identifiable).
    A Newton fit that does not converge is refused with the reason, never shown half-fitted."""
    try:
        try:
            return fit_davidson(wins, ties), True
        except NotIdentifiableError:
            return fit_davidson(wins, ties, prior=bt.NONIDENTIFIABLE_PRIOR), False
    except ConvergenceError as exc:
        raise RankingError(f"the Davidson tie model cannot be fitted to these votes ({exc}); rank them with "
                           "ties as half wins (--ties half)") from None


def rank_davidson(cells: Cells, settings: RankSettings) -> Ranking:
    wins, ties = outcome_matrices(cells)
    fit, identifiable = davidson_policy(wins, ties)
    anchor = anchor_index(cells.models, settings.anchor)
    elo = bt.elo_from_pi(fit.pi, anchor)
    info = FitInfo().with_(ties_model="davidson", nu=fit.nu, iterations=fit.iterations, prior=fit.prior,
                           tolerance=fit.tol)
    low = high = np.full(len(elo), np.nan)
    rank_low = rank_high = None
    if settings.ci != "none":
        # One Davidson refit per replicate (no batched solver for this model): slower than scheme bt.
        counts = multinomial_counts(cells, settings.replicates, np.random.default_rng(settings.seed))
        reps = np.empty((settings.replicates, cells.n_models))
        refitted = 0
        for b, c in enumerate(counts):
            rep_cells = Cells(cells.models, cells.left, cells.right, cells.s, cells.weight, c.astype(float))
            rep, ok = davidson_policy(*outcome_matrices(rep_cells))
            reps[b] = bt.elo_from_pi(rep.pi, anchor)
            refitted += not ok
        low, high = percentile_interval(reps, settings.alpha)
        rank_low, rank_high = rank_interval(reps, settings.alpha)
        info = info.with_(replicates=settings.replicates, nonidentifiable_replicates=refitted,
                          interval="multinomial bootstrap" + (" (ci sandwich is not available for Davidson)"
                                                              if settings.ci == "sandwich" else ""))
    return Ranking(settings, int(cells.n_votes), cells.n_models, identifiable,
                   build_rows(cells, elo, fit.pi, low, high, rank_low, rank_high, anchor=anchor), fit=info)
