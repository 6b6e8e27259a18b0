"""Periods of a set of votes (docs/methods.md §4): a vote is early iff its timestamp is below the median timestamp
of the votes analysed; without timestamps there is no period and only the side is balanced."""

from __future__ import annotations

import numpy as np
import pandas as pd


def early_period(votes: pd.DataFrame) -> np.ndarray | None:
    """True for votes before the median timestamp (docs/methods.md §4); None without timestamps."""
    if "timestamp" not in votes or votes["timestamp"].isna().all():
        return None
    seconds = votes["timestamp"].astype("int64").to_numpy() / 1e9
    return seconds < np.median(seconds)


def resolve_period(votes: pd.DataFrame, early) -> np.ndarray | None:
    """``early="median"``: the docs/methods.md §4 split; None: no period; a boolean array: given periods."""
    if isinstance(early, str):
        if early != "median":
            raise ValueError(f"early must be 'median', None or a boolean array, not {early!r}")
        return early_period(votes)
    return None if early is None else np.asarray(early, dtype=bool)
