"""The Decisions page's Drift tab: each model's rating per period with intervals, which models changed over
time (Holm-adjusted), and the rating-over-time chart (docs/methods.md §15)."""

from __future__ import annotations

import streamlit as st

from core.charts.drift import drift_chart
from core.decisions.drift import DEFAULT_MIN_VOTES
from core.decisions.drift_view import DriftView, drift_view, has_timestamps
from core.filters import Filters
from core.ranking.request import PreparedVotes
from core.store import Dataset
from pages._filters import active_filters, active_policy, active_qualify
from pages._shared import plain

CALENDAR = {"Week": "week", "Day": "day", "Month": "month"}
BLOCKS = "Blocks of N votes"
MODEL_FORMATS = {"p": st.column_config.NumberColumn(format="%.2g"),
                 "p (Holm)": st.column_config.NumberColumn(format="%.2g"),
                 **{c: st.column_config.NumberColumn(format="%.0f") for c in ("Overall Elo", "First rated",
                                                                              "Last rated")},
                 "Changed": st.column_config.CheckboxColumn()}


# The prepared votes are the page's cached resource; the key is what they were prepared from.
@st.cache_data(show_spinner=False, max_entries=16)
def cached_view(sha256: str, filters: Filters, policy: str, qualify: str | None, period: str, alpha: float,
                min_votes: int, _prepared: PreparedVotes) -> DriftView:
    return drift_view(_prepared, period, alpha, min_votes)


@st.cache_data(show_spinner=False, max_entries=8)
def cached_has_timestamps(sha256: str, filters: Filters, policy: str, qualify: str | None,
                          _prepared: PreparedVotes) -> bool:
    return has_timestamps(_prepared)


def draw_drift(dataset: Dataset, prepared: PreparedVotes, alpha: float) -> None:
    key = (dataset.sha256, active_filters(dataset), active_policy(), active_qualify())
    timed = cached_has_timestamps(*key, prepared)
    if not timed:
        st.info("These votes have no timestamps, so there are no days, weeks or months: the periods are blocks "
                "of N consecutive votes in file order.")
    period = _period(timed)
    min_votes = int(st.number_input("Votes a model needs in a period", min_value=1, value=DEFAULT_MIN_VOTES,
                                    step=5, key="drift_min_votes", help="Fewer votes: no rating in that period "
                                    "(evalboard drift --min-votes)."))
    with st.spinner("Fitting every period…"):
        view = cached_view(*key, period, alpha, min_votes, prepared)
    if view.reason:
        st.info(f"No drift answer: {plain(view.reason)}.")
        return
    st.markdown(plain(view.headline))
    st.dataframe(view.models, hide_index=True, column_config=MODEL_FORMATS, key="drift_models")
    names = [m.model for m in view.result.models]
    chosen = st.multiselect("Models in the chart", names, default=list(view.chart_models), key="drift_chart_models",
                            help="By default the models that changed and the best-rated few.")
    st.plotly_chart(drift_chart(view.result, chosen), key="drift_chart")
    with st.expander(f"Periods ({len(view.periods)})"):
        st.dataframe(view.periods, hide_index=True, key="drift_periods")
    st.caption(plain(view.method))
    st.download_button("Download ratings per period (CSV)", view.csv, file_name="drift.csv", mime="text/csv",
                       icon=":material/download:", key="drift_csv")


def _period(timed: bool) -> str:
    choices = [*CALENDAR, BLOCKS] if timed else [BLOCKS]
    left, right = st.columns([3, 1])
    chosen = left.segmented_control("Period", choices, default=choices[0], key="drift_period",
                                    help="Calendar periods of the votes' times (UTC; ISO weeks), or blocks of N "
                                    "votes in time order (evalboard drift --period).") or choices[0]
    if chosen != BLOCKS:
        return CALENDAR[chosen]
    size = int(right.number_input("N votes", min_value=2, value=5000, step=500, key="drift_block"))
    return f"{size}-votes"
