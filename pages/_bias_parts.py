"""Helpers of the Bias page: the cached view of the diagnostics and the small views it repeats (no page flow here)."""

from __future__ import annotations

import streamlit as st

from core.bias.diagnose import PRACTICAL_SHARE, Unavailable
from core.bias.view import BiasView, Tile, bias_view
from core.charts.bias import model_share_chart
from core.filters import Filters
from pages._filters import DIMENSION_HOW
from pages._request import prepared_request


@st.cache_data(show_spinner=False, max_entries=8)
def compute_bias(db_path: str, dataset_id: int, sha256: str, filters: Filters, alpha: float,
                 policy: str = "exclude", qualify: str | None = None) -> tuple[BiasView, list[str]]:
    """The Bias page's view of the request's votes (one dimension, the annotator ``policy`` applied:
    core.ranking.request, as ``evalboard bias`` reads them) and the request's lines."""
    prepared = prepared_request(db_path, dataset_id, sha256, filters, policy, qualify=qualify)
    return bias_view(prepared.votes, alpha), prepared.lines(DIMENSION_HOW)


def verdict(test, what: str = "") -> bool:
    """A diagnostic's verdict (when it has one), or why it could not run; True when it ran."""
    if isinstance(test, Unavailable):
        st.info(f"{what} not available: {test.reason}." if what else f"Not available: {test.reason}.")
        return False
    if hasattr(test, "verdict"):
        st.markdown(test.verdict)
    return True


def model_shares(test, share_label: str, what: str, key: str) -> bool:
    """A per-model exposure test: its verdict and the share chart (or why it is not available)."""
    if not verdict(test, what):
        return False
    st.plotly_chart(model_share_chart(test.per_model, test.p0, share_label,
                                      f"Share of each model's appearances {share_label}"), key=key)
    return True


def style_pointer(text: str | None) -> None:
    """Where the ranking with length held equal is, when the length test finds that length matters."""
    if text:
        st.info(text, icon=":material/straighten:")
        st.page_link("pages/rankings.py", label="Rankings: pick scheme Style-controlled BT",
                     icon=":material/emoji_events:")


def tile(spec: Tile) -> None:
    """One of the four at-a-glance tiles: headline number, p-value line, verdict badge."""
    with st.container(border=True):
        st.markdown(f"**{spec.title}**", help=spec.help_text)
        st.markdown(f"### {spec.value}")
        st.caption(spec.detail)
        if spec.flagged is None:
            st.badge("not available", color="gray")
        elif spec.flagged == "practical":
            st.badge("bias detected", icon=":material/warning:", color="red")
        elif spec.flagged == "small":
            st.badge(f"detectable but small (< {PRACTICAL_SHARE * 100:.0f} points)", icon=":material/info:",
                     color="orange")
        else:
            st.badge("no evidence of bias", icon=":material/check:", color="green")


CORRECTION_FORMATS = {"Votes": st.column_config.NumberColumn(format="localized"),
                      "Raw win rate": st.column_config.NumberColumn(format="%.3f"),
                      "Stratified win rate": st.column_config.NumberColumn(format="%.3f"),
                      "Elo (BT)": st.column_config.NumberColumn(format="%.1f"),
                      "Elo (IPW)": st.column_config.NumberColumn(format="%.1f")}
