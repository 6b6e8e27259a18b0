"""Leaderboard: rank the models of an EvalRuns dataset with task-bootstrap CIs and significance tests."""

import math

import streamlit as st

from core.charts import critical_difference_figure
from core.charts.runs import category_heatmap, leaderboard_bars, pairwise_matrix
from core.filters import apply as apply_filters
from core.leaderboard.render import friedman_sentences
from core.leaderboard.scores import LeaderboardError, metric_names, one_metric_per_task, pivot
from core.leaderboard.tables import bar_rows, board_table, category_means, pair_frame, pair_table, per_task_table
from core.stats.friedman import FriedmanError
from core.store import default_db_path
from pages._filters import active_filters
from pages._leaderboard_parts import cached_board, weights_editor
from pages._shared import active_dataset, load_dataset, plain, through_router

through_router()
st.title("Leaderboard")

dataset = active_dataset("eval_runs")
if dataset is None:
    other = active_dataset()
    judged = other is not None and other.kind == "preferences"
    st.info("The active dataset holds judged preferences against a baseline: their win rates are on the Judge page."
            if judged else "The leaderboard ranks EvalRuns (per-model, per-task scores). Choose an eval-runs "
            "dataset in the sidebar, or add one on the Data page.")
    st.stop()

db_path = str(default_db_path())
filters = active_filters(dataset)
runs = apply_filters(load_dataset(db_path, dataset.id, dataset.sha256), filters)
st.caption(f"Dataset {plain(dataset.name)}: {dataset.rows:,} rows"
           + (f" · filtered: {plain(filters.describe())}, {len(runs):,} rows kept" if filters.active else ""))
if len(runs) == 0:
    st.info("No rows match the sidebar filters: widen them to see a leaderboard.")
    st.stop()

RANK_LABELS = {"mean": "mean score", "win_rate": "win rate"}
with st.container(border=True):
    c1, c2, c3, c4, c5 = st.columns([2, 1, 1, 1, 1])
    rank_by = c1.radio("Rank by", list(RANK_LABELS), key="board_rank_by", horizontal=True,
                       format_func=RANK_LABELS.get)
    replicates = int(c2.number_input("Bootstrap B", min_value=50, max_value=20_000, value=500, step=100,
                                     key="board_bootstrap"))
    alpha = float(c3.number_input("α", min_value=0.001, max_value=0.5, value=0.05, step=0.01, format="%.3f",
                                  key="board_alpha"))
    seed = int(c4.number_input("Seed", min_value=0, value=0, step=1, key="board_seed"))
    stratified = c5.toggle("Stratified", key="board_stratified",
                           help="Resample tasks within each category (uncategorised tasks form one more stratum).")
    metric = None
    names = metric_names(runs)
    if len(names) > 1:
        together = one_metric_per_task(runs)
        options = ([None] if together else []) + names
        metric = st.selectbox("Metric", options, key="board_metric",
                              format_func=lambda m: "all (one metric per task)" if m is None else m)

try:
    scores, task_categories, data_weights = pivot(runs, metric)
    task_weights = weights_editor(dataset.id, metric, task_categories, data_weights)
    with st.spinner("Bootstrapping the leaderboard…"):
        board = cached_board(db_path, dataset.id, dataset.sha256, filters, rank_by, replicates, alpha, seed,
                             bool(stratified), metric, task_weights)
except (LeaderboardError, FriedmanError) as exc:
    st.error(f"No leaderboard for this dataset: {plain(exc)}")
    st.stop()

if not board.rows:
    st.info("This dataset has no scores to rank.")
    st.stop()

s = board.settings
st.caption(f"{board.n_models} models × {board.n_tasks} tasks"
           f"{'' if board.metric is None else f' · metric {plain(board.metric)}'} · ranked by "
           f"{RANK_LABELS[s.rank_by]} · {s.replicates:,} bootstrap replicates, α = {s.alpha:g}, seed {s.seed}"
           f"{' · stratified by category' if s.stratified else ''}{' · weighted tasks' if board.weighted else ''}")

st.subheader("Ranking")
st.dataframe(board_table(board), hide_index=True, key="board_table")
st.caption("Rank range: the rank interval over the task bootstrap (tasks scored by every model). Tie group: "
           "adjacent models whose paired difference is not significant share a group.")
if any(r.interval_note for r in board.rows):
    st.info("Some models have no interval (the reason is in the table): one task, or scores that never vary, "
            "give a bootstrap nothing to resample. Their rank ranges cover every model they cannot be told from.",
            icon=":material/info:")
st.plotly_chart(leaderboard_bars(bar_rows(board), title=f"Mean score with {round((1 - alpha) * 100)}% CI"),
                key="board_bars")
if board.categories:
    st.plotly_chart(category_heatmap(category_means(board)), key="board_heatmap")

st.subheader("Pairwise differences")
if board.pairwise:
    st.metric("Significant pairs", f"{board.significant_pairs} of {len(board.pairwise)}",
              help=f"Pairs whose paired bootstrap CI of the mean difference excludes 0 (α = {s.alpha:g}). A pair "
                   "without an interval (fewer than two shared tasks, or the same difference on every task) "
                   "gets no verdict.")
    models = [r.model_id for r in board.rows]
    st.plotly_chart(pairwise_matrix(pair_frame(board), models,
                                    title="Mean difference, row − column (* = significant)"), key="board_pairs")
    st.dataframe(pair_table(board), hide_index=True, key="board_pair_table")
    st.caption("The paired CI resamples the shared tasks together; the unpaired one resamples each model on its "
               "own, which ignores that the tasks are the same and is usually wider.")
else:
    st.info("One model only: no pairs to compare.")

st.subheader("Friedman test")
f = board.friedman
if f is None:
    st.info("Friedman / Nemenyi need at least 2 models and 2 tasks scored by every model.")
else:
    for sentence in friedman_sentences(f):
        st.markdown(sentence)
    if f.reject:
        if math.isfinite(f.cd):
            st.plotly_chart(critical_difference_figure(f.mean_ranks, f.cd), key="board_cd")

with st.expander("Per-task scores"):
    st.caption("One row per task, one column per model; an empty cell is a task the model was not scored on.")
    st.dataframe(per_task_table(scores), hide_index=True, key="board_pivot",
                 column_config={str(m): st.column_config.NumberColumn(format="%.3f") for m in scores.index})
