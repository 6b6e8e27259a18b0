"""Drift over time: each model's Bradley–Terry rating per period with intervals, anchored so periods compare,
and a test per model of a change over the periods, Holm-adjusted (docs/methods.md §15).

The votes are the ones ``evalboard rank`` fits for the same request (:func:`core.ranking.request.prepare_votes`:
filters, dimension, annotator policy; golden-question votes and models without votes left out), ties as half
wins, with the votes' weights. Periods: :mod:`core.decisions.drift_periods`; the fit and the tests:
:mod:`core.decisions.drift_fit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import core.ranking.bradley_terry as bt
from core.decisions.drift_fit import period_cells
from core.decisions.drift_model import drift_arrays, z_value
from core.decisions.drift_periods import DriftError, PeriodChoice, cut_periods, parse_period
from core.ranking import votes_to_rank
from core.ranking.inputs import require_votes_after_policy
from core.ranking.request import PreparedVotes
from core.schema import OUTCOMES
from core.validation import check_alpha, check_integer

DEFAULT_PERIOD = "week"
DEFAULT_MIN_VOTES = 20
SCORE_OF_OUTCOME = np.array([{"model_a": 1.0, "model_b": 0.0}.get(o, 0.5) for o in OUTCOMES])  # ties: ½

__all__ = ["DEFAULT_MIN_VOTES", "DEFAULT_PERIOD", "Drift", "DriftError", "ModelDrift", "PeriodRating", "drift",
           "parse_period"]


@dataclass(frozen=True)
class PeriodRating:
    """One model in one period: its anchored Elo rating and interval, or None (and why) when not rated."""

    period: str
    rating: float | None
    ci_low: float | None
    ci_high: float | None
    n_votes: int
    note: str | None = None


@dataclass(frozen=True)
class ModelDrift:
    """One model: its test of a change over the periods (None when rated in fewer than two) and its periods."""

    model: str
    changed: bool
    p_value: float | None
    p_adjusted: float | None
    statistic: float | None
    df: int
    overall_rating: float
    anchor: bool  # anchors the periods' ratings (not found to change)
    periods: tuple[PeriodRating, ...]
    note: str | None = None

    @property
    def ratings(self) -> list[float | None]:
        return [p.rating for p in self.periods]


@dataclass(frozen=True)
class PeriodInfo:
    period: str
    start: str | None
    end: str | None
    n_votes: int


@dataclass(frozen=True)
class Drift:
    """The answer: ``models`` sorted changed first, then by p-value, then by overall rating."""

    period: str  # the --period choice: day, week, month or N-votes
    periods: tuple[PeriodInfo, ...]
    models: tuple[ModelDrift, ...]
    alpha: float
    min_votes: int
    n_votes: int
    notes: tuple[str, ...]
    params: dict[str, Any]

    @property
    def changed(self) -> tuple[str, ...]:
        return tuple(m.model for m in self.models if m.changed)


def drift(prepared: PreparedVotes, period: str | PeriodChoice = DEFAULT_PERIOD, alpha: float = 0.05,
          min_votes: int = DEFAULT_MIN_VOTES) -> Drift:
    """Ratings per period and the change test of every model (docs/methods.md §15)."""
    alpha = check_alpha(alpha, error=DriftError)
    min_votes = check_integer(min_votes, "--min-votes", 1, error=DriftError)
    choice = period if isinstance(period, PeriodChoice) else parse_period(period)
    require_votes_after_policy(prepared.before_policy, prepared.votes, prepared.policy.legacy())
    used, golden, _ = votes_to_rank(prepared.votes)
    used = used.reset_index(drop=True)
    models = tuple(str(m) for m in used["model_a"].cat.categories)
    cut = cut_periods(used, choice)
    kept = cut.code >= 0
    if len(cut.labels) < 2:
        span = f" ({cut.labels[0]})" if cut.labels else ""
        raise DriftError(f"drift needs votes in at least two periods; these votes fall in one {choice.name} "
                         f"period{span}: choose a shorter --period (day, or N-votes such as "
                         f"{max(2, int(kept.sum()) // 4)}-votes)")
    weight = used["weight"].to_numpy(dtype=np.float64) if "weight" in used else np.ones(len(used))
    score = SCORE_OF_OUTCOME[used["winner"].cat.codes.to_numpy()]
    cells = period_cells(cut.code[kept], used["model_a"].cat.codes.to_numpy()[kept],
                         used["model_b"].cat.codes.to_numpy()[kept], score[kept], weight[kept],
                         len(cut.labels), len(models))
    arrays = drift_arrays(cells, alpha, min_votes)
    period_votes = np.bincount(cut.code[kept], minlength=len(cut.labels))
    infos = tuple(PeriodInfo(label, start, end, int(n))
                  for label, start, end, n in zip(cut.labels, cut.starts, cut.ends, period_votes))
    rows = _model_rows(models, cut.labels, arrays, z_value(alpha), min_votes)
    params = {"policy": prepared.policy.as_dict(), "dimension": prepared.dimension.as_dict(),
              "request": [line for line in (prepared.dimension.describe(), prepared.policy.describe()) if line],
              "golden_votes_excluded": golden, "ties": "half", "weighted": bool(np.any(weight != 1.0)),
              "test": "likelihood_ratio", "adjustment": "holm", "anchor_rounds": arrays.rounds,
              "anchor_models": [m for m, a in zip(models, arrays.anchor) if a]}
    return Drift(choice.name, infos, rows, alpha, min_votes, int(kept.sum()), cut.notes, params)


def _model_rows(models, labels, arrays, z: float, min_votes: int) -> tuple[ModelDrift, ...]:
    scale = bt.ELO_SCALE
    overall = bt.ELO_BASE + scale * arrays.overall
    rows = []
    for m, name in enumerate(models):
        periods = []
        for p, label in enumerate(labels):
            n = int(arrays.counts[p, m])
            if arrays.rated[p, m] and np.isnan(arrays.rating[p, m]):
                periods.append(PeriodRating(label, None, None, None, n, "no other model has enough votes in this "
                                            "period to compare with"))
            elif arrays.rated[p, m]:
                centre = bt.ELO_BASE + scale * arrays.rating[p, m]
                half = z * scale * arrays.se[p, m]
                periods.append(PeriodRating(label, float(centre), float(centre - half), float(centre + half), n))
            else:
                why = "no votes in this period" if n == 0 else f"fewer than {min_votes} votes in this period"
                periods.append(PeriodRating(label, None, None, None, n, why))
        tested = arrays.df[m] >= 1
        rows.append(ModelDrift(
            name, bool(arrays.changed[m]), float(arrays.p_value[m]) if tested else None,
            float(arrays.p_adjusted[m]) if tested else None, float(arrays.statistic[m]) if tested else None,
            int(arrays.df[m]), float(overall[m]), bool(arrays.anchor[m]), tuple(periods),
            None if tested else f"rated in fewer than two periods (at least {min_votes} votes each): not tested"))
    rows.sort(key=lambda r: (not r.changed, r.p_value if r.p_value is not None else 2.0, -r.overall_rating))
    return tuple(rows)
