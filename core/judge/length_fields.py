"""The length-controlled fields of a judge result, per model: ``length_controlled_winrate``,
``lc_standard_error``, ``lc_warning`` and the refitting bootstrap's ``lc_ci_low``/``lc_ci_high``
(docs/methods.md §12), with where the prompt difficulty came from and why a model has none."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.judge.types import JudgeError

LC_COLUMNS = ("length_controlled_winrate", "lc_standard_error", "lc_warning", "lc_ci_low", "lc_ci_high")


@dataclass(frozen=True)
class LengthFields:
    rates: pd.DataFrame  # index model; LC_COLUMNS (NaN / None where a model has no length-controlled rate)
    difficulty_source: str | None
    notes: tuple[str, ...]


def length_fields(prefs: pd.DataFrame, models: list[str], *, difficulty: pd.Series | None, replicates: int,
                  seed: int, alpha: float) -> LengthFields:
    """Not computed in this build: every model's length-controlled fields are absent, and a note says so."""
    rates = pd.DataFrame({c: np.nan for c in LC_COLUMNS if c != "lc_warning"}, index=pd.Index(models, name="model"))
    rates["lc_warning"] = None
    return LengthFields(rates[list(LC_COLUMNS)], None, ("no length-controlled win rate: length control is not "
                                                        "available in this build",))


def read_difficulty_table(path: str) -> pd.Series:
    """A published prompt-difficulty table for ``--difficulty``: refused in this build, which fits no length
    control."""
    raise JudgeError(f"--difficulty {path}: length control is not available in this build")
