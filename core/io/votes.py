"""Votes (one row per blind A/B comparison) and counts tables (one row per GROUP BY cell)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from core.io.columns import (
    map_columns,
    parse_flags,
    parse_names,
    parse_numbers,
    parse_outcomes,
    parse_outcomes_and_drops,
    parse_timestamps,
    text_values,
)
from core.io.problems import ProblemList
from core.io.reshape import reshape_votes
from core.io.style_features import StyleFeatureError, pair_features
from core.schema import (
    COUNT_REQUIRED,
    COUNT_STRATA,
    DEFAULT_DIMENSION,
    DEFAULT_GAME_ID,
    STYLE_COUNT_COLUMNS,
    VOTE_COLUMN_ALIASES,
    VOTE_COLUMNS,
    VOTE_LABEL_COLUMNS,
    VOTE_REQUIRED,
)

# Chatbot Arena / FastChat battle records keep answer lengths in nested conversation metadata.
ARENA_ALIASES = {
    "conv_metadata.sum_assistant_a_tokens": "len_a",
    "conv_metadata.sum_assistant_b_tokens": "len_b",
}
TEXT_LENGTH_SOURCES = {"answer_a": "len_a", "answer_b": "len_b", "completion_a": "len_a", "completion_b": "len_b"}
MAPPING_HINT = ("name the file's columns and winner values: on the command line with --map COLUMN=SOURCE and "
                "--outcome VALUE=OUTCOME (e.g. --map winner=preference --outcome a-is-better=model_a), on the "
                "Data page under 'Map columns and outcomes'")


# Comparisons per cell above this are no count of real votes, and sums of them lose whole-number precision
# in float64 (exact to 2^53 ≈ 9e15): 1e308 or inf would overflow the fits.
MAX_COUNT = 1e15


def missing_required(columns, required, problems: ProblemList, kind: str, file_columns) -> bool:
    absent = [c for c in required if c not in columns]
    if absent:
        problems.add(tuple(absent), f"missing required column{'s' if len(absent) > 1 else ''} for {kind} "
                                    f"(the file has: {', '.join(map(str, file_columns)) or 'no columns'})")
    return bool(absent)


def votes_from_frame(raw: pd.DataFrame, source: str, columns: Mapping[str, str] | None = None,
                     outcomes: Mapping[str, str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Parse and validate a raw table as votes; return the canonical frame and notes on what was read.

    Raises :class:`~core.io.problems.InputError` listing every broken rule at once.
    """
    problems = ProblemList(source)
    raw, columns, notes = reshape_votes(raw, columns, problems)
    lengths_from_text = [src for src, dst in TEXT_LENGTH_SOURCES.items() if src in raw.columns
                         and dst not in raw.columns and dst not in (columns or {})]
    frame = raw.copy(deep=False)
    for src in lengths_from_text:
        if TEXT_LENGTH_SOURCES[src] in frame:
            continue
        # An empty cell is an empty answer: length 0, not an unknown length.
        frame[TEXT_LENGTH_SOURCES[src]] = text_values(raw[src]).str.len().fillna(0).astype("float64")
        notes.append(f"{TEXT_LENGTH_SOURCES[src]} computed as the character length of '{src}' (empty = 0)")
    frame = _with_style_counts(raw, frame, columns, notes)
    frame, mapped = map_columns(frame, columns, {**ARENA_ALIASES, **VOTE_COLUMN_ALIASES},
                                (*VOTE_COLUMNS, *STYLE_COUNT_COLUMNS), problems,
                                also_used=tuple(lengths_from_text))
    notes += mapped
    if missing_required(frame.columns, VOTE_REQUIRED, problems, "votes", raw.columns):
        problems.raise_if_any(MAPPING_HINT)
    out = pd.DataFrame(index=pd.RangeIndex(len(frame)))
    if "vote_id" in frame:
        ids = parse_names(frame["vote_id"], "vote_id", problems, required=True)
        dup = ids.duplicated(keep=False).to_numpy() & ids.notna().to_numpy()
        problems.add("vote_id", "duplicate vote_id", dup, ids)
        out["vote_id"] = ids
    for col in VOTE_LABEL_COLUMNS:
        if col in frame:
            required = col in ("game_id", "dimension")
            out[col] = parse_names(frame[col], col, problems, required=required, category=True)
        elif col in ("game_id", "dimension"):  # one category for every row; no million-string column to hash
            default = DEFAULT_GAME_ID if col == "game_id" else DEFAULT_DIMENSION
            out[col] = pd.Categorical.from_codes(np.zeros(len(frame), dtype=np.int8),
                                                 categories=pd.Index([default], dtype="str"))
    model_a = parse_names(frame["model_a"], "model_a", problems, required=True, category=True)
    model_b = parse_names(frame["model_b"], "model_b", problems, required=True, category=True)
    model_a, model_b = _shared_categories(model_a, model_b)
    same = (model_a.codes == model_b.codes) & (model_a.codes >= 0)
    problems.add(("model_a", "model_b"), "a model compared with itself (model_a == model_b)", same,
                 model_a)
    out["model_a"], out["model_b"] = model_a, model_b
    out["winner"], dropped = parse_outcomes_and_drops(frame["winner"], "winner", problems, outcomes)
    if "timestamp" in frame:
        out["timestamp"] = parse_timestamps(frame["timestamp"], "timestamp", problems)
    for col in ("response_time_s", "len_a", "len_b", *STYLE_COUNT_COLUMNS):
        if col in frame:
            out[col] = parse_numbers(frame[col], col, problems, minimum=0)
    _golden(frame, out, problems, notes)
    if "weight" in frame:
        out["weight"] = parse_numbers(frame["weight"], "weight", problems, minimum=0, allow_missing=False)
    problems.raise_if_any(MAPPING_HINT if any(p.columns == ("winner",) for p in problems.problems) else None)
    if dropped.any():
        out = out[~dropped].reset_index(drop=True)
        notes.append(f"{int(dropped.sum()):,} rows dropped by the outcome mapping (winner mapped to 'drop')")
    return categorize_votes(out), notes


