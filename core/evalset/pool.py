"""Reading a query pool: CSV, TSV, JSON, JSONL or Parquet with a text column, or TXT with one query
per line.

The text column is the first of ``query``, ``prompt``, ``text`` (any case); an id column
(``query_id``, ``id``, ``question_id``, ``prompt_id``) and a ``category`` column are optional. Ids are
made (``q000001`` …, by row) when absent. Empty texts and repeated ids are errors naming their rows.

A file whose columns have other names is read through a column mapping (``columns=``, the CLI's
``--map prompt=instruction,category=dataset``): EvalBoard's column → the file's column, for ``prompt``
(``query`` and ``text`` name it too), ``query_id`` and ``category``. A mapped column wins over a
column that has EvalBoard's name; a mapping naming an unknown column is an error that lists the
file's columns. :func:`suggest_columns` proposes a mapping for the page's mapping step.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from core.io.problems import InputError, Problem, ProblemList
from core.io.read import RawFile, check_text, open_source, read_table

TEXT_COLUMNS = ("query", "prompt", "text")
ID_COLUMNS = ("query_id", "id", "question_id", "prompt_id")
CATEGORY_COLUMNS = ("category",)
# What a column mapping can name: EvalBoard's column -> the names it is found under without a mapping.
POOL_COLUMNS = {"prompt": TEXT_COLUMNS, "query_id": ID_COLUMNS, "category": CATEGORY_COLUMNS}
_TARGET_SYNONYMS = {"query": "prompt", "text": "prompt", "id": "query_id"}
# Columns that usually hold a category when none is called "category" (AlpacaEval calls it "dataset").
_CATEGORY_LIKE = ("dataset", "topic", "type", "domain", "task", "source", "subject", "label")
MAX_CATEGORIES_GUESSED = 50  # more distinct values than this is not a category column


def read_pool(source: Any, name: str | None = None, columns: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A frame with ``query_id``, ``query`` and (when given) ``category``, in file order.

    ``columns`` maps EvalBoard's ``prompt``, ``query_id`` and ``category`` onto the file's columns."""
    if name is not None:
        label = name
    elif isinstance(source, (str, Path)):
        label = str(source)
    else:
        label = str(getattr(source, "name", None) or "upload")
    if label.lower().endswith(".txt"):
        if columns:
            raise InputError(label, [Problem((), "a TXT pool (one query per line) has no columns to map; "
                                                 "leave out the column mapping")])
        return _from_lines(open_source(source, name=str(label), format="csv"))
    raw = open_source(source, name=name)
    frame = read_table(raw)
    return _from_frame(frame, raw.name, dict(columns or {}))


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


def canonical_mapping(columns: Mapping[str, str], frame: pd.DataFrame, source: str) -> dict[str, str]:
    """The mapping with EvalBoard's names (``query`` → ``prompt``), checked against the file's columns:
    one InputError listing every target that is not a pool column and every source the file lacks."""
    problems: list[Problem] = []
    out: dict[str, str] = {}
    have = list(map(str, frame.columns))
    for target, column in columns.items():
        name = _TARGET_SYNONYMS.get(str(target).strip().casefold(), str(target).strip().casefold())
        if name not in POOL_COLUMNS:
            problems.append(Problem((), f"the column mapping names {target!r}, which is not a column of a query "
                                        f"pool (one of: {', '.join(POOL_COLUMNS)})"))
        elif column not in have:
            problems.append(Problem((column,), f"the column mapping reads {name!r} from {column!r}, but the file "
                                               f"has no such column (it has: {', '.join(have)})"))
        elif name in out and out[name] != column:
            problems.append(Problem((out[name], column), f"the column mapping reads {name!r} from two columns"))
        else:
            out[name] = column
    if problems:
        raise InputError(source, problems)
    return out


def suggest_columns(frame: pd.DataFrame) -> dict[str, str | None]:
    """A first guess of the mapping: the known names first; else the text column with the longest cells
    for ``prompt``, a column named ``*_id`` with unique values for ``query_id``, and a column named
    like dataset/topic/type with at most 50 values for ``category``."""
    guess = {target: _pick(frame, names) for target, names in POOL_COLUMNS.items()}
    texts = [c for c in frame.columns if pd.api.types.is_string_dtype(frame[c].dtype) and c not in guess.values()]
    if guess["prompt"] is None and texts:
        lengths = {c: frame[c].dropna().astype(str).str.len().mean() for c in texts}
        guess["prompt"] = max(texts, key=lambda c: (lengths[c] if lengths[c] == lengths[c] else 0.0))
    if guess["query_id"] is None:
        guess["query_id"] = next((c for c in frame.columns if re.search(r"(^|[_ -])id$", str(c).casefold())
                                  and c not in guess.values() and frame[c].notna().all() and frame[c].is_unique), None)
    if guess["category"] is None:
        lower = {str(c).casefold(): c for c in frame.columns if c not in guess.values()}
        guess["category"] = next((lower[n] for n in _CATEGORY_LIKE if n in lower
                                  and frame[lower[n]].nunique() <= MAX_CATEGORIES_GUESSED), None)
    return guess


def _from_frame(frame: pd.DataFrame, source: str, columns: dict[str, str] | None = None) -> pd.DataFrame:
    mapped = canonical_mapping(columns or {}, frame, source)
    problems = ProblemList(source)
    text_col = mapped.get("prompt") or _pick(frame, TEXT_COLUMNS)
    if text_col is None:
        found = ", ".join(f"'{c}'" for c in frame.columns)
        raise InputError(source, [Problem(TEXT_COLUMNS, f"no query text column: name one of them "
                                                        f"query, prompt or text, or map one (--map "
                                                        f"prompt=COLUMN; the file has {found})")])
    texts = frame[text_col]
    empty = texts.isna() | (texts.astype(str).str.strip() == "")
    problems.add(text_col, "empty query text", empty.to_numpy())
    id_col = mapped.get("query_id") or _pick(frame, ID_COLUMNS)
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
    cat_col = mapped.get("category") or _pick(frame, CATEGORY_COLUMNS)
    if cat_col is not None:
        out["category"] = frame[cat_col].fillna("").astype(str).str.strip().to_numpy()
    return out
