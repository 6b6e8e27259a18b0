"""Campaign administration for the Data page, and the sidebar button that refreshes a campaign's votes.

``campaign_section()`` creates campaigns from uploaded files (the form is in ``pages._campaign_create``),
hands out tokens (shown once, downloadable), revokes them, shows progress per annotator and the overlap
so far, and publishes the votes as a dataset.
``refresh_control(dataset)`` re-publishes the votes of the active campaign dataset (same name and id).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pandas as pd
import streamlit as st

from core.campaign import CampaignError, campaign_of_dataset, issue_tokens, list_campaigns, publish
from core.campaign.store import overlap_count, progress, revoke_token
from core.campaign.summary import progress_sentence
from core.formats import csv_frame
from core.io import InputError
from core.store import Dataset, default_db_path
from core.store.connection import connect
from pages._campaign_create import create_form, sentence
from pages._campaign_target import target_section
from pages._shared import plain, select_after_rerun

NEW_TOKENS = "campaign_new_tokens"  # (campaign name, [(annotator, token)]) shown once after creation
FLASH = "campaign_flash"
FLASH_WARNINGS = "campaign_flash_warnings"


def campaign_section() -> None:
    flash = st.session_state.pop(FLASH, None)
    if flash:
        st.success(plain(flash))
    for warning in st.session_state.pop(FLASH_WARNINGS, []):
        st.warning(plain(sentence(warning)))
    show_new_tokens()
    try:
        _sections()
    except sqlite3.Error as exc:
        st.error(f"The campaign tables cannot be read right now ({plain(exc)}). Try again in a moment.")


def _sections() -> None:
    with closing(connect(default_db_path())) as conn:
        campaigns = list_campaigns(conn)
        tab_manage, tab_create = st.tabs(["Manage", "New campaign"])
        with tab_create:
            created = create_form(conn)
            if created is not None:
                st.session_state[NEW_TOKENS] = (created.campaign.name, [(t.label, t.token) for t in created.tokens])
                st.session_state[FLASH] = f"Campaign '{created.campaign.name}' created."
                st.session_state[FLASH_WARNINGS] = created.warnings
                st.rerun()
        with tab_manage:
            if not campaigns:
                st.info("No voting campaign yet: create one under New campaign.")
            else:
                _manage(conn, campaigns)


def tokens_csv(tokens: list[tuple[str, str]]) -> bytes:
    """``annotator,token`` rows through the project's CSV writer (a label or a token such as ``-x…``
    cannot run as a spreadsheet formula)."""
    return csv_frame(pd.DataFrame(tokens, columns=["annotator", "token"])).encode()


def show_new_tokens(state_key: str = NEW_TOKENS, key_prefix: str = "campaign") -> None:
    """The tokens of a campaign just made (``st.session_state[state_key]``: name, [(annotator, token)]),
    shown once with a download, until the owner says they are saved."""
    new = st.session_state.get(state_key)
    if not new:
        return
    name, tokens = new
    st.warning(f"Tokens for '{plain(name)}' — shown once: download them or copy them now.")
    table = pd.DataFrame(tokens, columns=["annotator", "token"])
    st.dataframe(table, hide_index=True, key=f"{key_prefix}_tokens_table")
    left, right = st.columns(2)
    left.download_button("Download tokens (CSV)", tokens_csv(tokens), file_name=f"{name}-tokens.csv",
                         mime="text/csv", key=f"{key_prefix}_tokens_download")
    if right.button("I have saved them", key=f"{key_prefix}_tokens_done"):
        st.session_state.pop(state_key, None)
        st.rerun()


def _manage(conn: sqlite3.Connection, campaigns) -> None:
    by_name = {c.name: c for c in campaigns}
    chosen = by_name[st.selectbox("Campaign", options=list(by_name), key="campaign_selected")]
    table = progress(conn, chosen)
    st.caption(plain(progress_sentence(chosen, table, overlap_count(conn, chosen))))
    target_section(conn, chosen)
    st.dataframe(table.drop(columns="target"), hide_index=True, key="campaign_progress",
                 column_config={"done": st.column_config.NumberColumn(format="%d"),
                                "golden_done": st.column_config.NumberColumn("golden", format="%d")})
    left, middle, right = st.columns(3)
    active = table.loc[~table["revoked"], "annotator"].tolist()
    who = left.selectbox("Annotator", options=active, key="campaign_revoke_who", index=None)
    try:
        if left.button("Revoke token", key="campaign_revoke", disabled=who is None):
            revoke_token(conn, chosen, who)
            st.session_state[FLASH] = f"The token of {who} is revoked."
            st.rerun()
        more = middle.number_input("More tokens", min_value=1, value=1, step=1, key="campaign_more")
        if middle.button("Issue tokens", key="campaign_issue"):
            issued = issue_tokens(conn, chosen, int(more))
            st.session_state[NEW_TOKENS] = (chosen.name, [(t.label, t.token) for t in issued])
            st.rerun()
    except CampaignError as exc:  # e.g. another owner's change in between
        st.error(plain(exc))
    if right.button("Publish votes as a dataset", key="campaign_publish", type="primary",
                    disabled=not table["done"].any(),
                    help="store the votes so far as the votes dataset 'campaign <name>'; each publish "
                         "replaces its votes (same name and id)"):
        _publish(chosen.name)


def _publish(name: str) -> None:
    dataset = _republish(name, "Not published")
    if dataset is not None:
        plural = "s" if dataset.rows != 1 else ""  # a row is one judgement: an item on one dimension
        st.session_state[FLASH] = (f"{dataset.rows:,} judgement{plural} published as dataset '{dataset.name}' "
                                   "(now active).")
        st.rerun()


def _republish(name: str, failure: str) -> Dataset | None:
    """Publish the campaign's votes and make its dataset active after the rerun; None on error (shown)."""
    try:
        dataset = publish(default_db_path(), name)
    except (CampaignError, InputError) as exc:
        st.error(f"{failure}: {plain(exc)}")
        return None
    except sqlite3.Error as exc:  # e.g. the store stayed locked past every retry: nothing was changed
        st.error(f"{failure}: the store could not be written ({plain(exc)}). Try again in a moment.")
        return None
    select_after_rerun(dataset.id)
    return dataset


def refresh_control(dataset: Dataset | None) -> None:
    """Sidebar button, shown only when the active dataset holds a campaign's votes: fetch the latest votes."""
    name = campaign_of_dataset(dataset) if dataset is not None else None
    if name is None:
        return
    if st.button("Refresh campaign votes", key="campaign_refresh", icon=":material/refresh:",
                 help=f"re-publish the votes of campaign '{name}' and analyse the latest"):
        if _republish(name, "Not refreshed") is not None:
            st.rerun()