def _with_style_counts(raw: pd.DataFrame, frame: pd.DataFrame, columns: Mapping[str, str] | None,
                       notes: list[str]) -> pd.DataFrame:
    """Headers, list items and bold spans per side (core.io.style_features) from the answer texts, for the
    columns of :data:`STYLE_COUNT_COLUMNS` the file does not give itself; an empty cell is an empty answer
    (0, as for the lengths)."""
    pair = next(((a, b) for a, b in (("answer_a", "answer_b"), ("completion_a", "completion_b"))
                 if a in raw.columns and b in raw.columns), None)
    wanted = [c for c in STYLE_COUNT_COLUMNS if c not in raw.columns and c not in (columns or {})]
    if pair is None or not wanted:
        return frame
    try:
        counts = pair_features(raw[pair[0]], raw[pair[1]])
    except StyleFeatureError as exc:  # the lengths still load; scheme style will say what is missing
        notes.append(f"no style counts from '{pair[0]}' and '{pair[1]}': {exc}")
        return frame
    frame = frame.assign(**{c: counts[c].fillna(0).to_numpy(dtype=np.float64) for c in wanted})
    notes.append(f"{', '.join(wanted)} counted in '{pair[0]}' and '{pair[1]}' (style features, docs/methods.md §11; "
                 "empty = 0)")
    return frame


def _golden(frame: pd.DataFrame, out: pd.DataFrame, problems: ProblemList, notes: list[str]) -> None:
    if "is_golden" not in frame and "golden_answer" not in frame:
        return
    if "is_golden" in frame:
        golden = parse_flags(frame["is_golden"], "is_golden", problems)
    else:
        golden = frame["golden_answer"].notna().to_numpy() & (text_values(frame["golden_answer"]).str.strip() != "")\
            .fillna(False).to_numpy()
        notes.append("is_golden taken as 'golden_answer is filled in'")
    out["is_golden"] = golden
    if "golden_answer" not in frame:
        problems.add("golden_answer", "golden items need a golden_answer column (which side is correct)",
                     golden)
        return
    answer = parse_outcomes(frame["golden_answer"].where(golden, None), "golden_answer", problems,
                            allow_missing=True)
    unanswered = golden & (np.asarray(answer.codes) < 0)
    problems.add("golden_answer", "golden item without a golden_answer", unanswered)
    out["golden_answer"] = answer


