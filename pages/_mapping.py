"""The mapping step of the Data page: read the file as detected, or say which column is which and
what each winner value means. The kind comes first and chooses the form; detection (or, when it is
unsure, its proposal) fills it in."""

from __future__ import annotations

import streamlit as st

from core.io import detection
from core.io.columns import DROP, EMPTY_KEY
from core.io.mapping import MAX_OUTCOME_VALUES, REQUIRED, outcome_choices, peek, suggest_columns
from core.schema import OUTCOMES
from pages._shared import plain

NOT_IN_FILE = "— not in the file —"
UNKNOWN = "— choose —"
DROP_LABEL = "drop these rows"
AS_DETECTED = "detected"
KIND_LABELS = {AS_DETECTED: "As detected from the columns", "votes": "Votes (one A/B comparison per row)",
               "eval_runs": "EvalRuns (one score per model and task)"}
DETECTED_AS = {"votes": "votes", "counts": "a counts table", "eval_runs": "a score table (EvalRuns, long)",
               "eval_runs_wide": "a wide score table (EvalRuns)", "winrate_matrix": "a win-rate matrix",
               "preferences": "judged preferences against a baseline"}
MAX_VALUE_DROPDOWNS = 8  # a numeric winner column with more values gets thresholds instead


def mapping_form(upload) -> tuple[str, dict[str, str], dict[str, str]] | None:
    """Widgets for the reading of the uploaded file.

    Returns None to read it as detected (also while a required column is not chosen: storing then
    reports what detection found missing), else ``(kind, columns, outcomes)``.
    """
    try:
        raw = peek(upload, name=upload.name)
    except ValueError as exc:  # the file cannot even be read as a table: nothing to map
        st.caption(f"The file cannot be read as a table, so there are no columns to map ({plain(exc)}).")
        return None
    detected, proposal = detection(raw)
    default = AS_DETECTED if detected else (proposal.kind if proposal else "votes")
    options = list(KIND_LABELS) if detected else [k for k in KIND_LABELS if k != AS_DETECTED]
    kind = st.radio("Read this file", options, index=options.index(default), format_func=KIND_LABELS.get,
                    key="map_kind", horizontal=True)
    if kind == AS_DETECTED:
        st.caption(f"Detected: {DETECTED_AS.get(detected, detected)}. Choose a kind above to name the columns "
                   "yourself.")
        return None
    if proposal is not None:
        st.info(f"Detection is unsure: {plain(proposal.reason)}. The form starts from that reading.")
    guesses = suggest_columns(raw, kind)
    if proposal is not None and proposal.kind == kind:
        guesses = {**{t: None for t in guesses}, **proposal.columns}
    names = [NOT_IN_FILE, *map(str, raw.columns)]
    st.caption("Which column of the file holds each of EvalBoard's columns (required ones in bold).")
    columns: dict[str, str] = {}
    grid = st.columns(4)
    for i, (target, guess) in enumerate((t, g) for t, g in guesses.items() if t not in ("pair",)):
        label = f"**{target}**" if target in REQUIRED[kind] else target
        with grid[i % 4]:
            several = target == "winner" and guess and "," in guess
            choice = st.selectbox(label, names, index=names.index(guess) if guess in names else 0,
                                  key=f"map_{kind}_{target}", disabled=bool(several))
        if several:
            columns[target] = guess
        elif choice != NOT_IN_FILE:
            columns[target] = choice
    if kind == "votes":
        columns.update(_pair_and_annotators(raw, guesses))
    outcomes = _outcome_form(raw, columns, proposal.outcomes if proposal else {}) if kind == "votes" else {}
    missing = [c for c in REQUIRED[kind]
               if c not in columns and not (c in ("model_a", "model_b") and "pair" in columns)]
    if missing:
        st.warning(f"Choose the column for: {', '.join(missing)}.")
        return None
    return kind, columns, outcomes


def _pair_and_annotators(raw, guesses: dict) -> dict[str, str]:
    """A column naming both models ("a_b"), and several annotator columns giving one vote each."""
    names = [NOT_IN_FILE, *map(str, raw.columns)]
    left, right = st.columns(2)
    pair_guess = guesses.get("pair")
    pair = left.selectbox("Both models in one column (\"a_b\")", names,
                          index=names.index(pair_guess) if pair_guess in names else 0, key="map_votes_pair")
    several_guess = [c for c in (guesses.get("winner") or "").split(",") if "," in (guesses.get("winner") or "")]
    raters = right.multiselect("Several annotator columns: one vote per column", list(map(str, raw.columns)),
                               default=several_guess, key="map_votes_raters")
    out = {}
    if pair != NOT_IN_FILE:
        out["pair"] = pair
    if len(raters) > 1:
        out["winner"] = ",".join(raters)
    return out


def _outcome_form(raw, columns: dict[str, str], proposed: dict[str, str]) -> dict[str, str]:
    if "winner" not in columns:
        return {}
    sources = columns["winner"].split(",")
    values = raw[sources].stack().dropna().astype(str) if len(sources) > 1 else raw[sources[0]].dropna().astype(str)
    frame = values.to_frame("winner")
    choices = outcome_choices(frame, "winner")
    distinct = values.unique()
    numbers = _numbers(distinct)
    has_empty = raw[sources].isna().to_numpy().any()
    st.caption(f"What each value of '{plain(columns['winner'])}' means.")
    outcomes: dict[str, str] = {}
    menu = [UNKNOWN, *OUTCOMES, DROP_LABEL]
    if numbers is not None and len(distinct) > MAX_VALUE_DROPDOWNS:
        outcomes.update(_thresholds(numbers))
    else:
        grid = st.columns(4)
        for i, (value, guess) in enumerate(choices[:MAX_OUTCOME_VALUES]):
            guess = proposed.get(value, guess)
            with grid[i % 4]:
                meaning = st.selectbox(f"'{plain(value)}'", menu, index=menu.index(guess) if guess in menu else 0,
                                       key=f"map_outcome_{columns['winner']}_{value}")
            if meaning != UNKNOWN:
                outcomes[value] = DROP if meaning == DROP_LABEL else meaning
    if has_empty:
        empty = st.selectbox("(empty cells)", menu, index=menu.index(DROP_LABEL), key="map_outcome_empty",
                             help="rows whose winner is empty: an outcome, or leave them out (counted in the notes)")
        if empty != UNKNOWN:
            outcomes[EMPTY_KEY] = DROP if empty == DROP_LABEL else empty
    return outcomes


def _numbers(values) -> list[float] | None:
    try:
        return sorted(float(v) for v in values)
    except ValueError:
        return None


def _thresholds(numbers: list[float]) -> dict[str, str]:
    """Numeric outcomes (e.g. a preference in [1, 2]): below / at / above one threshold."""
    low, high = numbers[0], numbers[-1]
    cut = st.number_input("Threshold", value=(low + high) / 2, key="map_threshold",
                          help=f"the values run from {low:g} to {high:g}")
    a, b, c = st.columns(3)
    below = a.selectbox(f"below {cut:g}", OUTCOMES, index=0, key="map_below")
    at = b.selectbox(f"equal to {cut:g}", OUTCOMES, index=2, key="map_at")
    above = c.selectbox(f"above {cut:g}", OUTCOMES, index=1, key="map_above")
    return {f"<{cut:g}": below, f"{cut:g}": at, f">{cut:g}": above}
