"""A :class:`~core.judge.types.JudgeResult` as the JSON, markdown and CSV of ``evalboard judge`` (contract in
docs/design.md, "Command line"): the markdown is for people (the leaderboard table as AlpacaEval publishes
it, then the categories, then the notes); the CSV has one row per model."""

from __future__ import annotations

from typing import Any

from core.formats import csv_table, dumps, markdown_table, markdown_text, number
from core.judge.types import MODEL_FIELDS, JudgeResult


def judge_json(result: JudgeResult) -> str:
    return dumps(result.as_dict())


def judge_csv(result: JudgeResult) -> str:
    """One row per model: :data:`MODEL_FIELDS`, then ``category:<name>`` win rates."""
    data = result.as_dict()
    header = [*MODEL_FIELDS, *(f"category:{c}" for c in data["categories"])]
    rows = [[m[f] for f in MODEL_FIELDS] + [(m["categories"].get(c) or {}).get("win_rate")
                                           for c in data["categories"]] for m in data["models"]]
    return csv_table(header, rows)


def judge_markdown(result: JudgeResult) -> str:
    data = result.as_dict()
    level = round((1 - result.settings.alpha) * 100)
    rows = []
    for m in data["models"]:
        name = markdown_text(m["model"]) + (" (baseline)" if m["is_baseline"] else "")
        rows.append([name, _two(m["length_controlled_winrate"]), _interval(m["lc_ci_low"], m["lc_ci_high"]),
                     _two(m["win_rate"]), _interval(m["win_rate_ci_low"], m["win_rate_ci_high"]),
                     _two(m["standard_error"]), _two(m["lc_standard_error"]), m["n_wins"], m["n_wins_base"],
                     m["n_draws"], m["n_total"], _two(m["discrete_win_rate"]), m["avg_length"]])
    header = ["Model", "LC win rate", f"LC {level}% CI", "Win rate", f"{level}% CI", "SE", "LC SE", "Wins",
              "Baseline wins", "Draws", "Prompts", "Discrete", "Avg length"]
    parts = [f"Win rates (percent) against the baseline {markdown_text(data['baseline'])}",
             markdown_table(header, rows, "lrlrlrrrrrrrr")]
    if data["categories"]:
        cat_rows = [[markdown_text(m["model"]), *(_two((m["categories"].get(c) or {}).get("win_rate"))
                                                  for c in data["categories"])] for m in data["models"]]
        parts += ["Win rate per category", markdown_table(["Model", *map(markdown_text, data["categories"])],
                                                          cat_rows, "l" + "r" * len(data["categories"]))]
    warnings = [f"{markdown_text(m['model'])}: {markdown_text(m['lc_warning'])}" for m in data["models"]
                if m["lc_warning"]]
    notes = [*map(markdown_text, result.notes), *warnings]
    if data["params"].get("difficulty_source"):
        notes.append("prompt difficulty: " + markdown_text(data["params"]["difficulty_source"]))
    parts.append("Notes:\n" + "\n".join(f"- {n}" for n in notes))
    return "\n\n".join(parts)


def _two(value: Any) -> str:
    return number(value, 2)


def _interval(low: float | None, high: float | None) -> str:
    return "–" if low is None or high is None else f"{_two(low)}-{_two(high)}"
