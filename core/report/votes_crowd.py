"""The votes report's "Annotator reliability (Crowd-BT)" section (docs/methods.md §16): every annotator's
reliability η with its interval, the models whose rank moves once reliabilities are fitted, and its block
``crowd`` in report.json.

Votes without annotators (or a fit that cannot be made) get a sentence saying why instead."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from core.formats import markdown_text
from core.ranking import Ranking, RankingError, RankSettings
from core.ranking.inputs import rank_prepared
from core.ranking.render import annotator_markdown
from core.ranking.request import PreparedVotes

TITLE = "Annotator reliability (Crowd-BT)"
UNRELIABLE = 0.5  # an interval wholly below a coin: the annotator votes against the order more often than not


@dataclass(frozen=True)
class CrowdSection:
    ranking: Ranking | None
    reason: str | None  # why there is no Crowd-BT fit

    @property
    def unreliable(self) -> tuple[str, ...]:
        """Annotators whose whole interval lies below 0.5."""
        if self.ranking is None:
            return ()
        return tuple(a.annotator_id for a in self.ranking.annotators if a.ci_high is not None
                     and a.ci_high < UNRELIABLE)

    def moves(self) -> list[dict[str, Any]]:
        """The models whose rank differs from plain Bradley–Terry's, largest move first."""
        plain = {r.model: r.rank for r in self.ranking.plain.rows}
        moved = [{"model": r.model, "plain_rank": plain[r.model], "crowd_rank": r.rank,
                  "rank_change": plain[r.model] - r.rank} for r in self.ranking.rows if plain[r.model] != r.rank]
        return sorted(moved, key=lambda m: (-abs(m["rank_change"]), m["crowd_rank"]))

    def as_dict(self) -> dict[str, Any]:
        if self.ranking is None:
            return {"available": False, "reason": self.reason}
        return {"available": True, "n_votes": self.ranking.n_votes, "alpha": self.ranking.settings.alpha,
                "interval": self.ranking.fit.interval, "models": [{"model": r.model, "rank": r.rank,
                                                                    "rating": r.rating} for r in self.ranking.rows],
                "rank_changes": self.moves(), "unreliable": list(self.unreliable),
                "annotators": [asdict(a) for a in self.ranking.annotators]}


def crowd_section(prepared: PreparedVotes, alpha: float, seed: int) -> CrowdSection:
    """Crowd-BT on the report's prepared votes (observed-information intervals)."""
    try:
        ranking = rank_prepared(prepared, RankSettings("crowd", "half", "sandwich", alpha=alpha, seed=seed))[0]
    except RankingError as exc:
        return CrowdSection(None, str(exc))
    return CrowdSection(ranking, None)


def crowd_markdown(section: CrowdSection) -> str:
    lines = [f"## {TITLE}", ""]
    if section.ranking is None:
        return "\n".join(lines + [f"No Crowd-BT fit: {markdown_text(section.reason or '')}.", ""])
    ranking = section.ranking
    lines += [f"Bradley–Terry fitted jointly with every annotator's reliability η (docs/methods.md §16) on "
              f"{ranking.n_votes:,} votes, without golden questions.", ""]
    unreliable = section.unreliable
    if unreliable:
        shown = ", ".join(markdown_text(a) for a in unreliable[:12]) + (" …" if len(unreliable) > 12 else "")
        lines += [f"{len(unreliable)} annotator{'s' if len(unreliable) > 1 else ''} vote against the order more "
                  f"often than with it (the whole interval of η below {UNRELIABLE}): {shown}.", ""]
    moves = section.moves()
    lines += [f"{len(moves)} of {len(ranking.rows)} models change rank against plain Bradley–Terry"
              + (": " + "; ".join(f"{markdown_text(m['model'])} {m['plain_rank']} → {m['crowd_rank']}"
                                  for m in moves[:10]) + "." if moves else "."), ""]
    lines += [annotator_markdown(ranking), "",
              "`evalboard rank VOTES --scheme crowd` gives the whole ranking with these reliabilities.", ""]
    return "\n".join(lines)
