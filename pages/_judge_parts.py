"""Helpers of the Judge page: the cached analysis, the settings row, the table's column formats and the
downloads (no page flow here)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.judge.analysis import judge
from core.judge.render import judge_csv, judge_json, judge_markdown
from core.judge.types import JudgeResult, JudgeSettings
from core.report.judge import scatter_png
from core.schema import DEFAULT_LC_REPLICATES
from pages._shared import load_dataset, plain

AUTO_LC_ROWS = 100_000  # above this (e.g. 250 models × 805 prompts) the refitting LC bootstrap takes minutes
PERCENT = ("length_controlled_winrate", "lc_ci_low", "lc_ci_high", "lc_standard_error", "win_rate",
           "win_rate_ci_low", "win_rate_ci_high", "standard_error", "discrete_win_rate")
COUNTS = ("avg_length", "n_wins", "n_wins_base", "n_draws", "n_total")
HELP = {"length_controlled_winrate": "AlpacaEval's length-controlled win rate (%): the win rate the judge would "
                                     "give at equal answer lengths",
        "lc_standard_error": "AlpacaEval's SE of the LC rate (fit held fixed)",
        "win_rate": "100 × mean preference over the prompts",
        "standard_error": "AlpacaEval's SE: sd of the preferences / √n",
        "discrete_win_rate": "wins + half the draws, per prompt, in %",
        "avg_length": "average answer length (characters)",
        "n_wins_base": "prompts the baseline won", "n_draws": "prompts judged a draw"}


@st.cache_data(show_spinner=False, max_entries=16)
def cached_judge(db_path: str, dataset_id: int, sha256: str, baseline: str | None, replicates: int,
                 lc_replicates: int, alpha: float, seed: int) -> JudgeResult:
    """The judge analysis of one stored dataset (id *and* content hash) under one set of settings."""
    prefs = load_dataset(db_path, dataset_id, sha256)
    return judge(prefs, JudgeSettings(baseline=baseline, bootstrap=replicates, lc_bootstrap=lc_replicates,
                                      alpha=alpha, seed=seed))


def settings_row(baselines: list[str], rows: int) -> tuple[str | None, int, int, float, int]:
    """Baseline (a picker when the file has several), the win rate's bootstrap B, the LC interval's replicates
    (each refits every model's length GLM, so they start at 0 for large datasets), α and seed."""
    with st.container(border=True):
        c1, c2, c3, c4, c5 = st.columns([2, 1, 1, 1, 1])
        if len(baselines) > 1:
            baseline = c1.selectbox("Baseline", baselines, key="judge_baseline",
                                    help="The file judges models against several baselines: rates are against "
                                         "this one, on its rows only.")
        else:
            baseline = baselines[0] if baselines else None
            c1.markdown(f"Baseline: **{plain(baseline)}**" if baseline else "Baseline: —")
        replicates = int(c2.number_input("Bootstrap B", min_value=0, max_value=20_000, value=500, step=100,
                                         key="judge_bootstrap", help="prompt resamples of the win rate's interval; "
                                                                     "0: no interval"))
        lc_replicates = int(c3.number_input(
            "LC bootstrap", min_value=0, max_value=5_000, value=DEFAULT_LC_REPLICATES if rows <= AUTO_LC_ROWS else 0,
            step=50, key="judge_lc_bootstrap",
            help="prompt resamples of the length-controlled interval, each refitting every model's GLM; 0: no "
                 f"interval (the default above {AUTO_LC_ROWS:,} rows, where they take minutes)"))
        alpha = float(c4.number_input("α", min_value=0.001, max_value=0.5, value=0.05, step=0.01, format="%.3f",
                                      key="judge_alpha"))
        seed = int(c5.number_input("Seed", min_value=0, value=0, step=1, key="judge_seed"))
    return baseline, replicates, lc_replicates, alpha, seed


def without_empty_columns(table: pd.DataFrame) -> pd.DataFrame:
    """The table without the columns no model has a number in (the intervals when they are switched off, the
    LC columns when no model has answer lengths): Streamlit would fill them with "None"."""
    empty = [c for c in table.columns[1:] if table[c].isna().all()]
    return table.drop(columns=empty)


MISSING = "—"  # a number the data could not give: Streamlit draws a missing cell as "None"
FORMATS = {c: "%.2f" for c in PERCENT} | {c: "%.0f" for c in COUNTS}


def shown_table(table: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The win-rate table as the page shows it and its column configuration: without its empty columns; a
    column with a missing number is written as text (its numbers formatted, the missing ones an em dash),
    the others stay numbers with their formats."""
    shown = without_empty_columns(table).copy()
    config = {}
    for column in shown.columns[1:]:
        if column not in FORMATS:
            continue
        if shown[column].isna().any():
            shown[column] = [MISSING if pd.isna(v) else FORMATS[column] % v for v in shown[column]]
            config[column] = st.column_config.TextColumn(column, help=HELP.get(column), alignment="right")
        else:
            config[column] = st.column_config.NumberColumn(column, format=FORMATS[column], help=HELP.get(column))
    return shown, config


def missing_lc_caption(without: dict[str, str], table: pd.DataFrame) -> None:
    """Why a model's LC cell is a dash (only while the LC column is shown: else no model has one)."""
    if without and "length_controlled_winrate" in table and table["length_controlled_winrate"].notna().any():
        st.caption(f"{MISSING} in length_controlled_winrate: no length-controlled win rate for "
                   + "; ".join(f"**{plain(model)}** ({plain(why)})" for model, why in without.items())
                   + ". The length control needs each model's answer lengths (len_model, len_baseline).")


@st.cache_data(show_spinner="Rendering the PNG…", max_entries=4)
def _png(figure_json: str) -> bytes:
    return scatter_png(figure_json)


def downloads(result: JudgeResult, figure, stem: str, can_png: bool, png_reason: str | None) -> None:
    """JSON, markdown and CSV of the result; the scatter as PNG when the machine can render one."""
    c1, c2, c3, c4 = st.columns(4)
    c1.download_button("JSON", judge_json(result), file_name=f"{stem}-judge.json", mime="application/json",
                       key="judge_download_json", icon=":material/download:")
    c2.download_button("Markdown", judge_markdown(result), file_name=f"{stem}-JUDGE.md", mime="text/markdown",
                       key="judge_download_md", icon=":material/download:")
    c3.download_button("CSV", judge_csv(result), file_name=f"{stem}-judge.csv", mime="text/csv",
                       key="judge_download_csv", icon=":material/download:")
    if not can_png:
        c4.caption(f"No PNG: {png_reason}.")
    elif c4.toggle("PNG of the scatter", key="judge_png", help="rendered by a headless Chromium (a few seconds)"):
        c4.download_button("PNG", _png(figure.to_json()), file_name=f"{stem}-lc_vs_raw.png", mime="image/png",
                           key="judge_download_png", icon=":material/image:")
