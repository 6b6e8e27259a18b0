"""Collect: every model's answer to every eval-set query, with live progress, a summary, resume and the
answers file for a voting campaign."""

import os

import pandas as pd
import streamlit as st

from core.collect import CollectStore, RunMismatch, answers_table, summarize
from core.collect.export import to_bytes
from core.collect.results import format_seconds
from core.store import default_db_path
from pages._collect_parts import (
    config_table,
    pick_file,
    read_config,
    read_queries,
    run_collection,
)
from pages._shared import plain, through_router

LAST_OUTCOME = "collect_last_outcome"  # session key: (run name, outcome) of the last collection here

through_router()
st.title("Collect")
st.caption("Ask every model of a models file every query of an eval set, each provider within its concurrency "
           "limit. Answers are stored as they arrive: running the same run name again resumes.")

models_source, models_name = pick_file("Models file (TOML)", ["toml"], "collect_models",
                                       "[[models]] entries: name, provider, base_url, model, api_key_env, params")
queries_source, queries_name = pick_file("Eval set (CSV or JSONL)", ["csv", "jsonl", "json", "tsv"],
                                         "collect_queries", "columns query_id, prompt; optional category, priority")
if models_source is None or queries_source is None:
    st.info("Choose a models file and an eval set to start. API keys are never typed here: the models file names "
            "the environment variable that holds each key.")
    st.stop()

config = read_config(models_source, models_name)
queries = read_queries(queries_source, queries_name)
if config is None or queries is None:
    st.stop()

st.subheader("Models")
st.dataframe(config_table(config), hide_index=True, key="collect_config_table")
unset = [f"{m.name} ({m.api_key_env})" for m in config.models if m.api_key_env and not os.environ.get(m.api_key_env)]
if unset:
    st.warning("Key variable not set for " + plain(", ".join(unset)) + ": set it where the dashboard runs, or "
               "these models will be stopped at their first request.")
st.caption(f"{len(queries):,} queries × {len(config.models)} models = {len(queries) * len(config.models):,} answers")

db_path = str(default_db_path())
left, right = st.columns([3, 1])
run_name = left.text_input("Run name", value="collection-1", key="collect_run_name",
                           help="the same name again resumes that run: only missing answers are asked for").strip()
limit = int(right.number_input("Only the first N queries (0: all)", min_value=0, value=0, step=10,
                               key="collect_limit"))
if not run_name:
    st.info("Give the run a name.")
    st.stop()

with CollectStore(db_path) as store:
    known = {r["name"]: r for r in store.runs()}
existing = known.get(run_name)
if existing:
    st.caption(f"Run **{plain(run_name)}** holds {existing['answers']:,} answers; starting it again resumes it.")

if st.button("Resume collection" if existing else "Start collection", type="primary", key="collect_start"):
    try:
        outcome = run_collection(config, queries, db_path, run_name, limit or None)
    except RunMismatch as exc:
        st.error(plain(exc))
        st.stop()
    st.session_state[LAST_OUTCOME] = (run_name, outcome)
    st.rerun()  # redraw with the run as it is now stored (the button then offers to resume)

last = st.session_state.get(LAST_OUTCOME)
if last and last[0] == run_name:
    outcome = last[1]
    message = (f"Asked {outcome.asked:,} (query, model) pairs in {format_seconds(outcome.elapsed_s)}: "
               f"{outcome.answered:,} answered, {outcome.failed:,} failed, {outcome.skipped:,} skipped; "
               f"{outcome.already_answered:,} were already answered.")
    (st.success if not outcome.failed and not outcome.stopped_models else st.warning)(message)
    for model, reason in outcome.stopped_models.items():
        st.error(f"Model **{plain(model)}** was stopped: {plain(reason)}")

if not existing:
    st.stop()

with CollectStore(db_path) as store:
    summary = summarize(store, run_name)
    answers = answers_table(store, run_name)

st.subheader("Summary")
a, b, c, d = st.columns(4)
a.metric("Answers", f"{summary.answers:,} / {summary.expected:,}")
b.metric("Failures", f"{sum(summary.failures_by_kind().values()):,}")
c.metric("Latency p50", "–" if summary.latency_p50_s is None else f"{summary.latency_p50_s:.2f} s")
d.metric("Latency p90", "–" if summary.latency_p90_s is None else f"{summary.latency_p90_s:.2f} s")
if summary.failures_by_kind():
    st.caption("Failures by type: " + ", ".join(f"{k} {n:,}" for k, n in summary.failures_by_kind().items()))
st.dataframe(pd.DataFrame(summary.rows()), hide_index=True, key="collect_summary_table",
             column_config={k: st.column_config.NumberColumn(format="%.2f") for k in ("p50 s", "p90 s", "p99 s")})
if not summary.complete:
    st.info(f"{summary.expected - summary.answers:,} answers are missing: press Resume to ask for them.")

st.subheader("Answers file")
fmt = st.radio("Format", ["csv", "jsonl"], horizontal=True, key="collect_export_format")
note = f" ({answers.left_out_empty:,} left out: empty after cleaning)" if answers.left_out_empty else ""
st.download_button(f"Download {len(answers.frame):,} answers ({fmt.upper()}){note}", to_bytes(answers.frame, fmt),
                   file_name=f"{run_name}-answers.{fmt}", key="collect_download",
                   mime="text/csv" if fmt == "csv" else "application/jsonl")
