"""Scheme crowd on the dashboard (docs/methods.md §16): the reliability table under a Crowd-BT ranking
(Rankings page) and every annotator's reliability η next to golden accuracy (Annotators page)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.filters import Filters
from core.ranking import Ranking, RankingError, RankSettings
from core.ranking.crowd_view import reliability_frame, reliability_with_golden
from core.ranking.inputs import rank_prepared
from core.store import default_db_path
from pages._request import prepared_request
from pages._shared import plain

SHARE = st.column_config.NumberColumn(format="%.3f")
CAPTION = ("Reliability η (Crowd-BT): the chance an annotator votes by the true order rather than the reverse, "
           "fitted jointly with the ratings without golden questions; 0.5 is a coin, below 0.5 votes reversed.")


def reliability_table(ranking: Ranking) -> pd.DataFrame:
    level = f"{round((1 - ranking.settings.alpha) * 100)}%"
    frame = reliability_frame(ranking)
    return pd.DataFrame({"Annotator": frame["annotator_id"], "Reliability η": frame["reliability"],
                         f"CI low ({level})": frame["ci_low"], f"CI high ({level})": frame["ci_high"],
                         "Votes": frame["n_votes"]})


def show_crowd(ranking: Ranking, show_ranking) -> None:
    """Rankings page, scheme crowd: the Crowd-BT and plain ratings side by side, the reliabilities below."""
    crowd_col, plain_col = st.columns(2)
    with crowd_col:
        st.subheader("Crowd-BT")
        show_ranking(ranking, "rank")
    with plain_col:
        st.subheader("Plain Bradley–Terry")
        show_ranking(ranking.plain, "rank_plain")
    st.subheader("Annotator reliability")
    st.caption(CAPTION)
    table = reliability_table(ranking)
    st.dataframe(table, hide_index=True, key="rank_reliability",
                 column_config={c: SHARE for c in table.columns if c not in ("Annotator", "Votes")})


@st.cache_data(show_spinner=False, max_entries=8)
def compute_crowd(db_path: str, dataset_id: int, sha256: str, filters: Filters, alpha: float) -> Ranking | str:
    """Crowd-BT on every annotator's votes (policy keep: η is itself a verdict on each annotator), or why not."""
    prepared = prepared_request(db_path, dataset_id, sha256, filters, "keep")
    try:
        return rank_prepared(prepared, RankSettings("crowd", ci="sandwich", alpha=alpha))[0]
    except RankingError as exc:
        return str(exc)


def draw_crowd(dataset, filters: Filters, alpha: float, quality: pd.DataFrame) -> None:
    """Annotators page: η with its interval next to golden accuracy."""
    st.subheader("Reliability without golden questions (Crowd-BT)")
    with st.spinner("Fitting annotator reliabilities…"):
        ranking = compute_crowd(str(default_db_path()), dataset.id, dataset.sha256, filters, alpha)
    if isinstance(ranking, str):
        st.info(f"No reliabilities: {plain(ranking)}")
        return
    frame = reliability_with_golden(ranking, quality)
    golden = bool(frame["golden_accuracy"].notna().any())
    st.caption(CAPTION + " Every annotator's votes are used, whatever the annotator policy (`evalboard rank "
               "--scheme crowd --policy keep` gives the same figures)."
               + ("" if golden else " No annotator answered golden questions: η is the only measure here."))
    level = f"{round((1 - alpha) * 100)}%"
    table = pd.DataFrame({"Annotator": frame["annotator_id"], "Reliability η": frame["reliability"],
                          f"η low ({level})": frame["ci_low"], f"η high ({level})": frame["ci_high"],
                          "Votes": frame["n_votes"].astype("Int64")})
    if golden:  # side by side with golden accuracy (empty where an annotator has no golden answers)
        table = table.assign(**{"Golden": frame["n_golden"].astype("Int64"),
                                "Golden accuracy": frame["golden_accuracy"].astype(float),
                                f"Accuracy low ({level})": frame["golden_ci_low"].astype(float),
                                f"Accuracy high ({level})": frame["golden_ci_high"].astype(float)})
    st.dataframe(table, hide_index=True, key="annotators_crowd",
                 column_config={c: SHARE for c in table.columns if c not in ("Annotator", "Votes", "Golden")})
