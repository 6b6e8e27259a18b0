"""A :class:`~core.leaderboard.aggregate.Leaderboard` as the frames the dashboard and the report figures
draw: the ranking and pair tables as shown (two decimals, CI "0.74-0.82", "–" where undefined), and the
raw frames of the bar, category and pairwise charts (core.charts.runs)."""

from __future__ import annotations

import math

import pandas as pd

from core.leaderboard.aggregate import Leaderboard

DASH = "–"


def two(value: float) -> str:
    return DASH if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.2f}"


def interval(lo: float, hi: float, sep: str = "-") -> str:
    return DASH if math.isnan(lo) or math.isnan(hi) else f"{lo:.2f}{sep}{hi:.2f}"


def rank_range(lo: int | None, hi: int | None) -> str:
    if lo is None or hi is None:
        return DASH
    return str(lo) if lo == hi else f"{lo}-{hi}"


def level(board: Leaderboard) -> str:
    return f"{round((1 - board.settings.alpha) * 100)}% CI"


def board_table(board: Leaderboard) -> pd.DataFrame:
    """The leaderboard as shown: two decimals, CI "0.74-0.82", rank range, coverage and tie group."""
    ci = level(board)
    return pd.DataFrame([{"Rank": r.rank, "Model": r.model_id, "Mean": two(r.mean_score),
                          ci: interval(r.mean_ci_lo, r.mean_ci_hi), "Win rate": two(r.win_rate),
                          "Rank range": rank_range(r.rank_lo, r.rank_hi), "Tasks completed": r.tasks_completed,
                          "Tasks missing": r.tasks_missing, "Tie group": r.tie_group,
                          "No interval because": r.interval_note or ""} for r in board.rows],
                        columns=["Rank", "Model", "Mean", ci, "Win rate", "Rank range", "Tasks completed",
                                 "Tasks missing", "Tie group", "No interval because"])


def bar_rows(board: Leaderboard) -> pd.DataFrame:
    return pd.DataFrame([{"model_id": r.model_id, "mean_score": r.mean_score, "mean_ci_lo": r.mean_ci_lo,
                          "mean_ci_hi": r.mean_ci_hi} for r in board.rows],
                        columns=["model_id", "mean_score", "mean_ci_lo", "mean_ci_hi"])


def category_means(board: Leaderboard) -> pd.DataFrame:
    return pd.DataFrame([[r.categories.get(c, math.nan) for c in board.categories] for r in board.rows],
                        index=pd.Index([r.model_id for r in board.rows], dtype=object),
                        columns=pd.Index(list(board.categories), dtype=object), dtype=float)


def pair_frame(board: Leaderboard) -> pd.DataFrame:
    """Raw pairs for core.charts.runs.pairwise_matrix."""
    return pd.DataFrame([{"model_a": p.model_a, "model_b": p.model_b, "diff": p.diff, "significant": p.significant}
                         for p in board.pairwise], columns=["model_a", "model_b", "diff", "significant"])


def pair_table(board: Leaderboard) -> pd.DataFrame:
    """Every pair: difference, paired vs unpaired CI and their widths, verdict, shared tasks."""
    ci = level(board)
    rows = []
    for p in board.pairwise:
        paired, unpaired = p.ci_hi - p.ci_lo, p.unpaired_ci_hi - p.unpaired_ci_lo
        rows.append({"Model A": p.model_a, "Model B": p.model_b,
                     "A − B": DASH if math.isnan(p.diff) else f"{p.diff:+.2f}",
                     f"Paired {ci}": interval(p.ci_lo, p.ci_hi, " to "), "Paired width": two(paired),
                     f"Unpaired {ci}": interval(p.unpaired_ci_lo, p.unpaired_ci_hi, " to "),
                     "Unpaired width": two(unpaired),
                     "Verdict": "no evidence" if p.note else ("differs" if p.significant else "tie"),
                     "Shared tasks": p.n_tasks, "No interval because": p.note or ""})
    return pd.DataFrame(rows, columns=["Model A", "Model B", "A − B", f"Paired {ci}", "Paired width",
                                       f"Unpaired {ci}", "Unpaired width", "Verdict", "Shared tasks",
                                       "No interval because"])


def per_task_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Tasks as rows and models as columns (a table of 12,000 tasks scrolls; 12,000 columns do not),
    numbers left as numbers: the page formats them with column_config, never with a pandas Styler,
    which Streamlit refuses beyond 262,144 cells."""
    table = scores.T.reset_index()
    table.columns = ["Task", *map(str, scores.index)]
    return table
