"""What every scheme shares on its way to a :class:`~core.ranking.types.Ranking`: one row per model
with its interval checked (:func:`build_rows`), the anchor, normal-approximation intervals, weight checks."""

from __future__ import annotations

import numpy as np

from core.ranking.bootstrap import arena_rank
from core.ranking.cells import Cells
from core.ranking.types import ModelRow, RankingError, RankSettings
from core.ranking.winrate import win_rates
from core.stats.evidence import check_intervals, widen_rank_ranges
from core.stats.intervals import z_value
from core.stats.resampling import rank_interval, ranks_of


def refuse_weightless(models, per_model: np.ndarray, what: str, seen: np.ndarray | None = None) -> None:
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


def model_weights(cells: Cells, weight) -> np.ndarray:
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
    """Rescale weights to mean 1 so the identifiability prior keeps its meaning (docs/methods.md §2)."""
    total = float((cells.count * cells.weight).sum())
    return cells.n_votes / total if total > 0 else 1.0


def normal_intervals(estimate: np.ndarray, cov: np.ndarray, settings: RankSettings):
    """Estimate ± z·se, and rank intervals from draws of the normal approximation (seeded)."""
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    z = z_value(settings.alpha)
    draws = np.random.default_rng(settings.seed).multivariate_normal(estimate, cov, size=settings.replicates,
                                                                      method="eigh")
    rank_low, rank_high = rank_interval(draws, settings.alpha)
    return estimate - z * se, estimate + z * se, rank_low, rank_high


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
