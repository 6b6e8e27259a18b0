"""Vote files in other shapes, turned into one vote per row before validation.

- A pair column such as PandaLM's ``cmp_key`` (``"llama-7b_opt-7b"``) names both models: mapped as
  ``pair``, it is split into model_a and model_b at the one separator each value holds.
- Several annotator columns (PandaLM's ``annotator1..3``), mapped together as the winner
  (``winner=annotator1,annotator2,annotator3``), give one vote per column, whose annotator_id is the
  column name. Error rows are then numbered in the reshaped table: all rows of the first column, then
  all rows of the second …
- A vote file with no query column reads ``instruction_id``, ``instance_id``, ``id`` or ``prompt`` as
  query_id when one of them can be: an ``id`` that never repeats numbers rows, not items, and a column
  of prompt texts (line breaks, padding, long values) is no name; both are passed over.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from core.io.columns import text_values
from core.io.problems import ProblemList

PAIR = "pair"
PAIR_SEPARATORS = ("_", " vs ", "|", ";")
QUERY_CANDIDATES = ("instruction_id", "instance_id", "id", "prompt")
MAX_QUERY_NAME = 100  # characters; longer values are texts, not identifiers
QUERY_NAMES = ("query_id", "question_id", "prompt_id")


def winner_columns(columns: Mapping[str, str] | None) -> list[str]:
    """The file columns a mapping reads the winner from (several: one vote per column)."""
    source = (columns or {}).get("winner")
    return [c.strip() for c in source.split(",") if c.strip()] if source else []


def reshape_votes(raw: pd.DataFrame, columns: Mapping[str, str] | None, problems: ProblemList
                  ) -> tuple[pd.DataFrame, dict[str, str], list[str]]:
    """Apply the pair split, the several-annotator melt and the query_id guess; return the frame, the
    mapping left for :func:`core.io.columns.map_columns`, and notes."""
    columns = dict(columns or {})
    notes: list[str] = []
    frame = raw
    pair = columns.pop(PAIR, None)
    if pair is not None:
        if pair not in frame.columns:
            problems.add((pair,), f"the column mapping reads the model pair from {pair!r}, but the file has no "
                                  "such column")
        else:
            frame = _split_pair(frame, pair, problems)
            columns["model_a"], columns["model_b"] = "model_a", "model_b"
            notes.append(f"column '{pair}' split into model_a and model_b")
    several = winner_columns(columns)
    if len(several) > 1:
        absent = [c for c in several if c not in frame.columns]
        if absent:
            problems.add(tuple(absent), "the winner mapping names columns the file does not have")
        else:
            frame = _one_vote_per_column(frame, several)
            columns["winner"], columns["annotator_id"] = "winner", "annotator_id"
            notes.append(f"one vote per column of {', '.join(several)} (annotator_id = the column name): "
                         f"{len(frame):,} votes")
    if not any(k in columns for k in ("query_id",)) and not any(n in frame.columns for n in QUERY_NAMES):
        guess = guess_query_column(frame)
        if guess:
            columns["query_id"] = guess
            others = [c for c in QUERY_CANDIDATES if c in frame.columns and c != guess]
            notes.append(f"column '{guess}' read as query_id" + (
                f" (also possible: {', '.join(others)}; choose with --map query_id=COLUMN)" if others else ""))
    return frame, columns, notes


def guess_query_column(frame: pd.DataFrame) -> str | None:
    """The first of instruction_id, instance_id, id, prompt that can name items: an id unique on every
    row cannot, nor can texts."""
    for name in QUERY_CANDIDATES:
        if name not in frame.columns:
            continue
        values = text_values(frame[name]).dropna()
        if name == "id" and not values.duplicated().any():
            continue
        if values.str.len().max() > MAX_QUERY_NAME or values.str.contains(r"[\x00-\x1f\x7f]").any() \
                or (values != values.str.strip()).any():
            continue
        return name
    return None


def _split_pair(frame: pd.DataFrame, column: str, problems: ProblemList) -> pd.DataFrame:
    values = text_values(frame[column])
    uniques = pd.unique(values.dropna())
    separator = next((s for s in PAIR_SEPARATORS if all(str(u).count(s) == 1 for u in uniques)), None)
    if separator is None:
        problems.add(column, f"{column} must name two models joined by one separator "
                             f"({', '.join(repr(s) for s in PAIR_SEPARATORS)}) on every row",
                     np.ones(len(frame), bool), values)
        return frame
    parts = values.str.split(separator, n=1, expand=True, regex=False)
    out = frame.copy(deep=False)
    out["model_a"], out["model_b"] = parts[0].str.strip(), parts[1].str.strip()
    return out


def _one_vote_per_column(frame: pd.DataFrame, winners: list[str]) -> pd.DataFrame:
    rest = frame.drop(columns=winners + [c for c in ("winner", "annotator_id") if c in frame.columns])
    blocks = []
    for col in winners:
        block = rest.copy(deep=False)
        block["winner"] = text_values(frame[col]).to_numpy()
        block["annotator_id"] = col
        blocks.append(block)
    return pd.concat(blocks, ignore_index=True)
