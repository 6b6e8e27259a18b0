"""Campaign administration for the Data page, and the sidebar button that refreshes a campaign's votes.

``campaign_section()`` creates campaigns from uploaded files, hands out tokens (shown once, downloadable),
revokes them, shows progress per annotator and publishes the votes as a dataset.
``refresh_control(dataset)`` re-publishes the votes of the active campaign dataset (same name and id).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pandas as pd
import streamlit as st

from core.campaign import (CampaignError, campaign_of_dataset, connect, create_campaign, issue_tokens,
                           list_campaigns, progress, publish, read_answers, read_golden, revoke_token)
from core.cleaning import CleaningRules
from core.formats import csv_frame
from core.io import InputError
from core.store import Dataset, default_db_path
from pages._shared import plain, select_after_rerun

RULES = {"urls": "URLs", "citations": "citation markers", "emoji": "emoji", "whitespace": "extra whitespace"}
NEW_TOKENS = "campaign_new_tokens"  # (campaign name, [(annotator, token)]) shown once after creation
FLASH = "campaign_flash"


def campaign_section() -> None:
    flash = st.session_state.pop(FLASH, None)
    if flash:
        st.success(plain(flash))
    _show_new_tokens()
    try:
        _sections()
    except sqlite3.Error as exc:
        st.error(f"The campaign tables cannot be read right now ({plain(exc)}). Try again in a moment.")


def _sections() -> None:
    with closing(connect(default_db_path())) as conn:
        campaigns = list_campaigns(conn)
        tab_manage, tab_create = st.tabs(["Manage", "New campaign"])
        with tab_create:
            _create_form(conn)
        with tab_manage:
            if not campaigns:
                st.info("No voting campaign yet: create one under New campaign.")
            else:
                _manage(conn, campaigns)


def _create_form(conn: sqlite3.Connection) -> None:
    st.caption("Answers: CSV/JSONL with query_id, prompt, model, answer (optional category, game_id). "
               "Golden items: question, correct_answer, wrong_answer (optional category).")
    name = st.text_input("Campaign name", key="campaign_name")
    answers = st.file_uploader("Answers file", type=["csv", "jsonl", "json", "parquet"], key="campaign_answers")
    golden = st.file_uploader("Golden file (optional)", type=["csv", "jsonl", "json", "parquet"],
                              key="campaign_golden")
    left, middle, right = st.columns(3)
    dimensions = left.text_input("Dimensions (comma-separated)", value="overall", key="campaign_dimensions")
    rate = middle.number_input("Golden rate", min_value=0.0, max_value=0.9, value=0.1, step=0.05,
                               key="campaign_golden_rate", help="share of items that are golden questions")
    target = right.number_input("Items per annotator", min_value=1, value=100, step=10, key="campaign_target")
    left, right = st.columns(2)
    count = left.number_input("Tokens to issue", min_value=0, value=3, step=1, key="campaign_token_count")
    names = right.text_input("…or annotator names (comma-separated)", key="campaign_annotators")
    removed = st.multiselect("Remove from answers", options=list(RULES), default=list(RULES),
                             format_func=RULES.get, key="campaign_rules")
    active = st.checkbox("Active sampling", key="campaign_active",
                         help="prefer the pairs whose order is most uncertain under the current Bradley–Terry fit; "
                              "pair counts may then differ by a few instead of one")
    if not st.button("Create campaign", key="campaign_create", type="primary", disabled=answers is None):
        return
    try:
        answer_table = read_answers(answers, name=answers.name)
        golden_table = read_golden(golden, name=golden.name) if golden is not None else None
        campaign = create_campaign(conn, name, answer_table, golden_table,
                                   dimensions=[d for d in dimensions.split(",") if d.strip()],
                                   golden_rate=float(rate) if golden_table is not None else 0.0, target=int(target),
                                   cleaning=CleaningRules(**{rule: rule in removed for rule in RULES}),
                                   active_sampling=active)
        labels = [n.strip() for n in names.split(",") if n.strip()]
        issued = issue_tokens(conn, campaign, 0 if labels else int(count), labels)
    except InputError as exc:
        st.error("The campaign was not created.")
        st.code(str(exc), language=None, wrap_lines=True)
        return
    except CampaignError as exc:
        st.error(f"The campaign was not created: {plain(exc)}")
        return
    st.session_state[NEW_TOKENS] = (campaign.name, [(t.label, t.token) for t in issued])
    st.session_state[FLASH] = f"Campaign '{campaign.name}' created."
    st.rerun()


def tokens_csv(tokens: list[tuple[str, str]]) -> bytes:
    """``annotator,token`` rows through the project's CSV writer (a label or a token such as ``-x…``
    cannot run as a spreadsheet formula)."""
    return csv_frame(pd.DataFrame(tokens, columns=["annotator", "token"])).encode()


def _show_new_tokens() -> None:
    new = st.session_state.get(NEW_TOKENS)
    if not new:
        return
    name, tokens = new
    st.warning(f"Tokens for '{plain(name)}' — shown once: download them or copy them now.")
    table = pd.DataFrame(tokens, columns=["annotator", "token"])
    st.dataframe(table, hide_index=True, key="campaign_tokens_table")
    left, right = st.columns(2)
    left.download_button("Download tokens (CSV)", tokens_csv(tokens), file_name=f"{name}-tokens.csv",
                         mime="text/csv", key="campaign_tokens_download")
    if right.button("I have saved them", key="campaign_tokens_done"):
        st.session_state.pop(NEW_TOKENS, None)
        st.rerun()


def _manage(conn: sqlite3.Connection, campaigns) -> None:
    by_name = {c.name: c for c in campaigns}
    chosen = by_name[st.selectbox("Campaign", options=list(by_name), key="campaign_selected")]
    table = progress(conn, chosen)
    done = int(table["done"].sum())
    sampling = " · active sampling" if chosen.active_sampling else ""
    st.caption(f"Dimensions: {plain(', '.join(chosen.dimensions))} · golden rate {chosen.golden_rate:.0%}"
               f"{sampling} · "
               f"{done:,} items judged · target {chosen.target:,} per annotator")
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
    if right.button("Publish votes as a dataset", key="campaign_publish", type="primary", disabled=done == 0,
                    help="store the votes so far as the votes dataset 'campaign <name>'; each publish "
                         "replaces its votes (same name and id)"):
        _publish(chosen.name)


def _publish(name: str) -> None:
    dataset = _republish(name, "Not published")
    if dataset is not None:
        plural = "s" if dataset.rows != 1 else ""
        st.session_state[FLASH] = f"{dataset.rows:,} vote{plural} published as dataset '{dataset.name}' (now active)."
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
