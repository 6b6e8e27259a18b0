"""The votes report's "Drift over time" section (docs/methods.md §15): each model's rating per ISO week of the
report's prepared votes, which models changed (Holm-adjusted), the ratings of those that did, its block in
report.json and the rating-over-time chart ``figures/drift.png``.

report.json["drift"] is the dict of ``evalboard drift --format json`` for the same votes (weeks, the report's α,
the default minimum of votes) plus ``"available": true``. Without timestamps, or with votes of one week only,
the block is ``{"available": false, "reason": ...}``, the section says why and no figure is made."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.decisions.drift import DEFAULT_MIN_VOTES, Drift, drift
from core.decisions.drift_render import METHOD_NOTE, drift_dict, models_table, ratings_table, summary_line
from core.errors import EvalBoardError
from core.formats import markdown_text
from core.ranking.request import PreparedVotes

FIGURE = "drift"
DEFINITION = ("anchored Bradley–Terry Elo per ISO week with its interval as a band, for the models that changed "
              "(thick lines) and the best-rated others (docs/methods.md §15)")
PERIOD = "week"
CLI_HINT = ("`evalboard drift VOTES` asks the same question (`--period day|week|month|N-votes`, `--min-votes K`; "
            "`--format csv` lists every model and period)")


@dataclass(frozen=True)
class DriftSection:
    result: Drift | None
    reason: str | None  # why there is no answer

    def as_dict(self) -> dict[str, Any]:
        if self.result is None:
            return {"available": False, "reason": self.reason}
        return {"available": True, **drift_dict(self.result)}


def drift_section(prepared: PreparedVotes, alpha: float) -> DriftSection:
    """Drift per ISO week of the report's votes (the question ``evalboard drift`` asks by default)."""
    try:
        return DriftSection(drift(prepared, PERIOD, alpha=alpha, min_votes=DEFAULT_MIN_VOTES), None)
    except EvalBoardError as exc:
        return DriftSection(None, str(exc))


def drift_markdown(section: DriftSection) -> str:
    lines = ["## Drift over time", ""]
    result = section.result
    if result is None:
        return "\n".join(lines + [f"Not available: {markdown_text(section.reason or '')}.", ""])
    lines += [f"Bradley–Terry ratings per ISO week of the votes above ({len(result.periods)} weeks, "
              f"{result.n_votes:,} votes), anchored so weeks compare. {markdown_text(summary_line(result))}", ""]
    lines += [f"- {markdown_text(note)}" for note in result.notes] + ([""] if result.notes else [])
    lines += [models_table(result), ""]
    changed = [m for m in result.models if m.changed]
    if changed:
        lines += ["### Ratings per week of the models that changed", "", ratings_table(result, changed[:8]), ""]
    lines += [f"A model with fewer than {result.min_votes} votes in a week has no rating there (–). "
              + markdown_text(METHOD_NOTE), "", f"{CLI_HINT}.", ""]
    return "\n".join(lines)
