"""Bias: the biases human A/B votes really have (position, fatigue, exposure, length, pairing) and the
rankings after stratified and inverse-propensity corrections."""

import streamlit as st

from core.charts.bias import length_curve
from core.charts.votes import battle_heatmap, winrate_diff_heatmap, winrate_scatter
from core.formats import p_text
from core.store import default_db_path
from pages._bias_parts import CORRECTION_FORMATS, compute_bias, model_shares, style_pointer, tile, verdict
from pages._filters import active_policy, active_qualify, votes_header
from pages._prefetch import prefetch_vote_pages
from pages._shared import plain, through_router, votes_dataset_or_stop

through_router()
st.title("Bias")

dataset = votes_dataset_or_stop("The bias diagnostics need a votes dataset")
filters, alpha = votes_header(dataset, "bias_alpha")

with st.spinner("Running the diagnostics…"):
    view, request = compute_bias(str(default_db_path()), dataset.id, dataset.sha256, filters, alpha, active_policy(),
                                 active_qualify())
report = view.report
if report.n_votes == 0:
    st.info("No votes to diagnose" + (" after the sidebar filters: widen them." if filters.active else
                                     ": every vote is a golden question or the dataset is empty."))
    st.stop()
st.caption(f"{report.n_votes:,} analysed votes · " + " · ".join(map(plain, request)))

st.subheader("At a glance: position × time")
for column, spec in zip(st.columns(4), view.tiles):
    with column:
        tile(spec)

# Lazy tabs: only the open one is drawn (six charts at once cost the browser seconds on big data).
position, exposure, length, pairing, corrected, ipw = st.tabs(
    ["Position", "Time exposure", "Length", "Pairing", "Raw vs corrected", "IPW weights"], key="bias_tab",
    on_change="rerun")
if position.open:
    with position:
        if verdict(report.position):
            st.caption(f"Under inverse-propensity weights the left share is {report.position.ipw_share:.1%} "
                       f"(effective n {report.position.ipw_n_eff:,.0f}, {p_text(report.position.ipw_p_value)}).")
        model_shares(report.model_position, "on the left", "Per-model positions", "bias_left_chart")
if exposure.open:
    with exposure:
        verdict(report.order, "Order (fatigue) test")
        if model_shares(report.time_exposure, "early in a session", "Time exposure", "bias_early_chart"):
            st.caption(f"Expected share {report.time_exposure.p0:.3f} = the share of all votes cast early (before "
                       "the median time of the data).")
if length.open:
    with length:
        if verdict(report.length):
            style_pointer(view.style_pointer)
            st.plotly_chart(length_curve(*view.length, report.length.fit, alpha=alpha), key="bias_length_chart")
if pairing.open:
    with pairing:
        test = report.pairing
        if verdict(test):
            st.caption(f"{test.n_pairs:,} pairs · {test.zero_pairs:,} never compared · battles per pair from "
                       f"{test.min_count:,} to {test.max_count:,}.")
            st.plotly_chart(battle_heatmap(view.battles, title="Battles per pair"), key="bias_pairing_chart")
if corrected.open:
    with corrected:
        table = view.corrections
        if table is None:
            st.info("Corrections need votes between at least two models.")
        else:
            st.caption(f"Stratified: win rate averaged over the (side × period) strata; IPW: Bradley–Terry with "
                       f"inverse-propensity weights. {view.moved} of {len(table)} models change rank under a "
                       "correction.")
            st.dataframe(table, hide_index=True, column_config=CORRECTION_FORMATS, key="bias_corrections")
            a, b = st.columns(2)
            a.plotly_chart(winrate_scatter(view.raw, view.stratified), key="bias_scatter")
            b.plotly_chart(winrate_diff_heatmap(view.diff), key="bias_diff")
if ipw.open:
    with ipw:
        s = report.ipw
        if verdict(s):
            a, b, c, d = st.columns(4)
            a.metric("Kish effective sample size", f"{s.n_eff:,.0f}", help="(Σw)² / Σw²: the votes the weighted "
                     "data is worth.")
            b.metric("Design effect", f"{s.design_effect:.3f}", help="n / ESS: how much the weights inflate variance.")
            c.metric("Empty cells", f"{s.empty_cells:,} of {s.grid_cells:,}", help="Model × side × period cells "
                     "without votes: no weight can correct what was never shown.")
            d.metric("Truncated weights", f"{s.truncated:,}", help="Weights capped to keep the variance bounded.")

prefetch_vote_pages(dataset, filters)  # the other votes page, in the background
