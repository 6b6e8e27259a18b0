"""What a score table's cells without a score mean: one rule for every shape of EvalRun.

A (model, task) cell has no score when a wide table's cell is empty or NA, when a long table's
score is empty, or when a long table has no row for it. Either rule is the user's choice:

- ``skip`` (the default): the cell is not scored; a model's mean is over the tasks it has scores
  for, and the leaderboard lists how many tasks each model misses.
- ``zero``: the cell counts as a wrong answer (score 0), so every model is averaged over every
  task, as benchmark scripts that mark an unanswered question wrong do.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.errors import SettingError
from core.io.problems import InputError, Problem
from core.schema import DEFAULT_MISSING, MISSING_RULES  # noqa: F401 - re-exported for core.io

MAX_MODELS_NAMED = 8  # models listed by name in a note; the leaderboard has them all


def check_missing_rule(rule: str) -> str:
    if rule not in MISSING_RULES:
        raise SettingError(f"missing must be one of {', '.join(MISSING_RULES)}, not {rule!r}")
    return rule


def apply_missing_rule(runs: pd.DataFrame, rule: str = DEFAULT_MISSING,
                       source: str = "input") -> tuple[pd.DataFrame, list[str]]:
    """Drop (``skip``) or score 0 (``zero``) the cells without a score; a note says which rule ran.

    ``runs`` holds model_id, task_id, metric_name and score (NaN = empty); with ``zero`` the absent
    (model, task) cells of each metric are added with score 0 (category and weight copied from the task).
    """
    check_missing_rule(rule)
    empty = runs["score"].isna().to_numpy()
    if rule == "skip":
        out = runs[~empty].reset_index(drop=True) if empty.any() else runs
        if len(runs) and not len(out):  # nothing left to rank: a dataset of no scores is no dataset
            raise InputError(source, [Problem(("score",), f"every score is empty ({len(runs):,} cells): there is "
                                                          "nothing to rank (missing=skip leaves them out; "
                                                          "--missing zero scores them 0)")])
        gaps = _absent_cells(out)
        n_gaps = int(gaps.sum()) if len(gaps) else 0
        if not empty.any() and not n_gaps:
            return out, []
        absent = f" and {n_gaps:,} absent (model, task) cells" if n_gaps else ""
        n_empty = int(empty.sum())
        return out, [f"{n_empty:,} empty or NA cell{'' if n_empty == 1 else 's'}{absent} read as 'not scored' "
                     "(missing=skip, the default): each model is averaged over its scored tasks and the "
                     "leaderboard lists the tasks "
                     "it misses; missing=zero (--missing zero) scores them 0"]
    filled = runs.copy()
    filled["score"] = filled["score"].fillna(0.0)
    per_model = pd.Series(empty, index=filled.index).groupby(filled["model_id"].astype(str), sort=True).sum()
    completed = _complete_grid(filled)
    added = completed.iloc[len(filled):]
    per_model = per_model.add(added["model_id"].astype(str).value_counts(), fill_value=0).astype(int)
    per_model = per_model[per_model > 0].sort_values(ascending=False)
    if per_model.empty:
        return completed, []
    named = ", ".join(f"{m} {n:,}" for m, n in per_model.head(MAX_MODELS_NAMED).items())
    more = f" and {len(per_model) - MAX_MODELS_NAMED} more models" if len(per_model) > MAX_MODELS_NAMED else ""
    return completed, [f"{int(per_model.sum()):,} (model, task) cells have no score (empty, NA or absent): scored 0 "
                       f"(missing=zero); per model: {named}{more}"]


def _absent_cells(runs: pd.DataFrame) -> pd.Series:
    """Per metric: models × tasks minus the cells present."""
    if runs.empty:
        return pd.Series(dtype=int)
    sizes = runs.groupby("metric_name", sort=False).agg(m=("model_id", "nunique"), t=("task_id", "nunique"))
    present = runs.groupby("metric_name", sort=False).size()
    return sizes["m"] * sizes["t"] - present


def _complete_grid(runs: pd.DataFrame) -> pd.DataFrame:
    """Add a score-0 row for every absent (model, task) cell of each metric, after the existing rows."""
    parts = [runs]
    task_columns = [c for c in ("category", "weight") if c in runs.columns]
    for metric, group in runs.groupby("metric_name", sort=False):
        model_codes, models = pd.factorize(group["model_id"].astype(str))
        task_codes, tasks = pd.factorize(group["task_id"].astype(str))
        cells = np.zeros(len(models) * len(tasks), dtype=bool)
        cells[model_codes * len(tasks) + task_codes] = True
        absent = np.flatnonzero(~cells)
        if absent.size == 0:
            continue
        task_of = absent % len(tasks)
        extra = pd.DataFrame({"model_id": np.asarray(models, dtype=object)[absent // len(tasks)],
                              "task_id": np.asarray(tasks, dtype=object)[task_of]})
        if task_columns:  # a task's category and weight, from its first row
            first = pd.Series(np.arange(len(group))).groupby(task_codes).first().to_numpy()
            for col in task_columns:
                extra[col] = group[col].to_numpy()[first][task_of]
        extra["metric_name"] = metric
        extra["score"] = 0.0
        if "stderr" in runs.columns:
            extra["stderr"] = np.nan
        parts.append(extra[[c for c in runs.columns if c in extra.columns]])
    if len(parts) == 1:
        return runs
    return pd.concat(parts, ignore_index=True)
