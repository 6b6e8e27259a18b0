"""A votes plan (core.decisions.plan) as JSON, markdown for people, CSV, and the plain sentence the page shows."""

from __future__ import annotations

from typing import Any

import pandas as pd

from core.decisions.plan import NOTE_SCHEDULED, NOTE_ZERO_GAP, PairPlan, Plan
from core.formats import csv_table, dumps, markdown_table, markdown_text, number

CSV_COLUMNS = ("model_a", "model_b", "gap_elo", "se_elo", "p_value", "votes_between", "current_power",
               "extra_votes_direct", "extra_votes_scheduled", "min_detectable_elo", "separated",
               "simulated_power", "simulated_power_low", "simulated_power_high", "notes")
METHOD_NOTE = ("Extra votes for a two-sided Wald test of the Bradley–Terry gap to reach the power at the current "
               "estimate of the gap, from the fit's Fisher information (docs/methods.md §14). The estimate is "
               "itself uncertain: read the counts as orders of magnitude, not promises.")


SIMULATION_NOTE = ("Simulated power: the share of {n:,} data sets drawn from the fitted model, with the direct extra "
                   "votes added (none for a pair already told apart), in which the test tells the pair apart; "
                   "95 % Wilson interval.")


def plan_dict(result: Plan) -> dict[str, Any]:
    return {"alpha": result.alpha, "power": result.power, "pairs": [row.as_dict() for row in result.pairs],
            "ranking": list(result.ranking), "n_votes": result.n_votes,
            "params": {**result.params, "notes": [*result.params.get("notes", ()), METHOD_NOTE]}}


def to_json(result: Plan) -> str:
    return dumps(plan_dict(result))


def to_csv(result: Plan) -> str:
    rows = []
    for row in result.pairs:
        low, high = row.simulated_power_ci or (None, None)
        values = row.as_dict()
        rows.append([*(values[c] for c in CSV_COLUMNS[:12]), low, high, "; ".join(row.notes)])
    return csv_table(CSV_COLUMNS, rows)


def votes_text(n: int | None) -> str:
    return "not reachable" if n is None else f"{n:,}"


def _percent(share: float) -> str:
    return f"{number(100.0 * share, 0)} %"


def sentence(row: PairPlan, alpha: float, power: float) -> str:
    """The plan for one pair in one plain sentence."""
    a, b = row.model_a, row.model_b
    level = f"α = {alpha:g} with {_percent(power)} power"
    if row.separated:
        return (f"{a} and {b} are already told apart at α = {alpha:g} (p = {number(row.p_value, 3)}): "
                "no extra votes needed.")
    if row.extra_votes_direct is None:
        why = "their estimated ratings are equal" if NOTE_ZERO_GAP in row.notes else "their estimated gap is too small"
        return f"No feasible number of votes would tell {a} and {b} apart at {level}: {why}."
    scheduled = (" (spread by the scheduler: not reachable)" if row.extra_votes_scheduled is None
                 else f" (or {_rounded(row.extra_votes_scheduled)} spread by the scheduler)")
    return (f"About {_rounded(row.extra_votes_direct)} more votes between {a} and {b}{scheduled} would tell them "
            f"apart at {level}.")


def _rounded(n: int) -> str:
    """Two significant figures for a sentence (the tables give the exact count)."""
    if n < 100:
        return f"{n:,}"
    digits = len(str(n)) - 2
    return f"{round(n, -digits):,}"


def to_markdown(result: Plan) -> str:
    lines = [f"# How many more votes (α = {result.alpha:g}, power {_percent(result.power)})", ""]
    lines += [f"- {markdown_text(line)}" for line in result.params.get("request", ())]
    lines += [f"- {result.n_votes:,} votes analysed; golden-question votes left out: "
              f"{result.params.get('golden_votes_excluded', 0):,}", ""]
    lines += [markdown_table(*pairs_table(result)), ""]
    lines += [f"- {markdown_text(sentence(row, result.alpha, result.power))}" for row in result.pairs] + [""]
    if any(row.simulated_power is not None for row in result.pairs):
        lines += [markdown_text(SIMULATION_NOTE.format(n=result.params["simulate"])), ""]
    lines += [markdown_text(NOTE_SCHEDULED) + ".", "", METHOD_NOTE, ""]
    return "\n".join(lines).rstrip() + "\n"


def pairs_table(result: Plan) -> tuple[list[str], list[list[Any]], str]:
    """(header, rows, alignment) of the pairs: the markdown table and the page's table."""
    simulated = any(row.simulated_power is not None for row in result.pairs)
    header = ["Model A", "Model B", "Gap (Elo)", "SE (Elo)", "p", "Votes between", "Extra votes (direct)",
              "Extra votes (scheduled)", "Min. detectable gap (Elo)"] + (["Simulated power"] if simulated else [])
    rows = []
    for row in result.pairs:
        cells = [markdown_text(row.model_a), markdown_text(row.model_b), number(row.gap_elo, 1),
                 number(row.se_elo, 1), number(row.p_value, 3), number(row.votes_between, 0),
                 votes_text(row.extra_votes_direct), votes_text(row.extra_votes_scheduled),
                 number(row.min_detectable_elo, 1)]
        if simulated:
            cells.append("–" if row.simulated_power is None else
                         f"{_percent(row.simulated_power)} ({_percent(row.simulated_power_ci[0])}–"
                         f"{_percent(row.simulated_power_ci[1])})")
        rows.append(cells)
    return header, rows, "llrrrrrrr" + ("r" if simulated else "")


def pairs_frame(result: Plan):
    """The pairs as a table for the page: numbers stay numbers (an unreachable count is empty)."""
    return pd.DataFrame({
        "Model A": [r.model_a for r in result.pairs], "Model B": [r.model_b for r in result.pairs],
        "Gap (Elo)": [r.gap_elo for r in result.pairs], "p": [r.p_value for r in result.pairs],
        "Votes between": [r.votes_between for r in result.pairs],
        "Extra votes (direct)": pd.array([r.extra_votes_direct for r in result.pairs], dtype="Int64"),
        "Extra votes (scheduled)": pd.array([r.extra_votes_scheduled for r in result.pairs], dtype="Int64"),
        "Min. detectable gap (Elo)": [r.min_detectable_elo for r in result.pairs],
        "Already separated": [r.separated for r in result.pairs]})
