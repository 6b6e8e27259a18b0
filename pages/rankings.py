"""Rankings: rate the models of the active votes dataset with any scheme, with intervals and heatmaps."""

import streamlit as st

from core.charts.votes import (
    battle_heatmap,
    forest_plot,
    rank_vs_dimension,
    winrate_heatmap,
)
from core.store import default_db_path
from pages._annotators_crowd import show_crowd
from pages._filters import active_filters, active_policy, active_qualify
from pages._prefetch import prefetch_vote_pages
from pages._rankings_parts import (
    BY,
    CI_LABELS,
    SCHEME_LABELS,
    compute,
    compute_groups,
    covariate_table,
    group_name,
    group_tables,
    is_elo,
    note_no_interval,
    rating_table,
    warnings,
)
from pages._shared import active_dataset, plain, through_router
from pages._style_parts import feature_choice, sandwich_for_style, show_style

through_router()
st.title("Rankings")

dataset = active_dataset("votes")
if dataset is None:
    st.info("Rankings need a votes dataset: pick one as the active dataset in the sidebar, or load one on the "
            "Data page (upload a file or load the sample datasets).")
    st.stop()

filters = active_filters(dataset)
st.caption(f"Dataset **{plain(dataset.name)}** · {dataset.rows:,} votes rows"
           + (f" · filtered: {plain(filters.describe())}" if filters.active else ""))
with st.container(border=True):
    scheme = st.radio("Scheme", list(SCHEME_LABELS), key="rank_scheme", format_func=SCHEME_LABELS.get,
                      horizontal=True, on_change=sandwich_for_style)  # and for Crowd-BT
    features = feature_choice(dataset.columns) if scheme == "style" else None
    annotators = active_policy()  # the sidebar's, for every page
    a, b, c = st.columns(3)
    ci = a.selectbox("Confidence intervals", list(CI_LABELS), key="rank_ci", format_func=CI_LABELS.get)
    replicates = 1000
    if ci in ("bootstrap", "sandwich"):
        label = "Bootstrap replicates" if ci == "bootstrap" else "Draws for rank intervals"
        replicates = int(b.number_input(label, min_value=50, max_value=20_000, value=1000, step=100,
                                        key="rank_bootstrap"))
    seed = int(c.number_input("Seed", min_value=0, max_value=2**31 - 1, value=0, step=1, key="rank_seed"))

try:
    with st.spinner("Ranking…"):
        result = compute(str(default_db_path()), dataset.id, dataset.sha256, filters, scheme, ci, replicates,
                         seed, annotators, features, active_qualify())
except ValueError as exc:  # RankingError is a ValueError: the message says what to change
    st.error(f"The ranking could not be computed: {plain(exc)}")
    st.stop()

ranking = result["ranking"]
for warning in warnings(ranking):
    st.warning(warning)
summary = f"{SCHEME_LABELS[scheme]}: {ranking.n_models} models from " + " · ".join(map(plain, result["request"]))
if ranking.policy.models_without_votes:
    summary += f" · no votes for {', '.join(map(plain, ranking.policy.models_without_votes))}"
st.caption(summary)
unqualified = ranking.policy.unqualified_annotators
if unqualified:  # by the names their owner gave them, where the store has them
    names = unqualified
    st.caption("Unqualified annotators: " + ", ".join(map(plain, names[:12])) + (" …" if len(names) > 12 else ""))


def show_ranking(r, key: str) -> None:
    table, config = rating_table(r)
    st.dataframe(table, column_config=config, hide_index=True, key=f"{key}_table")
    missing = note_no_interval(r)
    if missing:
        st.info(plain(missing), icon=":material/info:")


if result["style"] is not None:
    show_style(result["style"], ranking)
elif scheme == "crowd":
    show_crowd(ranking, show_ranking)
elif ranking.plain is not None:
    st.subheader("Covariates")
    st.caption("Log-odds effects the adjusted model estimates alongside the ratings (positive: favoured).")
    st.dataframe(covariate_table(ranking), hide_index=True, key="rank_covariates",
                 column_config={"Estimate": st.column_config.NumberColumn(format="%.4f"),
                                "SE": st.column_config.NumberColumn(format="%.4f")})
    adjusted_col, plain_col = st.columns(2)
    with adjusted_col:
        st.subheader("Adjusted")
        show_ranking(ranking, "rank")
    with plain_col:
        st.subheader("Plain Bradley–Terry")
        show_ranking(ranking.plain, "rank_plain")
else:
    st.subheader("Ratings")
    show_ranking(ranking, "rank")

value_label = "Elo" if is_elo(ranking) else "win rate"
if ci == "none":
    st.caption("No intervals were computed (confidence intervals: none); the plot shows the point estimates.")
st.plotly_chart(forest_plot(ranking.frame(), value_label=value_label), key="rank_forest")

matrices = result["matrices"]
# Lazy tabs: only the open one draws its heatmap (each is a chart the browser would otherwise render).
observed, predicted, battles = st.tabs(["Observed win rates", "BT-predicted win rates", "Battles"],
                                       key="rank_matrix_tab", on_change="rerun")
if observed.open:
    observed.plotly_chart(winrate_heatmap(matrices["observed"], matrices["battles"], title="Observed win rate"),
                          key="rank_observed")
if predicted.open:
    predicted.caption("P(row beats column) from the Bradley–Terry Elo ratings"
                      + ("" if is_elo(ranking) else " (a plain BT fit of the same votes)") + ".")
    predicted.plotly_chart(winrate_heatmap(matrices["predicted"], matrices["battles"],
                                           title="BT-predicted win rate"), key="rank_predicted")
if battles.open:
    battles.plotly_chart(battle_heatmap(matrices["battles"]), key="rank_battles")

# Per-group rankings in lazy tabs: each is a set of refits, computed when its tab is opened.
group_columns = [by for by in BY if by in dataset.columns]
for by, tab in zip(group_columns, st.tabs([f"Rank per {group_name(by)}" for by in group_columns],
                                          key="rank_group_tab", on_change="rerun")):
    if not tab.open:
        continue
    with tab, st.spinner(f"Ranking per {group_name(by)}…"):
        groups = compute_groups(str(default_db_path()), dataset.id, dataset.sha256, filters, scheme, seed,
                                annotators, unqualified, by, features, active_qualify())
    if isinstance(groups, str):
        tab.error(f"No per-{group_name(by)} ranking: {plain(groups)}")
        continue
    table, ratings, ranks = group_tables(groups, by)
    tab.caption(f"The same scheme fitted separately on each {group_name(by)} (no intervals, for speed).")
    tab.dataframe(table, hide_index=True, key=f"rank_by_{by}")
    if by == "dimension":
        tab.plotly_chart(rank_vs_dimension(ratings, ranks, value_label=value_label), key="rank_dimension_chart")

prefetch_vote_pages(dataset, filters)  # Bias and Annotators for the same votes, while this page is read
