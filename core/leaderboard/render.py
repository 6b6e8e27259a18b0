"""A :class:`~core.leaderboard.aggregate.Leaderboard` as the JSON report and the markdown table of
``evalboard leaderboard`` (contract in docs/design.md, "CLI"): the table a CI job posts as a comment."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from core.formats import csv_table, dumps, markdown_table, markdown_text, number, p_text
from core.leaderboard.aggregate import Leaderboard
from core.leaderboard.nemenyi import nemenyi_sentence
from core.leaderboard.short_names import short_names

ID_WIDTH = 20  # docs/design.md: model ids cut to 20 characters in the markdown table (kept distinct)


def _absent(value: float, explained) -> float | None:
    """None for a NaN whose reason is known (``explained``); any other NaN stays for the writer to refuse."""
    return None if explained and value != value else value


def leaderboard_dict(board: Leaderboard, missing: str | None = None) -> dict[str, Any]:
    """``missing``: the rule the runs were read with (skip | zero), stated in ``params`` when given."""
    s = board.settings
    rows = [{"rank": r.rank, "model_id": r.model_id, "mean_score": _absent(r.mean_score, not r.tasks_completed),
             "mean_ci_lo": _absent(r.mean_ci_lo, r.interval_note), "mean_ci_hi": _absent(r.mean_ci_hi, r.interval_note),
             "win_rate": _absent(r.win_rate, not r.tasks_completed), "tasks_completed": r.tasks_completed,
             # a category mean is absent where the model scored no task of that category
             "categories": {c: _absent(v, True) for c, v in r.categories.items()}, "rank_lo": r.rank_lo,
             "rank_hi": r.rank_hi, "tie_group": r.tie_group, "tasks_missing": r.tasks_missing,
             "interval_note": r.interval_note} for r in board.rows]
    pairwise = [{"model_a": p.model_a, "model_b": p.model_b, "diff": _absent(p.diff, not p.n_tasks),
                 "ci_lo": _absent(p.ci_lo, p.note), "ci_hi": _absent(p.ci_hi, p.note), "significant": p.significant,
                 "n_tasks": p.n_tasks, "unpaired_ci_lo": _absent(p.unpaired_ci_lo, p.note),
                 "unpaired_ci_hi": _absent(p.unpaired_ci_hi, p.note), "note": p.note} for p in board.pairwise]
    friedman = None
    if board.friedman is not None:
        friedman = {k: _absent(v, board.friedman.note) if isinstance(v, float) else v
                    for k, v in asdict(board.friedman).items()}
    params = {"rank_by": s.rank_by, "bootstrap": s.replicates, "alpha": s.alpha, "seed": s.seed,
              "stratified": s.stratified, "metric": board.metric, "n_models": board.n_models,
              "n_tasks": board.n_tasks, "categories": list(board.categories), "weighted": board.weighted,
              "significant_pairs": board.significant_pairs, "pairs": len(board.pairwise),
              "pairs_without_interval": sum(p.note is not None for p in board.pairwise), "friedman": friedman}
    if missing is not None:
        params["missing"] = missing
    return {"rows": rows, "pairwise": pairwise, "params": params}


def to_json(board: Leaderboard, missing: str | None = None) -> str:
    return dumps(leaderboard_dict(board, missing))


CSV_FIELDS = ("rank", "model_id", "mean_score", "mean_ci_lo", "mean_ci_hi", "win_rate", "rank_lo", "rank_hi",
              "tie_group", "tasks_completed", "tasks_missing", "interval_note")


def to_csv(board: Leaderboard) -> str:
    """One row per model: the leaderboard fields, then one ``category:<name>`` mean column per category."""
    header = [*CSV_FIELDS, *(f"category:{c}" for c in board.categories)]
    rows = [[d[f] for f in CSV_FIELDS] + [d["categories"].get(c) for c in board.categories]
            for d in leaderboard_dict(board)["rows"]]
    return csv_table(header, rows)


def _two(value: float | None) -> str:
    return number(value, 2)


def model_labels(board: Leaderboard) -> dict[str, str]:
    """Every model id of the board as the markdown tables show it: at most ID_WIDTH characters where
    that keeps ids apart (:func:`core.leaderboard.short_names.short_names`), markdown-escaped."""
    ids = [r.model_id for r in board.rows] + [m for p in board.pairwise for m in (p.model_a, p.model_b)]
    return {i: markdown_text(name) for i, name in short_names(ids, ID_WIDTH).items()}


def to_markdown(board: Leaderboard) -> str:
    """``| Rank | Model | Mean | 95% CI | Win rate | Tasks |``, two decimals, CI as ``0.74-0.82``;
    below the table, why a model has no interval."""
    level = round((1 - board.settings.alpha) * 100)
    label = model_labels(board)
    rows = []
    for r in leaderboard_dict(board)["rows"]:
        ci = "–" if r["mean_ci_lo"] is None else f"{_two(r['mean_ci_lo'])}-{_two(r['mean_ci_hi'])}"
        rows.append([r["rank"], label[r["model_id"]], _two(r["mean_score"]), ci,
                     _two(r["win_rate"]), r["tasks_completed"]])
    table = markdown_table(["Rank", "Model", "Mean", f"{level}% CI", "Win rate", "Tasks"], rows, "rlrlrr")
    notes: dict[str, list[str]] = {}
    for r in board.rows:
        if r.interval_note:
            notes.setdefault(r.interval_note, []).append(label[r.model_id])
    if notes:
        table += "\n\nNo interval: " + "; ".join(f"{', '.join(m)} ({reason})" for reason, m in notes.items()) + "."
    return table


def pairwise_markdown(board: Leaderboard) -> str:
    """Every pair's paired difference (mean over shared tasks) with its CI and verdict ("no evidence"
    where the pair has no interval; the notes below the table say why)."""
    level = round((1 - board.settings.alpha) * 100)
    label = model_labels(board)
    rows = [[label[p["model_a"]], label[p["model_b"]], number(p["diff"], 2, sign=True),
             "–" if p["ci_lo"] is None else f"{_two(p['ci_lo'])} to {_two(p['ci_hi'])}",
             "no evidence" if p["note"] else ("differs" if p["significant"] else "tie"), p["n_tasks"]]
            for p in leaderboard_dict(board)["pairwise"]]
    return markdown_table(["Model A", "Model B", "A − B", f"{level}% CI", "Verdict", "Tasks"], rows, "llrlll")


def full_markdown(board: Leaderboard, missing: str | None = None) -> str:
    """What ``evalboard leaderboard --format markdown`` prints: the leaderboard table first (docs/design.md
    contract), then the pairwise table and the tests' verdicts."""
    parts = [to_markdown(board)]
    if board.pairwise:
        parts.append(pairwise_markdown(board))
    notes = " ".join(filter(None, [_notes(board), missing_sentence(board, missing)]))
    if notes:
        parts.append(notes)
    return "\n\n".join(parts)


