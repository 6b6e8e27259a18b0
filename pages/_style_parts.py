"""The Rankings page's scheme ``style`` (Style-controlled BT, docs/methods.md §11): the features to control
for, and the section that draws the :class:`core.ranking.style_view.StyleView` the page's core call returns."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from core.charts.style import coefficient_chart, slope_chart
from core.ranking import Ranking
from core.ranking.schemes.style import offered_features
from core.ranking.style_view import FEATURE_LABELS, HOW_TO_GET, StyleView
from core.schema import DEFAULT_STYLE_FEATURES
from pages._rankings_parts import note_no_interval, rating_table
from pages._shared import plain

FEATURES_KEY = "rank_features"


def sandwich_for_style() -> None:
    """The scheme toggle's callback: switching to style-controlled BT (or Crowd-BT) picks its default interval,
    the sandwich (docs/methods.md §11, §16), as `evalboard rank --scheme style` does; the user may still change it."""
    if st.session_state.get("rank_scheme") in ("style", "crowd"):  # Crowd-BT offers no bootstrap (§16)
        st.session_state["rank_ci"] = "sandwich"


def feature_choice(columns) -> tuple[str, ...]:
    """The features multiselect (what the dataset's columns offer; by default its style counts); stops the
    page with a hint when nothing is chosen."""
    offered = offered_features(columns)
    # The choice lives in the session state only (no widget default beside it): the dataset's style features
    # at first, and when another dataset offers fewer, what of the choice this one has.
    kept = [f for f in st.session_state.get(FEATURES_KEY, [f for f in offered if f in DEFAULT_STYLE_FEATURES])
            if f in offered]
    if kept != st.session_state.get(FEATURES_KEY):
        st.session_state[FEATURES_KEY] = kept
    missing = [f for f in DEFAULT_STYLE_FEATURES if f not in offered]
    chosen = st.multiselect("Control for", offered, key=FEATURES_KEY,
                            format_func=lambda f: FEATURE_LABELS.get(f, f).lower(),
                            help="Differences between the two answers the model holds equal: relative length and "
                                 "markdown (headers, list items, bold spans); position: the left slot. "
                                 + (f"Not in this dataset: {', '.join(missing)}; to add them, {HOW_TO_GET}."
                                    if missing else ""))
    if not chosen:
        none = len(missing) == len(DEFAULT_STYLE_FEATURES)
        st.info("Pick at least one feature to control for."
                + (f" This dataset carries no answer lengths or markdown counts: to control for them, {HOW_TO_GET}."
                   if none else ""))
        st.stop()
    return tuple(chosen)


def show_style(view: StyleView, ranking: Ranking) -> None:
    """Coefficients (table, sentences, chart), the slope chart, then the controlled ratings with the rank change."""
    st.subheader("Style effects")
    st.caption(f"Controlled for {', '.join(view.features) or 'nothing'}. Each feature is the relative difference "
               "d = (a − b)/(a + b + 1) between the left and right answers, standardised over the votes; the odds "
               f"multiplier is exp(β) per standard deviation with its {view.level} interval ({view.interval}).")
    for note in view.notes:
        st.info(plain(note), icon=":material/info:")
    st.dataframe(coefficient_table(view), hide_index=True, key="rank_style_coefficients",
                 column_config={c: st.column_config.NumberColumn(format=f) for c, f in COEFFICIENT_FORMATS.items()})
    st.markdown("\n".join(f"- {plain(c.sentence)}" for c in view.coefficients))
    st.plotly_chart(coefficient_chart(view, "Odds multiplier per standard deviation"),
                    key="rank_style_coefficient_chart")
    st.subheader("Rank without and with style control")
    if view.movers:
        st.caption("Moving most: " + ", ".join(f"{plain(m.model)} {m.plain_rank} → {m.controlled_rank}"
                                               for m in view.movers) + ".")
    st.plotly_chart(slope_chart(view, "Plain Bradley–Terry rank → style-controlled rank"), key="rank_style_slope")
    st.subheader("Ratings (style-controlled)")
    table, config = rating_table(ranking)
    change = {m.model: m for m in view.moves}
    table.insert(1, "Plain rank", [change[m].plain_rank for m in table["Model"]])
    table.insert(2, "Change", [change[m].change for m in table["Model"]])
    st.dataframe(table, column_config={**config, "Change": st.column_config.NumberColumn(format="%+d")},
                 hide_index=True, key="rank_table")
    missing = note_no_interval(ranking)
    if missing:
        st.info(plain(missing), icon=":material/info:")


COEFFICIENT_FORMATS = {"Odds ×": "%.3f", "CI low": "%.3f", "CI high": "%.3f", "β": "%.4f", "SE": "%.4f",
                       "Mean d": "%.4f", "SD d": "%.4f"}


def coefficient_table(view: StyleView) -> pd.DataFrame:
    return pd.DataFrame([{"Feature": c.label, "Odds ×": c.odds, "CI low": c.odds_low, "CI high": c.odds_high,
                          "β": c.estimate, "SE": c.se, "Mean d": c.mean, "SD d": c.sd,
                          "Direction": direction(c)}
                         for c in view.coefficients], columns=["Feature", *COEFFICIENT_FORMATS, "Direction"])


def direction(c) -> str:
    """Whether the data tells the effect's direction: its interval excludes 1, covers it, or is absent."""
    if c.direction_known:
        return "favoured" if c.odds > 1 else "penalised"
    return "unclear (CI covers 1)" if math.isfinite(c.odds_low) else "no interval (intervals: none)"
