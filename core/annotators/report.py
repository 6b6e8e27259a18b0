"""The ``evalboard annotators`` report (docs/methods.md §7): who is qualified and why, how much the annotators
agree on the items several of them rated, and what excluding the unqualified does to the BT ranking.

``build(votes, alpha)`` -> :class:`AnnotatorReport`; :mod:`core.annotators.render` gives its JSON
contract and markdown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from core.annotators.agreement import agreement_from_votes
from core.annotators.screen import ScreenResult, screen_votes
from core.io.votes import votes_from_frame
from core.ranking import RankingError, RankSettings, rank_votes
from core.ranking.request import PreparedVotes, prepare_votes


@dataclass(frozen=True)
class RankShift:
    """One model's BT rank and Elo with every vote and after the annotator policy."""
    model: str
    rank_before: int
    rating_before: float
    rank_after: int | None  # None: the policy left the model no vote
    rating_after: float  # NaN when rank_after is None


@dataclass(frozen=True)
class PolicyComparison:
    """BT (no intervals) before and after the annotator policy: every model ranked with all votes, by name;
    no rows and a ``reason`` when the votes cannot be ranked."""
    policy: str
    rows: tuple[RankShift, ...] = ()
    reason: str | None = None

    @property
    def changed(self) -> tuple[RankShift, ...]:
        """The models whose rank changes, a model the policy removed included."""
        return tuple(r for r in self.rows if r.rank_after != r.rank_before)

    @property
    def moved(self) -> int:
        """Models still ranked after the policy whose rank changes."""
        return sum(r.rank_after is not None and r.rank_after != r.rank_before for r in self.rows)


@dataclass(frozen=True)
class AnnotatorReport:
    alpha: float
    n_votes: int  # judged items behind the quality table (one per item, whatever its dimensions)
    quality: pd.DataFrame  # annotator_quality(): one row per annotator
    agreement: dict[str, Any]  # agreement_summary()
    exclusion_effect: dict[str, Any] = field(default_factory=dict)
    request: dict[str, Any] = field(default_factory=dict)  # core.ranking.request.PreparedVotes.as_dict()
    request_lines: tuple[str, ...] = ()  # the same, as sentences
    comparison: PolicyComparison | None = None  # every model's rank before and after the policy
    screen: ScreenResult | None = None  # the sequential screen of the analysed votes (docs/methods.md §17)


def build(votes: pd.DataFrame, alpha: float = 0.05, policy: str = "exclude") -> AnnotatorReport:
    """Quality table, agreement block and exclusion effect for a canonical votes frame."""
    return build_prepared(prepare_votes(votes, policy, alpha=alpha), alpha)


def build_prepared(prepared: PreparedVotes, alpha: float = 0.05) -> AnnotatorReport:
    """The report of a request's prepared votes (core.ranking.request): quality on one row per judged item,
    agreement on the analysed dimension's judgements after the policy, the effect of the policy, and the
    sequential screen of the analysed dimension's votes before the policy (the one the qualification rule
    "screen" used, when it was asked for)."""
    quality = prepared.quality
    comparison = policy_comparison(prepared, alpha)
    screen = prepared.screen if prepared.screen is not None else screen_votes(prepared.before_policy)
    return AnnotatorReport(alpha=alpha, n_votes=int(quality["n_votes"].sum()) if len(quality) else 0,
                           quality=quality, agreement=agreement_from_votes(prepared.votes),
                           exclusion_effect=_effect(prepared, comparison), request=prepared.as_dict(),
                           request_lines=tuple(prepared.lines()), comparison=comparison, screen=screen)


def _rankable(votes: pd.DataFrame) -> pd.DataFrame:
    """rank_votes wants the categorical model columns core.io produces; parse a plain frame first."""
    if isinstance(votes.get("model_a", pd.Series(dtype=object)).dtype, pd.CategoricalDtype):
        return votes
    return votes_from_frame(votes, "votes")[0]


def exclusion_effect(votes: pd.DataFrame, alpha: float = 0.05, policy: str = "exclude") -> dict[str, Any]:
    """BT ranks (ci="none") with all votes and after the annotator ``policy`` (see :func:`policy_effect`)."""
    return policy_effect(prepare_votes(votes, policy, alpha=alpha), alpha)


def policy_comparison(prepared: PreparedVotes, alpha: float = 0.05) -> PolicyComparison:
    """BT ranks (ci="none") of the analysed judgements before and after the request's annotator policy."""
    outcome = prepared.policy
    settings = RankSettings(scheme="bt", ci="none", alpha=alpha)
    changed = outcome.judgements and outcome.policy != "keep"
    try:
        before = rank_votes(_rankable(prepared.before_policy), settings)
        after = rank_votes(_rankable(prepared.votes), settings) if changed else before
    except (RankingError, ValueError) as exc:
        return PolicyComparison(outcome.policy, reason=str(exc))
    b = {r.model: r for r in before.rows}
    a = {r.model: r for r in after.rows}
    return PolicyComparison(outcome.policy, tuple(
        RankShift(model, b[model].rank, b[model].rating, a[model].rank if model in a else None,
                  a[model].rating if model in a else np.nan) for model in sorted(b)))


def policy_effect(prepared: PreparedVotes, alpha: float = 0.05) -> dict[str, Any]:
    """BT ranks (ci="none") of the analysed judgements before and after the request's annotator policy;
    lists the models whose rank changes (rank None = the model has no vote left)."""
    return _effect(prepared, policy_comparison(prepared, alpha))


def _effect(prepared: PreparedVotes, comparison: PolicyComparison) -> dict[str, Any]:
    outcome = prepared.policy
    out: dict[str, Any] = {"policy": outcome.policy, "unqualified_annotators": list(outcome.unqualified),
                           "votes_excluded": outcome.left_out, "judgements_left_out": outcome.left_out,
                           "judgements_down_weighted": outcome.as_dict()["judgements_down_weighted"]}
    if comparison.reason is not None:
        return {**out, "available": False, "reason": comparison.reason}
    changes = [{"model": c.model, "rank_before": c.rank_before, "rank_after": c.rank_after,
                "rating_before": c.rating_before, "rating_after": c.rating_after} for c in comparison.changed]
    return {**out, "available": True, "n_models": len(comparison.rows), "rank_changes": changes}
