"""When the columns do not say what a file holds: what detection guessed, why, and a mapping that
would read the file.

:func:`propose_mapping` looks at a raw table whose first guess failed (no known shape, or a "wide
table" whose model column repeats, i.e. a long table with unfamiliar names) and returns a
:class:`Proposal`: a kind, a column mapping and, for votes, the winner values that still need a
meaning. The CLI prints it as options, the Data page pre-fills its mapping form with it.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

import pandas as pd

from core.io.columns import text_values
from core.schema import OUTCOME_ALIASES

MODEL_NAMES = ("model_id", "model", "generator", "system", "llm")
TASK_NAMES = ("task_id", "task", "instruction_id", "question_id", "item_id", "prompt_id", "query_id", "example_id",
              "instance_id", "idx", "id")
SCORE_NAMES = ("score", "correct", "accuracy", "acc", "value", "result")
CATEGORY_NAMES = ("category", "dataset", "subject", "task_group")
BASELINE_MARKS = ("baseline", "reference")
WINNER_NAMES = ("winner", "preference", "choice", "label", "outcome", "result")
SAMPLE_ROWS = 5000  # enough rows to tell a [0, 1] score column from another number column


@dataclass(frozen=True)
class Proposal:
    """A mapping that would read the file: ``load(..., kind=kind, columns=columns, outcomes=outcomes)``."""

    kind: str  # votes | eval_runs
    columns: dict[str, str]
    reason: str
    outcomes: dict[str, str] = field(default_factory=dict)
    open_values: tuple[str, ...] = ()  # winner values whose meaning the user must still give ("" = empty)

    def options(self) -> str:
        """The same proposal as command-line options."""
        parts = ["--kind", self.kind]
        for target, source in self.columns.items():
            parts += ["--map", f"{target}={source}"]
        for value, outcome in self.outcomes.items():
            parts += ["--outcome", f"{value}={outcome}"]
        text = " ".join(shlex.quote(p) for p in parts)
        if self.open_values:
            shown = ", ".join("(empty)" if v == "" else repr(v) for v in self.open_values)
            text += f"; then say what {shown} mean with --outcome VALUE=OUTCOME (empty cells: --outcome =drop)"
        return text


def propose_mapping(frame: pd.DataFrame) -> Proposal | None:
    """A long EvalRun reading, else a votes-against-a-baseline reading; None when neither fits."""
    names = list(map(str, frame.columns))
    model = next((c for c in MODEL_NAMES if c in names), None)
    if model is None:
        return _pair_proposal(frame, names)
    sample = frame.head(SAMPLE_ROWS)
    task = next((c for c in TASK_NAMES if c in names and c != model and _one_row_per(frame, model, c)), None)
    score = next((c for c in SCORE_NAMES if c in names and _unit_scores(sample[c])), None)
    category = next((c for c in CATEGORY_NAMES if c in names and c not in (task, model)), None)
    if task and score:
        columns = {"model_id": model, "task_id": task, "score": score}
        if category:
            columns["category"] = category
        return Proposal("eval_runs", columns, f"'{model}' repeats with one row per ({model}, {task}), and "
                                              f"'{score}' holds scores in [0, 1]: a long score table")
    baseline = next((c for c in names if c.lower() in BASELINE_MARKS), None)
    winner = next((c for c in WINNER_NAMES if c in names), None)
    if baseline and winner:
        columns = {"model_a": baseline, "model_b": model, "winner": winner}
        if task:
            columns["query_id"] = task
        outcomes, open_values = _numeric_outcomes(frame[winner])
        return Proposal("votes", columns, f"every row compares '{model}' with '{baseline}' and '{winner}' says "
                                          f"which won: votes against a baseline", outcomes, open_values)
    return None


def _pair_proposal(frame: pd.DataFrame, names: list[str]) -> Proposal | None:
    """A column naming both models (``a_b``) and numbered annotator columns (``annotator1..3``): one vote
    per annotator column."""
    raters = [c for c in names if re.fullmatch(r"(annotator|rater|judge|worker|label)_?\d+", c.lower())]
    pair = next((c for c in names if _is_pair_column(frame[c])), None)
    if pair is None or not raters:
        return None
    columns = {"pair": pair, "winner": ",".join(raters)}
    query = next((c for c in TASK_NAMES if c in names), None)
    if query:
        columns["query_id"] = query
    values = pd.concat([text_values(frame[c]) for c in raters], ignore_index=True)
    outcomes, open_values = _numeric_outcomes(values)
    return Proposal("votes", columns, f"'{pair}' names both models and {', '.join(raters)} each give a verdict: "
                                      "one vote per annotator column", outcomes, open_values)


def _is_pair_column(series: pd.Series) -> bool:
    values = text_values(series).dropna().unique()
    return 0 < len(values) <= 1000 and all(str(v).count("_") == 1 and not str(v).startswith("_")
                                           and not str(v).endswith("_") for v in values)


def _unit_scores(series: pd.Series) -> bool:
    numbers = pd.to_numeric(text_values(series).str.strip(), errors="coerce")
    text = text_values(series).dropna().str.strip()
    if numbers.notna().sum() == 0 or numbers.notna().sum() < (text != "").sum():
        return False
    return bool(numbers.dropna().between(0, 1).all())


def _numeric_outcomes(series: pd.Series) -> tuple[dict[str, str], tuple[str, ...]]:
    """For 1 / 2 preference labels (1 = the first of the pair, 2 = the second) the midpoint 1.5 is a tie;
    other unknown values (and empty cells) are left for the user."""
    values = text_values(series)
    uniques = sorted(set(values.dropna().str.strip()))
    outcomes, open_values = {}, []
    for value in uniques:
        if value.lower() in OUTCOME_ALIASES:
            continue
        try:
            number = float(value)
        except ValueError:
            open_values.append(value)
            continue
        if number in (1.0, 2.0):
            outcomes[value] = "model_a" if number == 1.0 else "model_b"
        elif number == 1.5:
            outcomes[value] = "tie"
        else:
            open_values.append(value)
    if values.isna().any():
        open_values.append("")
    return outcomes, tuple(open_values)


def _one_row_per(frame: pd.DataFrame, model: str, task: str) -> bool:
    """Whether no (model, task) pair repeats; cells that are no keys at all (JSON lists) never are."""
    try:
        return not frame.duplicated(subset=[model, task]).any()
    except TypeError:  # unhashable cells
        return False

