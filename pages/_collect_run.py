"""The Collect page's stored runs: how the last job ended, the summary, the answers file, and a voting campaign
made straight from the run's answers."""

from __future__ import annotations

from contextlib import closing

import pandas as pd
import streamlit as st

from core.campaign import create_campaign, read_golden
from core.collect import CollectStore, answers_table, summarize
from core.collect.export import run_answers_for_campaign, to_bytes
from core.store.connection import connect
from pages._campaign_admin import show_new_tokens
from pages._campaign_create import create_with_tokens, settings_inputs
from pages._collect_jobs import last_job
from pages._collect_parts import VIEWED_RUN, WANTED_RUN
from pages._shared import plain

NEW_TOKENS = "collect_campaign_tokens"  # (campaign name, [(annotator, token)]) shown once after creation


def stored_run_section(db_path: str) -> None:
    with CollectStore(db_path) as store:
        names = [r["name"] for r in store.runs()]
    if not names:
        return
    st.subheader("Runs")
    if st.session_state.get(WANTED_RUN) in names:
        st.session_state[VIEWED_RUN] = st.session_state.pop(WANTED_RUN)
    if st.session_state.get(VIEWED_RUN) not in names:
        st.session_state[VIEWED_RUN] = names[-1]  # the latest run
    run = st.selectbox("Run", names, key=VIEWED_RUN)
    job = last_job(db_path, run)
    if job is not None and job.active:
        st.caption("Being collected now: its progress is above; the summary follows when the job ends.")
        return
    with CollectStore(db_path) as store:
        summary = summarize(store, run)
        answers = answers_table(store, run)
    a, b, c, d = st.columns(4)
    a.metric("Answers", f"{summary.answers:,} / {summary.expected:,}")
    b.metric("Failures", f"{sum(summary.failures_by_kind().values()):,}")
    c.metric("Latency p50", "–" if summary.latency_p50_s is None else f"{summary.latency_p50_s:.2f} s")
    d.metric("Latency p90", "–" if summary.latency_p90_s is None else f"{summary.latency_p90_s:.2f} s")
    if summary.failures_by_kind():
        st.caption("Failures by type: " + ", ".join(f"{k} {n:,}" for k, n in summary.failures_by_kind().items()))
    for model in summary.models:
        if model.stopped:
            st.error(f"Model **{plain(model.model)}** was stopped: {plain(model.stopped)}")
    st.dataframe(pd.DataFrame(summary.rows()), hide_index=True, key="collect_summary_table",
                 column_config={k: st.column_config.NumberColumn(format="%.2f") for k in ("p50 s", "p90 s", "p99 s")})
    if not summary.complete:
        st.info(f"{summary.expected - summary.answers:,} answers are missing: start the run again above (same run "
                "name, same eval set) to ask for them.")
    fmt = st.radio("Answers file format", ["csv", "jsonl"], horizontal=True, key="collect_export_format")
    note = f" ({answers.left_out_empty:,} left out: empty after cleaning)" if answers.left_out_empty else ""
    st.download_button(f"Download {len(answers.frame):,} answers ({fmt.upper()}){note}", to_bytes(answers.frame, fmt),
                       file_name=f"{run}-answers.{fmt}", key="collect_download",
                       mime="text/csv" if fmt == "csv" else "application/jsonl")
    if len(answers.frame):
        _campaign_form(db_path, run, summary.expected - summary.answers)


def _campaign_form(db_path: str, run: str, missing: int) -> None:
    st.subheader("Create a campaign from these answers")
    _show_new_tokens()
    if missing:
        st.caption(f"{missing:,} answers are missing: the campaign compares the answers stored now.")
    name = st.text_input("Campaign name", value=run, key="collect_campaign_name")
    golden = st.file_uploader("Golden file (optional)", type=["csv", "jsonl", "json", "parquet"],
                              key="collect_campaign_golden", help="question, correct_answer, wrong_answer")
    settings = settings_inputs("collect_campaign", golden)
    if not st.button("Create campaign", type="primary", key="collect_campaign_create"):
        return
    with closing(connect(db_path)) as conn:
        created = create_with_tokens(conn, settings, lambda: create_campaign(
            conn, name, run_answers_for_campaign(db_path, run),
            read_golden(golden, name=golden.name) if golden is not None else None, **settings.create_arguments()))
    if created is None:
        return
    st.session_state[NEW_TOKENS] = (created.campaign.name, [(t.label, t.token) for t in created.tokens])
    st.rerun()


def _show_new_tokens() -> None:
    new = st.session_state.get(NEW_TOKENS)
    if new:
        st.success(f"Campaign '{plain(new[0])}' created from this run's answers. Manage it on the Data page.")
        show_new_tokens(NEW_TOKENS, key_prefix="collect_campaign")
