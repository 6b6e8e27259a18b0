"""The Collect page's pieces: reading the two inputs, the progress element, running a collection."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import streamlit as st

from core.collect import (
    CollectConfig,
    ConfigError,
    Progress,
    Query,
    RunSettings,
    collect,
    load_models,
    load_queries,
)
from core.collect.results import format_seconds
from core.io import InputError
from core.llm import run_sync
from pages._shared import plain

PROGRESS_EVERY_S = 0.3  # redraw at most this often: a fast provider answers hundreds of times a second


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


class ProgressElement:
    """A progress bar, the ETA and per-model counts, redrawn at most every PROGRESS_EVERY_S."""

    def __init__(self):
        self.bar = st.progress(0.0, text="Starting…")
        self.table = st.empty()
        self.last = float("-inf")

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        if now - self.last < PROGRESS_EVERY_S and not progress.finished:
            return
        self.last = now
        totals = progress.totals()
        share = (totals["total"] - totals["remaining"]) / totals["total"] if totals["total"] else 1.0
        self.bar.progress(min(1.0, share), text=f"{totals['done']:,} of {totals['total']:,} answers · "
                                                 f"{totals['failed']:,} errors · ETA {format_seconds(progress.eta_s())}")
        self.table.dataframe(pd.DataFrame(progress.rows()), hide_index=True)


def run_collection(config: CollectConfig, queries: list[Query], db_path: str, name: str, limit: int | None):
    """Run (or resume) with a live progress element; returns the session outcome."""
    show = ProgressElement()
    settings = RunSettings(name, limit=limit, queries_source="page upload")
    return run_sync(collect(config, queries, db_path, settings, show))
