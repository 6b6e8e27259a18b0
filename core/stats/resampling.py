"""Summaries of resampled statistics shared by every bootstrap (rankings and leaderboards): percentile
intervals (docs/methods.md §3) and rank intervals from the ranks within each replicate."""

from __future__ import annotations

import numpy as np


def percentile_interval(samples: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """[q_{α/2}, q_{1−α/2}] per column, linear interpolation; NaN replicates are dropped."""
    quantile = np.nanquantile if np.isnan(samples).any() else np.quantile  # nanquantile is ~10x slower
    q = quantile(samples, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0, method="linear")
    return q[0], q[1]


def ranks_of(values: np.ndarray) -> np.ndarray:
    """rank_i = 1 + #{j : v_j > v_i} (higher is better, ties share the best rank); rows are replicates."""
    values = np.asarray(values, dtype=np.float64)
    return 1 + (values[..., None, :] > values[..., :, None]).sum(axis=-1)


def rank_interval(samples: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Integer rank interval per model: lower/higher quantiles of replicate ranks (conservative)."""
    ranks = ranks_of(samples)
    low = np.quantile(ranks, alpha / 2.0, axis=0, method="lower")
    high = np.quantile(ranks, 1.0 - alpha / 2.0, axis=0, method="higher")
    return low.astype(int), high.astype(int)
