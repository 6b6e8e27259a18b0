"""What a judge analysis takes and gives: :class:`JudgeSettings` and :class:`JudgeResult`.

The bottom of :mod:`core.judge`: nothing here computes a rate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from core.errors import EvalBoardError
from core.schema import DEFAULT_JUDGE_REPLICATES, DEFAULT_LC_REPLICATES
from core.validation import check_alpha, check_integer, check_seed

# Per-model fields, in the order of the JSON objects and the CSV columns; the first ten are AlpacaEval's
# leaderboard columns under AlpacaEval's names and scale (percent).
MODEL_FIELDS = ("model", "win_rate", "standard_error", "n_wins", "n_wins_base", "n_draws", "n_total",
                "discrete_win_rate", "length_controlled_winrate", "lc_standard_error", "avg_length",
                "win_rate_ci_low", "win_rate_ci_high", "lc_ci_low", "lc_ci_high", "lc_warning", "is_baseline")
COUNT_FIELDS = ("n_wins", "n_wins_base", "n_draws", "n_total")
CATEGORY_FIELDS = ("win_rate", "standard_error", "n_total")
# How each model's length-controlled GLM is fitted (docs/methods.md §12): "alpaca" as AlpacaEval does (L1 penalty,
# C by grouped 5-fold cross-validation), "glm" by unpenalised maximum likelihood.
LC_FITS = ("alpaca", "glm")
DEFAULT_LC_FIT = "alpaca"


class JudgeError(EvalBoardError, ValueError):
    """Settings or data a judge analysis cannot be computed from; the message says which and why."""


@dataclass(frozen=True)
class JudgeSettings:
    baseline: str | None = None  # None: the file's one baseline (an error names the choices when there are several)
    bootstrap: int = DEFAULT_JUDGE_REPLICATES  # replicates of the prompt bootstrap; 0: no intervals
    alpha: float = 0.05
    seed: int = 0
    difficulty: pd.Series | None = field(default=None, compare=False)  # a published γ per query_id (length control)
    lc_bootstrap: int = DEFAULT_LC_REPLICATES  # replicates of the length-controlled interval; 0: none
    # The LC interval's replicates refit the joint prompt difficulty too, so the interval carries γ's own
    # uncertainty (about twice the cost of holding it; docs/methods.md §12); False holds it at the full fit, as
    # AlpacaEval holds its published γ. A published table (difficulty) is never refitted.
    refit_difficulty: bool = True
    lc_fit: str = DEFAULT_LC_FIT  # one of LC_FITS: how each model's length-controlled GLM is fitted

    def __post_init__(self):
        if self.lc_fit not in LC_FITS:
            raise JudgeError(f"`lc_fit` must be one of {', '.join(LC_FITS)}, not {self.lc_fit!r}")
        check_integer(self.bootstrap, "bootstrap", 0, error=JudgeError)
        check_integer(self.lc_bootstrap, "lc_bootstrap", 0, error=JudgeError)
        if not isinstance(self.refit_difficulty, bool):
            raise JudgeError(f"`refit_difficulty` must be true or false, not {self.refit_difficulty!r}")
        check_alpha(self.alpha, error=JudgeError)
        check_seed(self.seed, error=JudgeError)
        if self.baseline is not None and (not isinstance(self.baseline, str) or not self.baseline.strip()):
            raise JudgeError(f"`baseline` must be a model name, not {self.baseline!r}")


@dataclass(frozen=True)
class JudgeResult:
    """One row per model (the baseline included, at 50 / 50) in ``rates`` (index ``model``, the columns of
    :data:`MODEL_FIELDS` after ``model``), per-category win rates in ``category_rates`` (index (model,
    category), columns :data:`CATEGORY_FIELDS`), and what was done in ``params`` and ``notes``."""

    baseline: str
    rates: pd.DataFrame = field(repr=False)
    category_rates: pd.DataFrame = field(repr=False)
    categories: tuple[str, ...]
    settings: JudgeSettings
    params: Mapping[str, Any]
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """``{"baseline", "models": [{MODEL_FIELDS…, "categories": {name: {win_rate, standard_error,
        n_total}}}], "categories": [...], "params": {...}}``; a value the data cannot give is None."""
        by_model: dict[str, dict[str, Any]] = {}
        for (model, category), row in self.category_rates.iterrows():
            by_model.setdefault(model, {})[category] = {f: _plain(row[f], f) for f in CATEGORY_FIELDS}
        models = []
        for model, row in self.rates.iterrows():
            entry = {"model": model, **{f: _plain(row[f], f) for f in MODEL_FIELDS[1:]}}
            entry["categories"] = by_model.get(model, {})
            models.append(entry)
        return {"baseline": self.baseline, "models": models, "categories": list(self.categories),
                "params": {**self.params, "notes": list(self.notes)}}


def _plain(value: Any, name: str) -> Any:
    """A JSON-ready value: counts as int, NaN (a number the data cannot give) as None."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if value is None or value is pd.NA or (isinstance(value, float) and not math.isfinite(value)):
        return None
    if name in COUNT_FIELDS or name == "avg_length":
        return int(value)
    if name == "is_baseline":
        return bool(value)
    return value
