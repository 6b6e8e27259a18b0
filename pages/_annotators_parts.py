"""Helpers of the Annotators page: the cached report, its column formats, and the sequential screen section."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.annotators.quality import response_times
from core.annotators.render import screen_sentence, screen_table
from core.annotators.report import AnnotatorReport, build_prepared
from core.annotators.screen import ScreenResult
from core.charts.annotators import screen_path
from core.filters import Filters
from pages._filters import DIMENSION_HOW
from pages._request import prepared_request


@st.cache_data(show_spinner=False, max_entries=8)
def compute_annotators(db_path: str, dataset_id: int, sha256: str, filters: Filters, alpha: float,
                       policy: str = "exclude", qualify: str | None = None
                       ) -> tuple[AnnotatorReport, np.ndarray, list[str]]:
    """The annotators report of the request's votes (quality on one row per judged item, agreement of the
    analysed dimension, rankings before and after the annotator ``policy``: core.ranking.request, as
    ``evalboard annotators``), the response times of every vote, and the request's lines."""
    prepared = prepared_request(db_path, dataset_id, sha256, filters, policy, alpha, qualify)
    return (build_prepared(prepared, alpha), response_times(prepared.before_policy),
            prepared.lines(DIMENSION_HOW))


# Accuracy, CI and fast rate are text: "–" where an annotator has no golden answers or no timings.
QUALITY_FORMATS = {"Votes": st.column_config.NumberColumn(format="localized"),
                   "Golden": st.column_config.NumberColumn(format="localized")}
COMPARISON_FORMATS = {"Elo (all votes)": st.column_config.NumberColumn(format="%.1f"),
                      "Elo (qualified only)": st.column_config.NumberColumn(format="%.1f")}
SCREEN_FORMATS = {"log LR at flag": st.column_config.NumberColumn(format="%.2f"),
                  "Highest log LR": st.column_config.NumberColumn(format="%.2f")}


def draw_screen(screen: ScreenResult | None) -> None:
    """The "Sequential screen" section: who was flagged and when, and one annotator's running log-LR."""
    st.subheader("Sequential screen")
    if screen is None or screen.reason is not None:
        st.info(f"No screen: {screen.reason if screen is not None else 'no votes'}.")
        return
    st.caption(screen_sentence(screen) + " Flagged annotators count as unqualified only under the qualification "
               "rule screen: the sidebar's *Screen annotators* switch, or `--qualify golden,fast,screen` on the "
               "command line.")
    rows = screen.annotators
    flagged = rows[rows["flagged"]]
    a, b = st.columns(2)
    a.metric("Annotators screened", f"{len(rows):,}")
    b.metric("Flagged", f"{len(flagged):,}", help=f"At most α = {screen.alpha:g} of honest annotators expected.")
    if len(flagged):
        st.dataframe(screen_table(screen), hide_index=True, column_config=SCREEN_FORMATS, key="annotators_screen")
    # flagged first (earliest flag first), then the others by how close they came to the line
    order = pd.concat([flagged.sort_values(["flagged_at_vote", "annotator_id"]),
                       rows[~rows["flagged"]].sort_values(["max_log_lr", "annotator_id"], ascending=[False, True])])
    choice = st.selectbox("Annotator", order["annotator_id"].tolist(), key="annotators_screen_pick",
                          help="Flagged annotators first, then the others by their highest log likelihood ratio.")
    row = rows[rows["annotator_id"] == choice].iloc[0]
    st.plotly_chart(screen_path(screen.running_log_lr(choice), screen.threshold, choice,
                                int(row["flagged_at_vote"])), key="annotators_screen_path")
