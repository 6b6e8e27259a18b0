"""One judge analysis: every model's AlpacaEval win rates against the chosen baseline, their paired prompt
bootstrap, per-category win rates and the length-controlled fields (:func:`judge`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from core.judge.length_fields import LC_COLUMNS, length_fields
from core.judge.types import CATEGORY_FIELDS, MODEL_FIELDS, JudgeError, JudgeResult, JudgeSettings
from core.judge.winrate import bootstrap_win_rates, head_to_head

__all__ = ["JudgeError", "JudgeResult", "JudgeSettings", "judge"]

SE_NOTE = ("standard_error is AlpacaEval's: 100 × sd / √n over the prompts, for a fixed judge; the win-rate "
           "interval is a percentile bootstrap over prompts, the same draws for every model")


def judge(prefs: pd.DataFrame, settings: JudgeSettings | None = None, *, input_notes: Sequence[str] = ()
          ) -> JudgeResult:
    """Win rates of every model of ``prefs`` (the normalised frame of core.io.preferences) against one
    baseline, sorted by the length-controlled win rate where there is one, else by the win rate.

    ``input_notes``: what reading the input said (the scale of the preferences, judge failures left out …),
    carried into the result's notes first.
    """
    settings = settings or JudgeSettings()
    baseline = choose_baseline(prefs, settings.baseline)
    rows = prefs[prefs["baseline"].astype(str) == baseline].reset_index(drop=True)
    # Labels as plain text, whatever the frame's origin (a file, or a stored dataset's categoricals).
    rows = rows.assign(**{c: rows[c].astype(str) for c in ("model", "baseline", "query_id", "category", "judge")
                          if c in rows})
    notes: list[str] = list(input_notes)
    others = sorted(set(prefs["baseline"].astype(str).unique()) - {baseline})
    if others:
        notes.append(f"{len(prefs) - len(rows):,} rows against other baselines ({', '.join(others)}) left out")
    rates = head_to_head(rows, ["model"])
    rates = _with_baseline_row(rates, rows, baseline, notes)
    models = list(rates.index)
    if settings.bootstrap:
        judged = sorted(rows["model"].astype(str).unique())  # the baseline may have no rows of its own
        rates = rates.join(bootstrap_win_rates(rows, judged, settings.bootstrap, settings.seed, settings.alpha))
    else:
        rates["win_rate_ci_low"] = rates["win_rate_ci_high"] = np.nan
        notes.append("no win-rate interval: bootstrap 0")
    lc = length_fields(rows, models, difficulty=settings.difficulty, replicates=settings.lc_bootstrap,
                       seed=settings.seed, alpha=settings.alpha, refit_difficulty=settings.refit_difficulty,
                       lc_fit=settings.lc_fit)
    rates = rates.join(lc.rates[list(LC_COLUMNS)])
    notes += lc.notes
    _baseline_at_half(rates, baseline, win_interval=settings.bootstrap > 0, lc_interval=settings.lc_bootstrap > 0)
    rates["is_baseline"] = rates.index == baseline
    has_lc = bool(rates["length_controlled_winrate"].drop(baseline).notna().any())
    sort_by = "length_controlled_winrate" if has_lc else "win_rate"
    rates = rates.assign(_key=rates[sort_by].fillna(-1.0)).sort_values(["_key", "win_rate"], ascending=False,
                                                                       kind="stable")
    rates = rates[list(MODEL_FIELDS[1:])]
    categories, category_rates = _category_rates(rows, baseline)
    notes.append(SE_NOTE)
    params = {"baseline": baseline, "bootstrap": settings.bootstrap, "lc_bootstrap": settings.lc_bootstrap,
              "refit_difficulty": settings.refit_difficulty, "lc_fit": settings.lc_fit,
              "alpha": settings.alpha, "seed": settings.seed,
              "n_models": int((~rates["is_baseline"]).sum()), "n_prompts": int(rows["query_id"].nunique()),
              "n_rows": len(rows), "sorted_by": sort_by, "difficulty_source": lc.difficulty_source,
              "judges": sorted(rows["judge"].astype(str).unique()) if "judge" in rows else []}
    return JudgeResult(baseline, rates, category_rates, categories, settings, params, tuple(notes))


def choose_baseline(prefs: pd.DataFrame, wanted: str | None) -> str:
    """The baseline the models are compared with: ``wanted``, or the file's only one."""
    if len(prefs) == 0:
        raise JudgeError("no judged preferences to analyse")
    baselines = sorted(prefs["baseline"].astype(str).unique())
    if wanted is None:
        if len(baselines) > 1:
            raise JudgeError(f"the file compares with {len(baselines)} baselines ({', '.join(baselines)}): choose "
                             "one with --baseline NAME")
        return baselines[0]
    if wanted not in baselines:
        raise JudgeError(f"no rows against baseline {wanted!r}; the baselines are: {', '.join(baselines)}")
    return wanted


def _with_baseline_row(rates: pd.DataFrame, rows: pd.DataFrame, baseline: str, notes: list[str]) -> pd.DataFrame:
    """The baseline against itself: from its own rows when the file has them (AlpacaEval's has), else a draw on
    every prompt, by definition."""
    if baseline in rates.index:
        return rates
    prompts = rows.drop_duplicates("query_id")
    n = len(prompts)
    length = np.floor(prompts["len_baseline"].mean()) if "len_baseline" in rows else np.nan
    own = pd.DataFrame({"win_rate": 50.0, "standard_error": 0.0, "n_wins": 0, "n_wins_base": 0, "n_draws": n,
                        "n_total": n, "discrete_win_rate": 50.0, "avg_length": length}, index=[baseline])
    notes.append(f"the baseline {baseline} is shown at 50 / 50 by definition (a draw with itself on each of the "
                 f"{n:,} prompts)")
    return pd.concat([rates, own]).rename_axis("model")


def _baseline_at_half(rates: pd.DataFrame, baseline: str, win_interval: bool, lc_interval: bool) -> None:
    """The baseline against itself is a draw by definition: length control (no length difference to fit) and
    every bootstrap replicate give 50."""
    rates.loc[baseline, "length_controlled_winrate"] = 50.0
    rates.loc[baseline, "lc_standard_error"] = 0.0
    rates.loc[baseline, "lc_warning"] = None
    if win_interval:
        rates.loc[baseline, ["win_rate_ci_low", "win_rate_ci_high"]] = 50.0
    if lc_interval:
        rates.loc[baseline, ["lc_ci_low", "lc_ci_high"]] = 50.0


def _category_rates(rows: pd.DataFrame, baseline: str) -> tuple[tuple[str, ...], pd.DataFrame]:
    if "category" not in rows:
        empty = pd.DataFrame(columns=list(CATEGORY_FIELDS),
                             index=pd.MultiIndex.from_arrays([[], []], names=["model", "category"]))
        return (), empty
    table = head_to_head(rows, ["model", "category"])[list(CATEGORY_FIELDS)]
    categories = tuple(sorted(rows["category"].astype(str).unique()))
    if baseline not in table.index.get_level_values("model"):
        counts = rows.drop_duplicates("query_id").groupby("category")["query_id"].size()
        own = pd.DataFrame({"win_rate": 50.0, "standard_error": 0.0, "n_total": counts.to_numpy()},
                           index=pd.MultiIndex.from_product([[baseline], counts.index], names=["model", "category"]))
        table = pd.concat([table, own])
    return categories, table
