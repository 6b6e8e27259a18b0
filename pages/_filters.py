"""The sidebar filters (game, dimension, category, date range) of the active dataset, and the annotator
policy every analysis page applies.

Widget keys carry the dataset id, so each dataset keeps its own selection across page switches and a
selection never meets another dataset's values. Pages read the same keys through :func:`active_filters`.
A votes dataset with several dimensions is analysed one dimension at a time (core.ranking.request): the
dimension is one choice, the first by default. The annotator policy is one choice for every page
(:func:`active_policy`), and so are the qualification rules (:func:`active_qualify`: golden and fast, plus
the sequential screen when switched on), so Rankings, Bias, Annotators, Decisions and Reports read the same votes.
"""

from __future__ import annotations

from datetime import date

import streamlit as st

from core import filters as core_filters
from core.filters import Filters
from core.store import Dataset, default_db_path
from pages._shared import load_dataset, plain

LABELS = {"game_id": "Game", "dimension": "Dimension", "category": "Category"}
POLICY_KEY = "annotator_policy"
SCREEN_KEY = "annotator_screen"  # the qualification rule "screen" on or off
SCREEN_RULES = "golden,fast,screen"
POLICY_LABELS = {"exclude": "Exclude unqualified annotators", "keep": "Keep every vote",
                 "downweight": "Down-weight unqualified annotators"}
DIMENSION_HOW = "choose another in the sidebar"
FILTER_COLUMNS = {"votes": ("game_id", "dimension", "category", "timestamp"), "eval_runs": ("category",)}


def _key(dataset: Dataset, column: str) -> str:
    return f"filter_{column}_{dataset.id}"


@st.cache_data(show_spinner=False, max_entries=16)
def _choices(db_path: str, dataset_id: int, sha256: str) -> dict[str, object]:
    # The whole dataset, not just the filter columns: the pages load it anyway, so this warms their cache.
    return core_filters.choices(load_dataset(db_path, dataset_id, sha256))


def choices_of(dataset: Dataset) -> dict[str, object]:
    if not any(c in dataset.columns for c in FILTER_COLUMNS.get(dataset.kind, ())):
        return {}
    return _choices(str(default_db_path()), dataset.id, dataset.sha256)


def sidebar_filters(dataset: Dataset | None) -> None:
    """Draw the filters of ``dataset`` (nothing for kinds without filterable columns)."""
    if dataset is None:
        return
    found = choices_of(dataset)
    if found:
        _draw_filters(dataset, found)
    if dataset.kind == "votes":
        policy_selector()


def _draw_filters(dataset: Dataset, found: dict[str, object]) -> None:
    st.markdown("**Filters**")
    for column, label in LABELS.items():
        if column == "dimension" and column in found:  # one at a time: an item counts once
            st.selectbox(label, found[column], key=_key(dataset, column), help="Votes judged on several "
                         "dimensions are analysed one dimension at a time, so that an item judged on two "
                         "dimensions counts once; the first is the default.")
        elif column in found:
            st.multiselect(label, found[column], key=_key(dataset, column), placeholder="All")
    if "timestamp" in found:
        first, last = found["timestamp"]
        st.date_input("Dates (UTC)", value=(first, last), min_value=first, max_value=last,
                      key=_key(dataset, "timestamp"), help="Votes from the first to the last day, inclusive. "
                      "Votes without a timestamp are left out once the range is narrowed.")
    current = active_filters(dataset)
    if current.active:
        st.caption(f"Filtered: {current.describe()}")


def policy_selector() -> None:
    """The annotator policy of every analysis (one value for all pages and datasets)."""
    if st.session_state.get(POLICY_KEY) not in POLICY_LABELS:
        st.session_state[POLICY_KEY] = "exclude"
    st.selectbox("Annotator policy", list(POLICY_LABELS), key=POLICY_KEY, format_func=POLICY_LABELS.get,
                 help="What every analysis does with the votes of unqualified annotators (golden accuracy below "
                      "0.60, or over 30% of answers under 3 s).")
    st.toggle("Screen annotators", key=SCREEN_KEY,
              help="Also count as unqualified the annotators whose votes a sequential test finds against the "
                   "ranking (reversed or random voting), without golden questions (docs/methods.md §17; "
                   "--qualify golden,fast,screen on the command line).")


def active_policy() -> str:
    """The annotator policy chosen in the sidebar (exclude until one is chosen)."""
    policy = st.session_state.get(POLICY_KEY)
    return policy if policy in POLICY_LABELS else "exclude"


def active_qualify() -> str | None:
    """The qualification rules chosen in the sidebar: None for the default (golden, fast), or with the screen."""
    return SCREEN_RULES if st.session_state.get(SCREEN_KEY) else None


def active_filters(dataset: Dataset | None) -> Filters:
    """The filters selected in the sidebar for ``dataset`` (empty when none)."""
    if dataset is None:
        return Filters()
    state = st.session_state
    picked = {column: tuple(state.get(_key(dataset, column)) or ()) for column in LABELS if column != "dimension"}
    picked["dimension"] = _dimension(dataset, state.get(_key(dataset, "dimension")))
    start = end = None
    dates = state.get(_key(dataset, "timestamp"))
    if dates:
        found = choices_of(dataset).get("timestamp")
        start, end = _range(tuple(dates), found)
    return Filters(picked["game_id"], picked["dimension"], picked["category"], start, end)


def _dimension(dataset: Dataset, chosen) -> tuple[str, ...]:
    """The dimension picked, or () for the default (the first): the analyses choose and name it then."""
    if isinstance(chosen, (list, tuple)):  # a selection kept from a multiselect
        chosen = chosen[0] if chosen else None
    if not chosen:
        return ()
    offered = choices_of(dataset).get("dimension") or []
    return () if not offered or chosen == offered[0] or chosen not in offered else (str(chosen),)


def _range(dates: tuple[date, ...], full: tuple[date, date] | None) -> tuple[date | None, date | None]:
    """(start, end) to filter on; None for a bound that keeps everything (so the cache is shared)."""
    if full is None or not dates:
        return None, None
    start = dates[0]
    end = dates[1] if len(dates) > 1 else full[1]  # half-picked (one click so far): from that day on
    return (start if start > full[0] else None), (end if end < full[1] else None)


def votes_header(dataset: Dataset, alpha_key: str, alpha_label: str = "α", alpha_help: str | None = None
                 ) -> tuple[Filters, float]:
    """A votes page's first row: the dataset and its sidebar filters, and the page's own α."""
    filters = active_filters(dataset)
    left, right = st.columns([4, 1])
    left.caption(f"Dataset **{plain(dataset.name)}** · {dataset.rows:,} votes rows"
                 + (f" · filtered: {plain(filters.describe())}" if filters.active else ""))
    alpha = float(right.number_input(alpha_label, min_value=0.001, max_value=0.5, value=0.05, step=0.01,
                                     format="%.3f", key=alpha_key, help=alpha_help))
    return filters, alpha
