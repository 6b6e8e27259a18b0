"""A campaign's rank target: the option of the "New campaign" form and its state on the Manage tab.

``rank_target_input()`` draws the option and returns the stored form (``top:N``, ``adjacent`` or None);
``target_section(conn, campaign)`` shows whether the target is reached and each target pair's gap and
interval, as ``evalboard campaign status`` prints them (core.campaign.target).
"""

from __future__ import annotations

import sqlite3

import pandas as pd
import streamlit as st

from core.campaign import Campaign
from core.campaign.target import target_state

CHOICES = {"none": "None (balanced)", "top": "Separate the top N", "adjacent": "Separate every adjacent pair"}


def rank_target_input() -> str | None:
    """The rank target chosen on the form (widget keys ``campaign_rank_target…``)."""
    left, right = st.columns(2)
    choice = left.selectbox("Rank target", options=list(CHOICES), format_func=CHOICES.get, key="campaign_rank_target",
                            help="serve the pairs whose votes help most to tell the chosen ranks apart (95% "
                                 "intervals of the Bradley–Terry gap excluding 0), once every pair has a vote; "
                                 "balanced serving again once the target is reached")
    top = right.number_input("N (ranks 1 to N, each from the next)", min_value=1, value=3, step=1,
                             key="campaign_rank_target_n", disabled=choice != "top")
    if choice == "top":
        return f"top:{int(top)}"
    return None if choice == "none" else choice


def target_section(conn: sqlite3.Connection, campaign: Campaign) -> None:
    """The campaign's rank target and how far its votes are from it (nothing without a target)."""
    state = target_state(conn, campaign)
    if state is None:
        return
    heading = f"Rank target {state.target}: {state.label}."
    if state.reached:
        since = (f"at {state.reached_at:,} votes; served balanced since" if state.reached_at is not None
                 else "served balanced from the scheduler's next refit, within a few votes")
        st.success(f"{heading} Reached ({since}): the target pairs were separated at {1 - state.alpha:.0%} "
                   f"intervals ({state.votes:,} votes so far).")
    elif state.warming_up:
        st.info(f"{heading} Not reached: served balanced until every pair has a vote ({state.votes:,} votes so far).")
    else:
        st.info(f"{heading} Not reached: serving the pairs whose votes help it most ({state.votes:,} votes so far).")
    table = pd.DataFrame([{"rank": p.rank, "higher": p.higher, "lower": p.lower, "gap (Elo)": p.gap,
                           "CI low": p.ci_low, "CI high": p.ci_high, "direct votes": p.votes,
                           "separated": p.separated} for p in state.pairs])
    if not table.empty:
        st.dataframe(table, hide_index=True, key="campaign_target_pairs",
                     column_config={c: st.column_config.NumberColumn(format="%+.1f")
                                    for c in ("gap (Elo)", "CI low", "CI high")})
