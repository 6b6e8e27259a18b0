"""Everything the Decisions page's Robustness tab draws, in one call (docs/methods.md §13).

The page only draws: the headline (the leader, the fewest votes found whose removal changes it, who overtakes,
whether a refit confirmed it and whether the count is the exact minimum), the ratings before and after of the
models involved, who cast the votes, the votes and their CSV. A question the votes cannot answer (one model,
no votes) is a view with a reason, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from core.decisions import render
from core.decisions.robustness import Robustness, robustness
from core.errors import EvalBoardError
from core.ranking import votes_to_rank
from core.ranking.request import PreparedVotes

BY_TITLES = {"annotator": "Annotator", "game": "Game", "period": "Week (ISO)"}


@dataclass(frozen=True)
class RobustnessView:
    """The tab's content; ``reason`` (and nothing else) when the question has no answer."""

    reason: str | None = None
    result: Robustness | None = field(default=None, repr=False)
    subject: str = ""  # "the top model, X" or "the order of A (ahead) and B"
    headline: str = ""
    search_note: str = ""  # exact minimum, or an upper bound found by a search
    ratings: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)  # Model, Rating before/after, Change
    who: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)  # title → (title, Votes)
    votes: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)  # the columns with a value
    csv: str = ""  # every listed vote, every column (as `evalboard robustness --format csv`)

    @property
    def found(self) -> bool:
        return self.result is not None and self.result.flip_votes is not None


def model_names(prepared: PreparedVotes) -> tuple[str, ...]:
    """The models the analysed votes rate (the choices of a pair); none when there is nothing to rank."""
    try:
        used = votes_to_rank(prepared.votes)[0]
    except EvalBoardError:
        return ()
    return tuple(sorted(str(m) for m in used["model_a"].cat.categories))


def robustness_view(prepared: PreparedVotes, pair: tuple[str, str] | None = None) -> RobustnessView:
    try:
        result = robustness(prepared, pair)
    except EvalBoardError as exc:
        return RobustnessView(reason=str(exc))
    subject = _subject(result)
    if result.flip_votes is None:
        headline = f"No set of votes found whose removal changes {subject} ({result.n_votes:,} votes analysed)."
    else:
        headline = (f"Dropping {result.flip_votes:,} of {result.n_votes:,} votes ({result.flip_share:.3%}) puts "
                    f"{result.flipped_to} ahead of {result.top_model}"
                    + (": a refit without them confirms it." if result.verified else "."))
    return RobustnessView(None, result, subject, headline, render.search_note(result), _ratings(result),
                          _who(result), _shown_votes(result), render.to_csv(result))


def _subject(result: Robustness) -> str:
    if result.pair:
        behind = result.pair[1] if result.pair[0] == result.top_model else result.pair[0]
        return f"the order of {result.top_model} (ahead) and {behind}"
    return f"the top model, {result.top_model}"


def _ratings(result: Robustness) -> pd.DataFrame:
    """The ratings of the two models whose order changes, before and after (none when nothing changes it)."""
    rows = [(model, before, result.ratings_after[model]) for model, before in result.ratings_before.items()
            if model in result.ratings_after]
    frame = pd.DataFrame(rows, columns=["Model", "Rating before", "Rating after"])
    frame["Change"] = frame["Rating after"] - frame["Rating before"]
    return frame


def _who(result: Robustness) -> dict[str, pd.DataFrame]:
    """Who cast the votes: one table per annotator, game and week, as far as the votes say."""
    return {BY_TITLES[name]: pd.DataFrame(list(counts.items()), columns=[BY_TITLES[name], "Votes"])
            for name, counts in result.by.items()}


def _shown_votes(result: Robustness) -> pd.DataFrame:
    """The votes with the columns that say something: none left empty, the weight only when votes are weighted."""
    votes = result.votes
    keep = [c for c in votes.columns if votes[c].notna().any() and (c != "weight" or result.params.get("weighted"))]
    return votes[keep].reset_index(drop=True)
