"""Robustness of the top (or of one pair's order) to dropping votes: the fewest votes found whose removal
changes it, who cast them, and an exact refit that confirms it (docs/methods.md §13).

The votes are the ones ``evalboard rank`` fits for the same request (:func:`core.ranking.request.prepare_votes`:
filters, dimension, annotator policy; golden-question votes and models without votes left out), and the
ranking is its Bradley–Terry fit with ties as half wins and the votes' weights. The count is an upper bound
found by a search (first-order influence to order the votes, exact refits to decide); on inputs small
enough to try every combination it is the exact minimum, and the result says which.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

import core.ranking.bradley_terry as bt
from core.decisions import flip_search as search
from core.errors import EvalBoardError
from core.ranking import votes_to_rank
from core.ranking.inputs import require_votes_after_policy
from core.ranking.request import PreparedVotes
from core.schema import OUTCOMES

SCORE_OF_OUTCOME = np.array([{"model_a": 1.0, "model_b": 0.0}.get(o, 0.5) for o in OUTCOMES])  # ties: ½
VOTE_COLUMNS = ("vote_id", "model_a", "model_b", "winner", "annotator_id", "game_id", "timestamp", "weight")
BY_COLUMNS = (("annotator", "annotator_id"), ("game", "game_id"), ("period", "period"))


class RobustnessError(EvalBoardError, ValueError):
    """A robustness question the votes cannot answer (an unknown model in --pair, too few models)."""


@dataclass(frozen=True)
class Robustness:
    """The answer: ``flip_votes`` votes (``None``: no set found) of ``n_votes`` whose removal lets
    ``flipped_to`` overtake ``top_model`` (with ``pair``: the model ahead of the two)."""

    top_model: str
    pair: tuple[str, str] | None
    n_votes: int
    flip_votes: int | None
    flipped_to: str | None
    verified: bool  # an exact refit without the votes flips the order
    exact_minimum: bool  # every smaller set was tried (small inputs only)
    ratings_before: dict[str, float]
    ratings_after: dict[str, float]
    votes: pd.DataFrame = field(repr=False)  # the votes to drop: VOTE_COLUMNS present, plus "row"
    by: dict[str, dict[str, int]]  # who cast them: annotator, game, period (ISO week), when known
    params: dict[str, Any]

    @property
    def flip_share(self) -> float | None:
        return None if self.flip_votes is None else self.flip_votes / self.n_votes


def parse_pair(text: str | None) -> tuple[str, str] | None:
    """``--pair A,B``: two different model names."""
    if text is None:
        return None
    names = tuple(part.strip() for part in text.split(","))
    if len(names) != 2 or not all(names) or names[0] == names[1]:
        raise RobustnessError(f"--pair takes two different model names separated by a comma (A,B), not {text!r}")
    return names


def robustness(prepared: PreparedVotes, pair: tuple[str, str] | None = None,
               exhaustive_limit: int = search.EXHAUSTIVE_LIMIT) -> Robustness:
    """The fewest votes found whose removal changes the top model (``pair``: reverses the pair's order)."""
    require_votes_after_policy(prepared.before_policy, prepared.votes, prepared.policy.legacy())
    used, golden, _ = votes_to_rank(prepared.votes)
    models = tuple(str(m) for m in used["model_a"].cat.categories)
    if len(models) < 2:
        raise RobustnessError("robustness needs votes between at least two models")
    weight = used["weight"].to_numpy(dtype=np.float64) if "weight" in used else np.ones(len(used))
    cells, vote_cell = search.pair_cells(used["model_a"].cat.codes.to_numpy(), used["model_b"].cat.codes.to_numpy(),
                                         SCORE_OF_OUTCOME[used["winner"].cat.codes.to_numpy()], weight, len(models))
    full = search.refit(cells, cells.count)
    leader, rivals = _question(full.theta, models, pair)
    only = rivals[0] if pair else None

    def flipped(fit: search.Fit) -> bool:
        return search.overtaker(fit.theta, leader, only) is not None

    best, refits, searched = search.SearchOutcome(None, None), 0, []
    candidates, unreachable = search.plausible_rivals(cells, full, leader, rivals)
    for rival, predicted in candidates:  # fewest predicted votes first: the count found only shrinks
        if best.removed is not None and predicted > search.PLAUSIBLE_FACTOR * best.removed.sum():
            break
        found = search.greedy_search(cells, full, leader, rival, flipped)
        refits += found.refits
        searched.append(models[rival])
        if found.removed is not None and (best.removed is None or found.removed.sum() < best.removed.sum()):
            best, best_rival = found, rival
    if best.removed is not None:
        best = search.prune(cells, best, full, leader, best_rival, flipped)
        refits += best.refits
    greedy_count = None if best.removed is None else int(best.removed.sum())
    combinations = search.combinations_within(cells, exhaustive_limit)
    exhaustive = combinations is not None
    if exhaustive:
        below = len(used) + 1 if greedy_count is None else greedy_count
        smaller = search.exhaustive_search(cells, full, flipped, below)
        refits += smaller.refits
        if smaller.removed is not None:
            best = smaller
    return _result(used, vote_cell, cells, models, full, leader, only, best, golden, prepared,
                   {"refits": refits, "challengers_searched": searched,
                    "challengers_not_searched": len(rivals) - len(searched), "challengers_unreachable": unreachable,
                    "greedy_flip_votes": greedy_count, "combinations": combinations, "exhaustive": exhaustive})


def _question(theta: np.ndarray, models: tuple[str, ...], pair: tuple[str, str] | None) -> tuple[int, list[int]]:
    """(the leader, the models that may overtake it): the top and every other model, or the pair's order."""
    if pair is None:
        order = np.lexsort((np.arange(len(theta)), -theta))  # the top; equal ratings: the first name
        return int(order[0]), [int(m) for m in order[1:]]
    unknown = [name for name in pair if name not in models]
    if unknown:
        shown = ", ".join(models[:20]) + (f" … ({len(models)} models)" if len(models) > 20 else "")
        raise RobustnessError(f"--pair: no analysed votes of {', '.join(map(repr, unknown))}; the models are {shown}")
    a, b = models.index(pair[0]), models.index(pair[1])
    return (a, [b]) if theta[a] >= theta[b] else (b, [a])


def _elo(theta: np.ndarray) -> np.ndarray:
    rated = ~np.isnan(theta)
    elo = np.full(len(theta), np.nan)
    elo[rated] = bt.elo_from_theta(theta[rated])
    return elo


def _result(used: pd.DataFrame, vote_cell: np.ndarray, cells: search.PairCells, models: tuple[str, ...],
            full: search.Fit, leader: int, only: int | None, best: search.SearchOutcome, golden: int,
            prepared: PreparedVotes, searched: dict[str, Any]) -> Robustness:
    before = _elo(full.theta)
    params = {**searched, "policy": prepared.policy.as_dict(), "dimension": prepared.dimension.as_dict(),
              "request": [line for line in (prepared.dimension.describe(), prepared.policy.describe()) if line],
              "golden_votes_excluded": golden, "ties": "half", "weighted": bool(np.any(cells.weight != 1.0)),
              "identifiable": full.prior == 0, "flip_margin_theta": search.FLIP_MARGIN}
    question_pair = None if only is None else (models[leader], models[only])
    if best.removed is None:
        others = np.where(np.isnan(full.theta) | (np.arange(len(models)) == leader), -np.inf, full.theta)
        runner_up = only if only is not None else int(np.argmax(others))
        ratings = {models[leader]: float(before[leader])}
        return Robustness(models[leader], question_pair, len(used), None, None, False,
                          bool(searched["exhaustive"]), ratings, {}, _vote_table(used.iloc[:0]), {},
                          {**params, "runner_up": models[runner_up]})
    after = _elo(best.fit.theta)
    winner = search.overtaker(best.fit.theta, leader, only)
    rows = _chosen_rows(vote_cell, best.removed)
    dropped = used.iloc[rows]
    return Robustness(models[leader], question_pair, len(used), int(best.removed.sum()), models[winner], True,
                      bool(searched["exhaustive"]),
                      {models[leader]: float(before[leader]), models[winner]: float(before[winner])},
                      {models[leader]: float(after[leader]), models[winner]: float(after[winner])},
                      _vote_table(dropped), _who(dropped), params)


def _chosen_rows(vote_cell: np.ndarray, removed: np.ndarray) -> np.ndarray:
    """Positions of the votes to drop: from each cell, its first ``removed[cell]`` votes in input order
    (votes of one cell are interchangeable for the fit; the earliest rows are the ones listed)."""
    by_cell = np.argsort(vote_cell, kind="stable")
    starts = np.searchsorted(vote_cell[by_cell], np.arange(len(removed)))
    chosen = [by_cell[start:start + n] for start, n in zip(starts, removed) if n > 0]
    return np.sort(np.concatenate(chosen)) if chosen else np.array([], dtype=np.int64)


def iso_week(timestamp: pd.Series) -> pd.Series:
    """The ISO week of each timestamp, e.g. 2026-W05 (empty where there is no timestamp)."""
    stamps = pd.to_datetime(timestamp, utc=True, errors="coerce")
    calendar = stamps.dt.isocalendar()
    text = calendar["year"].astype("string") + "-W" + calendar["week"].astype("string").str.zfill(2)
    return text.where(stamps.notna(), None)


def _vote_table(votes: pd.DataFrame) -> pd.DataFrame:
    """The listed votes: their input row (1 = the first vote read) and every column of VOTE_COLUMNS (None where
    the votes have no such column; weight 1 without weights), so the table has the same columns for any input."""
    table = pd.DataFrame({"row": np.asarray(votes.index, dtype=np.int64) + 1})
    for column in VOTE_COLUMNS:
        if column not in votes:
            table[column] = [1.0 if column == "weight" else None] * len(votes)
            continue
        values = votes[column]
        if column == "timestamp":
            values = pd.to_datetime(values, utc=True, errors="coerce").map(
                lambda t: None if pd.isna(t) else t.isoformat())
        table[column] = values.astype(object).where(values.notna(), None).to_numpy()
    return table


def _who(votes: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Counts of the dropped votes per annotator, game and ISO week, for the columns the votes have."""
    frame = votes.assign(period=iso_week(votes["timestamp"])) if "timestamp" in votes else votes
    out = {}
    for name, column in BY_COLUMNS:
        if column in frame and frame[column].notna().any():
            counts = frame[column].astype(object).where(frame[column].notna(), "(none)").astype(str).value_counts()
            ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
            out[name] = {key: int(value) for key, value in ordered}
    return out
