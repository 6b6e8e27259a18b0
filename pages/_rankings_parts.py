"""Helpers of the Rankings page: the cached core call and the tables it shows (no widgets here)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from core.filters import Filters
from core.ranking import Ranking, RankSettings
from core.ranking.inputs import rank_prepared, rank_prepared_groups, win_rate_frames
from core.ranking.render import ELO_SCHEMES, convergence_notes, identifiability_note
from core.ranking.schemes.style import available_features
from core.ranking.style_view import style_view
from pages._filters import DIMENSION_HOW
from pages._request import prepared_request

SCHEME_LABELS = {"bt": "Bradley–Terry (Elo)", "winrate": "Win rate", "stratified": "Stratified win rate",
                 "ipw": "Inverse-propensity weighted BT", "adjusted": "BT adjusted for position and length",
                 "style": "Style-controlled BT", "crowd": "Crowd-BT (annotator reliability)"}
CI_LABELS = {"bootstrap": "Bootstrap", "sandwich": "Sandwich (normal approximation)", "none": "None (fastest)"}
BY = ("game_id", "dimension")


@st.cache_data(show_spinner=False, max_entries=16)
def compute(db_path: str, dataset_id: int, sha256: str, filters: Filters, scheme: str, ci: str, replicates: int,
            seed: int, annotators: str, features: tuple[str, ...] | None = None, qualify: str | None = None) -> dict:
    """Everything the page shows, keyed by dataset id + content hash + filters + settings (``features``:
    scheme style's). Raises core's errors."""
    settings = RankSettings(scheme=scheme, ci=ci, replicates=replicates, seed=seed, features=features)
    # One prepared value shared with the Bias and Annotators pages (pages/_request.py); the ranking and
    # its matrices reuse the votes it fitted, so a million votes are copied once.
    prepared = prepared_request(db_path, dataset_id, sha256, filters, annotators, qualify=qualify)
    ranking, used = rank_prepared(prepared, settings)
    style = style_view(ranking, available_features(used)) if scheme == "style" else None
    return {"ranking": ranking, "matrices": win_rate_frames(ranking, used), "request": prepared.lines(DIMENSION_HOW),
            "style": style}


@st.cache_data(show_spinner=False, max_entries=32)
def compute_groups(db_path: str, dataset_id: int, sha256: str, filters: Filters, scheme: str, seed: int,
                   annotators: str, unqualified: tuple[str, ...], by: str,
                   features: tuple[str, ...] | None = None, qualify: str | None = None) -> dict | str:
    """The same scheme fitted on each group of ``by`` (no intervals): {group key: Ranking}, or why not.
    ``unqualified``: the annotators :func:`compute` found unqualified; part of the cache key only (the
    prepared request decides them again, on the same rows, as rank_input does)."""
    scope = replace(filters, dimensions=()) if by == "dimension" else filters  # every dimension, one ranking each
    prepared = prepared_request(db_path, dataset_id, sha256, scope, annotators, qualify=qualify)
    try:
        return rank_prepared_groups(prepared, by, RankSettings(scheme=scheme, ci="none", seed=seed, features=features))
    except ValueError as exc:  # RankingError included: shown, not raised
        return str(exc)


def group_name(by: str) -> str:
    return by.replace("_id", "").replace("_", " ")


def is_elo(ranking: Ranking) -> bool:
    return ranking.settings.scheme in ELO_SCHEMES


def rating_table(ranking: Ranking) -> tuple[pd.DataFrame, dict]:
    """The rating table and its column formats (Elo 1 decimal, win rates 3, votes with separators)."""
    frame = ranking.frame()
    digits = "%.1f" if is_elo(ranking) else "%.3f"
    rating = "Elo" if is_elo(ranking) else "Win rate"
    level = f"{round((1 - ranking.settings.alpha) * 100)}%"
    ranks = ["–" if pd.isna(lo) else (f"{int(lo)}" if lo == hi else f"{int(lo)}–{int(hi)}")
             for lo, hi in zip(frame["rank_low"], frame["rank_high"])]
    table = pd.DataFrame({"Rank": frame["rank"], "Model": frame["model"].astype(str), rating: frame["rating"],
                          f"CI low ({level})": frame["ci_low"], f"CI high ({level})": frame["ci_high"],
                          "Rank range": ranks, "Win rate (raw)": frame["win_rate"], "Votes": frame["n_votes"]})
    if frame["interval_note"].notna().any():
        table["No interval because"] = frame["interval_note"].fillna("")
    config = {rating: st.column_config.NumberColumn(format=digits),
              f"CI low ({level})": st.column_config.NumberColumn(format=digits),
              f"CI high ({level})": st.column_config.NumberColumn(format=digits),
              "Win rate (raw)": st.column_config.NumberColumn(format="%.3f"),
              "Votes": st.column_config.NumberColumn(format="localized")}
    return table, config


def group_tables(groups: dict[tuple, Ranking], by: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(rank table: model × group, with the group's votes; ratings; ranks) for one --by column."""
    ratings = pd.DataFrame({key[0]: {r.model: r.rating for r in g.rows} for key, g in groups.items()})
    ranks = pd.DataFrame({key[0]: {r.model: r.rank for r in g.rows} for key, g in groups.items()})
    order = sorted(ranks.index, key=lambda m: (ranks.loc[m].mean(), str(m)))  # best on average first
    ratings, ranks = ratings.reindex(order), ranks.reindex(order)
    table = ranks.astype("Int64").rename_axis("model").reset_index()
    table.columns = ["Model", *(f"{c} rank" for c in ranks.columns)]
    return table, ratings, ranks


def note_no_interval(ranking: Ranking) -> str | None:
    """Which models have no interval, and why (too few votes, resamples that cannot vary)."""
    reasons: dict[str, list[str]] = {}
    for r in ranking.rows:
        if r.interval_note:
            reasons.setdefault(r.interval_note, []).append(r.model)
    if not reasons:
        return None
    return "No interval for " + "; ".join(f"{', '.join(models)} ({reason})" for reason, models in reasons.items()) \
        + ". Their rank ranges cover every position the data cannot rule out."


def warnings(ranking: Ranking) -> list[str]:
    """What the ranking could not settle: its identifiability and any fit stopped before converging."""
    notes = [identifiability_note(ranking), *convergence_notes(ranking)]
    return [note[0].upper() + note[1:] for note in notes if note]


def covariate_table(ranking: Ranking) -> pd.DataFrame:
    return pd.DataFrame([{"Covariate": c.name, "Estimate": c.estimate, "SE": c.se} for c in ranking.covariates])
