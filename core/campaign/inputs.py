"""Reading a campaign's answers file and golden file into validated tables.

Answers: one row per (query, model): ``query_id, prompt, model, answer`` plus optional ``category`` and
``game_id``. Golden items: ``question, correct_answer, wrong_answer`` plus an optional ``category``.
Bad rows raise one :class:`core.io.InputError` naming the rows and columns; nothing is stored.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from core.formats import csv_restored
from core.io import InputError, Problem
from core.io.columns import text_values
from core.io.problems import ProblemList
from core.io.read import open_source, read_table
from core.schema import DEFAULT_GAME_ID

ANSWER_REQUIRED = ("query_id", "prompt", "model", "answer")
ANSWER_OPTIONAL = ("category", "game_id")
GOLDEN_REQUIRED = ("question", "correct_answer", "wrong_answer")
GOLDEN_OPTIONAL = ("category",)
# Pseudo-models that stand for the two sides of a golden item in published votes.
GOLDEN_CORRECT, GOLDEN_WRONG = "golden:correct", "golden:wrong"


def read_answers(source: Any, name: str | None = None) -> pd.DataFrame:
    """The answers as text columns ``query_id, prompt, model, answer, category, game_id`` (validated)."""
    raw = open_source(source, name=name)
    frame = csv_restored(read_table(raw), raw.format)  # `collect export` CSVs read back exactly
    problems = ProblemList(raw.name)
    out = _text_columns(frame, ANSWER_REQUIRED, ANSWER_OPTIONAL, problems)
    if out.empty:  # required columns missing: nothing more to check
        problems.raise_if_any()
    key = out[["query_id", "model"]]
    dupes = key.duplicated(keep=False).to_numpy()
    problems.add(("query_id", "model"), "the same model answers the same query twice", dupes,
                 (out["query_id"] + " / " + out["model"]).to_numpy(dtype=object))
    golden_like = out["model"].str.startswith("golden:").to_numpy()
    problems.add("model", "model names starting with 'golden:' are reserved for golden items", golden_like,
                 out["model"].to_numpy(dtype=object))
    for column in ("prompt", "category", "game_id"):
        # One query has one prompt (and one category and game): the Vote page shows it once for both answers.
        varying = out.groupby("query_id", sort=False)[column].transform("nunique") > 1
        problems.add((column, "query_id"), f"one query_id with different {column} values",
                     varying.to_numpy(), out["query_id"].to_numpy(dtype=object))
    problems.raise_if_any()
    counts = out.groupby("query_id", sort=False)["model"].transform("size").to_numpy()
    if (counts < 2).all():
        raise InputError(raw.name, [Problem(("query_id", "model"), "no query has answers from two models, "
                                            "so there is nothing to compare")])
    out["game_id"] = out["game_id"].fillna(DEFAULT_GAME_ID)
    return out


def read_golden(source: Any, name: str | None = None) -> pd.DataFrame:
    """Golden items as text columns ``question, correct_answer, wrong_answer, category`` (validated)."""
    raw = open_source(source, name=name)
    frame = csv_restored(read_table(raw), raw.format)
    problems = ProblemList(raw.name)
    out = _text_columns(frame, GOLDEN_REQUIRED, GOLDEN_OPTIONAL, problems)
    if not problems.problems:
        same = (out["correct_answer"].str.strip() == out["wrong_answer"].str.strip()).to_numpy()
        problems.add(("correct_answer", "wrong_answer"), "the correct and the wrong answer are the same", same)
    problems.raise_if_any()
    return out


def _text_columns(frame: pd.DataFrame, required: tuple[str, ...], optional: tuple[str, ...],
                  problems: ProblemList) -> pd.DataFrame:
    columns = {str(c).strip().lower(): c for c in frame.columns}
    missing = [c for c in required if c not in columns]
    if missing:
        problems.add(tuple(missing), f"missing column{'s' if len(missing) > 1 else ''} "
                                     f"(the file has {', '.join(map(str, frame.columns))})")
        return pd.DataFrame()
    out = pd.DataFrame(index=pd.RangeIndex(len(frame)))
    for column in (*required, *optional):
        if column not in columns:
            out[column] = pd.Series([None] * len(frame), dtype="object")
            continue
        values = text_values(frame[columns[column]]).astype(object)
        empty = values.isna().to_numpy() | (values.fillna("").str.strip() == "").to_numpy()
        if column in required:
            problems.add(column, "empty value", empty)
        out[column] = values.where(~empty, None)
        if column in ("query_id", "model", "category", "game_id"):
            out[column] = out[column].map(lambda v: v.strip() if isinstance(v, str) else v)
    return out.astype(object).where(pd.notna(out), None) if len(out) else out


def pair_items(answers: pd.DataFrame) -> pd.DataFrame:
    """Every (query, model pair) with answers from both models: ``query_id, model_lo, model_hi``."""
    models = answers.groupby("query_id", sort=True)["model"].apply(lambda s: sorted(set(s)))
    rows = []
    for query_id, names in models.items():
        for i, lo in enumerate(names):
            for hi in names[i + 1:]:
                rows.append((query_id, lo, hi))
    return pd.DataFrame(rows, columns=["query_id", "model_lo", "model_hi"])
