"""The Collect page's pieces: reading the two inputs and starting a run as a background job."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import streamlit as st

from core.collect import CollectConfig, CollectStore, ConfigError, Query, jobs, load_models, load_queries
from core.io import InputError
from pages._shared import plain

VIEWED_RUN = "collect_run_view"  # the run section's selection
WANTED_RUN = "collect_run_wanted"  # a run just started here: selected once it is stored


def pick_file(label: str, types: list[str], key: str, help_text: str):
    """An upload, or else a path on the server; returns (source, name) or (None, None)."""
    left, right = st.columns([3, 2])
    upload = left.file_uploader(label, type=types, key=f"{key}_upload", help=help_text)
    path = right.text_input("…or a path on the server", key=f"{key}_path", placeholder=f"e.g. data/{key}.{types[0]}")
    if upload is not None:
        return upload.getvalue(), upload.name
    if path.strip():
        return Path(path.strip()).expanduser(), path.strip()
    return None, None


def read_config(source, name) -> CollectConfig | None:
    try:
        return load_models(source if isinstance(source, bytes) else Path(source), name=name)
    except ConfigError as exc:
        st.error("The models file cannot be used:\n\n" + "\n".join(f"- {plain(p)}" for p in exc.problems))
        return None


def read_queries(source, name) -> list[Query] | None:
    try:
        return load_queries(source, name=name)
    except InputError as exc:
        st.error(plain(exc).replace("\n", "  \n"))
        return None


def config_table(config: CollectConfig) -> pd.DataFrame:
    """Keys appear as their variable's name and whether it is set, never as values."""
    frame = pd.DataFrame(config.table(os.environ))
    frame["key_set"] = frame["key_set"].map(lambda v: "not needed" if v is None else "set" if v else "NOT SET")
    return frame.rename(columns={"name": "Model", "provider": "Provider", "model": "Model id", "base_url": "Base URL",
                                 "api_key_env": "Key variable", "key_set": "Key", "concurrency": "Concurrency",
                                 "provider_limit": "Provider limit", "params": "Parameters"})


def start_section(db_path: str) -> None:
    """Inputs, the models table, the run name and the button that starts (or resumes) a background job."""
    st.subheader("Start or resume a run")
    models_source, models_name = pick_file("Models file (TOML)", ["toml"], "collect_models",
                                           "[[models]] entries: name, provider, base_url, model, api_key_env, params")
    queries_source, queries_name = pick_file("Eval set (CSV or JSONL)", ["csv", "jsonl", "json", "tsv"],
                                             "collect_queries", "columns query_id, prompt; optional category, priority")
    if models_source is None or queries_source is None:
        st.info("Choose a models file and an eval set to start. API keys are never typed here: the models file "
                "names the environment variable that holds each key.")
        return
    config = read_config(models_source, models_name)
    queries = read_queries(queries_source, queries_name)
    if config is None or queries is None:
        return
    st.dataframe(config_table(config), hide_index=True, key="collect_config_table")
    unset = [f"{m.name} ({m.api_key_env})" for m in config.models
             if m.api_key_env and not os.environ.get(m.api_key_env)]
    if unset:
        st.warning("Key variable not set for " + plain(", ".join(unset)) + ": set it where the dashboard runs, or "
                   "these models will be stopped at their first request.")
    st.caption(f"{len(queries):,} queries × {len(config.models)} models = "
               f"{len(queries) * len(config.models):,} answers")
    left, right = st.columns([3, 1])
    run_name = left.text_input("Run name", value="collection-1", key="collect_run_name",
                               help="the same name again resumes that run: only missing answers are asked for").strip()
    limit = int(right.number_input("Only the first N queries (0: all)", min_value=0, value=0, step=10,
                                   key="collect_limit"))
    if not run_name:
        st.info("Give the run a name.")
        return
    with CollectStore(db_path) as store:
        existing = {r["name"]: r for r in store.runs()}.get(run_name)
        busy = jobs.active_job(store.con, run_name)
    if busy is not None:
        st.info(f"Run **{plain(run_name)}** is being collected now (process {busy.pid or '…'}): follow it above.")
    elif existing:
        st.caption(f"Run **{plain(run_name)}** holds {existing['answers']:,} answers; starting it again resumes it.")
    if st.button("Resume collection" if existing else "Start collection", type="primary", key="collect_start",
                 disabled=busy is not None):
        try:
            jobs.start_background(db_path, run_name, _contents(models_source), _contents(queries_source),
                                  queries_name, limit=limit or None)
        except (jobs.JobBusy, OSError) as exc:
            st.error(plain(exc))
            return
        st.session_state[WANTED_RUN] = run_name  # the run section below shows this run once it is stored
        st.rerun()


def _contents(source) -> bytes:
    return source if isinstance(source, bytes) else Path(source).read_bytes()
