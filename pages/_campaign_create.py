"""The "New campaign" form of the Data page's campaign administration.

``create_form(conn)`` draws the form, shows the golden supply of the chosen files and settings before
anything is stored, and returns what a press of "Create campaign" made (the caller shows the tokens).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from core.campaign import (
    Campaign,
    CampaignError,
    IssuedToken,
    create_campaign,
    golden_supply,
    issue_tokens,
    read_answers,
    read_golden,
)
from core.io import InputError
from core.llm.cleaning import CleaningRules
from core.schema import DEFAULT_GOLDEN_RATE, DEFAULT_OVERLAP, DEFAULT_OVERLAP_K, DEFAULT_TARGET
from pages._campaign_target import rank_target_input
from pages._shared import plain

RULES = {"urls": "URLs", "citations": "citation markers", "emoji": "emoji", "whitespace": "extra whitespace"}
FILE_TYPES = ["csv", "jsonl", "json", "parquet"]


@dataclass(frozen=True)
class Settings:
    """What the settings inputs of a new campaign say (shared by the Data page's and the Collect page's forms)."""

    dimensions: list[str]
    golden_rate: float
    target: int
    overlap: float
    overlap_k: int
    count: int
    labels: list[str]
    warnings: list[str]

    def create_arguments(self) -> dict:
        return {"dimensions": self.dimensions, "golden_rate": self.golden_rate, "target": self.target,
                "overlap": self.overlap, "overlap_k": self.overlap_k}


def settings_inputs(prefix: str, golden) -> Settings:
    """The settings of a new campaign (widget keys ``<prefix>_…``) and the golden supply they give."""
    left, middle, right = st.columns(3)
    dimensions = left.text_input("Dimensions (comma-separated)", value="overall", key=f"{prefix}_dimensions")
    rate = middle.number_input("Golden rate", min_value=0.0, max_value=0.9, value=DEFAULT_GOLDEN_RATE, step=0.05,
                               key=f"{prefix}_golden_rate", help="share of items that are golden questions")
    target = right.number_input("Items per annotator", min_value=1, value=DEFAULT_TARGET, step=10,
                                key=f"{prefix}_target")
    left, right = st.columns(2)
    overlap = left.number_input("Overlap", min_value=0.0, max_value=1.0, value=DEFAULT_OVERLAP, step=0.05,
                                key=f"{prefix}_overlap", help="share of real items judged by several annotators, "
                                                              "so that their agreement can be measured (0: none)")
    overlap_k = right.number_input("Annotators per overlap item", min_value=2, value=DEFAULT_OVERLAP_K, step=1,
                                   key=f"{prefix}_overlap_k")
    left, right = st.columns(2)
    count = left.number_input("Tokens to issue", min_value=0, value=3, step=1, key=f"{prefix}_token_count")
    names = right.text_input("…or annotator names (comma-separated)", key=f"{prefix}_annotators")
    rate = float(rate) if golden is not None else 0.0
    warnings = _golden_supply(golden, rate, int(target))
    return Settings([d for d in dimensions.split(",") if d.strip()], rate, int(target), float(overlap),
                    int(overlap_k), int(count), [n.strip() for n in names.split(",") if n.strip()], warnings)


@dataclass(frozen=True)
class Created:
    campaign: Campaign
    tokens: list[IssuedToken]
    warnings: list[str]


def create_form(conn: sqlite3.Connection) -> Created | None:
    st.caption("Answers: CSV/JSONL with query_id, prompt, model, answer (optional category, game_id). "
               "Golden items: question, correct_answer, wrong_answer (optional category).")
    name = st.text_input("Campaign name", key="campaign_name")
    answers = st.file_uploader("Answers file", type=FILE_TYPES, key="campaign_answers")
    golden = st.file_uploader("Golden file (optional)", type=FILE_TYPES, key="campaign_golden")
    settings = settings_inputs("campaign", golden)
    removed = st.multiselect("Remove from answers", options=list(RULES), default=list(RULES),
                             format_func=RULES.get, key="campaign_rules")
    active = st.checkbox("Active sampling", key="campaign_active",
                         help="prefer the pairs whose order is most uncertain under the current Bradley–Terry fit; "
                              "pair counts may then differ by a few instead of one")
    rank_target = rank_target_input()
    if not st.button("Create campaign", key="campaign_create", type="primary", disabled=answers is None):
        return None
    return create_with_tokens(conn, settings, lambda: create_campaign(
        conn, name, read_answers(answers, name=answers.name),
        read_golden(golden, name=golden.name) if golden is not None else None, **settings.create_arguments(),
        cleaning=CleaningRules(**{r: r in removed for r in RULES}), active_sampling=active,
        rank_target=rank_target))


def create_with_tokens(conn: sqlite3.Connection, settings: Settings, make: Callable[[], Campaign]) -> Created | None:
    """Make the campaign (``make`` reads the files and creates it) and issue its tokens; None when either
    is refused, with the reason shown (an input error with its rows and columns)."""
    try:
        campaign = make()
        issued = issue_tokens(conn, campaign, 0 if settings.labels else settings.count, settings.labels)
    except InputError as exc:
        st.error("The campaign was not created.")
        st.code(str(exc), language=None, wrap_lines=True)
        return None
    except CampaignError as exc:
        st.error(f"The campaign was not created: {plain(exc)}")
        return None
    return Created(campaign, issued, settings.warnings)


def sentence(text: str) -> str:
    """A message of core (lower-case, to follow 'warning:' on the CLI) as a sentence on the page."""
    return text[:1].upper() + text[1:]


def _golden_supply(golden, rate: float, target: int) -> list[str]:
    """Show what the golden pool gives each annotator, before anything is stored; the warnings shown."""
    if golden is None or rate <= 0:
        return []
    try:
        pool = len(read_golden(golden, name=golden.name))
    except InputError:
        return []  # reported with its rows and columns when the campaign is created
    supply = golden_supply(pool, rate, target)
    st.caption(plain(sentence(supply.summary())))
    if supply.refused:
        st.error(f"Too few golden items: {plain(supply.refusal())}.")
    for warning in supply.warnings():
        st.warning(plain(sentence(warning)))
    return supply.warnings()
