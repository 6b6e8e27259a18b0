"""The pool step of the Eval set page: an upload (or the demo pool) and its column mapping.

A file with a ``query``/``prompt``/``text`` column is read at once; the mapping step shows which
columns were read and lets the user name others (AlpacaEval's ``instruction`` and ``dataset``). A
file without a known text column is not read until the user confirms the proposed mapping."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.evalset.demo_pool import demo_pool
from core.evalset.pool import POOL_COLUMNS, read_pool, suggest_columns
from core.io import InputError
from core.io.mapping import peek
from pages._shared import plain

POOL, SEEN_UPLOAD, RAW, FAILURE = "evs_pool_frame", "evs_upload_seen", "evs_upload_raw", "evs_pool_failure"
COLUMNS = "evs_pool_columns"  # the mapping the pool was read with
NOT_IN_FILE = "— not in the file —"
LABELS = {"prompt": "**prompt** (the query text)", "query_id": "query_id", "category": "category"}


def pool_input(reset) -> pd.DataFrame | None:
    """The query pool: an upload (read as found, or through the mapping step), or the demo pool; kept in
    the session once read. Raises InputError (shown by the page) when the upload cannot be read."""
    upload = st.file_uploader("Query pool: CSV, TSV, JSON, JSONL with a query/prompt/text column (or any text "
                              "column, mapped below), or TXT (one query per line)",
                              type=["csv", "tsv", "json", "jsonl", "txt", "parquet"], key="evs_upload")
    left, right = st.columns([1, 3])
    if left.button("Use the demo pool", key="evs_demo"):
        st.session_state[POOL] = ("demo pool", demo_pool(2000))
        st.session_state.pop(FAILURE, None)
        reset()
    if upload is not None and st.session_state.get(SEEN_UPLOAD) != upload.file_id:
        st.session_state[SEEN_UPLOAD] = upload.file_id  # read once: a later demo choice is not overridden
        for key in (POOL, RAW, FAILURE, COLUMNS):
            st.session_state.pop(key, None)
        reset()
        _read(upload, {}, reset)
    if upload is not None and not upload.name.lower().endswith(".txt"):
        _mapping_step(upload, reset)
    if st.session_state.get(FAILURE):
        raise st.session_state[FAILURE]
    if POOL not in st.session_state:
        return None
    label, frame = st.session_state[POOL]
    right.caption(f"Pool: {len(frame):,} queries ({plain(label)})")
    return frame


def _read(upload, columns: dict[str, str], reset) -> None:
    try:
        frame = read_pool(upload, name=upload.name, columns=columns)
    except InputError as exc:
        st.session_state.pop(POOL, None)
        st.session_state[FAILURE] = exc
        return
    st.session_state.pop(FAILURE, None)
    st.session_state[POOL] = (upload.name, frame)
    st.session_state[COLUMNS] = dict(columns)
    reset()


def _mapping_step(upload, reset) -> None:
    """Which column of the file is the prompt, the id and the category (pre-filled with the guess)."""
    if st.session_state.get(RAW, (None,))[0] != upload.file_id:
        try:
            st.session_state[RAW] = (upload.file_id, peek(upload, name=upload.name))
        except ValueError:
            return  # not a table: the reading error says why
    raw = st.session_state[RAW][1]
    guess = {**suggest_columns(raw), **st.session_state.get(COLUMNS, {})}
    unread = POOL not in st.session_state
    with st.expander("Columns of the pool file", expanded=unread):
        names = [NOT_IN_FILE, *map(str, raw.columns)]
        grid = st.columns(len(POOL_COLUMNS))
        chosen = {}
        for cell, target in zip(grid, POOL_COLUMNS):
            pick = cell.selectbox(LABELS[target], names, key=f"evs_map_{target}",
                                  index=names.index(guess[target]) if guess.get(target) in names else 0)
            if pick != NOT_IN_FILE:
                chosen[target] = pick
        st.caption("Proposed from the column names and contents; the prompt column is required.")
        if st.button("Read the pool with these columns", key="evs_map_apply", disabled="prompt" not in chosen):
            _read(upload, chosen, reset)
