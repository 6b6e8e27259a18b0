"""What the Judge page and the judge report show, cut from one ``JudgeResult.as_dict()`` document: the table
of raw and length-controlled win rates under AlpacaEval's names, the per-category win rates, the models whose
LC moves far from the raw rate, and the notes that say where the numbers come from (docs/methods.md §12).

Nothing is computed here that :func:`core.judge.judge` did not compute: these functions only select and
arrange, so the page, the markdown and the CSV cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

# The page's table: AlpacaEval's leaderboard names (percent scale) first, then the prompt-bootstrap intervals.
TABLE_COLUMNS = ("model", "length_controlled_winrate", "lc_ci_low", "lc_ci_high", "lc_standard_error",
                 "win_rate", "win_rate_ci_low", "win_rate_ci_high", "standard_error", "discrete_win_rate",
                 "avg_length", "n_wins", "n_wins_base", "n_draws", "n_total")


def model_rows(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The per-model rows of the document (every field but the per-category block)."""
    return [{k: v for k, v in m.items() if k != "categories"} for m in doc.get("models", [])]


def model_table(doc: Mapping[str, Any]) -> pd.DataFrame:
    """One row per model in the document's order (the baseline included), the columns of TABLE_COLUMNS
    that the document has; a value the data could not give is NaN for a number (an empty cell), never 0."""
    rows = model_rows(doc)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=[c for c in TABLE_COLUMNS])
    columns = [c for c in TABLE_COLUMNS if c in frame.columns]
    out = frame[columns].copy()
    for col in columns[1:]:
        out[col] = pd.to_numeric(out[col], errors="coerce").astype(np.float64)
    out["model"] = out["model"].astype(str)
    return out.reset_index(drop=True)


def without_lc(doc: Mapping[str, Any]) -> dict[str, str]:
    """The models that have no length-controlled win rate, each with why (the analysis' note on it: no answer
    lengths, too few prompts with lengths, or the length fit's failure); empty when every model has one."""
    notes = [str(n) for n in (doc.get("params") or {}).get("notes") or []]
    whole = next((n.split(": ", 1)[1] for n in notes if n.startswith("no length-controlled win rate: ")), None)
    out = {}
    for entry in doc.get("models", []):
        value = pd.to_numeric(pd.Series([entry.get("length_controlled_winrate")]), errors="coerce").iloc[0]
        if not np.isnan(value):
            continue
        model = str(entry["model"])
        own = f"{model}: no length-controlled win rate ("
        why = next((n[len(own):].removesuffix(")") for n in notes if n.startswith(own)), None)
        out[model] = why or whole or "the length control gives it no rate"
    return out


def category_rates(doc: Mapping[str, Any]) -> pd.DataFrame:
    """Models (rows, the document's order) × categories (columns, the document's list): win rates in percent,
    NaN where a model has no prompt of a category. Empty when the input had no categories."""
    categories = list(doc.get("categories") or [])
    models = [m for m in doc.get("models", [])]
    if not categories or not models:
        return pd.DataFrame()
    values = [[_category_value(m.get("categories", {}).get(c)) for c in categories] for m in models]
    return pd.DataFrame(values, index=pd.Index([str(m["model"]) for m in models], name="model"),
                        columns=pd.Index(categories, name="category"), dtype=np.float64)


def _category_value(entry: Any) -> float:
    if isinstance(entry, Mapping):
        entry = entry.get("win_rate")
    try:
        value = float(entry)
    except (TypeError, ValueError):
        return np.nan
    return value if np.isfinite(value) else np.nan


def lc_warnings(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(model, warning) for every model whose LC rate moves far from its raw rate (AlpacaEval's warning)."""
    return [(str(m["model"]), str(m["lc_warning"])) for m in doc.get("models", []) if m.get("lc_warning")]


def notes(doc: Mapping[str, Any]) -> list[str]:
    """Where the numbers come from: the difficulty used by the length control, the settings, and the analysis'
    own notes (which standard error is which, models skipped and why)."""
    params = doc.get("params") or {}
    out = []
    source = params.get("difficulty_source")
    if source:
        out.append(f"Prompt difficulty (γ) of the length control: {source}.")
    if params.get("bootstrap"):
        alpha = params.get("alpha", 0.05)
        out.append(f"Intervals: {100 * (1 - float(alpha)):g}% prompt bootstrap, {int(params['bootstrap']):,} "
                   f"replicates, seed {params.get('seed', 0)}.")
    out += [str(n) for n in params.get("notes") or []]
    return out


def baseline_choices(prefs: pd.DataFrame) -> list[str]:
    """The baselines a preferences frame judges its models against, sorted (one for most files)."""
    if "baseline" not in prefs or prefs.empty:
        return []
    return sorted(prefs["baseline"].astype(str).unique())


def n_models(doc: Mapping[str, Any]) -> int:
    """Models compared with the baseline (the baseline's own row not counted)."""
    return sum(1 for m in doc.get("models", []) if not m.get("is_baseline") and m.get("model") != doc.get("baseline"))


def scatter_rows(doc: Mapping[str, Any]) -> pd.DataFrame:
    """The scatter's input: model, win_rate, length_controlled_winrate, avg_length (NaN where missing)."""
    table = model_table(doc)
    for col in ("win_rate", "length_controlled_winrate", "avg_length"):
        if col not in table:
            table[col] = np.nan
    return table[["model", "win_rate", "length_controlled_winrate", "avg_length"]]
