"""The mapping step of the Data page: which column is which, and what each winner value means."""

from __future__ import annotations

import streamlit as st

from core.io.mapping import REQUIRED, outcome_choices, peek, suggest_columns
from core.schema import OUTCOMES
from pages._shared import plain

NOT_IN_FILE = "— not in the file —"
UNKNOWN = "— choose —"
KIND_LABELS = {"votes": "Votes (one A/B comparison per row)", "eval_runs": "EvalRuns (one score per model and task)"}


def mapping_form(upload) -> tuple[str, dict[str, str], dict[str, str]] | None:
    """Widgets for a column mapping (and, for votes, an outcome mapping) of the uploaded file.

    Returns ``(kind, columns, outcomes)`` once every required column is chosen, else None.
    """
    try:
        raw = peek(upload, name=upload.name)
    except ValueError as exc:  # the file cannot even be read as a table: nothing to map
        st.caption(f"The file cannot be read as a table, so there are no columns to map ({plain(exc)}).")
        return None
    names = [NOT_IN_FILE, *map(str, raw.columns)]
    kind = st.radio("This file holds", list(KIND_LABELS), format_func=KIND_LABELS.get, key="map_kind",
                    horizontal=True)
    guesses = suggest_columns(raw, kind)
    st.caption("Which column of the file holds each of EvalBoard's columns (required ones in bold).")
    columns: dict[str, str] = {}
    grid = st.columns(4)
    for i, (target, guess) in enumerate(guesses.items()):
        label = f"**{target}**" if target in REQUIRED[kind] else target
        with grid[i % 4]:
            choice = st.selectbox(label, names, index=names.index(guess) if guess in names else 0,
                                  key=f"map_{kind}_{target}")
        if choice != NOT_IN_FILE:
            columns[target] = choice
    outcomes: dict[str, str] = {}
    if kind == "votes" and "winner" in columns:
        st.caption(f"What each value of '{plain(columns['winner'])}' means.")
        options = [UNKNOWN, *OUTCOMES]
        grid = st.columns(4)
        for i, (value, guess) in enumerate(outcome_choices(raw, columns["winner"])):
            with grid[i % 4]:
                meaning = st.selectbox(f"'{plain(value)}'", options, index=options.index(guess) if guess else 0,
                                       key=f"map_outcome_{columns['winner']}_{value}")
            if meaning != UNKNOWN:
                outcomes[value] = meaning
    missing = [c for c in REQUIRED[kind] if c not in columns]
    if missing:
        st.warning(f"Choose the column for: {', '.join(missing)}.")
        return None
    return kind, columns, outcomes
