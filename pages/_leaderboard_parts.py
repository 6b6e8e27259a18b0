"""Helpers of the Leaderboard page: the cached aggregate and the task-weights editor (no page flow here)."""

from __future__ import annotations

import zlib

import pandas as pd
import streamlit as st

from core.filters import Filters
from core.filters import apply as apply_filters
from core.leaderboard.aggregate import Leaderboard, LeaderboardSettings, aggregate
from core.leaderboard.tables import DASH
from pages._shared import load_dataset


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
