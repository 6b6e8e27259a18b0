"""EvalRuns: one score in [0, 1] per (model, task, metric), from long tables, wide tables or
lm-evaluation-harness results files."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import PurePath

import numpy as np
import pandas as pd

from core.io.columns import map_columns, parse_names, parse_numbers
from core.io.missing import DEFAULT_MISSING, apply_missing_rule
from core.io.problems import MAX_ROWS_SHOWN, InputError, Problem, ProblemList
from core.io.votes import MAPPING_HINT, missing_required
from core.schema import DEFAULT_METRIC, RUN_COLUMN_ALIASES, RUN_COLUMNS, RUN_REQUIRED

# Columns that name the task in a wide table (one row per task, one column per model).
WIDE_TASK_COLUMNS = ("task_id", "task", "question_id", "item_id", "id", "benchmark")
WIDE_META_COLUMNS = ("category", "dataset", "metric_name", "metric", "weight", "subject")
# Columns read as a wide table's task category, in this order ('dataset': AlpacaEval's subsets).
WIDE_CATEGORY_COLUMNS = ("category", "dataset")


def runs_from_frame(raw: pd.DataFrame, source: str, columns: Mapping[str, str] | None = None,
                    missing: str = DEFAULT_MISSING) -> tuple[pd.DataFrame, list[str]]:
    """A long score table: model_id, task_id, score [, metric_name, category, weight, stderr].

    Empty scores follow the ``missing`` rule (:mod:`core.io.missing`), as a wide table's empty cells do.
    """
    problems = ProblemList(source)
    frame, notes = map_columns(raw, columns, RUN_COLUMN_ALIASES, RUN_COLUMNS, problems)
    if missing_required(frame.columns, RUN_REQUIRED, problems, "an EvalRun (long) table", raw.columns):
        problems.raise_if_any(MAPPING_HINT)
    out, rule_notes = apply_missing_rule(_validate_runs(frame, problems), missing, source)
    return out, notes + rule_notes


def _validate_runs(frame: pd.DataFrame, problems: ProblemList) -> pd.DataFrame:
    """Typed, checked runs; an empty score stays NaN for :func:`apply_missing_rule` to resolve."""
    out = pd.DataFrame(index=pd.RangeIndex(len(frame)))
    out["model_id"] = parse_names(frame["model_id"], "model_id", problems, required=True)
    out["task_id"] = parse_names(frame["task_id"], "task_id", problems, required=True)
    if "metric_name" in frame:
        out["metric_name"] = parse_names(frame["metric_name"], "metric_name", problems, required=True)
    else:
        out["metric_name"] = DEFAULT_METRIC
    out["score"] = parse_numbers(frame["score"], "score", problems, minimum=0, maximum=1)
    if "category" in frame:
        out["category"] = parse_names(frame["category"], "category", problems, required=False)
    if "weight" in frame:
        out["weight"] = parse_numbers(frame["weight"], "weight", problems, minimum=0, allow_missing=False)
    if "stderr" in frame:
        out["stderr"] = parse_numbers(frame["stderr"], "stderr", problems, minimum=0)
    key = ["model_id", "task_id", "metric_name"]
    dup = out.duplicated(subset=key, keep=False).to_numpy()
    problems.add(tuple(key), "the same (model, task, metric) is scored twice", dup, out["model_id"])
    if "category" in out:
        per_task = out.dropna(subset=["category"]).groupby("task_id")["category"].nunique()
        clash = out["task_id"].isin(per_task[per_task > 1].index).to_numpy()
        problems.add(("task_id", "category"), "a task is given more than one category", clash, out["task_id"])
    problems.raise_if_any("scores must lie in [0, 1]; fix them where they are produced" if any(
        p.columns == ("score",) for p in problems.problems) else None)
    return out


WIDE_MODEL_COLUMNS = ("model_id", "model")


def wide_key_column(frame: pd.DataFrame, columns: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """(column, "task" | "model"): what each row of a wide table is keyed by, or None."""
    columns = columns or {}
    if "task_id" in columns:
        return columns["task_id"], "task"
    if "model_id" in columns:
        return columns["model_id"], "model"
    task = next((c for c in WIDE_TASK_COLUMNS if c in frame.columns), None)
    if task:
        return task, "task"
    model = next((c for c in WIDE_MODEL_COLUMNS if c in frame.columns), None)
    return (model, "model") if model else None


def runs_from_wide(raw: pd.DataFrame, source: str, columns: Mapping[str, str] | None = None,
                   metric: str = DEFAULT_METRIC, missing: str = DEFAULT_MISSING) -> tuple[pd.DataFrame, list[str]]:
    """A wide score table: one row per task and a column per model (optional ``category``), or
    one row per model and a column per task."""
    problems = ProblemList(source)
    key = wide_key_column(raw, columns)
    if key is None or key[0] not in raw.columns:
        raise InputError(source, [Problem((), "a wide score table needs a task column (one of "
                                              f"{', '.join(WIDE_TASK_COLUMNS)}) or a model column (model_id, "
                                              f"model); the file has {', '.join(map(str, raw.columns))}")],
                         MAPPING_HINT)
    key_col, rows_are = key
    category_col = (columns or {}).get("category") or next((c for c in WIDE_CATEGORY_COLUMNS if c in raw.columns), None)
    if rows_are == "model":
        category_col = None  # a per-row category would describe models, not tasks
    meta = {key_col, category_col} | {c for c in WIDE_META_COLUMNS if c in raw.columns}
    others = [c for c in raw.columns if c not in meta]
    if not others:
        raise InputError(source, [Problem((), f"a wide score table needs one column per "
                                              f"{'model' if rows_are == 'task' else 'task'}")])
    ids = parse_names(raw[key_col], key_col, problems, required=True)
    problems.add(key_col, f"the same {rows_are} appears on more than one row",
                 ids.duplicated(keep=False).to_numpy(), ids)
    problems.raise_if_any()
    scores = _wide_scores(raw, others, problems)
    problems.raise_if_any("scores must lie in [0, 1]; fix them where they are produced")
    n_rows, n_cols = scores.shape
    row_ids = np.tile(ids.to_numpy(dtype=object), n_cols)
    col_ids = np.repeat(np.array(others, dtype=object), n_rows)
    models, tasks = (col_ids, row_ids) if rows_are == "task" else (row_ids, col_ids)
    long = pd.DataFrame({"model_id": models, "task_id": tasks, "score": scores.T.ravel()})
    if category_col:
        long["category"] = np.tile(raw[category_col].to_numpy(dtype=object), n_cols)
    n_models, n_tasks = (n_cols, n_rows) if rows_are == "task" else (n_rows, n_cols)
    notes = [f"wide table: {n_tasks} tasks × {n_models} models (one row per {rows_are}, keyed by '{key_col}')"]
    if category_col and category_col != "category":
        notes.append(f"column '{category_col}' read as the task category")
    long.insert(2, "metric_name", metric)
    out, rule_notes = apply_missing_rule(_validate_runs(long, ProblemList(source)), missing, source)
    return out, notes + rule_notes


def _wide_scores(raw: pd.DataFrame, columns: list, problems: ProblemList) -> np.ndarray:
    """The score cells as a rows x columns array, parsed in one pass over all cells (a file may have 10,000
    columns: one parse per column costs a millisecond each); columns holding a problem are parsed again
    one by one so that each problem names its column."""
    n_rows = len(raw)
    cells = pd.Series(raw[columns].to_numpy(dtype=object).T.ravel())  # column after column
    trial = ProblemList(problems.source)
    flat = parse_numbers(cells, "score", trial, minimum=0, maximum=1)
    if trial.problems:
        # a column with a problem has a cell that did not read as a number in [0, 1] (or was empty)
        suspect = ~((flat >= 0) & (flat <= 1)).reshape(len(columns), n_rows).all(axis=1)
        for k in np.flatnonzero(suspect):
            parse_numbers(raw[columns[k]], str(columns[k]), problems, minimum=0, maximum=1)
    return flat.reshape(len(columns), n_rows).T


def runs_from_lm_eval(documents: list[tuple[str, dict]], metric: str = "acc",
                      missing: str = DEFAULT_MISSING) -> tuple[pd.DataFrame, list[str]]:
    """lm-evaluation-harness results files, one per model: ``{"results": {task: {metric: value, …}}}``.

    The model is named by ``config.model_args`` (``pretrained=…``), with `` (k-shot)`` when
    ``config.num_fewshot`` is above 0, else by the file name. Only ``metric`` (default ``acc``) is read:
    other metrics (perplexities, likelihood differences) are not scores in [0, 1]. Problems name the task
    (and the file, when there are several), not a row number.
    """
    rows, notes, skipped = [], [], 0
    problems: list[Problem] = []
    for source, doc in documents:
        results = doc.get("results") if isinstance(doc, dict) else None
        if isinstance(results, list):
            raise InputError(source, [Problem(("results",), "'results' is a list; an lm-evaluation-harness results "
                                                            "file holds an object of tasks: {task: {metric: value}}")])
        if not isinstance(results, dict):
            raise InputError(source, [Problem((), "not an lm-evaluation-harness results file "
                                                  "(no 'results' object of tasks)")])
        where = f"{source}: " if len(documents) > 1 else ""  # the message starts with the file when there is one
        model, wrong = _lm_eval_model(source, doc, where)
        problems += wrong
        not_objects = [str(task) for task, metrics in results.items() if not isinstance(metrics, dict)]
        if not_objects:
            problems.append(Problem(("results",), f"{where}the results of a task must be an object of metrics",
                                    tuple(range(1, len(not_objects[:MAX_ROWS_SHOWN]) + 1)), len(not_objects),
                                    labels=tuple(map(repr, not_objects[:MAX_ROWS_SHOWN])), unit="task"))
        for task, metrics in results.items():
            found = _metric_keys(metrics, metric) if isinstance(metrics, dict) else None
            if found is None:
                skipped += isinstance(metrics, dict)
                continue
            value_key, stderr_key = found
            rows.append({"model_id": model, "task_id": str(task), "metric_name": metric,
                         "score": metrics[value_key], "stderr": metrics.get(stderr_key), "source": source})
    label = ", ".join(sorted({s for s, _ in documents}))[:300] or "lm-eval"
    if problems:
        raise InputError(label, problems)
    if not rows:
        raise InputError(documents[0][0] if documents else "lm-eval", [Problem((), f"no task reports the metric "
                                                                                     f"{metric!r}")])
    frame = pd.DataFrame(rows)
    if skipped:
        notes.append(f"{skipped} task results without '{metric}' were left out")
    try:
        validated = _validate_runs(frame.drop(columns="source"), ProblemList(label))
    except InputError as exc:  # the same rules as any score table, told by task instead of row number
        raise InputError(exc.source, [_by_task(p, frame, metric) for p in exc.problems], exc.hint) from None
    out, rule_notes = apply_missing_rule(validated, missing, label)
    notes.append(f"{frame['model_id'].nunique()} models × {frame['task_id'].nunique()} tasks, metric '{metric}'")
    return out, notes + rule_notes


def _by_task(problem: Problem, frame: pd.DataFrame, metric: str) -> Problem:
    """A problem found in the long table, with each row named as the task (and file) it came from."""
    several = frame["source"].nunique() > 1
    labels = tuple(repr(frame["task_id"].iat[r - 1]) + (f" in {frame['source'].iat[r - 1]}" if several else "")
                   for r in problem.rows)
    columns = tuple({"score": metric, "stderr": f"{metric}_stderr"}.get(c, c) for c in problem.columns)
    return replace(problem, columns=columns, labels=labels, unit="task")


def _lm_eval_model(source: str, doc: dict, where: str) -> tuple[str, list[Problem]]:
    """The model name, and what is wrong with ``config.num_fewshot`` (a count of shots, or absent)."""
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    shots = config.get("num_fewshot")
    if shots is None or (isinstance(shots, int) and not isinstance(shots, bool) and shots >= 0):
        return lm_eval_model_name(source, doc), []
    return "", [Problem(("config.num_fewshot",), f"{where}num_fewshot must be a whole number of shots (0 or more), "
                                                 f"not {json.dumps(shots)}")]


def _metric_keys(metrics: dict, metric: str) -> tuple[str, str] | None:
    """Keys of the value and its standard error: ``acc``/``acc_stderr`` (harness < 0.4) or
    ``acc,none``/``acc_stderr,none`` (0.4 and later, where the part after the comma names a filter)."""
    if metric in metrics:
        return metric, f"{metric}_stderr"
    for key in sorted(metrics):
        name, sep, filt = key.partition(",")
        if sep and name == metric:
            return key, f"{metric}_stderr,{filt}"
    return None


def lm_eval_model_name(source: str, doc: dict) -> str:
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    args = str(config.get("model_args") or "")
    found = re.search(r"(?:^|,)\s*pretrained=([^,]+)", args)
    name = found.group(1).strip() if found else PurePath(source).stem
    shots = config.get("num_fewshot")
    if isinstance(shots, int) and not isinstance(shots, bool) and shots > 0:  # True is an int in Python
        name += f" ({shots}-shot)"
    return name


# Keys that lm-evaluation-harness writes beside "results" (any version).
LM_EVAL_KEYS = ("config", "configs", "versions", "n-shot", "higher_is_better", "n-samples", "lm_eval_version")


def is_lm_eval_document(doc) -> bool:
    """An object with a ``results`` object of tasks, or a ``results`` of another shape beside the harness's
    other keys (then read as lm-eval, so that the message says what is wrong with it)."""
    return isinstance(doc, dict) and "results" in doc and (
        isinstance(doc["results"], dict) or any(k in doc for k in LM_EVAL_KEYS))
