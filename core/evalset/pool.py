"""Reading a query pool: CSV, TSV, JSON, JSONL or Parquet with a text column, or TXT with one query
per line.

The text column is the first of ``query``, ``prompt``, ``text`` (any case); an id column
(``query_id``, ``id``, ``question_id``, ``prompt_id``) and a ``category`` column are optional. Ids are
made (``q000001`` …, by row) when absent. Empty texts and repeated ids are errors naming their rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from core.io.problems import InputError, Problem, ProblemList
from core.io.read import RawFile, check_text, open_source, read_table

TEXT_COLUMNS = ("query", "prompt", "text")
ID_COLUMNS = ("query_id", "id", "question_id", "prompt_id")
CATEGORY_COLUMNS = ("category",)


def read_pool(source: Any, name: str | None = None) -> pd.DataFrame:
    """A frame with ``query_id``, ``query`` and (when given) ``category``, in file order."""
    if name is not None:
        label = name
    elif isinstance(source, (str, Path)):
        label = str(source)
    else:
        label = str(getattr(source, "name", None) or "upload")
    if label.lower().endswith(".txt"):
        return _from_lines(open_source(source, name=str(label), format="csv"))
    raw = open_source(source, name=name)
    frame = read_table(raw)
    return _from_frame(frame, raw.name)


def _from_lines(raw: RawFile) -> pd.DataFrame:
    text = check_text(raw)
    lines = [line.strip() for line in text.splitlines()]
    queries = [line for line in lines if line]
    if not queries:
        raise InputError(raw.name, [Problem((), "the file has no queries (one per line expected)")])
    return pd.DataFrame({"query_id": [f"q{i:06d}" for i in range(1, len(queries) + 1)], "query": queries})


def _pick(frame: pd.DataFrame, names: tuple[str, ...]) -> str | None:
    lower = {str(c).casefold(): c for c in frame.columns}
    return next((lower[n] for n in names if n in lower), None)


def _from_frame(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    problems = ProblemList(source)
    text_col = _pick(frame, TEXT_COLUMNS)
    if text_col is None:
        found = ", ".join(f"'{c}'" for c in frame.columns)
        raise InputError(source, [Problem(TEXT_COLUMNS, f"no query text column: name one of them "
                                                        f"query, prompt or text (the file has {found})")])
    texts = frame[text_col]
    empty = texts.isna() | (texts.astype(str).str.strip() == "")
    problems.add(text_col, "empty query text", empty.to_numpy())
    id_col = _pick(frame, ID_COLUMNS)
    if id_col is not None:
        ids = frame[id_col]
        missing = ids.isna() | (ids.astype(str).str.strip() == "")
        problems.add(id_col, "empty query id", missing.to_numpy())
        ids = ids.astype(str).str.strip()
        repeated = ids.duplicated(keep=False) & ~missing
        problems.add(id_col, "the same query id appears more than once", repeated.to_numpy(), ids.to_numpy())
    else:
        ids = pd.Series([f"q{i:06d}" for i in range(1, len(frame) + 1)])
    problems.raise_if_any()
    out = pd.DataFrame({"query_id": ids.to_numpy(), "query": texts.astype(str).str.strip().to_numpy()})
    cat_col = _pick(frame, CATEGORY_COLUMNS)
    if cat_col is not None:
        out["category"] = frame[cat_col].fillna("").astype(str).str.strip().to_numpy()
    return out
