"""The votes report's "How many more votes" section (docs/methods.md §14): the plan of the report's prepared votes
for every adjacent pair of the Bradley–Terry ranking, as a table and plain sentences, and report.json["plan"].

When the votes cannot be planned (one model left), the section says why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.decisions.plan import DEFAULT_POWER, Plan, plan
from core.decisions.plan_render import METHOD_NOTE, pairs_table, plan_dict, sentence
from core.errors import EvalBoardError
from core.formats import markdown_table, markdown_text
from core.ranking.request import PreparedVotes

CLI_HINT = ("`evalboard plan VOTES --pair A,B --power 0.9 --simulate 1000` plans any pair at any power and checks "
            "the plan by simulation")


@dataclass(frozen=True)
class PlanSection:
    result: Plan | None
    reason: str | None  # why there is no plan

    def as_dict(self) -> dict[str, Any]:
        if self.result is None:
            return {"available": False, "reason": self.reason}
        return {"available": True, **plan_dict(self.result)}


def plan_section(prepared: PreparedVotes, alpha: float, power: float = DEFAULT_POWER) -> PlanSection:
    """The plan of the report's votes at the report's α and the default power (no simulation: the report stays fast)."""
    try:
        return PlanSection(plan(prepared, alpha=alpha, power=power), None)
    except EvalBoardError as exc:
        return PlanSection(None, str(exc))


def plan_markdown(section: PlanSection) -> str:
    lines = ["## How many more votes", ""]
    if section.result is None:
        return "\n".join(lines + [f"No plan: {markdown_text(section.reason or '')}.", ""])
    result = section.result
    lines += [f"Extra votes that would tell each pair of neighbours in the ranking apart at α = {result.alpha:g} "
              f"with {round(100 * result.power)} % power: on the pair itself (direct), or spread evenly over all "
              f"{result.params['scheduled_pairs']:,} pairs of models as the campaign scheduler serves them "
              "(scheduled, the total over all pairs); and the smallest Elo gap the current votes detect.", "",
              markdown_table(*pairs_table(result)), ""]
    lines += [f"- {markdown_text(sentence(row, result.alpha, result.power))}" for row in result.pairs]
    lines += ["", METHOD_NOTE, "", f"{CLI_HINT}.", ""]
    return "\n".join(lines)
