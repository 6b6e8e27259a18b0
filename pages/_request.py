"""One prepared request (core.ranking.request) shared by the votes pages: Rankings, Bias and Annotators.

The three pages analyse the same votes under the same dimension and annotator policy, so they read one
cached value instead of preparing the votes each (which, with the background prefetch of Bias and
Annotators, made the Rankings page's toggles wait on two more preparations of a million votes).
"""

from __future__ import annotations

import streamlit as st

from core.filters import Filters
from core.ranking.request import PreparedVotes, prepare_votes
from core.schema import STYLE_COUNT_COLUMNS
from pages._shared import load_dataset

# Every column a votes page reads. Free text (categories, prompts) is left out: it only costs time when a
# million rows are filtered and copied. vote_id breaks ties of equal timestamps in the Bias page's
# session halves; query ids tell judged items apart (core.ranking.request); the per-side style counts feed
# scheme style.
REQUEST_COLUMNS = ("vote_id", "query_id", "game_id", "dimension", "timestamp", "model_a", "model_b", "winner",
                   "annotator_id", "response_time_s", "len_a", "len_b", "is_golden", "golden_answer", "weight",
                   *STYLE_COUNT_COLUMNS)


@st.cache_resource(show_spinner=False, max_entries=4)
def prepared_request(db_path: str, dataset_id: int, sha256: str, filters: Filters, policy: str,
                     alpha: float = 0.05, qualify: str | None = None) -> PreparedVotes:
    """The request's prepared votes. A resource, not copied per use: the analyses never change a frame
    they are given. ``alpha`` is the level of the quality table's golden-accuracy intervals;
    ``qualify`` the qualification rules (None: golden, fast)."""
    votes = load_dataset(db_path, dataset_id, sha256)
    return prepare_votes(votes[[c for c in REQUEST_COLUMNS if c in votes.columns]], policy, filters,
                         alpha=alpha, qualify=qualify)
