"""Helping a user map a file whose columns or winner labels EvalBoard does not know.

The Data page (and anyone scripting) reads the raw table with :func:`peek`, gets a first guess of
which column is which from :func:`suggest_columns`, and the distinct winner values with a guess of
their meaning from :func:`outcome_choices`; the confirmed choices go to :func:`core.io.load` as
``columns=`` and ``outcomes=``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from core.io.read import open_source, read_table
from core.io.runs import WIDE_TASK_COLUMNS
from core.io.votes import ARENA_ALIASES
from core.schema import (
    OUTCOME_ALIASES,
    RUN_COLUMN_ALIASES,
    RUN_COLUMNS,
    RUN_REQUIRED,
    VOTE_COLUMN_ALIASES,
    VOTE_COLUMNS,
    VOTE_REQUIRED,
)

MAPPABLE = {"votes": VOTE_COLUMNS, "eval_runs": RUN_COLUMNS}
REQUIRED = {"votes": VOTE_REQUIRED, "eval_runs": RUN_REQUIRED}
MAX_OUTCOME_VALUES = 40  # more distinct winner values than this is not a winner column


def peek(source: Any, name: str | None = None, rows: int | None = None) -> pd.DataFrame:
    """The raw table as read (text cells), before any mapping or validation."""
    frame = read_table(open_source(source, name=name))
    return frame.head(rows) if rows else frame


def suggest_columns(frame: pd.DataFrame, kind: str = "votes") -> dict[str, str | None]:
    """canonical column -> the file column that probably holds it (exact name, then a known alias)."""
    aliases = {**ARENA_ALIASES, **VOTE_COLUMN_ALIASES} if kind == "votes" else RUN_COLUMN_ALIASES
    names = list(map(str, frame.columns))
    lower = {n.lower(): n for n in names}
    out: dict[str, str | None] = {}
    for target in MAPPABLE[kind]:
        found = lower.get(target)
        if found is None:
            found = next((src for src, dst in aliases.items() if dst == target and src in names), None)
        if found is None and kind == "votes" and target == "winner":
            found = next((lower[n] for n in ("preference", "choice", "label", "result", "outcome") if n in lower), None)
        if found is None and kind == "eval_runs" and target == "task_id":
            found = next((c for c in WIDE_TASK_COLUMNS if c in names), None)
        out[target] = found
    return out


def outcome_choices(frame: pd.DataFrame, column: str) -> list[tuple[str, str | None]]:
    """The distinct values of a winner column with the outcome each already means (None: unknown)."""
    if column not in frame.columns:
        return []
    values = frame[column].dropna().astype(str).unique().tolist()
    if len(values) > MAX_OUTCOME_VALUES:
        values = values[:MAX_OUTCOME_VALUES]
    return [(v, OUTCOME_ALIASES.get(v.strip().lower()) or _guess(v)) for v in sorted(values)]


def _guess(value: str) -> str | None:
    """Common spellings such as ``a-is-better`` or ``B is slightly better``."""
    text = value.strip().lower().replace("_", "-").replace(" ", "-")
    if "both" in text and "bad" in text:
        return "tie (bothbad)"
    if text.startswith(("a-", "left-", "model-a-", "1-")) and "better" in text:
        return "model_a"
    if text.startswith(("b-", "right-", "model-b-", "2-")) and "better" in text:
        return "model_b"
    if text in ("equal", "same", "tied", "even", "neither"):
        return "tie"
    return None
