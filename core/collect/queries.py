"""The queries to ask: an eval-set file (CSV, TSV, JSON, JSONL) with ``query_id, prompt`` and optional
``category, priority``, in the order they are asked (a ``query`` column is read as the prompt when there
is no ``prompt`` column).

Order: higher ``priority`` first (a missing priority counts as 0), then file order. Query ids are text
(``7`` and ``007`` are different ids) and must be unique; prompts must not be empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from core.formats import csv_restored
from core.io.problems import InputError, Problem, ProblemList
from core.io.read import open_source, read_table

REQUIRED = ("query_id", "prompt")
OPTIONAL = ("category", "priority")


@dataclass(frozen=True)
class Query:
    query_id: str
    prompt: str
    category: str | None = None
    priority: float = 0.0


def load_queries(source: Any, name: str | None = None) -> list[Query]:
    """Read and check an eval-set file (a path, bytes, or an upload); the queries in asking order."""
    raw = open_source(source, name)
    frame = csv_restored(read_table(raw), raw.format)  # eval-set CSVs read back exactly
    return queries_from_frame(frame, raw.name)


def queries_from_frame(frame: pd.DataFrame, source: str = "queries") -> list[Query]:
    if "prompt" not in frame.columns and "query" in frame.columns:  # the eval-set builder's name for the text
        frame = frame.rename(columns={"query": "prompt"})
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise InputError(source, [Problem(tuple(missing), "required column missing; an eval set needs "
                                                          "query_id and prompt (optional: category, priority)")])
    problems = ProblemList(source)
    ids = frame["query_id"].map(_text)
    prompts = frame["prompt"].map(lambda v: v if isinstance(v, str) else _text(v))
    problems.add("query_id", "empty query id", ids.isna().to_numpy())
    problems.add("prompt", "empty prompt", prompts.isna().to_numpy() | (prompts.fillna("").str.strip() == "")
                 .to_numpy())
    repeated = ids.notna() & ids.duplicated(keep=False)
    problems.add("query_id", "query id appears more than once", repeated.to_numpy(), ids.to_numpy())
    priority = pd.Series(0.0, index=frame.index)
    if "priority" in frame.columns:
        given = frame["priority"].map(_text)
        numbers = pd.to_numeric(given, errors="coerce")
        problems.add("priority", "priority must be a number", (given.notna() & numbers.isna()).to_numpy(),
                     given.to_numpy())
        priority = numbers.fillna(0.0)
        problems.add("priority", "priority must be finite", ~np.isfinite(priority.to_numpy(dtype=float)),
                     given.to_numpy())
    problems.raise_if_any()
    categories = frame["category"].map(_text) if "category" in frame.columns else pd.Series(None, index=frame.index)
    queries = [Query(str(i), str(p), c if isinstance(c, str) else None, float(r))
               for i, p, c, r in zip(ids, prompts, categories, priority)]
    order = sorted(range(len(queries)), key=lambda k: (-queries[k].priority, k))
    return [queries[k] for k in order]


def _text(value: Any) -> str | None:
    """A cell as text; None when empty. Integral floats from JSON lose their '.0' (7.0 -> '7')."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = str(value).strip()
    return text or None