def _notes(board: Leaderboard) -> str:
    s = board.settings
    text = []
    if board.pairwise:
        lacking = sum(p.note is not None for p in board.pairwise)
        text.append(f"{board.significant_pairs} of {len(board.pairwise)} pairs differ at α = {s.alpha:g} "
                    "(paired bootstrap over shared tasks)"
                    + (f"; {lacking} without an interval, so no verdict ({_reasons(board)})." if lacking else "."))
    if board.friedman is not None:
        text += friedman_sentences(board.friedman)
    text.append(f"Ranked by {'mean score' if s.rank_by == 'mean' else 'win rate'}; {s.replicates:,} bootstrap "
                f"replicates, seed {s.seed}{', stratified by category' if s.stratified else ''}.")
    return " ".join(text)


def _reasons(board: Leaderboard) -> str:
    reasons: dict[str, int] = {}
    for p in board.pairwise:
        if p.note:
            reasons[p.note] = reasons.get(p.note, 0) + 1
    return "; ".join(f"{n} {'pair' if n == 1 else 'pairs'}: {markdown_text(r)}" for r, n in reasons.items())


MISSING_NAMED = 10  # models named in the markdown sentence; the JSON's tasks_missing has all


def missing_sentence(board: Leaderboard, missing: str | None = None) -> str:
    """How many tasks each model misses, and the rule that produced that (markdown-safe)."""
    rule = {"skip": "cells without a score are not scored (missing=skip, the default; --missing zero scores them 0)",
            "zero": "cells without a score were scored 0 (missing=zero)"}.get(missing or "", "")
    short = sorted((r for r in board.rows if r.tasks_missing), key=lambda r: (-r.tasks_missing, r.model_id))
    if not short:
        return f"Every model is scored on all {board.n_tasks:,} tasks" + (f"; {rule}." if rule else ".")
    named = ", ".join(f"{markdown_text(r.model_id)} {r.tasks_missing:,}" for r in short[:MISSING_NAMED])
    more = f" and {len(short) - MISSING_NAMED} more" if len(short) > MISSING_NAMED else ""
    return (f"{len(short)} of {board.n_models} models miss tasks (of {board.n_tasks:,}): {named}{more}"
            + (f"; {rule}." if rule else "."))


def friedman_sentences(f) -> list[str]:
    """The Friedman / Iman–Davenport verdict and, only after a rejection (Demšar 2006), Nemenyi's
    summary (:func:`core.leaderboard.nemenyi.nemenyi_sentence`); markdown-safe. Shared by the CLI markdown and the
    Leaderboard page."""
    verdict = "the models differ" if f.reject else "no difference shown, so no post-hoc test"
    if f.chi2 != f.chi2:
        return [f"Friedman test (N = {f.n_tasks} tasks, k = {f.k}): {markdown_text(f.note)}."]
    iman = (f"Iman–Davenport F = {f.ff:.3f}, {p_text(f.ff_p_value)}" if f.ff == f.ff
            else f"Iman–Davenport F undefined ({markdown_text(f.note)})")
    out = [f"Friedman χ² = {f.chi2:.3f} (N = {f.n_tasks} tasks, k = {f.k}), {p_text(f.p_value)}; {iman}: {verdict}."]
    if f.reject:
        out.append(nemenyi_sentence(f.mean_ranks, f.cd, f.different_pairs, f.alpha))
    return out
