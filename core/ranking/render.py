"""A :class:`~core.ranking.Ranking` as the JSON object, markdown table and CSV of ``evalboard rank``
(contract in docs/design.md, "CLI")."""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

from core.formats import csv_table, dumps, markdown_table, markdown_text, number
from core.ranking.request import DimensionChoice
from core.ranking.types import Covariate, PolicySummary, Ranking

MODEL_FIELDS = ("model", "rank", "rating", "strength", "ci_low", "ci_high", "rank_low", "rank_high", "win_rate",
                "n_votes", "arena_rank", "interval_note")
ELO_SCHEMES = ("bt", "ipw", "adjusted", "style", "crowd")
ANNOTATOR_FIELDS = ("annotator_id", "reliability", "ci_low", "ci_high", "n_votes")


def ranking_dict(ranking: Ranking) -> dict[str, Any]:
    s = ranking.settings
    change = rank_changes(ranking)
    params = {"ties": s.ties, "ci": s.ci, "bootstrap": s.replicates, "alpha": s.alpha, "seed": s.seed,
              "anchor": None if s.anchor is None else {"model": s.anchor[0], "rating": s.anchor[1]},
              "rating_scale": "elo" if s.scheme in ELO_SCHEMES else "win_rate", **ranking.fit.as_dict(),
              **ranking.policy.as_dict()}
    out: dict[str, Any] = {"scheme": s.scheme, "n_votes": ranking.n_votes, "n_models": ranking.n_models,
                           "identifiable": ranking.identifiable, "params": params,
                           "models": [{**model_fields(ranking, r), **change.get(r.model, {})} for r in ranking.rows]}
    if ranking.covariates:
        out["covariates"] = [covariate_fields(c) for c in ranking.covariates]
    if ranking.plain is not None:
        out["plain"] = ranking_dict(ranking.plain)
    if ranking.settings.scheme == "crowd":
        out["annotators"] = [asdict(a) for a in ranking.annotators]
    return out


def covariate_fields(covariate: Covariate) -> dict[str, Any]:
    """name, estimate, se; and for scheme style the feature's mean and sd before standardising."""
    d = {k: v for k, v in asdict(covariate).items() if k not in ("low", "high")}
    return d if covariate.mean is not None else {k: v for k, v in d.items() if k not in ("mean", "sd")}


def rank_changes(ranking: Ranking) -> dict[str, dict[str, int]]:
    """Scheme style: per model its rank in the plain ranking and the change plain → controlled (positive:
    the model moves up once style is controlled for). Empty for the other schemes."""
    if ranking.settings.scheme != "style" or ranking.plain is None:
        return {}
    plain = {r.model: r.rank for r in ranking.plain.rows}
    return {r.model: {"plain_rank": plain[r.model], "rank_change": plain[r.model] - r.rank} for r in ranking.rows
            if r.model in plain}


def model_fields(ranking: Ranking, row) -> dict[str, Any]:
    """One model's output fields; an interval is absent (None) only where the ranking says why: no
    interval was asked for (``ci`` none) or ``interval_note`` gives the reason. Any other NaN is
    left for the writers to refuse."""
    d = {f: getattr(row, f) for f in MODEL_FIELDS}
    if ranking.settings.ci == "none" or row.interval_note:
        for f in ("ci_low", "ci_high"):
            if d[f] != d[f]:
                d[f] = None
    return d


def to_json(result: Ranking | dict[tuple, Ranking], by: list[str] | None = None) -> str:
    if isinstance(result, Ranking):
        return dumps(ranking_dict(result))
    groups = [{"group": dict(zip(by or [], key)), **ranking_dict(r)} for key, r in result.items()]
    first = next(iter(result.values()))
    return dumps({"scheme": first.settings.scheme, "by": by, "n_votes": sum(r.n_votes for r in result.values()),
                  "groups": groups})


def request_lines(policy: PolicySummary, how: str = "choose with --dimension") -> list[str]:
    """The dimension analysed and the annotator policy of a votes ranking, as sentences (none for counts
    tables and matrices, which carry neither)."""
    lines = []
    if policy.dimension is not None:
        text = policy.dimension.describe(how)
        if text:
            lines.append(text[0].upper() + text[1:] + ".")
    if policy.outcome is not None:
        text = policy.outcome.describe()
        lines.append(text[0].upper() + text[1:] + ".")
    return lines


def identifiability_note(ranking: Ranking) -> str | None:
    """What a ranking whose comparisons do not pin every rating must say (None when they do)."""
    if ranking.identifiable:
        return None
    return ("Not identifiable: the comparisons do not connect every model in both directions (a model never "
            "wins, never loses, or the graph falls apart). Ratings come from a refit with one virtual tie per "
            "model and are shrunk towards the middle.")


