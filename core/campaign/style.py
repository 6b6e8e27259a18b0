"""Style counts of the answers a campaign's voters saw, for the style-controlled ranking (docs/methods.md §11).

The Vote page draws each answer as ``demote_headings(clean_text)`` (core.campaign.headings: the answer's
headings shifted below the page's own labels, setext headings rewritten as ``#`` headings). That text is
what a voter saw, so its headers, list items and bold spans are what is counted
(core.io.style_features), once per answer — a (query, model) answer, or one side of a golden item —
however many votes showed it. The lengths stay those recorded when the item was served
(``campaign_assignments.len_a/len_b``: the characters of the cleaned answer), which every scheme reads;
the demotion only adds heading markup, no text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from core.campaign.headings import demote_headings
from core.campaign.inputs import GOLDEN_CORRECT
from core.campaign.store import Campaign
from core.io.style_features import SIDE_COLUMNS, answer_features

# An answer shown on the Vote page: ("answer", query_id, model) or ("golden", golden_id, side name).
AnswerKey = tuple[str, object, str]


def answer_key(query_id: str | None, golden_id: int | None, model: str) -> AnswerKey:
    return ("golden", golden_id, model) if golden_id is not None else ("answer", query_id, model)


def side_counts(conn: sqlite3.Connection, campaign: Campaign, left: Sequence[AnswerKey],
                right: Sequence[AnswerKey]) -> dict[str, np.ndarray]:
    """``headers_a, headers_b, lists_a, lists_b, bold_a, bold_b`` (float) of the answers shown left and right,
    one value per vote, each distinct answer counted once."""
    shown = list(dict.fromkeys([*left, *right]))
    texts = _displayed_texts(conn, campaign, shown)
    counts = answer_features([texts[k] for k in shown])
    row = {k: i for i, k in enumerate(shown)}
    at_left = np.fromiter((row[k] for k in left), dtype=np.int64, count=len(left))
    at_right = np.fromiter((row[k] for k in right), dtype=np.int64, count=len(right))
    out = {}
    for feature, (col_a, col_b) in SIDE_COLUMNS.items():
        if feature == "length":
            continue
        values = counts[feature].to_numpy(dtype=np.float64)
        out[col_a], out[col_b] = values[at_left], values[at_right]
    return out


def _displayed_texts(conn: sqlite3.Connection, campaign: Campaign, keys: Sequence[AnswerKey]) -> dict[AnswerKey, str]:
    """The text the Vote page draws for each answer."""
    answers = {("answer", q, m): t for q, m, t in conn.execute(
        "SELECT query_id, model, clean_text FROM campaign_answers WHERE campaign_id = ?", [campaign.id])}
    golden = {g: (correct, wrong) for g, correct, wrong in conn.execute(
        "SELECT id, correct_clean, wrong_clean FROM campaign_golden WHERE campaign_id = ?", [campaign.id])}
    texts = {}
    for key in keys:
        kind, item, side = key
        if kind == "golden":
            correct, wrong = golden[item]
            text = correct if side == GOLDEN_CORRECT else wrong
        else:
            text = answers[key]
        texts[key] = demote_headings(text)
    return texts
