"""Row filters every analysis applies first: game, dimension, category and a date range.

A :class:`Filters` value is hashable (the dashboard caches results by it) and empty by default, which
means "every row". Votes filter on ``game_id``, ``dimension``, ``category`` and the date of
``timestamp``; EvalRuns only have ``category``. A filter on a column the frame does not have is ignored
(:func:`choices` offers only the columns that exist).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np
import pandas as pd

LABEL_COLUMNS = ("game_id", "dimension", "category")


@dataclass(frozen=True)
class Filters:
    games: tuple[str, ...] = ()
    dimensions: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    start: date | None = None  # first day kept (UTC), inclusive
    end: date | None = None  # last day kept (UTC), inclusive

    @property
    def active(self) -> bool:
        return bool(self.games or self.dimensions or self.categories or self.start or self.end)

    def by_column(self) -> dict[str, tuple[str, ...]]:
        return {"game_id": self.games, "dimension": self.dimensions, "category": self.categories}

    def describe(self) -> str:
        """One line for captions and reports, e.g. ``game_id ∈ {chat}; 2026-10-01 – 2026-10-03``."""
        parts = [f"{col} ∈ {{{', '.join(values)}}}" for col, values in self.by_column().items() if values]
        if self.start or self.end:
            parts.append(f"{self.start or '…'} – {self.end or '…'}")
        return "; ".join(parts) if parts else "none"


def apply(frame: pd.DataFrame, filters: Filters) -> pd.DataFrame:
    """The rows of ``frame`` that pass every filter (the frame itself when nothing is filtered)."""
    if not filters.active or len(frame) == 0:
        return frame
    keep = np.ones(len(frame), dtype=bool)
    for column, values in filters.by_column().items():
        if values and column in frame.columns:
            keep &= frame[column].astype(object).isin(values).to_numpy() if not isinstance(
                frame[column].dtype, pd.CategoricalDtype) else _categorical_isin(frame[column], values)
    if (filters.start or filters.end) and "timestamp" in frame.columns:
        day = _utc_days(frame["timestamp"])
        if filters.start:
            keep &= day >= np.datetime64(filters.start, "D")
        if filters.end:
            keep &= day <= np.datetime64(filters.end, "D")
    return frame if keep.all() else frame[keep]


def choices(frame: pd.DataFrame) -> dict[str, object]:
    """What can be filtered: sorted values per label column (dimensions in the order the rows first show
    them), and (first, last) UTC day of timestamps."""
    out: dict[str, object] = {}
    for column in LABEL_COLUMNS:
        if column in frame.columns:
            series = frame[column]
            if isinstance(series.dtype, pd.CategoricalDtype):
                codes = series.cat.codes.to_numpy()
                used = pd.unique(codes[codes >= 0])  # in the order the rows show them
                values = series.cat.categories[used if column == "dimension" else np.sort(used)]
            else:
                values = pd.unique(series.dropna())
            # dimensions keep the order of the data (a campaign's order: the first is analysed by default)
            names = [str(v) for v in values] if column == "dimension" else sorted(map(str, values))
            if len(names) > 1:  # one value: nothing to choose
                out[column] = names
    if "timestamp" in frame.columns and frame["timestamp"].notna().any():
        days = _utc_days(frame["timestamp"])
        days = days[~np.isnat(days)]
        out["timestamp"] = (days.min().astype(date), days.max().astype(date))
    return out


def _categorical_isin(series: pd.Series, values: tuple[str, ...]) -> np.ndarray:
    """isin on the codes: one lookup per category instead of one per row (a million votes)."""
    wanted = np.isin(series.cat.categories.astype(str), list(values))
    codes = series.cat.codes.to_numpy()
    return (codes >= 0) & wanted[np.maximum(codes, 0)]


def _utc_days(timestamps: pd.Series) -> np.ndarray:
    values = pd.to_datetime(timestamps, utc=True)
    return values.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy().astype("datetime64[D]")
