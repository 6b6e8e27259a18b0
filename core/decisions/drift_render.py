"""A drift answer (core.decisions.drift) as JSON, markdown for people, and CSV (one row per model and period)."""

from __future__ import annotations

from typing import Any

from core.decisions.drift import Drift, ModelDrift
from core.formats import csv_table, dumps, markdown_table, markdown_text, number, p_value

CSV_FIELDS = ("model", "changed", "p_value", "p_adjusted", "period", "rating", "ci_low", "ci_high", "n_votes",
              "note")
METHOD_NOTE = ("Ratings: Bradley–Terry per period (ties half), each period anchored to the overall fit through the "
               "models that do not change; intervals from each period's Fisher information. Test: a likelihood "
               "ratio of one common rating against the period's other anchor models, in every period where the "
               "model has enough votes, against a rating per period (χ² with periods − 1 degrees of freedom), "
               "Holm-adjusted over the models tested (docs/methods.md §15).")


def drift_dict(result: Drift) -> dict[str, Any]:
    """The JSON of ``evalboard drift``: the issue's fields plus the periods, settings and notes."""
    return {"period": result.period, "alpha": result.alpha, "min_votes": result.min_votes,
            "n_votes": result.n_votes, "changed": list(result.changed),
            "periods": [{"period": p.period, "start": p.start, "end": p.end, "n_votes": p.n_votes}
                        for p in result.periods],
            "models": [_model_dict(m) for m in result.models],
            "notes": list(result.notes), "params": {**result.params, "method": METHOD_NOTE}}


def _model_dict(model: ModelDrift) -> dict[str, Any]:
    return {"model": model.model, "changed": model.changed, "p_value": model.p_value,
            "p_adjusted": model.p_adjusted, "statistic": model.statistic, "df": model.df,
            "overall_rating": model.overall_rating, "anchor": model.anchor, "note": model.note,
            "periods": [{"period": p.period, "rating": p.rating, "ci_low": p.ci_low, "ci_high": p.ci_high,
                         "n_votes": p.n_votes, "note": p.note} for p in model.periods]}


def to_json(result: Drift) -> str:
    return dumps(drift_dict(result))


def to_csv(result: Drift) -> str:
    rows = [[m.model, m.changed, m.p_value, m.p_adjusted, p.period, p.rating, p.ci_low, p.ci_high, p.n_votes,
             p.note] for m in result.models for p in m.periods]
    return csv_table(CSV_FIELDS, rows)


def summary_line(result: Drift) -> str:
    tested = sum(m.p_value is not None for m in result.models)
    changed = result.changed
    head = (f"{len(changed)} of {tested} models tested changed over {len(result.periods)} {result.period} periods "
            f"(Holm-adjusted p < {result.alpha:g})")
    return head + (": " + ", ".join(changed) + "." if changed else ".")


def models_table(result: Drift) -> str:
    """Markdown: one row per model, its test and its ratings in the first and last rated period."""
    rows = []
    for m in result.models:
        rated = [p for p in m.periods if p.rating is not None]
        first, last = (rated[0], rated[-1]) if rated else (None, None)
        rows.append([markdown_text(m.model), "**yes**" if m.changed else "no",
                     p_value(m.p_value), p_value(m.p_adjusted),
                     number(m.overall_rating, 0), _point(first), _point(last), f"{len(rated)} of {len(m.periods)}"])
    return markdown_table(["Model", "Changed", "p", "p (Holm)", "Overall", "First rated", "Last rated",
                           "Periods rated"], rows, "llrrrrrr")


def _point(rating) -> str:
    if rating is None:
        return "–"
    return f"{number(rating.rating, 0)} ({number(rating.ci_low, 0)}–{number(rating.ci_high, 0)}) in " \
           f"{markdown_text(rating.period)}"


def ratings_table(result: Drift, models: list[ModelDrift]) -> str:
    """Markdown: the ratings of ``models`` (columns) per period (rows); – where a model is not rated."""
    header = ["Period", "Votes"] + [markdown_text(m.model) for m in models]
    rows = []
    for index, info in enumerate(result.periods):
        cells = []
        for m in models:
            p = m.periods[index]
            half = None if p.rating is None else (p.ci_high - p.ci_low) / 2
            cells.append("–" if p.rating is None else f"{number(p.rating, 0)} ± {number(half, 0)}")
        rows.append([markdown_text(info.period), f"{info.n_votes:,}", *cells])
    return markdown_table(header, rows, "lr" + "r" * len(models))


def to_markdown(result: Drift, heading: str = "#", max_models: int = 8) -> str:
    lines = [f"{heading} Drift over time ({markdown_text(result.period)} periods)", ""]
    request = [*result.params.get("request", ()),
               f"golden-question votes left out: {result.params.get('golden_votes_excluded', 0):,}",
               *result.notes]
    lines += [f"- {markdown_text(line)}" for line in request] + [""]
    lines += [markdown_text(summary_line(result)), "", models_table(result), ""]
    shown = [m for m in result.models if m.changed][:max_models] or list(result.models[:min(3, max_models)])
    lines += [f"{heading}# Ratings per period ({'changed models' if shown[0].changed else 'first models'}; "
              f"Elo ± half the {100 * (1 - result.alpha):g}% interval)", "", ratings_table(result, shown), "",
              f"A model with fewer than {result.min_votes} votes in a period has no rating there (–).", "",
              markdown_text(METHOD_NOTE), ""]
    return "\n".join(lines).rstrip() + "\n"
