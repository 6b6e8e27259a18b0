"""Judged preferences against a baseline (kind ``preferences``): one row per (model, prompt) saying how
much a judge preferred the model's answer over the baseline's answer to the same prompt.

The frame every consumer reads (the judge's win rates, length control, the store, the pages) has the
columns of :data:`core.schema.PREFERENCE_COLUMNS`: ``model``, ``baseline``, ``query_id`` (text),
``preference`` (float64 in [0, 1] = P(the model's answer beats the baseline's), 0.5 a draw), and optionally
``category``, ``len_model``, ``len_baseline`` (characters) and ``judge``.

Three spellings of the judgement are read onto that scale:

- ``preference`` in [0, 1], as it is;
- AlpacaEval's raw ``preference`` in [1, 2] (2 = the model's answer preferred, 1 = the baseline's,
  1.5 or 0 = a draw): p = raw − 1, and 0 is a draw, as AlpacaEval's ``get_winrate`` reads it. A column
  is on the raw scale when any of its values exceeds 1; a column whose every value is 0 or 1 cannot tell
  the two scales apart and is read on [0, 1] (a note says so; ``--map preference_raw=COLUMN`` names
  the raw scale);
- ``winner`` labels ``model``, ``baseline``, ``tie`` (or ``draw``): 1, 0, 0.5.

An empty preference or winner is a judge failure: AlpacaEval leaves such rows out of every count
(``get_winrate`` drops NaN preferences), and so does this reader, saying how many rows it left out.
AlpacaEval's ``annotations.json`` is read as it is: ``generator_1`` is the baseline, ``generator_2`` the
model, ``output_1``/``output_2`` give the lengths, ``dataset`` the category, ``annotator`` the judge and the
``instruction`` text is the query_id (the same prompt has the same text in every model's file, whatever
the order of the records).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from core.io.columns import map_columns, parse_names, parse_numbers, text_values
from core.io.problems import ProblemList
from core.schema import PREFERENCE_COLUMNS, PREFERENCE_REQUIRED

PREFERENCE_ALIASES = {
    "instruction_id": "query_id", "question_id": "query_id", "prompt_id": "query_id", "instruction": "query_id",
    "generator_2": "model", "generator_1": "baseline",
    "len_model_chars": "len_model", "len_baseline_chars": "len_baseline",
    "dataset": "category", "annotator": "judge",
}
# Answer texts whose character length (Python's len, as AlpacaEval's ``str.len()``) is the answer length.
TEXT_LENGTH_SOURCES = {"output_2": "len_model", "output_1": "len_baseline",
                       "answer_model": "len_model", "answer_baseline": "len_baseline"}
WINNER_VALUES = {"model": 1.0, "baseline": 0.0, "tie": 0.5, "draw": 0.5}
JUDGEMENT_COLUMNS = ("preference", "preference_raw", "winner")  # one of them is required
READ_COLUMNS = (*PREFERENCE_COLUMNS, "preference_raw", "winner")
PREFERENCE_HINT = ("a preferences file needs model, baseline, query_id (or instruction_id) and a preference in "
                   "[0, 1] (or AlpacaEval's raw 1-2, or a winner column: model / baseline / tie); name other "
                   "columns with --map COLUMN=SOURCE (e.g. --map preference=score)")


def looks_like_preferences(names: set[str]) -> bool:
    """Column names (the file's, plus the targets of a user mapping) of a preferences file: a model, a
    baseline and a judgement."""
    mapped = names | {dst for src, dst in PREFERENCE_ALIASES.items() if src in names}
    return {"model", "baseline"} <= mapped and bool(set(JUDGEMENT_COLUMNS) & mapped)


def preferences_from_frame(raw: pd.DataFrame, source: str, columns: Mapping[str, str] | None = None
                           ) -> tuple[pd.DataFrame, list[str]]:
    """Parse and validate a raw table as judged preferences; return the canonical frame and notes.

    Raises :class:`~core.io.problems.InputError` listing every broken rule at once (nothing is kept).
    """
    problems = ProblemList(source)
    columns = dict(columns or {})
    texts = _length_texts(raw, columns)
    frame, notes = map_columns(raw, columns, PREFERENCE_ALIASES, READ_COLUMNS, problems, also_used=tuple(texts))
    judgement = [c for c in JUDGEMENT_COLUMNS if c in frame.columns]
    absent = [c for c in PREFERENCE_REQUIRED if c != "preference" and c not in frame.columns]
    if absent or not judgement:
        wanted = absent + ([] if judgement else ["preference (or winner)"])
        problems.add(tuple(wanted), f"missing required column{'s' if len(wanted) > 1 else ''} for preferences "
                                    f"(the file has: {', '.join(map(str, raw.columns)) or 'no columns'})")
        problems.raise_if_any(PREFERENCE_HINT)
    out = pd.DataFrame(index=pd.RangeIndex(len(frame)))
    for col in ("model", "baseline"):
        out[col] = parse_names(frame[col], col, problems, required=True)
    out["query_id"] = _query_ids(raw, frame, columns, problems, notes)
    out["preference"] = _preferences(frame, judgement[0], problems, notes)
    for col in ("category", "judge"):
        if col in frame:
            out[col] = parse_names(frame[col], col, problems, required=True)
    for src, dst in texts.items():
        # An empty cell is an empty answer: length 0 (as for votes).
        out[dst] = text_values(raw[src]).str.len().fillna(0).to_numpy(dtype=np.float64)
        notes.append(f"{dst} computed as the character length of '{src}' (empty = 0)")
    for col in ("len_model", "len_baseline"):
        if col in frame:
            out[col] = parse_numbers(frame[col], col, problems, minimum=0)
    key = ["model", "baseline", "query_id"]
    duplicated = out.duplicated(subset=key, keep=False).to_numpy() & out[key].notna().all(axis=1).to_numpy()
    problems.add(tuple(key), "the same model, baseline and query_id on more than one row (one judgement per "
                             "model and prompt)", duplicated, out["model"])
    problems.raise_if_any(PREFERENCE_HINT)
    out = _without_failures(out, notes)
    return out[[c for c in PREFERENCE_COLUMNS if c in out.columns]].reset_index(drop=True), notes


def _length_texts(raw: pd.DataFrame, columns: Mapping[str, str]) -> dict[str, str]:
    """{text column: length column} for each length the file gives only as the answer's text."""
    given = set(columns) | {PREFERENCE_ALIASES.get(c, c) for c in raw.columns}
    out: dict[str, str] = {}
    for src, dst in TEXT_LENGTH_SOURCES.items():
        if src in raw.columns and dst not in given and dst not in out.values():
            out[src] = dst
    return out


def _query_ids(raw: pd.DataFrame, frame: pd.DataFrame, columns: Mapping[str, str], problems: ProblemList,
               notes: list[str]) -> pd.Series:
    if "query_id" not in frame:
        return pd.Series(None, index=frame.index, dtype="str")
    if not _source_of("query_id", raw, columns) == "instruction":
        return parse_names(frame["query_id"], "query_id", problems, required=True)
    # A prompt's text holds line breaks and spaces at its ends: only an empty one is refused.
    values = text_values(frame["query_id"])
    problems.add("query_id", "empty instruction (the prompt's text is its query_id)",
                 (values.isna() | (values.str.strip() == "")).to_numpy(dtype=bool), values)
    notes.append("query_id is the instruction text (the same prompt has the same text in every model's file)")
    return values


def _source_of(target: str, raw: pd.DataFrame, columns: Mapping[str, str]) -> str | None:
    """The file's column read as ``target``: the user's mapping, the canonical name, or the first alias."""
    if target in columns:
        return columns[target]
    if target in raw.columns:
        return target
    return next((src for src, dst in PREFERENCE_ALIASES.items() if dst == target and src in raw.columns), None)


def _preferences(frame: pd.DataFrame, column: str, problems: ProblemList, notes: list[str]) -> np.ndarray:
    """P(model beats baseline) in [0, 1] per row; NaN where the judge gave no judgement."""
    if column == "winner":
        labels = text_values(frame["winner"]).str.strip().str.lower()
        values = labels.map(WINNER_VALUES).to_numpy(dtype=np.float64, na_value=np.nan)
        unknown = labels.notna().to_numpy() & (labels != "").to_numpy(dtype=bool) & np.isnan(values)
        problems.add("winner", "unknown winner label (model, baseline, tie or draw; empty = the judge gave none)",
                     unknown, frame["winner"])
        return values
    values = parse_numbers(frame[column], column, problems)
    finite = np.isfinite(values)
    raw_scale = column == "preference_raw" or bool((values[finite] > 1).any())
    if raw_scale:
        why = "the column is mapped as preference_raw" if column == "preference_raw" else "some value exceeds 1"
        bad = finite & ~((values == 0) | ((values >= 1) & (values <= 2)))
        problems.add(column, f"preference outside AlpacaEval's raw scale (1 = baseline preferred, 2 = model "
                             f"preferred, 1.5 or 0 = draw), on which the column is read because {why}", bad,
                     frame[column])
        notes.append(f"'{column}' read on AlpacaEval's raw scale because {why}: P(model beats baseline) = "
                     "preference − 1, 0 read as a draw")
        return np.where(values == 0, 0.5, values - 1.0)
    problems.add(column, "preference below 0 (a preference is P(model beats baseline) in [0, 1], or AlpacaEval's "
                         "raw 1-2)", finite & (values < 0), frame[column])
    distinct = set(np.unique(values[finite]).tolist())
    if distinct and distinct <= {0.0, 1.0}:
        notes.append(f"'{column}' read on the [0, 1] scale (1 = model preferred, 0 = baseline preferred): its values "
                     "are all 0 or 1, which AlpacaEval's raw scale would read as baseline preferred (1) and draw (0); "
                     f"for that reading map it with --map preference_raw={column}")
    return values


def _without_failures(out: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """Rows without a judgement left out, as AlpacaEval's get_winrate does, and counted in the notes."""
    failed = np.isnan(out["preference"].to_numpy(dtype=np.float64))
    if not failed.any():
        return out
    kept = out[~failed]
    per_model = out.loc[failed, "model"].value_counts()
    shown = ", ".join(f"{m} {n}" for m, n in per_model.head(5).items()) + (" …" if len(per_model) > 5 else "")
    notes.append(f"{int(failed.sum()):,} rows without a judgement (the judge gave none) left out, as AlpacaEval "
                 f"does: they count in no rate and not in n_total ({shown})")
    gone = sorted(set(out["model"]) - set(kept["model"]))
    if gone:
        notes.append(f"models with no judgement at all, hence not shown: {', '.join(gone)}")
    return kept
