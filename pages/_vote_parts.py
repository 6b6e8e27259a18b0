"""The Vote page's pieces: the token gate (with its throttle), the current item, the vote form.

Model identities never reach this layer: :class:`core.campaign.ServedItem` carries the prompt and the two
cleaned answers only, and widget keys use the item's number. Answers are drawn with ``st.markdown``
without ``unsafe_allow_html``, so HTML in an answer is shown as text, never run.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing

import streamlit as st

from core.campaign import CHOICES, ServedItem, record_vote, serve_next, throttle
from core.campaign.headings import demote_headings
from core.campaign.store import CampaignError, TokenError, campaign_for_token, token_hash
from core.store.connection import connect, default_db_path

TOKEN_KEY = "vote_token"
ON_SCREEN_KEY = "vote_on_screen"  # (token, item number) this session shows: its clock keeps running across reruns
FLASH_KEY = "vote_flash"
ACCEPTED_KEY = "vote_accepted"  # hash of the token this session accepted: never throttled again
REJECTED_KEY = "vote_rejected"  # hash of the last wrong token: a rerun with it still typed does not count twice
FAILURES_KEY = "vote_failures"  # this session's wrong tokens (core.campaign.throttle.Failures)
NOT_VALID = "This token is not valid (unknown or revoked). Check it, or ask the campaign owner."


def token_gate() -> str | None:
    """The token input; the stripped token once one is typed."""
    token = st.text_input("Your annotator token", type="password", key=TOKEN_KEY,
                          help="The campaign owner gives each annotator a token.")
    # A token copied from the tokens CSV may keep the apostrophe that stops a spreadsheet from reading
    # "-abc…" as a formula; tokens never contain one, so it is dropped.
    return token.strip().removeprefix("'").strip() or None


def client() -> str | None:
    """Where this session's requests come from (an anonymous key; see core.campaign.throttle.client_id)."""
    return throttle.client_id(st.context.ip_address, dict(st.context.headers))


def admitted(token: str) -> bool:
    """True when ``token`` may vote; otherwise shows why (wrong, or wait first) and returns False.

    Only a token this session has not accepted yet is checked, and only when neither this session nor
    this client has to wait after repeated wrong tokens (core.campaign.throttle).
    """
    digest = token_hash(token)
    if st.session_state.get(ACCEPTED_KEY) == digest:
        return True
    if st.session_state.get(REJECTED_KEY) == digest:
        st.error(NOT_VALID)
        return False
    now, who = throttle.clock(), client()
    session = st.session_state.get(FAILURES_KEY, throttle.Failures())
    with closing(connect(default_db_path())) as conn:
        wait = max(session.wait(now), throttle.client_failures(conn, who).wait(now) if who else 0.0)
        if wait > 0:
            st.error(throttle.wait_message(wait))
            return False
        try:
            campaign_for_token(conn, token)
        except TokenError:
            st.session_state[FAILURES_KEY] = session.failed(now)
            if who:
                throttle.record_client_failure(conn, who, now)
            st.session_state[REJECTED_KEY] = digest
            st.error(NOT_VALID)
            return False
    st.session_state[ACCEPTED_KEY] = digest
    return True


def current_item(token: str) -> ServedItem | None:
    """The item to show: asked of the store on every run, so a vote stored by an interrupted run, a double
    click or another tab is never shown again; None when nothing is left.

    Raises TokenError for a token that is unknown or revoked.
    """
    shown = st.session_state.get(ON_SCREEN_KEY)
    with closing(connect(default_db_path())) as conn:
        item = serve_next(conn, token, on_screen=shown[1] if shown and shown[0] == token else None)
    st.session_state[ON_SCREEN_KEY] = (token, item.assignment_id) if item else None
    return item


def forget_item() -> None:
    st.session_state.pop(ON_SCREEN_KEY, None)


def forget_token() -> None:
    """The accepted token stopped working (revoked): it must pass the gate again."""
    forget_item()
    st.session_state.pop(ACCEPTED_KEY, None)


def show_progress(done: int, target: int) -> None:
    st.progress(min(1.0, done / max(target, 1)), text=f"{done:,} / {target:,} done")


def show_item(item: ServedItem) -> None:
    """The question and the two answers; their own headings are drawn smaller than the "Answer A/B" labels."""
    st.markdown("**Question**")
    with st.container(border=True):
        st.markdown(demote_headings(item.prompt))
    left, right = st.columns(2)
    for column, title, text in ((left, "Answer A", item.answer_a), (right, "Answer B", item.answer_b)):
        with column:
            st.subheader(title)
            with st.container(border=True):
                st.markdown(demote_headings(text))  # never unsafe_allow_html: answer text must not inject HTML


def vote_form(token: str, item: ServedItem) -> None:
    """One choice per dimension and Submit; a stored vote moves on to the next item."""
    keys = {dimension: f"vote_{item.assignment_id}_{i}" for i, dimension in enumerate(item.dimensions)}
    with st.form(key=f"vote_form_{item.assignment_id}", border=False):
        for dimension, key in keys.items():
            st.radio(f"Which answer is better — {dimension}?" if len(keys) > 1 else "Which answer is better?",
                     options=list(CHOICES), index=None, horizontal=True, key=key)
        submitted = st.form_submit_button("Submit", type="primary", key=f"vote_submit_{item.assignment_id}")
    if not submitted:
        return
    chosen = {dimension: st.session_state.get(key) for dimension, key in keys.items()}
    missing = [dimension for dimension, choice in chosen.items() if choice is None]
    if missing:
        st.warning("Choose A, B, Tie or Both bad for: " + ", ".join(missing))
        return
    try:
        with closing(connect(default_db_path())) as conn:
            record_vote(conn, token, item.assignment_id, {d: CHOICES[c] for d, c in chosen.items()})
    except TokenError:
        forget_token()
        st.error("This token is no longer valid: the vote was not stored. Ask the campaign owner.")
        return
    except CampaignError:
        st.session_state[FLASH_KEY] = "That item was already answered elsewhere; here is the next one."
    except sqlite3.Error:
        st.error("The vote could not be saved right now. Please submit again.")
        return
    forget_item()
    st.rerun()
