"""One request's votes, prepared once: filters, the dimension analysed, the annotator policy, honest counts.

Every analysis of a request (``rank``, ``bias``, ``annotators``, ``report`` and the dashboard pages)
reads the :class:`PreparedVotes` of :func:`prepare_votes`, so they cannot disagree on which votes they
use. Two rules are decided here and nowhere else:

- **One dimension at a time.** A judged item (an annotator's verdict on one prompt and pair) holds one
  judgement per dimension. Pooling dimensions would count an item once per dimension and inflate every
  sample size (bias tests, annotator statistics, agreement, bootstrap units), and it would mix answers to
  different questions. So an analysis uses one dimension: the one asked for, else the first (in the
  order the data first shows them, which is a campaign's order), and says so. Ranking *per* dimension
  (``--by dimension``) keeps them all, one ranking each.
- **One annotator policy.** Annotator quality is assessed once, on one row per judged item (so a
  second dimension does not double an annotator's votes, and golden items published under the first
  dimension still count when another dimension is analysed); the policy (keep, exclude, down-weight
  the unqualified) then applies to every analysis, and :class:`PolicyOutcome` says what it left out.

Counts: a *judgement* is one row (one item judged on one dimension); an *item* is what an annotator
judged once, however many dimensions it was judged on (rows of one item share annotator, query, game,
pair and time; see :func:`item_codes`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from core.annotators import screen as annotator_screen
from core.annotators.quality import DEFAULT_RULES, annotator_quality, apply_policy, parse_rules
from core.errors import EvalBoardError, SettingError
from core.filters import Filters
from core.filters import apply as apply_filters
from core.schema import POLICIES

# The columns whose values one judged item shares across its dimensions (those present are used).
ITEM_COLUMNS = ("annotator_id", "query_id", "game_id", "model_a", "model_b", "timestamp")


class DimensionError(EvalBoardError, ValueError):
    """A dimension that is not in the data, or several where one is analysed."""


def dimension_order(votes: pd.DataFrame) -> list[str]:
    """The dimensions of ``votes`` in the order their rows first show them (a campaign's order)."""
    if "dimension" not in votes or len(votes) == 0:
        return []
    column = votes["dimension"]
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        seen = pd.unique(codes[codes >= 0])
        return [str(column.cat.categories[c]) for c in seen]
    return [str(v) for v in pd.unique(column.dropna())]


def item_codes(votes: pd.DataFrame) -> np.ndarray:
    """One integer per row; rows judging the same item on different dimensions share it.

    With one dimension (or none) every row is its own item. Otherwise rows with equal item columns
    (:data:`ITEM_COLUMNS`) are paired up by their order within each dimension: the k-th such row of one
    dimension and the k-th of another are one item. Data without annotators or times thus never merges
    two items of the same dimension.
    """
    n = len(votes)
    if "dimension" not in votes or len(dimension_order(votes)) < 2:
        return np.arange(n)
    key, size = np.zeros(n, dtype=np.int64), 1
    for column in (c for c in ITEM_COLUMNS if c in votes):  # one integer key (mixed radix), column by column
        codes = _label_codes(votes[column])
        base = int(codes.max()) + 1 if n else 1
        if size * base >= 2**62:  # renumber before the key could overflow
            key = pd.factorize(key)[0].astype(np.int64)
            size = int(key.max()) + 1
        key, size = key * base + codes, size * base
    dimension = _label_codes(votes["dimension"])
    within = key * (int(dimension.max()) + 1) + dimension  # (item columns, dimension)
    order = np.argsort(within, kind="stable")  # rows in their order within each group
    ranked = within[order]
    start = np.r_[True, ranked[1:] != ranked[:-1]]
    first = np.flatnonzero(start)
    occurrence = np.empty(n, dtype=np.int64)
    occurrence[order] = np.arange(n) - first[np.cumsum(start) - 1]
    return pd.factorize(key * (int(occurrence.max()) + 1) + occurrence)[0]


def _label_codes(column: pd.Series) -> np.ndarray:
    """Non-negative integer codes of a column (missing values share one code); categoricals cost nothing."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy().astype(np.int64) + 1
    if column.dtype.kind == "M":  # times: their integer values, ranked (cheaper than hashing datetimes)
        values = column.to_numpy().view(np.int64) if not hasattr(column, "dt") or column.dt.tz is None else \
            column.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy().view(np.int64)
        return np.unique(values, return_inverse=True)[1].astype(np.int64).ravel() + 1
    return pd.factorize(column, use_na_sentinel=True)[0].astype(np.int64) + 1


def count_items(votes: pd.DataFrame) -> int:
    """Distinct judged items among the rows of ``votes``."""
    return int(len(np.unique(item_codes(votes)))) if len(votes) else 0


def one_row_per_item(votes: pd.DataFrame) -> pd.DataFrame:
    """The first row of every judged item (the frame itself when each row is an item)."""
    codes = item_codes(votes)
    first = ~pd.Series(codes).duplicated().to_numpy()
    return votes if first.all() else votes[first]


@dataclass(frozen=True)
class DimensionChoice:
    """Which dimension(s) an analysis reads. ``chosen``: "only" (the data has at most one), "request"
    (asked for), "default" (the first of several: nothing was asked) or "by" (one ranking each)."""

    analysed: tuple[str, ...]
    available: tuple[str, ...]
    chosen: str

    def as_dict(self) -> dict[str, Any]:
        return {"analysed": list(self.analysed), "available": list(self.available), "chosen": self.chosen}

    def describe(self, how: str = "choose with --dimension") -> str | None:
        """One line, e.g. "dimension: overall (1 of 2; choose with --dimension)"; None with one dimension."""
        if len(self.available) < 2:
            return None
        if self.chosen == "by":
            plural = "s" if len(self.analysed) != 1 else ""
            return f"dimension{plural}: {', '.join(self.analysed)} (one ranking per dimension)"
        name = self.analysed[0]
        position = self.available.index(name) + 1
        return f"dimension: {name} ({position} of {len(self.available)}; {how})"


@dataclass(frozen=True)
class PolicyOutcome:
    """What the annotator policy did to the analysed judgements."""

    policy: str
    unqualified: tuple[str, ...]
    judgements: int  # judgements (rows, golden ones included) of the unqualified annotators in scope
    items: int  # the judged items they stand for
    assessed: bool  # False: no annotator ids, nobody to assess
    rules: tuple[str, ...] = DEFAULT_RULES  # the qualification rules that decided who is unqualified

    @property
    def left_out(self) -> int:
        return self.judgements if self.policy == "exclude" else 0

    def as_dict(self) -> dict[str, Any]:
        # the default rules add no key, so outputs without --qualify stay as they were
        rules = {"qualification_rules": list(self.rules)} if self.rules != DEFAULT_RULES else {}
        return {"policy": self.policy, **rules, "unqualified_annotators": list(self.unqualified),
                "annotators_left_out": len(self.unqualified) if self.policy == "exclude" else 0,
                "judgements_left_out": self.left_out,
                "items_left_out": self.items if self.policy == "exclude" else 0,
                "judgements_down_weighted": self.judgements if self.policy == "downweight" else 0,
                "judgements_of_unqualified": self.judgements, "items_of_unqualified": self.items,
                "assessed": self.assessed}

    def legacy(self) -> dict[str, Any]:
        """The keys rankings have always carried (``params``): annotators, unqualified_*."""
        return {"annotators": self.policy, "unqualified_annotators": list(self.unqualified),
                "unqualified_votes": self.judgements}

    def describe(self) -> str:
        """One sentence, e.g. "annotator policy exclude: 116 judgements (58 items) of 2 unqualified
        annotators left out"."""
        head = f"annotator policy {self.policy}" + (
            f" (qualification rules: {', '.join(self.rules)})" if self.rules != DEFAULT_RULES else "")
        if not self.assessed:
            return f"{head}: no annotator ids, nobody to assess"
        if not self.unqualified:
            return f"{head}: no annotator is unqualified, nothing left out"
        who = f"{self.judgements:,} judgements ({self.items:,} items) of {len(self.unqualified)} unqualified " \
              f"annotator{'s' if len(self.unqualified) != 1 else ''}"
        return head + ": " + {"exclude": f"{who} left out", "downweight": f"{who} counted at half weight",
                              "keep": f"{who} kept"}[self.policy]


@dataclass(frozen=True)
class PreparedVotes:
    """A request's votes after filters, dimension choice and annotator policy (see the module docstring).

    ``votes``: what analyses read (the analysed dimension(s), policy applied, golden rows still there:
    each analysis leaves them out itself, annotator checks use them). ``before_policy``: the same rows
    before the policy (what the exclusion effect compares with). ``all_dimensions``: every dimension,
    policy applied (for per-dimension rankings). ``quality``: annotator quality, one row per item.
    """

    votes: pd.DataFrame = field(repr=False)
    before_policy: pd.DataFrame = field(repr=False)
    all_dimensions: pd.DataFrame = field(repr=False)
    quality: pd.DataFrame = field(repr=False)
    dimension: DimensionChoice
    policy: PolicyOutcome
    screen: annotator_screen.ScreenResult | None = field(default=None, repr=False)  # when "screen" is a rule

    @property
    def unqualified(self) -> tuple[str, ...]:
        return self.policy.unqualified

    def counts(self) -> dict[str, int]:
        """Judgements and items analysed (golden-question rows apart), and golden rows left out."""
        golden = _golden_mask(self.votes)
        used = self.votes[~golden] if golden.any() else self.votes
        return {"n_judgements": int(len(used)), "n_items": count_items(used), "n_golden": int(golden.sum())}

    def as_dict(self) -> dict[str, Any]:
        """The request's block of every JSON output."""
        return {**self.counts(), "dimension": self.dimension.as_dict(), "annotator_policy": self.policy.as_dict()}

    def lines(self, how: str = "choose with --dimension") -> list[str]:
        """The sentences every markdown output and page caption shows."""
        c = self.counts()
        out = [f"{c['n_items']:,} judged items, {c['n_judgements']:,} judgements analysed"
               + (f" ({c['n_golden']:,} golden-question judgements left out)" if c["n_golden"] else "")]
        dimension = self.dimension.describe(how)
        if dimension:
            out.append(dimension[0].upper() + dimension[1:])
        text = self.policy.describe()
        out.append(text[0].upper() + text[1:])
        return out


def _golden_mask(votes: pd.DataFrame) -> np.ndarray:
    return votes["is_golden"].to_numpy(dtype=bool) if "is_golden" in votes else np.zeros(len(votes), bool)


def choose_dimension(votes: pd.DataFrame, requested: tuple[str, ...] | str | None = None,
                     by: list[str] | tuple[str, ...] = ()) -> DimensionChoice:
    """The dimension(s) an analysis of ``votes`` reads (see the module docstring)."""
    available = tuple(dimension_order(votes))
    requested = (requested,) if isinstance(requested, str) else tuple(requested or ())
    unknown = [d for d in requested if d not in available]
    if unknown:
        raise DimensionError(f"no dimension {', '.join(map(repr, unknown))} in these votes; the dimensions are "
                             + (", ".join(available) if available else "none (no dimension column)"))
    if "dimension" in by:
        return DimensionChoice(requested or available, available, "by")
    if len(requested) > 1:
        raise DimensionError(f"analyse one dimension at a time, not {len(requested)} ({', '.join(requested)}): "
                             "pick one, or rank per dimension with --by dimension")
    if requested:
        return DimensionChoice(requested, available, "request")
    if len(available) >= 2:
        return DimensionChoice(available[:1], available, "default")
    return DimensionChoice(available, available, "only")


def prepare_votes(frame: pd.DataFrame, policy: str = "exclude", filters: Filters = Filters(),
                  dimension: str | None = None, by: list[str] | tuple[str, ...] = (), alpha: float = 0.05,
                  qualify: str | tuple[str, ...] | None = None) -> PreparedVotes:
    """Filter, choose the dimension, assess annotators once on one row per item, apply ``policy``.

    ``dimension`` (the CLI's ``--dimension``) or ``filters.dimensions`` picks the dimension; ``by``
    containing "dimension" keeps every (picked) dimension. ``alpha``: level of the golden-accuracy
    intervals in the quality table (the rules do not use it). ``qualify``: the qualification rules
    (``--qualify``, default golden,fast); with "screen", the sequential screen (docs/methods.md §17, at its
    fixed level core.annotators.screen.SCREEN_ALPHA) of the analysed dimension's votes makes the annotators
    it flags unqualified too.
    """
    rules = parse_rules(qualify)
    if policy not in POLICIES:
        raise SettingError(f"--policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    base = apply_filters(frame, replace(filters, dimensions=()))
    choice = choose_dimension(base, dimension or filters.dimensions, by)
    selected = dimension_rows(base, choice)
    screen = None
    if "annotator_id" in base and base["annotator_id"].notna().any():
        quality = annotator_quality(one_row_per_item(base), alpha, rules)
        if "screen" in rules:
            screen = annotator_screen.screen_votes(selected)
            quality = annotator_screen.mark_unqualified(quality, screen)
        unqualified = tuple(sorted(quality.loc[quality["status"] == "unqualified", "annotator_id"].astype(str)))
        assessed = True
    else:
        quality = annotator_quality(base.iloc[:0], alpha)
        unqualified, assessed = (), False
    votes, _ = apply_policy(selected, policy, unqualified=unqualified)
    everything = votes if selected is base else apply_policy(base, policy, unqualified=unqualified)[0]
    if unqualified:
        mine = selected[selected["annotator_id"].astype(object).isin(unqualified).to_numpy()]
        outcome = PolicyOutcome(policy, unqualified, int(len(mine)), count_items(mine), assessed, rules)
    else:
        outcome = PolicyOutcome(policy, (), 0, 0, assessed, rules)
    return PreparedVotes(votes, selected, everything, quality, choice, outcome, screen)


def dimension_rows(votes: pd.DataFrame, choice: DimensionChoice) -> pd.DataFrame:
    """The rows of the dimension(s) ``choice`` analyses (the frame itself when that is every row)."""
    if "dimension" not in votes or set(choice.analysed) >= set(choice.available):
        return votes
    return apply_filters(votes, Filters(dimensions=choice.analysed))