def convergence_notes(ranking: Ranking) -> list[str]:
    """The notes of a fit that stopped before converging (empty when every solver converged)."""
    if ranking.fit.converged is not False:
        return []
    return [note for note in ranking.fit.notes or () if "iteration limit" in note]


def _votes_phrase(ranking: Ranking) -> str:
    """"20 judged items (20 judgements)" for votes, "20 votes" for counts tables and matrices."""
    p = ranking.policy
    if p.n_items is None:
        return f"{ranking.n_votes:,} votes"
    if p.n_items == p.n_judgements:
        return f"{p.n_items:,} judged items"
    return f"{p.n_items:,} judged items ({p.n_judgements:,} judgements)"


def _title(ranking: Ranking, request: bool = True) -> str:
    s = ranking.settings
    text = f"**{s.scheme}** ranking of {ranking.n_models} models from {_votes_phrase(ranking)}"
    if s.ci != "none":
        interval = ranking.fit.interval
        text += f"; {round((1 - s.alpha) * 100)}% intervals: {interval or s.ci}"
        if s.ci == "bootstrap" and ranking.fit.replicates is not None:
            text += f" ({s.replicates:,} replicates, seed {s.seed})"
    if s.ties == "davidson":
        text += f"; ties as their own outcome (Davidson, ν = {number(ranking.fit.nu, 3)})"
    note = identifiability_note(ranking)
    if note:
        text += f"\n\n> ⚠ {note}"
    for warning in convergence_notes(ranking):
        text += f"\n\n> ⚠ {markdown_text(warning[0].upper() + warning[1:])}"
    lines = request_lines(ranking.policy) if request else []
    return text + ("\n\n" + " ".join(markdown_text(line) for line in lines) if lines else "")


def to_markdown(result: Ranking | dict[tuple, Ranking], by: list[str] | None = None) -> str:
    if isinstance(result, Ranking):
        return _markdown_one(result)
    parts = []
    first = next(iter(result.values()), None)
    lines = request_lines(_request_of_groups(result)) if first is not None else []
    if lines:  # the request's dimension and policy once, above the groups
        parts.append(" ".join(markdown_text(line) for line in lines))
    for key, ranking in result.items():
        label = ", ".join(f"{b} = {markdown_text(k)}" for b, k in zip(by or [], key))
        parts.append(f"### {label}\n\n{_markdown_one(ranking, request=False)}")
    return "\n\n".join(parts)


def _request_of_groups(result: dict[tuple, Ranking]) -> PolicySummary:
    """The request of a set of group rankings: per-dimension groups list every dimension."""
    policy = next(iter(result.values())).policy
    choices = [r.policy.dimension for r in result.values() if r.policy.dimension is not None]
    if choices and any(c.chosen == "by" for c in choices):
        analysed = {d for c in choices for d in c.analysed}
        available = choices[0].available
        policy = replace(policy, dimension=DimensionChoice(tuple(d for d in available if d in analysed), available,
                                                           "by"))
    return policy


def _markdown_one(ranking: Ranking, request: bool = True) -> str:
    elo = ranking.settings.scheme in ELO_SCHEMES
    digits = 1 if elo else 3
    ci_label = f"{round((1 - ranking.settings.alpha) * 100)}% CI"
    rows = []
    notes = {}
    for r in ranking.rows:
        f = model_fields(ranking, r)
        if r.interval_note:
            notes.setdefault(r.interval_note, []).append(r.model)
        ci = "–" if f["ci_low"] is None else f"{number(f['ci_low'], digits)}–{number(f['ci_high'], digits)}"
        ranks = "–" if r.rank_low is None else (f"{r.rank_low}" if r.rank_low == r.rank_high
                                                else f"{r.rank_low}–{r.rank_high}")
        rows.append([r.rank, markdown_text(r.model), number(r.rating, digits), ci, ranks,
                     number(r.win_rate, 3), f"{r.n_votes:,}"])
    table = markdown_table(["Rank", "Model", "Elo" if elo else "Win rate", ci_label, "Rank range",
                            "Win rate (raw)", "Votes"], rows, "rlrlrrr")
    text = _title(ranking, request) + "\n\n" + table
    if notes:
        text += "\n\nNo interval: " + "; ".join(f"{', '.join(markdown_text(m) for m in models)} ({reason})"
                                                for reason, models in notes.items()) + "."
    style = ranking.settings.scheme == "style"
    if ranking.covariates and style:
        cov = markdown_table(["Feature", "Estimate", "SE", "Mean (raw d)", "SD (raw d)"],
                             [[markdown_text(c.name), number(c.estimate, 4), number(c.se, 4), number(c.mean, 4),
                               number(c.sd, 4)] for c in ranking.covariates], "lrrrr")
        text += "\n\n" + cov
    elif ranking.covariates:
        cov = markdown_table(["Covariate", "Estimate", "SE"],
                             [[markdown_text(c.name), number(c.estimate, 4), number(c.se, 4)]
                              for c in ranking.covariates], "lrr")
        text += "\n\n" + cov
    text += "".join(f"\n\n{markdown_text(n[0].upper() + n[1:])}." for n in ranking.fit.notes or ()) if style else ""
    changes = rank_changes(ranking)
    if changes:
        text += "\n\n" + markdown_table(["Model", "Plain rank", "Controlled rank", "Change"],
                                         [[markdown_text(r.model), changes[r.model]["plain_rank"], r.rank,
                                           f"{changes[r.model]['rank_change']:+d}"] for r in ranking.rows], "lrrr")
    if ranking.settings.scheme == "crowd":
        text += "\n\n" + annotator_markdown(ranking)
    if ranking.plain is not None and style:
        text += "\n\nWithout style control (plain Bradley–Terry):\n\n" + _markdown_one(ranking.plain, False)
    elif ranking.plain is not None:
        without = "annotator reliability" if ranking.settings.scheme == "crowd" else "the adjustment"
        text += f"\n\nWithout {without} (plain Bradley–Terry):\n\n" + _markdown_one(ranking.plain, False)
    return text


