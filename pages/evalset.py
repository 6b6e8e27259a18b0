"""Eval set: from a raw query pool to a deduplicated, category-balanced eval set, with a category
exclusion step, manual review and the audit of every stage."""

import streamlit as st

from core.evalset.pipeline import prepare
from core.evalset.results import eval_set, reject, reserves, to_csv, to_jsonl
from core.evalset.store import EvalSetExists, save
from core.io import InputError
from core.store import default_db_path
from pages._evalset_parts import (
    BUILT,
    MESSAGE,
    PREPARED,
    category_step,
    progress_into,
    reset,
    run_selection,
    selection_table,
    settings_form,
    show_audit,
    show_lengths,
)
from pages._evalset_pool import pool_input
from pages._shared import plain, through_router

through_router()
st.title("Eval set")
st.caption("Exact and semantic dedup, pre-filter, categories, scoring, Hamilton allocation with slice quotas, "
           "similarity check and manual review. Without a model endpoint every stage runs offline by a stated rule.")

st.subheader("1 · Pool and settings")
try:
    pool = pool_input(reset)
except InputError as exc:
    st.error(plain(exc))
    st.stop()
if pool is None:
    st.info("Upload a query pool, or use the demo pool, to build an eval set.")
    st.stop()
try:
    settings = settings_form()
except ValueError as exc:
    st.error(plain(exc))
    st.stop()
if st.button("Prepare: dedup, filter, categorise", key="evs_prepare", type="primary"):
    reset()
    with st.status("Preparing…", expanded=True) as status:
        try:
            st.session_state[PREPARED] = prepare(pool, settings, progress=progress_into(status))
            status.update(label="Prepared", state="complete", expanded=False)
        except Exception as exc:  # noqa: BLE001 - shown to the user, never as a traceback
            status.update(label="Preparation stopped", state="error")
            st.error(plain(exc if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"))

prepared = st.session_state.get(PREPARED)
if prepared is None:
    st.stop()

st.subheader("2 · Categories")
st.caption(f"{int(prepared.active().sum()):,} candidate queries after deduplication and filtering. Categories "
           "by size with three samples each; excluded categories are never selected.")
exclude = category_step(prepared)
if exclude is not None:
    try:
        st.session_state[BUILT] = run_selection(prepared, exclude, settings)
    except Exception as exc:  # noqa: BLE001 - shown to the user, never as a traceback
        st.error(plain(exc if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"))
        st.stop()

state = st.session_state.get(BUILT)
if state is None:
    st.stop()

st.subheader("3 · Review")
table = selection_table(state)
st.caption(f"{len(table):,} queries selected for {state.settings.size:,} places. Reject queries by id: each is "
           "replaced by a reserve of its category, else the best unselected query of its category that is not "
           "similar to the set.")
st.dataframe(table, hide_index=True, key="evs_selection_table",
             column_config={"score": st.column_config.NumberColumn("score", format="%.1f")})
spare = reserves(state)
st.caption(f"Reserves ({len(spare):,}): not in the set; a rejected query is replaced by a reserve of its category "
           "first, and the reserves are topped up again. Keep them to replace a query dropped later.")
st.dataframe(spare[["query_id", "category", "subcategory", "score", "prompt"]], hide_index=True,
             key="evs_reserves_table")
show_lengths(state)
r1, r2 = st.columns([3, 1])
ids = r1.text_input("Query ids to reject (comma-separated)", key="evs_reject_ids")
if r2.button("Reject and replace", key="evs_reject"):
    unknown = reject(state, [i for i in ids.split(",") if i.strip()])
    st.session_state[MESSAGE] = (f"Not in the set, ignored: {', '.join(unknown)}" if unknown else
                                 "Rejected and replaced.")
    st.rerun()
if st.session_state.get(MESSAGE):
    st.info(plain(st.session_state[MESSAGE]))

st.subheader("4 · Audit")
show_audit(state)

st.subheader("5 · Accept")
full = eval_set(state)  # with scores and tags
d1, d2, d3 = st.columns(3)
d1.download_button("Download CSV", to_csv(full), file_name="evalset.csv", mime="text/csv", key="evs_csv")
d2.download_button("Download JSONL", to_jsonl(full), file_name="evalset.jsonl", mime="application/jsonl",
                   key="evs_jsonl")
d3.download_button("Download the reserves (CSV)", to_csv(spare), file_name="evalset.reserves.csv", mime="text/csv",
                   key="evs_reserves_csv")
n1, n2, n3 = st.columns([3, 1, 1])
name = n1.text_input("Name in the store", value="evalset", key="evs_name")
replace = n2.checkbox("Replace a set of this name", key="evs_replace")
if n3.button("Accept and store", key="evs_store", type="primary"):
    try:
        set_id = save(full, state.audit, name, default_db_path(), replace=replace, reserves=spare)
        st.success(f"Stored as eval set {plain(name)} (id {set_id}, {len(full):,} queries and {len(spare):,} "
                   "reserves). The answer collector reads the downloaded file as it is.")
    except (EvalSetExists, ValueError) as exc:
        st.error(plain(exc))
