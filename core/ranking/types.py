"""What a ranking is: its settings, one row per model, and typed records of how it was fitted
(:class:`FitInfo`) and of which votes the request let in (:class:`PolicySummary`).

The bottom of :mod:`core.ranking`: every scheme module builds these and nothing here imports a scheme.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import pandas as pd

from core.errors import EvalBoardError
from core.ranking.bootstrap import DEFAULT_REPLICATES, check_settings
from core.ranking.request import DimensionChoice, PolicyOutcome
from core.schema import CI_METHODS, SCHEMES, STYLE_FEATURE_CHOICES, TIE_MODELS
from core.validation import check_choice, check_seed


class RankingError(EvalBoardError, ValueError):
    """Settings or data a ranking cannot be computed from; the message says which and why."""


@dataclass(frozen=True)
class RankSettings:
    scheme: str = "bt"
    ties: str = "half"
    ci: str = "bootstrap"
    replicates: int = DEFAULT_REPLICATES
    alpha: float = 0.05
    seed: int = 0
    anchor: tuple[str, float] | None = None  # (model, rating): that model is shown at that rating
    features: tuple[str, ...] | None = None  # scheme style: what to control for (None: the default four)

    def __post_init__(self):
        for name, value, allowed in (("scheme", self.scheme, SCHEMES), ("ties", self.ties, TIE_MODELS),
                                     ("ci", self.ci, CI_METHODS)):
            check_choice(value, name, allowed, error=RankingError)
        check_settings(self.replicates, self.alpha)
        check_seed(self.seed, error=RankingError)
        if self.scheme == "crowd" and self.ci == "bootstrap":
            raise RankingError("scheme crowd gives intervals from the observed information of its joint fit (ci "
                               "sandwich, its default) or none; bootstrap refits are not offered for it")
        if self.ties == "davidson" and self.scheme != "bt":
            raise RankingError("`ties davidson` is a Bradley–Terry tie model: use it with scheme bt")
        if self.features is not None:
            check_features(self.features, self.scheme)


def check_features(features: tuple[str, ...], scheme: str) -> None:
    """``--features``: distinct names among :data:`STYLE_FEATURE_CHOICES`, for scheme style only."""
    if scheme != "style":
        raise RankingError("`features` chooses what scheme style controls for: use it with scheme style")
    unknown = [f for f in features if f not in STYLE_FEATURE_CHOICES]
    if unknown or not features or len(set(features)) != len(features):
        raise RankingError(f"`features` must be distinct names among {', '.join(STYLE_FEATURE_CHOICES)}, separated by "
                           f"commas; got {','.join(features) or 'nothing'}"
                           + (f" ({', '.join(map(repr, unknown))} unknown)" if unknown else ""))


@dataclass(frozen=True)
class ModelRow:
    model: str
    rank: int  # 1 + number of models rated strictly higher
    rating: float  # Elo for bt/ipw/adjusted; a win rate in [0, 1] for winrate/stratified
    strength: float  # π with mean 1 (BT schemes); the win rate again otherwise
    ci_low: float
    ci_high: float
    rank_low: int | None
    rank_high: int | None
    arena_rank: int | None  # 1 + number of models whose CI lies wholly above this one's
    win_rate: float  # observed win rate against the field, ties half
    n_votes: int
    interval_note: str | None = None  # why there is no interval (too few votes, resamples that cannot vary)


@dataclass(frozen=True)
class Covariate:
    name: str
    estimate: float
    se: float
    mean: float | None = None  # scheme style: the feature's mean and sd before standardising
    sd: float | None = None
    low: float | None = None  # scheme style: the interval of the estimate at the settings' alpha (sandwich:
    high: float | None = None  # normal; bootstrap: percentile); views only, not in the JSON's covariates


@dataclass(frozen=True)
class AnnotatorReliability:
    """Scheme crowd: one annotator's reliability η (the chance they vote by the true order) and its interval."""

    annotator_id: str
    reliability: float
    ci_low: float | None
    ci_high: float | None
    n_votes: int


