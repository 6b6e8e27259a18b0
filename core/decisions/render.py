"""A robustness answer (core.decisions.robustness) as JSON, markdown for people, and CSV of the votes."""

from __future__ import annotations

from typing import Any

from core.decisions.robustness import Robustness
from core.formats import csv_frame, dumps, markdown_table, markdown_text, number

MARKDOWN_VOTES = 50  # votes listed in markdown; the CSV lists them all

BOUND_NOTE = ("The count is an upper bound found by a search (first-order influence of each vote, then exact "
              "refits): the exact minimum is a combinatorial problem (docs/methods.md §13).")
EXACT_NOTE = "Every smaller set of votes was tried: this is the exact minimum."
NONE_NOTE = "Every set of votes was tried: none changes it."
TIE_NOTE = "The order counts as changed only when the other model's rating exceeds the leader's; equal is not changed."


def robustness_dict(result: Robustness) -> dict[str, Any]:
    return {"top_model": result.top_model, "pair": list(result.pair) if result.pair else None,
            "flip_votes": result.flip_votes, "flip_share": result.flip_share, "flipped_to": result.flipped_to,
            "verified": result.verified, "exact_minimum": result.exact_minimum, "n_votes": result.n_votes,
            "ratings_before": result.ratings_before, "ratings_after": result.ratings_after,
            "votes": result.votes.to_dict("records"), "by": result.by,
            "params": {**result.params, "notes": [search_note(result), TIE_NOTE]}}


def search_note(result: Robustness) -> str:
    """Whether the count is the exact minimum or an upper bound found by a search."""
    if not result.exact_minimum:
        return BOUND_NOTE
    return EXACT_NOTE if result.flip_votes is not None else NONE_NOTE


def to_json(result: Robustness) -> str:
    return dumps(robustness_dict(result))


def to_csv(result: Robustness) -> str:
    return csv_frame(result.votes)


def _subject(result: Robustness) -> str:
    if result.pair:
        ahead = result.top_model
        behind = result.pair[1] if result.pair[0] == ahead else result.pair[0]
        return f"the order of {markdown_text(ahead)} (ahead) and {markdown_text(behind)}"
    return f"the top model, {markdown_text(result.top_model)}"


def to_markdown(result: Robustness) -> str:
    lines = [f"# Robustness of {_subject(result)}", ""]
    request = [*result.params.get("request", ()), f"golden-question votes left out: "
               f"{result.params.get('golden_votes_excluded', 0):,}"]
    lines += [f"- {markdown_text(line)}" for line in request] + [""]
    if result.flip_votes is None:
        lines += [f"No set of votes found whose removal changes {_subject(result)} "
                  f"({result.n_votes:,} votes analysed).", ""]
    else:
        share = number(100.0 * result.flip_share, 3)
        lines += [f"Dropping **{result.flip_votes:,}** of {result.n_votes:,} votes ({share}%) puts "
                  f"{markdown_text(result.flipped_to)} ahead of {markdown_text(result.top_model)} "
                  "(confirmed by refitting without them).", "",
                  markdown_table(["Model", "Rating before", "Rating after"],
                                 [[markdown_text(m), number(result.ratings_before[m], 1),
                                   number(result.ratings_after[m], 1)] for m in result.ratings_before], "lrr"), ""]
    lines += [search_note(result), "", TIE_NOTE, ""]
    for name, counts in result.by.items():
        lines += [f"## Votes dropped by {name}", "",
                  markdown_table([name.capitalize(), "Votes"], [[markdown_text(k), v] for k, v in counts.items()],
                                 "lr"), ""]
    if len(result.votes):
        columns = [c for c in result.votes.columns if result.votes[c].notna().any()
                   and (c != "weight" or result.params.get("weighted"))]
        shown = result.votes.head(MARKDOWN_VOTES)
        lines += ["## The votes", "",
                  markdown_table(columns, [["–" if v is None else markdown_text(v) for v in row]
                                           for row in shown[columns].itertuples(index=False)]), ""]
        if len(result.votes) > MARKDOWN_VOTES:
            lines += [f"… and {len(result.votes) - MARKDOWN_VOTES:,} more (`--format csv` lists them all).", ""]
    return "\n".join(lines).rstrip() + "\n"
