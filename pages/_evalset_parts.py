"""Widgets and tables of the Eval set page (the logic is core.evalset)."""

from __future__ import annotations

import copy
import dataclasses

import pandas as pd
import streamlit as st

from core.charts.evalset import length_figure
from core.evalset.audit import LENGTH_COLUMNS, LENGTHS
from core.evalset.pipeline import finish
from core.evalset.progress import ProgressEvent, throttled
from core.evalset.results import check_sentence, drops, eval_set, to_csv
from core.evalset.settings import BuildSettings, ModelConfig
from core.evalset.state import Build
from pages._shared import plain

PREPARED, BUILT, MESSAGE = "evs_prepared", "evs_built", "evs_message"


def progress_into(status):
    """A build's progress drawn in an ``st.status``: each stage as a line, and inside a stage with model
    calls a progress bar with the counts and the time left (redrawn at most twice a second)."""
    bars = {}

    def draw(event: ProgressEvent) -> None:
        if not event.total:
            status.write(f"{event.stage}…")
            status.update(label=f"{event.stage}…")
            return
        if event.stage not in bars:
            bars[event.stage] = status.progress(0.0)
        bars[event.stage].progress(event.fraction, text=event.text())
        status.update(label=event.text())

    return throttled(draw, every_s=0.5)


def reset() -> None:
    for key in (PREPARED, BUILT, MESSAGE):
        st.session_state.pop(key, None)


def settings_form() -> BuildSettings:
    """Size, seed, categories and the optional model endpoint, as BuildSettings (ValueError when invalid)."""
    c1, c2, c3, c4 = st.columns([1, 1, 1, 3])
    size = int(c1.number_input("Eval-set size", min_value=1, max_value=100_000, value=50, step=10, key="evs_size"))
    spare = int(c2.number_input("Reserves", min_value=0, max_value=1_000, value=2, step=1, key="evs_reserves",
                                help="queries kept beside the set, to replace a query dropped later"))
    seed = int(c3.number_input("Seed", min_value=0, value=0, step=1, key="evs_seed"))
    given = c4.text_input("Categories (comma-separated; empty: use the pool's column or discover them)",
                          key="evs_categories")
    use_model = st.toggle("Use a model endpoint (otherwise every stage runs offline)", key="evs_use_model")
    model = None
    if use_model:
        m1, m2, m3, m4 = st.columns([3, 2, 2, 1])
        base_url = m1.text_input("Base URL", key="evs_base_url", placeholder="http://127.0.0.1:8000/v1")
        name = m2.text_input("Model", key="evs_model")
        key_env = m3.text_input("API key variable (name only)", key="evs_key_env", placeholder="OPENAI_API_KEY")
        concurrency = int(m4.number_input("Concurrency", min_value=1, max_value=64, value=4, key="evs_concurrency"))
        e1, e2 = st.columns(2)
        embed = e1.text_input("Embeddings model (optional)", key="evs_embed_model")
        domain = e2.text_input("Domain of the eval set (for the relevance judgment)", key="evs_domain")
        model = ModelConfig(base_url.strip(), name.strip(), key_env.strip() or None, concurrency, embed.strip() or None)
        if not model.endpoint().key_is_set():
            raise ValueError(f"the environment variable {key_env.strip()} is not set on the server")
        return BuildSettings(size=size, buffer=spare, seed=seed, model=model, domain=domain.strip(),
                             categories=tuple(c.strip() for c in given.split(",") if c.strip()))
    return BuildSettings(size=size, buffer=spare, seed=seed,
                         categories=tuple(c.strip() for c in given.split(",") if c.strip()))


def category_step(prepared: Build) -> list[str] | None:
    """Counts and three samples per category; returns the exclusions when the user asks for the selection."""
    summary = prepared.category_summary()
    shown = summary.assign(samples=summary["samples"].map(lambda s: " · ".join(s)),
                           suggested_exclusion=summary["suggested_exclusion"].map({True: "yes", False: ""}))
    st.dataframe(shown, hide_index=True, key="evs_categories_table",
                 column_config={"queries": st.column_config.NumberColumn("queries", format="localized")})
    options = summary["category"].tolist()
    exclude = st.multiselect("Exclude these categories", options, key="evs_exclude",
                             default=[c for c in prepared.suggested_exclusions if c in options])
    if st.button("Select the eval set", key="evs_finish", type="primary"):
        return exclude
    return None


def run_selection(prepared: Build, exclude: list[str], settings: BuildSettings) -> Build:
    """Finish on a copy, so the user can change the exclusions (or the size) and select again."""
    state = copy.deepcopy(prepared)
    # size and reserves matter only from here on
    state.settings = dataclasses.replace(state.settings, size=settings.size, buffer=settings.buffer)
    state.audit.settings.update(size=settings.size, reserves=settings.buffer)
    with st.status("Selecting…", expanded=False) as status:
        finish(state, exclude, progress=progress_into(status))
        status.update(label="Selection done", state="complete")
    return state


def selection_table(state: Build) -> pd.DataFrame:
    cols = ["query_id", "category", "subcategory", "reason", "score", "score_length_neutral", "prompt",
            "raw_query_original"]
    return eval_set(state)[cols]


def show_lengths(state: Build) -> None:
    """Prompt lengths of the eligible queries, the set and the reserves: quantiles and their curves."""
    lengths = state.audit.selection.get(LENGTHS)
    if not lengths:
        return
    table = pd.DataFrame([{"": group, **{label: d.get(key) for key, label in LENGTH_COLUMNS}}
                          for group, d in lengths.items()])
    st.caption("Prompt length in characters. The selection ranks queries by the length-neutral score (the score's "
               "percentile among queries of similar length), so the set keeps the pool's lengths.")
    st.dataframe(table, hide_index=True, key="evs_lengths_table")
    st.plotly_chart(length_figure({"eligible": state.selector.frame["query"].astype(str).str.len(),
                                      "chosen": eval_set(state)["prompt"].astype(str).str.len()}),
                       key="evs_lengths_chart")


def show_audit(state: Build) -> None:
    audit = state.audit
    table = pd.DataFrame(audit.stage_rows())
    counts = {c: st.column_config.NumberColumn(c, format="localized") for c in ("in", "out", "model calls",
                                                                                "failed calls")}
    st.dataframe(table, hide_index=True, key="evs_audit_table", column_config=counts)
    passed, sentence = check_sentence(audit.checks)
    (st.success if passed else st.error)(plain(sentence))
    dropped = drops(state)
    with st.expander(f"Dropped queries ({len(dropped):,}), each with its reason"):
        st.dataframe(dropped, hide_index=True, key="evs_drops_table")
        st.download_button("Download the dropped queries (CSV)", to_csv(dropped), file_name="evalset.drops.csv",
                           mime="text/csv", key="evs_drops_csv")
        st.download_button("Download the audit (JSON)", audit.to_json(), file_name="evalset.audit.json",
                           mime="application/json", key="evs_audit_json")
    with st.expander("Notes and selection details"):
        for note in audit.stage_notes():
            st.markdown(f"- {plain(note)}")
        for key, value in audit.selection.items():
            st.markdown(f"- {plain(key)}: {plain(value)}")
