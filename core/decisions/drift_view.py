"""Everything the Decisions page's Drift tab draws, in one call (docs/methods.md §15).

The page only draws: a headline, the table of models (changed, p, Holm-adjusted p, overall rating, the first
and last rated periods), the ratings per period (for the chart and a download), the chart's default models,
and the CSV of ``evalboard drift --format csv``. A question the votes cannot answer (no timestamps for a
calendar period, one period) is a view with a reason, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from core.charts.drift import default_models
from core.decisions.drift import DEFAULT_MIN_VOTES, Drift, drift
from core.decisions.drift_periods import timestamps_of
from core.decisions.drift_render import METHOD_NOTE, summary_line, to_csv
from core.errors import EvalBoardError
from core.ranking.request import PreparedVotes


@dataclass(frozen=True)
class DriftView:
    """The tab's content; ``reason`` (and nothing else) when the question has no answer."""

    reason: str | None = None
    result: Drift | None = field(default=None, repr=False)
    headline: str = ""
    models: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)  # one row per model
    periods: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)  # one row per period: votes, dates
    chart_models: tuple[str, ...] = ()  # shown by default: the changed models and the best-rated few
    csv: str = ""
    method: str = METHOD_NOTE


def has_timestamps(prepared: PreparedVotes) -> bool:
    """Whether calendar periods are possible: some analysed vote has a time."""
    return timestamps_of(prepared.votes) is not None


def drift_view(prepared: PreparedVotes, period: str, alpha: float, min_votes: int = DEFAULT_MIN_VOTES) -> DriftView:
    try:
        result = drift(prepared, period, alpha=alpha, min_votes=min_votes)
    except EvalBoardError as exc:
        return DriftView(reason=str(exc))
    return DriftView(result=result, headline=summary_line(result), models=_models_table(result),
                     periods=_periods_table(result), chart_models=tuple(default_models(result)), csv=to_csv(result))


def _models_table(result: Drift) -> pd.DataFrame:
    rows = []
    for m in result.models:
        rated = [p for p in m.periods if p.rating is not None]
        rows.append({"Model": m.model, "Changed": m.changed, "p": m.p_value, "p (Holm)": m.p_adjusted,
                     "Overall Elo": m.overall_rating,
                     "First rated": None if not rated else rated[0].rating,
                     "Last rated": None if not rated else rated[-1].rating,
                     "Periods rated": f"{len(rated)} of {len(m.periods)}",
                     "Note": m.note or ""})
    return pd.DataFrame(rows)


def _periods_table(result: Drift) -> pd.DataFrame:
    return pd.DataFrame([{"Period": p.period, "Votes": p.n_votes, "From": p.start, "To": p.end}
                         for p in result.periods])
