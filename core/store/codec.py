"""Votes <-> SQL values: dictionary codes on the way in, categoricals on the way out.

Reading a million rows through sqlite3 costs one Python object per cell, so the small integer
columns (model, annotator … codes, outcomes, the golden flag) are read packed: SQL shifts several
of them into one 63-bit integer per row and numpy unpacks them, cutting the objects built for a
ranking's ``model_a, model_b, winner`` from three per row to one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.schema import OUTCOMES
from core.store.tables import LABEL_FIELD, OUTCOME_COLUMNS, STORED_VOTE_COLUMNS

PACK_BITS = 62  # stays clear of the sign bit of SQLite's 64-bit integers


def encode_votes(dataset_id: int, frame: pd.DataFrame) -> tuple[list[str], list[list], list[tuple]]:
    """Column names, per-column SQL values and the label rows ``(dataset_id, field, code, label)``."""
    labels, columns, arrays = [], [], []
    for col in STORED_VOTE_COLUMNS:
        if col not in frame:
            continue
        series = frame[col]
        if col in LABEL_FIELD:
            if col != "model_b":  # model_b shares model_a's categories (see core.io.votes)
                labels += [(dataset_id, LABEL_FIELD[col], i, str(v)) for i, v in enumerate(series.cat.categories)]
            values = _codes(series.cat.codes.to_numpy())
        elif col in OUTCOME_COLUMNS:
            values = _codes(series.cat.codes.to_numpy())
        elif col == "is_golden":
            values = series.to_numpy(dtype=np.int64).tolist()
        elif col == "timestamp":
            ns = series.to_numpy(dtype="datetime64[ns]").astype(np.int64).astype(np.float64) / 1e9
            values = sql_values(pd.Series(np.where(series.isna().to_numpy(), np.nan, ns)))
        else:
            values = sql_values(series)
        columns.append(col)
        arrays.append(values)
    return columns, arrays, labels


def sql_values(series: pd.Series) -> list:
    """Python values for sqlite3, with every kind of missing value as None (SQL NULL)."""
    missing = series.isna().to_numpy()
    values = series.to_numpy(dtype=np.float64 if pd.api.types.is_float_dtype(series.dtype) else object).tolist()
    if missing.any():
        values = [None if m else v for v, m in zip(values, missing)]
    return values


def _codes(codes: np.ndarray) -> list:
    """Categorical codes for SQL: -1 (missing) becomes NULL."""
    out = codes.astype(np.int64).tolist()
    if (codes < 0).any():
        out = [None if c < 0 else c for c in out]
    return out


def is_coded(col: str) -> bool:
    return col in LABEL_FIELD or col in OUTCOME_COLUMNS or col == "is_golden"


def category_list(col: str, labels: dict[str, list[str]]) -> list[str]:
    return labels.get(LABEL_FIELD[col], []) if col in LABEL_FIELD else list(OUTCOMES)


def pack_plan(columns: Sequence[str], labels: dict[str, list[str]]) -> list[list[tuple[str, int, int]]]:
    """Group coded columns into packs of (column, shift, bits) that fit in PACK_BITS.

    A stored code c is packed as c + 1 so that 0 can stand for NULL.
    """
    packs: list[list[tuple[str, int, int]]] = []
    used = PACK_BITS
    for col in columns:
        size = 2 if col == "is_golden" else len(category_list(col, labels)) + 1
        bits = max(1, int(size).bit_length())
        if used + bits > PACK_BITS:
            packs.append([])
            used = 0
        packs[-1].append((col, used, bits))
        used += bits
    return packs


def pack_sql(pack: list[tuple[str, int, int]]) -> str:
    return " | ".join(f"(COALESCE([{col}] + 1, 0) << {shift})" for col, shift, _ in pack)


def unpack(values: np.ndarray, pack: list[tuple[str, int, int]], labels: dict[str, list[str]]) -> dict:
    out = {}
    for col, shift, bits in pack:
        codes = ((values >> shift) & ((1 << bits) - 1)) - 1
        if col == "is_golden":
            out[col] = codes == 1
        else:
            out[col] = pd.Categorical.from_codes(codes, categories=category_list(col, labels))
    return out


def decode_plain(col: str, values: Sequence):
    """A vote column that is not packed: text ids and floats (NULL: NaN)."""
    if col == "vote_id":
        return pd.array(values, dtype="str")
    numbers = np.array(values, dtype=np.float64)
    if col == "timestamp":
        return pd.to_datetime(numbers, unit="s", utc=True).as_unit("ns").round("us")
    return numbers
