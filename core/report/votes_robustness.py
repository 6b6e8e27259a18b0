"""The votes report's "Robustness of the top" section (docs/methods.md §13): the fewest votes found whose
removal changes the top model of the report's prepared votes, who overtakes, whether a refit confirmed it,
who cast those votes and the first of them; its block in report.json.

report.json["robustness"] is the dict of ``evalboard robustness --format json`` for the same votes, every vote
to drop included (the markdown lists the first ``LISTED_VOTES``), plus ``"available": true``. When the votes
cannot answer (one model, nothing left to rank) the block is ``{"available": false, "reason": ...}`` and the
section says why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.decisions import render
from core.decisions.robustness import Robustness, robustness
from core.errors import EvalBoardError
from core.formats import markdown_text
from core.ranking.request import PreparedVotes

LISTED_VOTES = 20
LISTED_CASTERS = 10  # rows of each who-cast-them table (annotators can be hundreds)
CLI_HINT = ("`evalboard robustness VOTES` asks the same question (`--pair A,B` for any two models; "
            "`--format csv` lists every vote)")


@dataclass(frozen=True)
class RobustnessSection:
    result: Robustness | None
    reason: str | None  # why there is no answer

    def as_dict(self) -> dict[str, Any]:
        if self.result is None:
            return {"available": False, "reason": self.reason}
        return {"available": True, **render.robustness_dict(self.result)}


def robustness_section(prepared: PreparedVotes) -> RobustnessSection:
    """The robustness of the top model of the report's votes (the question ``evalboard robustness`` asks)."""
    try:
        return RobustnessSection(robustness(prepared), None)
    except EvalBoardError as exc:
        return RobustnessSection(None, str(exc))


def robustness_markdown(section: RobustnessSection) -> str:
    lines = ["## Robustness of the top", ""]
    result = section.result
    if result is None:
        return "\n".join(lines + [f"Not available: {markdown_text(section.reason or '')}.", ""])
    lines += [f"The fewest votes found whose removal changes the top model, {markdown_text(result.top_model)}, "
              "of the plain Bradley–Terry fit of the votes above (ties half; docs/methods.md §13).", ""]
    lines += render.answer_lines(result) + render.who_lines(result, "###", LISTED_CASTERS)
    lines += render.votes_lines(result, "###", LISTED_VOTES, "report.json lists them all")
    return "\n".join(lines + [f"{CLI_HINT}.", ""])
