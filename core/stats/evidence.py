"""When the data can give an interval, and what is said when it cannot.

An interval is a claim about how much an estimate could move had the data come out differently. A
resample of one vote, of one task, or of votes that never disagree always gives the same value, so
its percentile interval has zero width: that is not certainty, it is the absence of evidence. The
rules below turn such intervals into *no interval* with a reason, and keep what is shown consistent:

- fewer than :data:`MIN_UNITS` votes (or tasks) behind an estimate: no interval;
- an interval of (numerically) zero width: no interval (the resamples could not vary);
- an estimate always lies inside its own interval (a percentile interval of a skewed or numerically
  noisy bootstrap may miss it by a hair; the interval is extended to it);
- a rank range covers every model the data cannot separate from this one: a model without an
  interval could sit anywhere, so its range is 1..K and every other model's range is widened by the
  number of such models.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_UNITS = 2  # a resample of a single vote or task is that vote or task again
FLAT_RTOL = 1e-6  # widths below this (relative to max(1, |estimate|)) are resampling noise, not spread

__all__ = ["FLAT_RTOL", "MIN_UNITS", "Evidence", "check_intervals", "cover_unseparated", "interval_reason",
           "rank_ranges_with_evidence", "widen_rank_ranges", "zero_width"]


@dataclass(frozen=True)
class Evidence:
    """Intervals after the rules: NaN bounds where there is no interval, ``notes[i]`` says why."""

    low: np.ndarray
    high: np.ndarray
    notes: tuple[str | None, ...]

    @property
    def missing(self) -> np.ndarray:
        return np.array([n is not None for n in self.notes], dtype=bool)


def zero_width(estimate, low, high) -> np.ndarray:
    """True where an interval exists and is narrower than resampling noise."""
    estimate, low, high = (np.asarray(x, dtype=np.float64) for x in (estimate, low, high))
    scale = np.maximum(1.0, np.abs(np.nan_to_num(estimate)))
    with np.errstate(invalid="ignore"):
        return np.isfinite(low) & np.isfinite(high) & ((high - low) <= FLAT_RTOL * scale)


def interval_reason(units: float, unit: str, flat: bool) -> str | None:
    """Why an estimate backed by ``units`` votes/tasks gets no interval (None: it may have one)."""
    n = int(round(units))
    if n < MIN_UNITS:
        return f"{n} {unit}{'' if n == 1 else 's'}: too few for an interval"
    if flat:
        return f"every resample of the {unit}s gives the same value: the data show no variation to measure"
    return None


def check_intervals(estimate, low, high, units, unit: str = "vote") -> Evidence:
    """Apply the rules of this module to one interval per estimate.

    Parameters
    ----------
    estimate, low, high : array_like, shape (K,)
        Point estimates and their interval bounds (NaN bounds = no interval requested or defined).
    units : array_like, shape (K,)
        Votes (or tasks) behind each estimate.
    unit : str
        What a unit is called in the reason ("vote", "task", "shared task").
    """
    estimate = np.asarray(estimate, dtype=np.float64)
    low = np.array(low, dtype=np.float64, copy=True)
    high = np.array(high, dtype=np.float64, copy=True)
    units = np.asarray(units, dtype=np.float64)
    present = np.isfinite(low) & np.isfinite(high)
    flat = zero_width(estimate, low, high)
    # Counted as interval_reason counts them (rounded): a matrix's fractional counts sum to 1.9999999.
    absent = (np.round(units) < MIN_UNITS) | (present & flat)  # vectorised: a leaderboard may have 10^5 pairs
    notes: list[str | None] = [None] * len(estimate)
    for i in np.flatnonzero(absent):
        notes[i] = interval_reason(units[i], unit, bool(flat[i]))
    low[absent] = high[absent] = np.nan
    keep = present & ~absent & np.isfinite(estimate)
    low[keep], high[keep] = np.minimum(low[keep], estimate[keep]), np.maximum(high[keep], estimate[keep])
    return Evidence(low, high, tuple(notes))


def widen_rank_ranges(rank_low, rank_high, missing: np.ndarray, overlap_only: np.ndarray | None = None,
                      low=None, high=None):
    """Rank ranges that cover every model the data cannot separate.

    ``missing``: models without an interval (range 1..K; every other range widened by their number).
    ``overlap_only``: models whose resampled statistic never varied although they keep an (analytic)
    interval; their range runs from 1 + the number of models whose interval lies wholly above to
    K − the number whose interval lies wholly below (``low``/``high`` needed then).
    Returns the new (rank_low, rank_high) int arrays, or (None, None) when there were none.
    """
    if rank_low is None or rank_high is None:
        return rank_low, rank_high
    lo = np.asarray(rank_low, dtype=np.int64).copy()
    hi = np.asarray(rank_high, dtype=np.int64).copy()
    k = len(lo)
    missing = np.asarray(missing, dtype=bool)
    if overlap_only is not None and np.any(overlap_only):
        low_a, high_a = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
        known = ~missing & np.isfinite(low_a) & np.isfinite(high_a)
        for i in np.flatnonzero(np.asarray(overlap_only) & ~missing):
            above = int((known & (low_a > high_a[i])).sum())
            below = int((known & (high_a < low_a[i])).sum())
            lo[i], hi[i] = min(lo[i], 1 + above), max(hi[i], k - below)
    n_missing = int(missing.sum())
    if n_missing:
        others = n_missing - missing.astype(np.int64)
        lo, hi = np.maximum(1, lo - others), np.minimum(k, hi + others)
        lo[missing], hi[missing] = 1, k
    return lo, hi


def cover_unseparated(rank_low, rank_high, position, pair_a, pair_b, lacking) -> tuple[np.ndarray, np.ndarray]:
    """Widen rank ranges so that each model of a pair without evidence (``lacking``) covers the other's
    position (1-based ``position`` per model): the data cannot say which of the two is ahead."""
    lo = np.asarray(rank_low, dtype=np.int64).copy()
    hi = np.asarray(rank_high, dtype=np.int64).copy()
    position = np.asarray(position, dtype=np.int64)
    a, b = np.asarray(pair_a)[lacking], np.asarray(pair_b)[lacking]
    for i, j in ((a, b), (b, a)):
        np.minimum.at(lo, i, position[j])
        np.maximum.at(hi, i, position[j])
    return lo, hi


def rank_ranges_with_evidence(rank_low, rank_high, value, pair_a, pair_b, lacking, n_common: int):
    """Rank intervals of a task bootstrap that cover every model the data cannot separate: all of
    1..K from fewer than :data:`MIN_UNITS` tasks scored by every model; else each pair without
    evidence covers the other's rank (1 + the number of models with a strictly higher ``value``)."""
    k = len(value)
    if n_common < MIN_UNITS:
        return np.ones(k, dtype=np.int64), np.full(k, k, dtype=np.int64)
    v = np.nan_to_num(np.asarray(value, dtype=np.float64), nan=-np.inf)
    ranks = 1 + (v[None, :] > v[:, None]).sum(axis=1)
    return cover_unseparated(rank_low, rank_high, ranks, pair_a, pair_b, lacking)
