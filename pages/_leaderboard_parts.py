"""Helpers of the Leaderboard page: the cached aggregate and the tables it shows (formatted text)."""

from __future__ import annotations

import math
import zlib

import pandas as pd
import streamlit as st

from core.filters import Filters
from core.filters import apply as apply_filters
from core.leaderboard.aggregate import Leaderboard, LeaderboardSettings, aggregate
from pages._shared import load_dataset

DASH = "–"


@st.cache_data(show_spinner=False, max_entries=16)
def cached_board(db_path: str, dataset_id: int, sha256: str, filters: Filters, rank_by: str, replicates: int,
                 alpha: float, seed: int, stratified: bool, metric: str | None,
                 task_weights: tuple[tuple[str, float], ...] | None = None) -> Leaderboard:
    """The leaderboard of one stored dataset (id *and* content hash) under one set of filters and settings;
    ``task_weights`` replaces the data's task weights."""
    runs = apply_filters(load_dataset(db_path, dataset_id, sha256), filters)
    if task_weights is not None:
        runs = runs.assign(weight=runs["task_id"].astype(str).map(dict(task_weights)).fillna(1.0))
    return aggregate(runs, LeaderboardSettings(rank_by=rank_by, replicates=replicates, alpha=alpha, seed=seed,
                                               stratified=stratified, metric=metric))


def metric_names(runs: pd.DataFrame) -> list[str]:
    return sorted(map(str, pd.unique(runs["metric_name"].dropna()))) if "metric_name" in runs.columns else []


def one_metric_per_task(runs: pd.DataFrame) -> bool:
    """True when no (model, task) has several metrics: all metrics can be ranked together."""
    if "metric_name" not in runs.columns or len(runs) == 0:
        return True
    return not (runs.groupby(["model_id", "task_id"], sort=False)["metric_name"].nunique() > 1).any()


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


def weights_editor(dataset_id: int, metric: str | None, categories: pd.Series, weights: pd.Series
                   ) -> tuple[tuple[str, float], ...] | None:
    """An editable task × weight table (defaults: the data's weights, 1 without a weight column); returns
    the weights when the user changed any, else None (the data's own)."""
    tasks = [str(t) for t in weights.index]
    table = pd.DataFrame({"Task": tasks, "Category": [DASH if pd.isna(c) else str(c) for c in categories],
                          "Weight": weights.to_numpy(dtype=float)})
    with st.expander("Task weights"):
        st.caption("A task's weight scales its part in every mean and win rate; 0 leaves it out.")
        # The key follows the task list, so edits never land on another dataset's or metric's rows.
        key = f"board_weights_{dataset_id}_{zlib.crc32(repr((metric, tasks)).encode()):08x}"
        edited = st.data_editor(table, hide_index=True, disabled=["Task", "Category"], key=key,
                                column_config={"Weight": st.column_config.NumberColumn(
                                    min_value=0.0, step=0.1, format="%.2f", required=True)})
    values = pd.to_numeric(edited["Weight"], errors="coerce").fillna(0.0).to_numpy(dtype=float)
    if len(values) == len(weights) and (values == weights.to_numpy(dtype=float)).all():
        return None
    return tuple(zip(tasks, values.tolist()))