def categorize_votes(out: pd.DataFrame) -> pd.DataFrame:
    """Canonical column order; label columns are already categoricals with sorted categories."""
    out = out[[c for c in (*VOTE_COLUMNS, *STYLE_COUNT_COLUMNS) if c in out.columns]].copy()
    for col in VOTE_LABEL_COLUMNS:
        if col in out and not isinstance(out[col].dtype, pd.CategoricalDtype):  # a default such as game_id 'all'
            out[col] = pd.Categorical(out[col])
    if "vote_id" in out:
        out["vote_id"] = out["vote_id"].astype("str")
    return out


def _shared_categories(a: pd.Categorical, b: pd.Categorical) -> tuple[pd.Categorical, pd.Categorical]:
    """model_a and model_b over one sorted list of models (docs/methods.md §0), so their codes index the
    same models."""
    models = sorted(set(a.categories) | set(b.categories))
    return _recode(a, models), _recode(b, models)


def _recode(values: pd.Categorical, categories: list[str]) -> pd.Categorical:
    position = {name: i for i, name in enumerate(categories)}
    lookup = np.array([position[n] for n in values.categories] + [-1], dtype=np.int64)  # index -1 -> missing
    return pd.Categorical.from_codes(lookup[values.codes], categories=pd.Index(categories, dtype="str"))


def counts_from_frame(raw: pd.DataFrame, source: str, columns: Mapping[str, str] | None = None,
                      outcomes: Mapping[str, str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """A counts table (model_a, model_b, winner, count [+ strata]): the GROUP BY form of any vote set."""
    problems = ProblemList(source)
    canonical = COUNT_REQUIRED + COUNT_STRATA
    frame, notes = map_columns(raw, columns, {"n": "count", "left": "model_a", "right": "model_b"}, canonical,
                               problems)
    if missing_required(frame.columns, COUNT_REQUIRED, problems, "a counts table", raw.columns):
        problems.raise_if_any(MAPPING_HINT)
    out = pd.DataFrame(index=pd.RangeIndex(len(frame)))
    for col in ("model_a", "model_b"):
        out[col] = parse_names(frame[col], col, problems, required=True)
    same = (out["model_a"] == out["model_b"]).fillna(False).to_numpy(dtype=bool)
    problems.add(("model_a", "model_b"), "a model compared with itself (model_a == model_b)", same, out["model_a"])
    winner, dropped = parse_outcomes_and_drops(frame["winner"], "winner", problems, outcomes)
    out["winner"] = pd.Series(winner).astype("str")
    out["count"] = parse_numbers(frame["count"], "count", problems, minimum=0, maximum=MAX_COUNT,
                                 allow_missing=False)
    if len(out) and not problems.problems and not (out["count"] > 0).any():
        problems.add("count", "every count is 0: the table holds no comparisons to rank", out["count"] == 0,
                     frame["count"])
    strata = [c for c in COUNT_STRATA if c in frame]
    for col in strata:
        out[col] = parse_names(frame[col], col, problems, required=True)
    key = ["model_a", "model_b", "winner", *strata]
    dup = out.duplicated(subset=key, keep=False).to_numpy()
    problems.add(tuple(key), "the same cell appears on more than one row (sum them in the GROUP BY)", dup,
                 out["model_a"])
    if dropped.any():
        out = out[~dropped].reset_index(drop=True)
        notes.append(f"{int(dropped.sum()):,} rows dropped by the outcome mapping (winner mapped to 'drop')")
    problems.raise_if_any()
    return out, notes