@dataclass(frozen=True)
class FitInfo:
    """How a ranking was fitted and its intervals computed: the ``params`` of ``evalboard rank`` beyond
    the settings. A scheme sets only the fields that apply to it; ``reported`` keeps which ones, in the
    order they were set, which is the order the outputs list them in (see :meth:`with_`)."""

    # the solver
    method: str | None = None  # "mm": Hunter's MM (docs/methods.md §2)
    ties_model: str | None = None  # "davidson"
    nu: float | None = None  # Davidson's tie parameter ν
    iterations: int | None = None
    converged: bool | None = None  # False: the solver stopped at its iteration limit
    prior: float | None = None  # virtual ties per model (0: the pure MLE; docs/methods.md §2 "Remedy")
    components: int | None = None  # strongly connected components of the "i beat j" graph
    tolerance: float | None = None
    notes: tuple[str, ...] | None = None  # what a win-rate matrix's conversion had to assume
    # the intervals
    interval: str | None = None  # how the intervals were computed, when not the settings' ci says it
    replicates: int | None = None  # bootstrap replicates drawn
    nonidentifiable_replicates: int | None = None  # replicates refitted with the prior
    replicates_not_converged: int | None = None
    protocol: str | None = None
    covariance: str | None = None
    rank_intervals: str | None = None
    # scheme ipw (docs/methods.md §6)
    n_eff: float | None = None
    design_effect: float | None = None
    empty_cells: int | None = None
    grid_cells: int | None = None
    truncated: int | None = None
    cell: str | None = None
    weights: str | None = None
    # scheme stratified (docs/methods.md §5)
    strata: str | None = None
    weighted: bool | None = None
    strata_used: dict[str, int] | None = None
    # scheme adjusted (docs/methods.md §9)
    length_feature: str | None = None
    length_mean: float | None = None
    length_sd: float | None = None
    rows_fitted: int | None = None
    # scheme style (docs/methods.md §11)
    features: tuple[str, ...] | None = None
    features_dropped: tuple[str, ...] | None = None
    penalty: float | None = None
    reported: tuple[str, ...] = ()

    def with_(self, **values: Any) -> FitInfo:
        """These fields set; a field set for the first time is reported after the ones already set."""
        new = tuple(name for name in values if name not in self.reported)
        return replace(self, **values, reported=self.reported + new)

    def as_dict(self) -> dict[str, Any]:
        return {name: _plain(getattr(self, name)) for name in self.reported}


@dataclass(frozen=True)
class PolicySummary:
    """Which votes a votes ranking read: golden-question votes left out, models left without votes,
    the annotator policy's outcome, the dimension analysed and the judged items behind the votes.
    Absent (None) where it does not apply: counts tables and matrices carry at most a dimension."""

    golden_votes_excluded: int | None = None
    models_without_votes: tuple[str, ...] | None = None
    outcome: PolicyOutcome | None = None
    dimension: DimensionChoice | None = None
    n_items: int | None = None
    n_judgements: int | None = None

    @property
    def unqualified_annotators(self) -> tuple[str, ...]:
        return () if self.outcome is None else self.outcome.unqualified

    def as_dict(self) -> dict[str, Any]:
        """The keys every votes ranking has always carried in its ``params``, in their order."""
        out: dict[str, Any] = {}
        if self.golden_votes_excluded is not None:
            out["golden_votes_excluded"] = self.golden_votes_excluded
        if self.models_without_votes:
            out["models_without_votes"] = list(self.models_without_votes)
        if self.outcome is not None:
            out.update(self.outcome.legacy(), annotator_policy=self.outcome.as_dict())
        if self.dimension is not None:
            out["dimension"] = self.dimension.as_dict()
        if self.n_items is not None:
            out.update(n_items=self.n_items, n_judgements=self.n_judgements)
        return out


@dataclass(frozen=True)
class Ranking:
    settings: RankSettings
    n_votes: int
    n_models: int
    identifiable: bool
    rows: tuple[ModelRow, ...]
    covariates: tuple[Covariate, ...] = ()
    fit: FitInfo = FitInfo()
    policy: PolicySummary = PolicySummary()
    plain: Ranking | None = None  # for schemes adjusted, style and crowd: the plain BT ranking of the same votes
    annotators: tuple[AnnotatorReliability, ...] = ()  # scheme crowd: every annotator's reliability

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([asdict(r) for r in self.rows])


def _plain(value: Any) -> Any:
    """Tuples as lists, as the outputs have always shown them."""
    return list(value) if isinstance(value, tuple) else value