def annotator_markdown(ranking: Ranking) -> str:
    """Scheme crowd: every annotator's reliability η (the chance they vote by the true order) with its interval."""
    ci_label = f"{round((1 - ranking.settings.alpha) * 100)}% CI"
    rows = [[markdown_text(a.annotator_id), number(a.reliability, 3),
             "–" if a.ci_low is None else f"{number(a.ci_low, 3)}–{number(a.ci_high, 3)}", f"{a.n_votes:,}"]
            for a in ranking.annotators]
    notes = "".join(f" {markdown_text(n[0].upper() + n[1:])}." for n in ranking.fit.notes or ())
    return ("Annotator reliability η (Crowd-BT: the chance an annotator votes by the true order; 0.5 is a coin, "
            f"0 votes reversed).{notes}\n\n"
            + markdown_table(["Annotator", "Reliability η", ci_label, "Votes"], rows, "lrrr"))


def to_csv(result: Ranking | dict[tuple, Ranking], by: list[str] | None = None) -> str:
    """One row per model (and group); a votes ranking adds the request's columns on every row: the
    dimension analysed (unless grouped by dimension), the annotator policy and the judgements and
    annotators it left out."""
    items = [((), result)] if isinstance(result, Ranking) else list(result.items())
    first = items[0][1] if items else None
    votes = first is not None and first.policy.outcome is not None
    request = ([] if "dimension" in (by or []) else ["dimension"]) + list(POLICY_COLUMNS) if votes else []
    style = ["plain_rank", "rank_change"] if first is not None and first.settings.scheme == "style" else []
    crowd = first is not None and first.settings.scheme == "crowd"
    header = [*(("row",) if crowd else ()), *(by or []), *MODEL_FIELDS, *style, *request,
              *(CROWD_COLUMNS if crowd else ())]
    rows = []
    for key, ranking in items:
        extra = _request_cells(ranking, request) if votes else []
        change = rank_changes(ranking)
        for r in ranking.rows:
            d = {**model_fields(ranking, r), **change.get(r.model, {})}
            rows.append([*(("model",) if crowd else ()), *key, *(d[f] for f in MODEL_FIELDS),
                         *(d.get(f) for f in style), *extra, *((None,) * len(CROWD_COLUMNS) if crowd else ())])
        for a in ranking.annotators if crowd else ():  # one table: annotator rows after the model rows
            rows.append(["annotator", *key, *(None if f != "n_votes" else a.n_votes for f in MODEL_FIELDS),
                         *extra, a.annotator_id, a.reliability, a.ci_low, a.ci_high])
    return csv_table(header, rows)


# Scheme crowd's CSV: a "row" column says whether a row is a model or an annotator; annotator rows fill these.
CROWD_COLUMNS = ("annotator_id", "reliability", "reliability_ci_low", "reliability_ci_high")


POLICY_COLUMNS = ("annotator_policy", "judgements_left_out", "annotators_left_out")


def _request_cells(ranking: Ranking, columns: list[str]) -> list[Any]:
    policy = ranking.policy.outcome.as_dict()
    dimension = ranking.policy.dimension
    values = {"dimension": ",".join(dimension.analysed if dimension is not None else ()),
              "annotator_policy": policy["policy"], "judgements_left_out": policy["judgements_left_out"],
              "annotators_left_out": policy["annotators_left_out"]}
    return [values[c] for c in columns]
