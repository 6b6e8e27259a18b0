"""Vote: compare two anonymous answers to the same question, one choice per dimension."""

import sqlite3

import streamlit as st

from core.campaign import TokenError
from pages._screen_clock import screen_clock
from pages._shared import through_router
from pages._vote_parts import (
    FLASH_KEY,
    NOT_VALID,
    admitted,
    current_item,
    forget_token,
    show_item,
    show_progress,
    token_gate,
    vote_form,
)

through_router()
st.title("Vote")
st.caption("Two answers to the same question, from two anonymous systems. Pick the better one for each "
           "question asked — or Tie, or Both bad.")
token = token_gate()
if token is None:
    st.info("Enter the token the campaign owner gave you to start.")
    st.stop()

try:
    if not admitted(token):  # wrong tokens, and waits after repeated ones, are shown by admitted()
        st.stop()
    item = current_item(token)
except TokenError:
    forget_token()
    st.error(NOT_VALID)
    st.stop()
except sqlite3.Error:
    st.error("The voting store is busy or unavailable right now. Reload the page in a moment.")
    st.stop()

flash = st.session_state.pop(FLASH_KEY, None)
if flash:
    st.info(flash)
if item is None:
    st.success("All done — thank you! There is nothing more to judge with this token.")
    st.stop()

show_progress(item.done, item.target)
show_item(item)
screen_clock(token, item.assignment_id)  # the vote's response time counts the time on screen only
vote_form(token, item)
