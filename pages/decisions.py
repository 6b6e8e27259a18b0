"""Decisions: what the votes settle and what they do not — each tab answers one question a ranking leaves
open (how robust the top is to dropping a few votes). The votes are prepared once, as every votes page
prepares them (sidebar filters, dimension and annotator policy), and each tab draws from its own module."""

import streamlit as st

from core.store import default_db_path
from pages._decisions_drift import draw_drift
from pages._decisions_plan import draw_plan
from pages._decisions_robustness import draw_robustness
from pages._filters import DIMENSION_HOW, active_policy, active_qualify, votes_header
from pages._request import prepared_request
from pages._shared import plain, through_router, votes_dataset_or_stop

through_router()
st.title("Decisions")

dataset = votes_dataset_or_stop("The decision views need a votes dataset")
filters, alpha = votes_header(dataset, "decisions_alpha",
                              alpha_help="The significance level of the tabs' tests and intervals.")

with st.spinner("Preparing the votes…"):
    prepared = prepared_request(str(default_db_path()), dataset.id, dataset.sha256, filters, active_policy(),
                                qualify=active_qualify())
if prepared.counts()["n_judgements"] == 0:
    st.info("No votes to analyse" + (" after the sidebar filters: widen them." if filters.active else
                                    ": every vote is a golden question or the dataset is empty."))
    st.stop()
st.caption(" · ".join(map(plain, prepared.lines(DIMENSION_HOW))))

# Lazy tabs: only the open one computes. Tab order: Plan, Robustness, Drift.
planning, robustness, drifting = st.tabs(["Plan", "Robustness", "Drift"], key="decisions_tab",
                                         on_change="rerun")
if planning.open:
    with planning:
        draw_plan(dataset, prepared, alpha)
if robustness.open:
    with robustness:
        draw_robustness(dataset, prepared, alpha)
if drifting.open:
    with drifting:
        draw_drift(dataset, prepared, alpha)
