"""The votes report's "Style control" section (docs/methods.md §11): the style-controlled Bradley–Terry fit of
the report's prepared votes, its coefficients with intervals and sentences, the models whose rank moves, its
block in report.json and the slope chart ``figures/style_control.png``.

When the votes carry no style feature at all (no lengths, no markdown counts), or the fit has no estimate,
the section says why and no figure is made."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.formats import markdown_table, markdown_text, number
from core.ranking import Ranking, RankingError, RankSettings
from core.ranking.inputs import rank_prepared
from core.ranking.request import PreparedVotes
from core.ranking.schemes.style import available_features
from core.ranking.style_view import CLI_HINT, HOW_TO_GET, StyleView, style_view

FIGURE = "style_control"
DEFINITION = ("plain Bradley–Terry rank (left) → style-controlled rank (right) per model; green: moves up, red: "
              "moves down, grey: same rank")


@dataclass(frozen=True)
class StyleSection:
    ranking: Ranking | None
    view: StyleView | None
    reason: str | None  # why there is no style-controlled ranking

    def as_dict(self) -> dict[str, Any]:
        if self.view is None:
            return {"available": False, "reason": self.reason}
        return {"available": True, "n_votes": self.ranking.n_votes, **self.view.as_dict()}


def style_section(prepared: PreparedVotes, alpha: float, seed: int) -> StyleSection:
    """The style-controlled ranking of the report's votes (sandwich intervals, the features the votes carry)."""
    settings = RankSettings("style", "half", "sandwich", alpha=alpha, seed=seed)
    try:
        ranking, used = rank_prepared(prepared, settings)
    except RankingError as exc:
        return StyleSection(None, None, str(exc))
    return StyleSection(ranking, style_view(ranking, available_features(used)), None)


def style_markdown(section: StyleSection) -> str:
    lines = ["## Style control", ""]
    if section.view is None:
        reason = markdown_text(section.reason or "")
        return "\n".join(lines + [f"No style-controlled ranking: {reason}. To control for answer length and "
                                  f"markdown, {markdown_text(HOW_TO_GET)}.", ""])
    view, ranking = section.view, section.ranking
    lines += [f"Bradley–Terry with the answers' style held equal (docs/methods.md §11): {ranking.n_votes:,} votes, "
              f"controlled for {', '.join(view.features)}; {view.level} intervals: {markdown_text(view.interval)}. "
              "Odds × is exp(β), the odds multiplier per standard deviation of the relative difference "
              "d = (a − b)/(a + b + 1).", "",
              markdown_table(["Feature", "Odds ×", f"{view.level} CI", "β", "SE", "SD of d"],
                             [[markdown_text(c.label), number(c.odds, 3),
                               f"{number(c.odds_low, 3)}–{number(c.odds_high, 3)}", number(c.estimate, 4),
                               number(c.se, 4), number(c.sd, 3)] for c in view.coefficients], "lrlrrr"), ""]
    lines += [f"- {markdown_text(c.sentence)}" for c in view.coefficients]
    lines += ["", f"{view.n_moved} of {len(view.moves)} models change rank once style is held equal"
              + (" (the models that move most):" if view.movers else ".")]
    if view.movers:
        lines += ["", markdown_table(["Model", "Plain rank", "Controlled rank", "Change", "Plain Elo",
                                      "Controlled Elo"],
                                     [[markdown_text(m.model), m.plain_rank, m.controlled_rank, f"{m.change:+d}",
                                       number(m.plain_rating, 1), number(m.controlled_rating, 1)]
                                      for m in view.movers], "lrrrrr")]
    lines += [""] + [f"- {markdown_text(note)}" for note in view.notes] + ([""] if view.notes else [])
    lines += [f"{CLI_HINT} (`--features` chooses what to control for).", ""]
    return "\n".join(lines)
