"""A :class:`~core.leaderboard.Leaderboard` as the JSON report and the markdown table of
``evalboard leaderboard`` (contract in DESIGN.md, "CLI"): the table a CI job posts as a comment."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from core.formats import csv_table, dumps, markdown_table, markdown_text
from core.leaderboard import Leaderboard

ID_WIDTH = 20  # DESIGN: model ids cut to 20 characters in the markdown table


def leaderboard_dict(board: Leaderboard, missing: str | None = None) -> dict[str, Any]:
    """``missing``: the rule the runs were read with (skip | zero), stated in ``params`` when given."""
    s = board.settings
    rows = [{"rank": r.rank, "model_id": r.model_id, "mean_score": r.mean_score, "mean_ci_lo": r.mean_ci_lo,
             "mean_ci_hi": r.mean_ci_hi, "win_rate": r.win_rate, "tasks_completed": r.tasks_completed,
             "categories": dict(r.categories), "rank_lo": r.rank_lo, "rank_hi": r.rank_hi,
             "tie_group": r.tie_group, "tasks_missing": r.tasks_missing} for r in board.rows]
    pairwise = [{"model_a": p.model_a, "model_b": p.model_b, "diff": p.diff, "ci_lo": p.ci_lo, "ci_hi": p.ci_hi,
                 "significant": p.significant, "n_tasks": p.n_tasks, "unpaired_ci_lo": p.unpaired_ci_lo,
                 "unpaired_ci_hi": p.unpaired_ci_hi} for p in board.pairwise]
    params = {"rank_by": s.rank_by, "bootstrap": s.replicates, "alpha": s.alpha, "seed": s.seed,
              "stratified": s.stratified, "metric": board.metric, "n_models": board.n_models,
              "n_tasks": board.n_tasks, "categories": list(board.categories), "weighted": board.weighted,
              "significant_pairs": board.significant_pairs, "pairs": len(board.pairwise),
              "friedman": None if board.friedman is None else asdict(board.friedman)}
    if missing is not None:
        params["missing"] = missing
    return {"rows": rows, "pairwise": pairwise, "params": params}


def to_json(board: Leaderboard, missing: str | None = None) -> str:
    return dumps(leaderboard_dict(board, missing))


CSV_FIELDS = ("rank", "model_id", "mean_score", "mean_ci_lo", "mean_ci_hi", "win_rate", "rank_lo", "rank_hi",
              "tie_group", "tasks_completed", "tasks_missing")


def to_csv(board: Leaderboard) -> str:
    """One row per model: the leaderboard fields, then one ``category:<name>`` mean column per category."""
    header = [*CSV_FIELDS, *(f"category:{c}" for c in board.categories)]
    rows = [[getattr(r, f) for f in CSV_FIELDS] + [r.categories.get(c) for c in board.categories]
            for r in board.rows]
    return csv_table(header, rows)


def _two(value: float) -> str:
    return "–" if value != value else f"{value:.2f}"


def to_markdown(board: Leaderboard) -> str:
    """``| Rank | Model | Mean | 95% CI | Win rate | Tasks |``, two decimals, CI as ``0.74-0.82``."""
    level = round((1 - board.settings.alpha) * 100)
    rows = []
    for r in board.rows:
        ci = "–" if r.mean_ci_lo != r.mean_ci_lo else f"{_two(r.mean_ci_lo)}-{_two(r.mean_ci_hi)}"
        rows.append([r.rank, markdown_text(r.model_id[:ID_WIDTH]), _two(r.mean_score), ci, _two(r.win_rate),
                     r.tasks_completed])
    return markdown_table(["Rank", "Model", "Mean", f"{level}% CI", "Win rate", "Tasks"], rows, "rlrlrr")


def pairwise_markdown(board: Leaderboard) -> str:
    """Every pair's paired difference (mean over shared tasks) with its CI and verdict."""
    level = round((1 - board.settings.alpha) * 100)
    rows = [[markdown_text(p.model_a[:ID_WIDTH]), markdown_text(p.model_b[:ID_WIDTH]), f"{p.diff:+.2f}",
             "–" if p.ci_lo != p.ci_lo else f"{p.ci_lo:.2f} to {p.ci_hi:.2f}", "differs" if p.significant else "tie",
             p.n_tasks] for p in board.pairwise]
    return markdown_table(["Model A", "Model B", "A − B", f"{level}% CI", "Verdict", "Tasks"], rows, "llrlll")


def full_markdown(board: Leaderboard, missing: str | None = None) -> str:
    """What ``evalboard leaderboard --format markdown`` prints: the leaderboard table first (DESIGN
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
        text.append(f"{board.significant_pairs} of {len(board.pairwise)} pairs differ at α = {s.alpha:g} "
                    "(paired bootstrap over shared tasks).")
    if board.friedman is not None:
        text += friedman_sentences(board.friedman)
    text.append(f"Ranked by {'mean score' if s.rank_by == 'mean' else 'win rate'}; {s.replicates:,} bootstrap "
                f"replicates, seed {s.seed}{', stratified by category' if s.stratified else ''}.")
    return " ".join(text)


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
    pairs; markdown-safe. Shared by the CLI markdown and the Leaderboard page."""
    verdict = "the models differ" if f.reject else "no difference shown, so no post-hoc test"
    out = [f"Friedman χ² = {f.chi2:.3f} (N = {f.n_tasks} tasks, k = {f.k}), p = {f.p_value:.3g}; "
           f"Iman–Davenport F = {f.ff:.3f}, p = {f.ff_p_value:.3g}: {verdict}."]
    if f.reject:
        pairs = ", ".join(f"{markdown_text(a)} vs {markdown_text(b)}" for a, b in f.different_pairs) or "none"
        out.append(f"Nemenyi critical difference {f.cd:.3f} at α = {f.alpha:g}: {pairs}.")
    return out
