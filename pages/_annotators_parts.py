"""Helpers of the Annotators page: the cached report and its tables (no page flow here)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.annotators.agreement import agreement_from_votes
from core.filters import Filters
from core.ranking import RankingError, RankSettings, rank_votes
from pages._filters import DIMENSION_HOW
from pages._request import prepared_request



@st.cache_data(show_spinner=False, max_entries=8)
def compute_annotators(db_path: str, dataset_id: int, sha256: str, filters: Filters, alpha: float,
                       policy: str = "exclude") -> dict:
    """Quality (one row per judged item), agreement and response times of the analysed dimension, and the
    rankings before and after the annotator ``policy`` (core.ranking.request, as ``evalboard annotators``)."""
    prepared = prepared_request(db_path, dataset_id, sha256, filters, policy, alpha)
    every = prepared.before_policy
    times = every["response_time_s"].to_numpy(dtype=float) if "response_time_s" in every else np.array([])
    changed = prepared.policy.judgements if policy != "keep" else 0
    return {"quality": prepared.quality, "agreement": agreement_from_votes(prepared.votes), "times": times,
            "excluded_votes": prepared.policy.left_out, "request": prepared.lines(DIMENSION_HOW),
            "comparison": _with_and_without(every, prepared.votes, changed)}


def _with_and_without(votes: pd.DataFrame, kept: pd.DataFrame, changed: int) -> pd.DataFrame | str:
    """Model × (rank, Elo) with every vote and after the annotator policy (``changed``: judgements it
    left out or down-weighted)."""
    settings = RankSettings(scheme="bt", ci="none")
    try:
        every = {r.model: r for r in rank_votes(votes, settings).rows}
        qualified = {r.model: r for r in rank_votes(kept, settings).rows} if changed else every
    except (RankingError, ValueError) as exc:
        return str(exc)
    rows = []
    for model, r in every.items():
        q = qualified.get(model)
        rows.append({"Model": model, "Rank (all votes)": r.rank, "Elo (all votes)": r.rating,
                     "Rank (qualified only)": q.rank if q else None, "Elo (qualified only)": q.rating if q else np.nan,
                     "Rank change": (r.rank - q.rank) if q else None})
    frame = pd.DataFrame(rows).sort_values(["Rank (qualified only)", "Model"], na_position="last")
    return frame.astype({"Rank (qualified only)": "Int64", "Rank change": "Int64"})


def quality_table(quality: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "Annotator": quality["annotator_id"].astype(str), "Status": quality["status"].str.replace("_", " "),
        "Votes": quality["n_votes"], "Golden": quality["n_golden"],
        "Golden accuracy": quality["golden_accuracy"].map(_three),
        "Golden CI": [_interval(lo, hi) for lo, hi in zip(quality["golden_ci_low"], quality["golden_ci_high"])],
        "Fast rate": quality["fast_rate"].map(lambda v: "–" if not np.isfinite(v) else f"{v:.1%}"),
        "Reasons": ["; ".join(r) for r in quality["reasons"]]})


def _three(value: float) -> str:
    return "–" if not np.isfinite(value) else f"{value:.3f}"


def _interval(lo: float, hi: float) -> str:
    return "–" if not (np.isfinite(lo) and np.isfinite(hi)) else f"{lo:.3f}–{hi:.3f}"


# Accuracy, CI and fast rate are text: "–" where an annotator has no golden answers or no timings.
QUALITY_FORMATS = {"Votes": st.column_config.NumberColumn(format="localized"),
                   "Golden": st.column_config.NumberColumn(format="localized")}
COMPARISON_FORMATS = {"Elo (all votes)": st.column_config.NumberColumn(format="%.1f"),
                      "Elo (qualified only)": st.column_config.NumberColumn(format="%.1f")}


def coefficient(value) -> str:
    return "–" if value is None or not np.isfinite(value) else f"{value:.3f}"
