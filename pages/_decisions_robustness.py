"""The Decisions page's Robustness tab: the fewest votes found whose removal changes the top model (or one pair's
order), who cast them, the ratings before and after, the votes and their CSV (docs/methods.md §13)."""

from __future__ import annotations

import streamlit as st

from core.decisions.render import TIE_NOTE
from core.decisions.view import RobustnessView, model_names, robustness_view
from core.filters import Filters
from core.ranking.request import PreparedVotes
from core.store import Dataset
from pages._filters import active_filters, active_policy
from pages._shared import plain

TOP, PAIR = "The top model", "A pair's order"
RATING_FORMATS = {c: st.column_config.NumberColumn(format="%.1f") for c in ("Rating before", "Rating after")}
RATING_FORMATS["Change"] = st.column_config.NumberColumn(format="%+.1f")


# The prepared votes are the page's cached resource; the key is what they were prepared from.
@st.cache_data(show_spinner=False, max_entries=16)
def cached_view(sha256: str, filters: Filters, policy: str, pair: tuple[str, str] | None,
                _prepared: PreparedVotes) -> RobustnessView:
    return robustness_view(_prepared, pair)


@st.cache_data(show_spinner=False, max_entries=8)
def cached_models(sha256: str, filters: Filters, policy: str, _prepared: PreparedVotes) -> tuple[str, ...]:
    return model_names(_prepared)


def draw_robustness(dataset: Dataset, prepared: PreparedVotes, alpha: float) -> None:
    """``alpha`` is not used: the count is a fact of the fit, not a test."""
    key = (dataset.sha256, active_filters(dataset), active_policy())
    question = st.segmented_control("Question", [TOP, PAIR], default=TOP, key="robustness_question",
                                    help="What dropping votes should change: which model is first, or the order "
                                    "of two models you choose (evalboard robustness --pair A,B).")
    pair = _pair(cached_models(*key, prepared)) if question == PAIR else None
    if question == PAIR and pair is None:
        return
    with st.spinner("Searching for the fewest votes that change it…"):
        view = cached_view(*key, pair, prepared)
    if view.reason:
        st.info(f"No robustness answer: {plain(view.reason)}.")
        return
    _headline(view)
    if not view.found:
        st.caption(plain(view.search_note))
        return
    st.dataframe(view.ratings, hide_index=True, column_config=RATING_FORMATS, key="robustness_ratings")
    st.caption(plain(f"{view.search_note} {TIE_NOTE} Ratings on the Elo scale of `evalboard rank`."))
    if view.who:
        st.markdown("**Who cast these votes**")
        for column, (title, table) in zip(st.columns(len(view.who)), view.who.items()):
            column.dataframe(table, hide_index=True, key=f"robustness_by_{title}")
    st.markdown(f"**The {len(view.votes):,} votes** (row: the vote's position among the analysed votes, 1 = first)")
    st.dataframe(view.votes, hide_index=True, key="robustness_votes")
    st.download_button("Download these votes (CSV)", view.csv, file_name="robustness_votes.csv", mime="text/csv",
                       icon=":material/download:", key="robustness_csv")


def _pair(models: tuple[str, ...]) -> tuple[str, str] | None:
    if len(models) < 2:
        st.info("A pair needs votes between at least two models.")
        return None
    a, b = st.columns(2)
    first = a.selectbox("Model A", models, index=0, key="robustness_pair_a")
    second = b.selectbox("Model B", [m for m in models if m != first], index=0, key="robustness_pair_b")
    return first, second


def _headline(view: RobustnessView) -> None:
    result = view.result
    leader, count, share, overtaker, verified = st.columns(5)
    leader.metric("Ahead now" if result.pair else "Top model", result.top_model)
    count.metric("Votes to drop", "none found" if result.flip_votes is None else f"{result.flip_votes:,}",
                 help="The fewest votes found whose removal changes it"
                 + (" (the exact minimum: every smaller set was tried)." if result.exact_minimum else
                    " (an upper bound found by a search)."))
    share.metric("Share of the votes", "–" if result.flip_share is None else f"{result.flip_share:.3%}",
                 help=f"Of the {result.n_votes:,} analysed votes.")
    overtaker.metric("Overtaken by", result.flipped_to or "–")
    verified.metric("Confirmed", ("refit" + (", exact minimum" if result.exact_minimum else ""))
                    if result.verified else "–", help="A refit without these votes changes the order; exact "
                    "minimum: every smaller set of votes was tried.")
    st.markdown(plain(view.headline))
