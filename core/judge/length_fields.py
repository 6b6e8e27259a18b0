"""The length-controlled fields of a judge result, per model: ``length_controlled_winrate``,
``lc_standard_error`` and ``lc_warning`` (:func:`core.judge.length_control.length_controlled`) and the refitting
bootstrap's ``lc_ci_low``/``lc_ci_high`` (:func:`~core.judge.length_control.length_controlled_bootstrap`),
docs/methods.md §12, with where the prompt difficulty came from and why a model has none."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from core.judge.difficulty import read_difficulty
from core.judge.length_control import length_controlled, length_controlled_bootstrap
from core.judge.types import DEFAULT_LC_FIT
from core.ranking.bradley_terry import ConvergenceError

LC_COLUMNS = ("length_controlled_winrate", "lc_standard_error", "lc_warning", "lc_ci_low", "lc_ci_high")
LC_SE_NOTE = ("lc_standard_error is AlpacaEval's: the spread of the fitted per-prompt predictions over √n, with the "
              "GLM held fixed; the LC interval is a percentile bootstrap over prompts (the same draws for every "
              "model) that refits every model's GLM in each replicate, the prompt difficulty {difficulty} "
              "(docs/methods.md §12)")

LC_FIT_NOTES = {
    "alpaca": "each model's length-controlled GLM is fitted as AlpacaEval fits it: L1 penalty on every coefficient, "
              "its weight chosen from 10 values by 5-fold cross-validation over prompts (docs/methods.md §12)",
    "glm": "each model's length-controlled GLM is fitted by plain maximum likelihood, without AlpacaEval's L1 "
           "penalty (docs/methods.md §12)",
}


@dataclass(frozen=True)
class LengthFields:
    rates: pd.DataFrame  # index model; LC_COLUMNS (NaN / None where a model has no length-controlled rate)
    difficulty_source: str | None
    notes: tuple[str, ...]


def length_fields(prefs: pd.DataFrame, models: list[str], *, difficulty: pd.Series | None, replicates: int,
                  seed: int, alpha: float, refit_difficulty: bool = True,
                  lc_fit: str = DEFAULT_LC_FIT) -> LengthFields:
    """Every model's length-controlled fields (index ``models``); ``replicates`` 0: no interval.

    The interval's replicates refit every model's GLM (and the scale of its length gap) on the resampled prompts.
    The joint prompt difficulty is refitted in each replicate too unless ``refit_difficulty`` is false (then held
    at the full fit's γ, as AlpacaEval treats its γ as given); a published table is always held (docs/methods.md
    §12 describes both).
    """
    try:
        lc = length_controlled(prefs, difficulty=difficulty, lc_fit=lc_fit)
    except ConvergenceError as exc:  # the exact win rates stand without it; the notes say why it is absent
        return _absent(models, f"no length-controlled win rate: {exc}")
    rates = lc.rates.reindex(models)
    rates["lc_warning"] = rates["lc_warning"].astype(object).where(rates["lc_warning"].notna(), None)
    fitted = rates["length_controlled_winrate"].notna().any()
    notes = list(lc.notes)
    rates["lc_ci_low"] = rates["lc_ci_high"] = np.nan
    if replicates and fitted:
        gamma = difficulty if difficulty is not None or refit_difficulty else lc.difficulty
        try:
            interval = length_controlled_bootstrap(prefs, difficulty=gamma, replicates=replicates, seed=seed,
                                                   alpha=alpha, lc_fit=lc_fit)
            rates[["lc_ci_low", "lc_ci_high"]] = interval.reindex(models)[["lc_ci_low", "lc_ci_high"]]
        except ConvergenceError as exc:
            notes.append(f"no length-controlled interval: {exc}")
    if fitted:
        notes.append(LC_FIT_NOTES[lc_fit])
        held = "held at the published table" if difficulty is not None else \
            "refitted in each replicate" if refit_difficulty else "held at the full fit"
        notes.append(LC_SE_NOTE.format(difficulty=held) + (f"; {replicates} replicates" if replicates else
                                                             "; no LC interval: lc_bootstrap 0"))
    return LengthFields(rates[list(LC_COLUMNS)], lc.difficulty_source, tuple(notes))


def _absent(models: list[str], why: str) -> LengthFields:
    rates = pd.DataFrame(np.nan, index=pd.Index(models, name="model"), columns=list(LC_COLUMNS))
    rates["lc_warning"] = None
    return LengthFields(rates, None, (why,))


def read_difficulty_table(path: str | Path) -> pd.Series:
    """A published prompt-difficulty table for ``--difficulty`` (errors name the file and lines)."""
    return read_difficulty(path)
