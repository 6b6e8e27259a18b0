"""What the Rankings page and the report show of a style-controlled ranking (scheme ``style``,
docs/methods.md §11): the coefficients as odds multipliers with their intervals and a sentence each, the
plain → controlled rank of every model (the slope chart's rows), the models that move most, and what the
fit could not control for.

One call, :func:`style_view`, on the :class:`~core.ranking.types.Ranking` the scheme returns; nothing here
fits anything again."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from core.formats import undefined_as_null
from core.ranking.render import rank_changes
from core.ranking.types import Ranking, RankingError
from core.schema import DEFAULT_STYLE_FEATURES

MOVERS_SHOWN = 10  # the models that move most, as a list; the slope chart shows every model
# What one standard deviation "more" of each feature is, in words (d = (a − b)/(a + b + 1) per feature).
FEATURE_WORDS = {"length": "relative length", "headers": "relative number of headers",
                 "lists": "relative number of list items", "bold": "relative number of bold spans"}
FEATURE_LABELS = {"length": "Length", "headers": "Headers", "lists": "List items", "bold": "Bold spans",
                  "position": "Shown on the left"}
HOW_TO_GET = ("load the votes with both answers' texts (columns answer_a/answer_b or completion_a/completion_b) "
              "or with the per-side counts (len_a, len_b, headers_a, headers_b, lists_a, lists_b, bold_a, bold_b)")
CLI_HINT = "`evalboard rank VOTES --scheme style` prints the same ranking, coefficients and rank changes"


@dataclass(frozen=True)
class Coefficient:
    """One style feature's effect: β on the log-odds scale per standard deviation of z, its odds
    multiplier exp(β) and both intervals at the ranking's α, and the feature's d before standardising."""
    feature: str
    label: str
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    odds: float
    odds_low: float
    odds_high: float
    mean: float  # of d = (a − b)/(a + b + 1) over the analysed votes (position: the constant 1)
    sd: float  # population sd of d (position: 0, it is not standardised)
    direction_known: bool  # the interval of the odds multiplier excludes 1
    sentence: str


@dataclass(frozen=True)
class RankMove:
    """One model's rank and rating without (plain Bradley–Terry) and with style control; ``change`` > 0:
    the model moves up once style is held equal."""
    model: str
    plain_rank: int
    controlled_rank: int
    change: int
    plain_rating: float
    controlled_rating: float


@dataclass(frozen=True)
class StyleView:
    coefficients: tuple[Coefficient, ...]
    moves: tuple[RankMove, ...]  # every model, in the controlled ranking's order
    movers: tuple[RankMove, ...]  # the models that move most (largest |change| first), at most MOVERS_SHOWN
    n_moved: int  # models whose rank changes
    features: tuple[str, ...]  # controlled for
    dropped: tuple[str, ...]  # asked for but dropped (zero spread)
    unavailable: tuple[str, ...]  # of the default four: the votes do not carry them
    notes: tuple[str, ...]
    level: str  # "95%"
    interval: str  # how the intervals were computed

    def as_dict(self) -> dict:
        """The view as plain data (report.json's ``style_control``); an interval that was not computed is
        null (its sentence then gives none)."""
        return undefined_as_null({"features": list(self.features), "features_dropped": list(self.dropped),
                "features_unavailable": list(self.unavailable), "level": self.level, "interval": self.interval,
                "coefficients": [{k: getattr(c, k) for k in ("feature", "estimate", "se", "ci_low", "ci_high", "odds",
                                                             "odds_low", "odds_high", "mean", "sd", "direction_known",
                                                             "sentence")} for c in self.coefficients],
                "moves": [vars(m) for m in self.moves], "n_moved": self.n_moved,
                "movers": [m.model for m in self.movers], "notes": list(self.notes)})


def style_view(ranking: Ranking, available: Sequence[str] | None = None) -> StyleView:
    """The page's and the report's content of a scheme-``style`` ranking. ``available``: the features the
    votes carry (:func:`core.ranking.schemes.style.available_features`); the default four missing from it
    are named in the notes with how to get them (without it, the fit's own notes say so)."""
    if ranking.settings.scheme != "style" or ranking.plain is None:
        raise RankingError("the style view needs a ranking of scheme style (with its plain ranking)")
    level = f"{round((1 - ranking.settings.alpha) * 100)}%"
    coefficients = tuple(_coefficient(c, level) for c in ranking.covariates)
    changes = rank_changes(ranking)
    plain = {r.model: r.rating for r in ranking.plain.rows}
    moves = tuple(RankMove(r.model, changes[r.model]["plain_rank"], r.rank, changes[r.model]["rank_change"],
                           plain[r.model], r.rating) for r in ranking.rows if r.model in changes)
    moved = [m for m in moves if m.change]
    movers = tuple(sorted(moved, key=lambda m: (-abs(m.change), m.controlled_rank))[:MOVERS_SHOWN])
    fit = ranking.fit
    features, dropped = tuple(fit.features or ()), tuple(fit.features_dropped or ())
    unavailable = () if available is None else tuple(f for f in DEFAULT_STYLE_FEATURES if f not in available)
    return StyleView(coefficients, moves, movers, len(moved), features, dropped, unavailable,
                     _notes(ranking, unavailable, available is not None), level,
                     fit.interval or ranking.settings.ci)


def _coefficient(c, level: str) -> Coefficient:
    low, high = (c.low, c.high) if c.low is not None else (math.nan, math.nan)
    odds, odds_low, odds_high = math.exp(c.estimate), _exp(low), _exp(high)
    known = math.isfinite(odds_low) and (odds_low > 1 or odds_high < 1)
    return Coefficient(c.name, FEATURE_LABELS.get(c.name, c.name), c.estimate, c.se, low, high, odds, odds_low,
                       odds_high, c.mean, c.sd, known, sentence(c.name, odds, odds_low, odds_high, c.sd, level))


def _exp(value: float | None) -> float:
    return math.exp(value) if value is not None and math.isfinite(value) else math.nan


def sentence(feature: str, odds: float, low: float, high: float, sd: float, level: str) -> str:
    """What a coefficient means, in words: "One standard deviation more relative length (d = (a − b)/(a + b + 1),
    sd 0.41: one answer about 2.4 times as long as the other) multiplies the odds of winning by 1.76 (95% CI
    1.55–2.00)." When the interval covers 1, it says the data cannot tell the direction."""
    interval = f" ({level} CI {low:.2f}–{high:.2f})" if math.isfinite(low) and math.isfinite(high) else ""
    if feature == "position":
        text = f"Being shown on the left multiplies the odds of winning by {odds:.2f}{interval}"
        what = "which side is favoured"
    else:
        words = FEATURE_WORDS.get(feature, feature)
        scale = f"d = (a − b)/(a + b + 1), sd {sd:.2f}"
        if feature == "length" and 0 < sd < 1:  # d = sd ⇔ a/b ≈ (1 + sd)/(1 − sd) for long answers
            scale += f": one answer about {(1 + sd) / (1 - sd):.1f} times as long as the other"
        text = f"One standard deviation more {words} ({scale}) multiplies the odds of winning by {odds:.2f}{interval}"
        what = ("whether longer answers help or hurt" if feature == "length" else
                f"whether more {FEATURE_LABELS.get(feature, feature).lower()} help or hurt")
    if interval and low <= 1 <= high:
        return f"{text}: the interval covers 1, so the data cannot tell {what}."
    return text + "."


def _notes(ranking: Ranking, unavailable: tuple[str, ...], told: bool) -> tuple[str, ...]:
    """The features the votes do not carry, with how to get them, then the fit's notes (dropped features
    among them); the scheme's own "not controlled for …" note is left out when the first says it."""
    notes = []
    if unavailable:
        notes.append(f"Not available: {', '.join(unavailable)}; the votes do not give the counts of both answers "
                     f"for every vote. To control for {'it' if len(unavailable) == 1 else 'them'}, {HOW_TO_GET}.")
    for note in ranking.fit.notes or ():
        if told and note.startswith("not controlled for"):
            continue
        notes.append(note[0].upper() + note[1:] + ("" if note.endswith(".") else "."))
    return tuple(notes)
