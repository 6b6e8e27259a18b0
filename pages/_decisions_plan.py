"""The Decisions page's Plan tab: how many more votes would tell each pair of neighbours in the ranking apart,
on the pair itself or spread by the campaign scheduler, and the smallest gap the votes detect (docs/methods.md §14)."""

from __future__ import annotations

import streamlit as st

from core.decisions.plan import DEFAULT_POWER, NOTE_SCHEDULED, Plan, plan
from core.decisions.plan_render import METHOD_NOTE, pairs_frame, sentence
from core.errors import EvalBoardError
from core.filters import Filters
from core.ranking.request import PreparedVotes
from core.store import Dataset
from pages._filters import active_filters, active_policy, active_qualify
from pages._shared import plain

COLUMNS = {"Gap (Elo)": st.column_config.NumberColumn(format="%.1f"),
           "p": st.column_config.NumberColumn(format="%.3g"),
           "Votes between": st.column_config.NumberColumn(format="%.0f"),
           "Extra votes (direct)": st.column_config.NumberColumn(
               format="localized", help="Extra votes on this pair alone (empty: not reachable)."),
           "Extra votes (scheduled)": st.column_config.NumberColumn(
               format="localized", help="Extra votes in total when the scheduler spreads them evenly over every pair."),
           "Min. detectable gap (Elo)": st.column_config.NumberColumn(format="%.1f")}


# The prepared votes are the page's cached resource; the key is what they were prepared from.
@st.cache_data(show_spinner=False, max_entries=16)
def cached_plan(sha256: str, filters: Filters, policy: str, qualify: str | None, alpha: float, power: float,
                pair: tuple[str, str] | None, _prepared: PreparedVotes) -> Plan | str:
    try:
        return plan(_prepared, [pair] if pair else None, alpha=alpha, power=power)
    except EvalBoardError as exc:
        return str(exc)


def draw_plan(dataset: Dataset, prepared: PreparedVotes, alpha: float) -> None:
    key = (dataset.sha256, active_filters(dataset), active_policy(), active_qualify(), alpha)
    power = st.slider("Power", min_value=0.5, max_value=0.99, value=DEFAULT_POWER, step=0.01, key="plan_power",
                      help="The chance the test tells a pair apart when the gap is as large as estimated now "
                      "(evalboard plan --power).")
    if power <= alpha:
        st.info(f"The power must exceed α = {alpha:g}.")
        return
    with st.spinner("Planning…"):
        result = cached_plan(*key, power, None, prepared)
    if isinstance(result, str):
        st.info(f"No plan: {plain(result)}.")
        return
    st.markdown(f"**Neighbours in the ranking** (α = {alpha:g}, {round(100 * power)} % power)")
    st.dataframe(pairs_frame(result), hide_index=True, column_config=COLUMNS, key="plan_pairs")
    st.caption(plain(f"{NOTE_SCHEDULED} ({result.params['scheduled_pairs']:,} pairs). {METHOD_NOTE}"))
    pair = _pair(result.ranking)
    chosen = cached_plan(*key, power, pair, prepared)
    if isinstance(chosen, str):
        st.info(f"No plan: {plain(chosen)}.")
        return
    row = next(r for r in chosen.pairs if {r.model_a, r.model_b} == set(pair))
    direct, scheduled, detectable = st.columns(3)
    direct.metric("Extra votes on the pair", _count(row.extra_votes_direct))
    scheduled.metric("Extra votes, scheduled", _count(row.extra_votes_scheduled),
                     help="Spread evenly over every pair of models, as the campaign scheduler serves them.")
    detectable.metric("Smallest detectable gap", f"{row.min_detectable_elo:.0f} Elo",
                      help=f"The gap the current votes detect with {round(100 * power)} % power "
                      f"(now estimated: {row.gap_elo:.0f} Elo, p = {row.p_value:.3g}).")
    st.markdown(plain(sentence(row, alpha, power)))


def _count(n: int | None) -> str:
    return "not reachable" if n is None else f"{n:,}"


def _pair(ranking: tuple[str, ...]) -> tuple[str, str]:
    a, b = st.columns(2)
    first = a.selectbox("Model A", ranking, index=0, key="plan_pair_a")
    others = [m for m in ranking if m != first]
    second = b.selectbox("Model B", others, index=0, key="plan_pair_b")
    return first, second
