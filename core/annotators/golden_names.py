"""Plain words for the internal names a campaign gives its golden questions, wherever data reaches a person.

A published campaign stores a golden item as a vote between two stand-in "models", ``golden:correct``
and ``golden:wrong`` (core.campaign.inputs), on the query ``golden:<id>``: the analyses need them to
tell golden rows apart and score them. People see "golden question: correct answer", "golden question
12" instead; :func:`plain_frame` does it for a table, :func:`plain_name` for one value, and
:func:`is_internal` lets a list of models leave the stand-ins out (they are not models).
"""

from __future__ import annotations

import pandas as pd

GOLDEN_PREFIX = "golden:"  # reserved: an answers file may not name a model so (core.campaign.inputs)
GOLDEN_WORDS = {"golden:correct": "golden question: correct answer", "golden:wrong": "golden question: wrong answer"}
NAME_COLUMNS = ("model_a", "model_b", "query_id", "model")


def is_internal(name) -> bool:
    """True for the stand-in names of golden questions."""
    return str(name).startswith(GOLDEN_PREFIX)


def plain_name(name):
    """The words a person reads for ``name`` (other values unchanged)."""
    text = str(name)
    if not text.startswith(GOLDEN_PREFIX):
        return name
    return GOLDEN_WORDS.get(text, f"golden question {text[len(GOLDEN_PREFIX):]}")


def plain_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the golden stand-in names of its model and query columns in plain words (the frame
    itself when there are none; categoricals renamed category by category, not row by row)."""
    out = frame
    for column in NAME_COLUMNS:
        if column not in frame:
            continue
        series = frame[column]
        if isinstance(series.dtype, pd.CategoricalDtype):
            categories = [str(c) for c in series.cat.categories]
            if any(map(is_internal, categories)):
                renamed = [plain_name(c) for c in categories]
                if len(set(renamed)) == len(renamed):
                    out = out.assign(**{column: series.cat.rename_categories(renamed)})
                else:
                    out = out.assign(**{column: series.astype(object).map(plain_name)})
        elif (series.dtype == object or pd.api.types.is_string_dtype(series.dtype)) and \
                series.astype(str).str.startswith(GOLDEN_PREFIX).any():
            out = out.assign(**{column: series.map(lambda v: v if v is None or v != v else plain_name(v))})
    return out
