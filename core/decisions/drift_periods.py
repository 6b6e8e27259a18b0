"""Cutting votes into periods for the drift analysis (docs/methods.md §15): calendar days, ISO weeks or months
of the votes' timestamps (UTC), or consecutive blocks of N votes in time order (file order without timestamps).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import EvalBoardError

CALENDAR_UNITS = ("day", "week", "month")
BLOCK_PATTERN = re.compile(r"^\s*([0-9][0-9_,]*)\s*-?\s*votes\s*$", re.IGNORECASE)
PERIOD_HELP = "day, week (ISO, the default), month, or N-votes (e.g. 5000-votes: blocks of N votes in time order)"


class DriftError(EvalBoardError, ValueError):
    """A drift question the votes cannot answer (no timestamps, one period, an unknown period unit)."""


@dataclass(frozen=True)
class PeriodChoice:
    """A calendar ``unit`` (day, week, month) or a ``block`` of N consecutive votes."""

    unit: str | None
    block: int | None

    @property
    def name(self) -> str:
        return self.unit if self.unit else f"{self.block}-votes"


def parse_period(text: str) -> PeriodChoice:
    """``--period``: day, week, month or N-votes (N ≥ 2)."""
    cleaned = str(text).strip().lower()
    if cleaned in CALENDAR_UNITS:
        return PeriodChoice(cleaned, None)
    match = BLOCK_PATTERN.match(cleaned)
    if match:
        size = int(match.group(1).replace(",", "").replace("_", ""))
        if size >= 2:
            return PeriodChoice(None, size)
    raise DriftError(f"--period {text!r}: choose {PERIOD_HELP}")


@dataclass(frozen=True)
class Periods:
    """Each analysed vote's period code (0 = earliest), the periods' labels, first and last times, and what
    was left out or assumed on the way."""

    code: np.ndarray  # int64 per vote kept; -1: left out (no timestamp)
    labels: tuple[str, ...]
    starts: tuple[str | None, ...]  # ISO time of each period's first vote (None without timestamps)
    ends: tuple[str | None, ...]
    notes: tuple[str, ...]


def _iso(stamp) -> str | None:
    """An ISO time in UTC (the times here are UTC without their zone)."""
    return None if pd.isna(stamp) else pd.Timestamp(stamp).tz_localize("UTC").isoformat()


def timestamps_of(votes: pd.DataFrame) -> pd.Series | None:
    """The votes' times in UTC (NaT where a vote has none); None when no vote has one."""
    if "timestamp" not in votes:
        return None
    stamps = pd.to_datetime(votes["timestamp"], utc=True, errors="coerce")
    return None if stamps.isna().all() else stamps.reset_index(drop=True)


def cut_periods(votes: pd.DataFrame, choice: PeriodChoice) -> Periods:
    """The period of every vote (docs/methods.md §15). Calendar periods need timestamps (an error naming the
    column otherwise); votes without one are left out and counted in a note."""
    stamps = timestamps_of(votes)
    if stamps is None and choice.unit:
        raise DriftError(f"--period {choice.unit} needs the time of each vote, and the votes have no `timestamp` "
                         "column (or it is empty); map one with --map timestamp=COLUMN (tstamp and time are read "
                         "as timestamp), or cut the votes in file order with --period N-votes, e.g. 5000-votes")
    notes: list[str] = []
    missing = np.zeros(len(votes), dtype=bool) if stamps is None else stamps.isna().to_numpy()
    if missing.any():
        notes.append(f"{int(missing.sum()):,} votes without a timestamp left out")
    if choice.unit:
        return _calendar(stamps, missing, choice.unit, notes)
    return _blocks(stamps, missing, choice.block, notes)


def _calendar(stamps: pd.Series, missing: np.ndarray, unit: str, notes: list[str]) -> Periods:
    times = stamps.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
    # Integer period keys by datetime64 arithmetic (a million strftime calls would cost seconds); labels are
    # made for the few distinct keys only.
    if unit == "month":
        key = times.astype("datetime64[M]").astype(np.int64)
    else:
        days = times.astype("datetime64[D]").astype(np.int64)
        key = (days + 3) // 7 if unit == "week" else days  # 1970-01-01 is a Thursday: weeks start on Monday
    distinct, inverse = np.unique(key[~missing], return_inverse=True)
    code = np.full(len(times), -1, dtype=np.int64)
    code[~missing] = inverse.ravel()
    starts, ends = _bounds(code, times, len(distinct))
    return Periods(code, tuple(_label(k, unit) for k in distinct), starts, ends, tuple(notes))


def _label(key: int, unit: str) -> str:
    """2026-01-05 (day), 2026-W02 (ISO week), 2026-01 (month)."""
    if unit == "month":
        return str(np.datetime64(int(key), "M"))
    if unit == "day":
        return str(np.datetime64(int(key), "D"))
    year, week, _ = pd.Timestamp(np.datetime64(int(key) * 7 - 3, "D")).isocalendar()
    return f"{year}-W{week:02d}"


def _blocks(stamps: pd.Series | None, missing: np.ndarray, size: int, notes: list[str]) -> Periods:
    kept = np.flatnonzero(~missing)
    if stamps is None:
        order = kept  # file order
        notes.append(f"no timestamps: blocks of {size:,} votes in file order")
    else:
        times = stamps.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
        order = kept[np.argsort(times[kept], kind="stable")]  # time order; equal times keep file order
    n_blocks = max(1, len(order) // size)
    if len(order) % size and len(order) % size * 2 >= size:  # a last block of at least N/2 votes stands alone
        n_blocks += 1
    elif len(order) % size and len(order) >= size:
        notes.append(f"the last {len(order) % size:,} votes (fewer than half a block) join the last block")
    position = np.minimum(np.arange(len(order)) // size, n_blocks - 1)
    code = np.full(len(missing), -1, dtype=np.int64)
    code[order] = position
    starts_at = np.searchsorted(position, np.arange(n_blocks))
    ends_at = np.r_[starts_at[1:], len(order)]
    labels = tuple(f"votes {a + 1:,}–{b:,}" for a, b in zip(starts_at, ends_at))
    if stamps is None:
        return Periods(code, labels, (None,) * n_blocks, (None,) * n_blocks, tuple(notes))
    starts, ends = _bounds(code, times, n_blocks)
    return Periods(code, labels, starts, ends, tuple(notes))


def _bounds(code: np.ndarray, times: np.ndarray, n_periods: int) -> tuple[tuple, tuple]:
    """ISO times of the first and last vote of each period."""
    kept = code >= 0
    frame = pd.DataFrame({"code": code[kept], "time": times[kept]})
    grouped = frame.groupby("code")["time"]
    first, last = grouped.min().reindex(range(n_periods)), grouped.max().reindex(range(n_periods))
    return tuple(_iso(t) for t in first), tuple(_iso(t) for t in last)
