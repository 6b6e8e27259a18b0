"""Helpers of the Annotators page: the cached report and its column formats (no page flow here)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.annotators.quality import response_times
from core.annotators.report import AnnotatorReport, build_prepared
from core.filters import Filters
from pages._filters import DIMENSION_HOW
from pages._request import prepared_request


@st.cache_data(show_spinner=False, max_entries=8)
def compute_annotators(db_path: str, dataset_id: int, sha256: str, filters: Filters, alpha: float,
                       policy: str = "exclude") -> tuple[AnnotatorReport, np.ndarray, list[str]]:
    """The annotators report of the request's votes (quality on one row per judged item, agreement of the
    analysed dimension, rankings before and after the annotator ``policy``: core.ranking.request, as
    ``evalboard annotators``), the response times of every vote, and the request's lines."""
    prepared = prepared_request(db_path, dataset_id, sha256, filters, policy, alpha)
    return (build_prepared(prepared, alpha), response_times(prepared.before_policy),
            prepared.lines(DIMENSION_HOW))


# Accuracy, CI and fast rate are text: "–" where an annotator has no golden answers or no timings.
QUALITY_FORMATS = {"Votes": st.column_config.NumberColumn(format="localized"),
                   "Golden": st.column_config.NumberColumn(format="localized")}
COMPARISON_FORMATS = {"Elo (all votes)": st.column_config.NumberColumn(format="%.1f"),
                      "Elo (qualified only)": st.column_config.NumberColumn(format="%.1f")}
