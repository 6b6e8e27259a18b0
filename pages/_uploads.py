"""Inputs that come as several files: lm-evaluation-harness results (one JSON per model) and a
win-rate matrix with its count matrix. Each returns ``(read, files_id)`` when its button is pressed:
``read()`` builds the validated input, ``files_id`` ties an error message to these very files."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.io import Loaded, load, load_lm_eval

Request = tuple[Callable[[], Loaded], tuple[str, ...]]


def lm_eval_request() -> Request | None:
    files = st.file_uploader("lm-evaluation-harness results: one JSON file per model", type=["json"],
                             accept_multiple_files=True, key="lm_eval_files")
    metric = st.text_input("Metric", value="acc", key="lm_eval_metric",
                           help="read this metric of every task (acc, acc_norm, exact_match …); "
                                "other tasks are left out")
    if files and st.button("Validate and store these files", key="lm_eval_store"):
        return (lambda: load_lm_eval(files, metric=metric.strip() or "acc")), tuple(f.file_id for f in files)
    return None


def matrix_request() -> Request | None:
    left, right = st.columns(2)
    rates = left.file_uploader("Win-rate matrix", type=["csv", "tsv", "json", "parquet"], key="matrix_rates")
    counts = right.file_uploader("Count matrix (optional)", type=["csv", "tsv", "json", "parquet"],
                                 key="matrix_counts")
    if rates and st.button("Validate and store the matrix", key="matrix_store"):
        ids = (rates.file_id,) + ((counts.file_id,) if counts else ())
        return (lambda: load(rates, kind="winrate_matrix", counts=counts, name=rates.name)), ids
    return None


def current_ids() -> set[tuple[str, ...]]:
    """The file sets now chosen in these widgets (an error is shown only while its files are)."""
    files = st.session_state.get("lm_eval_files") or []
    rates, counts = st.session_state.get("matrix_rates"), st.session_state.get("matrix_counts")
    out = {tuple(f.file_id for f in files)}
    if rates:
        out.add((rates.file_id,) + ((counts.file_id,) if counts else ()))
    return out
