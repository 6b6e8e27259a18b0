"""The EvalRuns bundle: ``leaderboard.json`` (docs/design.md leaderboard JSON), ``LEADERBOARD.md`` (the full
markdown of ``evalboard leaderboard``, then the figures), ``report.json`` and ``figures/``:
``leaderboard_bars``, ``category_heatmap``, ``pairwise_matrix`` and ``critical_difference`` (only when
the Friedman test was computed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from core.charts import runs as charts
from core.charts.cd import critical_difference_figure
from core.formats import dumps
from core.leaderboard.aggregate import Leaderboard, LeaderboardSettings, aggregate
from core.leaderboard.render import full_markdown, leaderboard_dict, to_csv
from core.leaderboard.tables import bar_rows, category_means, pair_frame
from core.report.bundle import (
    REPORT_JSON,
    ReportResult,
    ReportSettings,
    Steps,
    figures_markdown,
    png_status,
    write_pngs,
)

LEADERBOARD_JSON = "leaderboard.json"
MARKDOWN = "LEADERBOARD.md"
CSV = "LEADERBOARD.csv"


def build_runs_report(frame: pd.DataFrame, out: Path, settings: ReportSettings, common: dict[str, Any],
                      progress=None) -> ReportResult:
    steps = Steps(4, progress)
    steps("leaderboard (bootstrap)")
    lb_settings = LeaderboardSettings("mean", settings.bootstrap, settings.alpha, settings.seed)
    board = aggregate(frame, lb_settings)
    png, png_note = png_status(settings.png)
    steps("figures")
    figures, notes = _figures(board, build=png)
    steps("PNG export")
    png, png_note, pngs = write_pngs(figures, out, png, png_note)
    names = list(figures) if figures else figure_names(board)
    steps("write markdown, JSON")
    missing = common.get("input", {}).get("missing")
    board_doc = leaderboard_dict(board, missing)
    (out / LEADERBOARD_JSON).write_text(dumps(board_doc) + "\n", encoding="utf-8")
    (out / CSV).write_text(to_csv(board), encoding="utf-8")
    (out / MARKDOWN).write_text("# Leaderboard\n\n" + full_markdown(board, missing) + "\n\n"
                                + figures_markdown(names, png, png_note), encoding="utf-8")
    timings = steps.done()
    params = {"rank_by": "mean", "bootstrap": settings.bootstrap, "alpha": settings.alpha, "seed": settings.seed,
              "stratified": False, "metric": board.metric}
    doc = {"kind": "eval_runs", "params": params, **common, "leaderboard": board_doc, "png": png,
           "png_note": png_note, "figures": names, "notes": notes, "timings": timings}
    (out / REPORT_JSON).write_text(dumps(doc) + "\n", encoding="utf-8")
    return ReportResult("eval_runs", out, [out / LEADERBOARD_JSON, out / MARKDOWN, out / CSV, out / REPORT_JSON,
                                           *pngs],
                        figures, png, png_note, timings)


def figure_names(board: Leaderboard) -> list[str]:
    names = ["leaderboard_bars"]
    if board.categories:
        names.append("category_heatmap")
    names.append("pairwise_matrix")
    if board.friedman is not None:
        names.append("critical_difference")
    return names


def _figures(board: Leaderboard, build: bool) -> tuple[dict[str, Any], list[str]]:
    if not build:
        return {}, []
    models = [r.model_id for r in board.rows]
    figs: dict[str, Any] = {"leaderboard_bars": charts.leaderboard_bars(bar_rows(board),
                                                                        "Mean score with bootstrap CI")}
    if board.categories:
        figs["category_heatmap"] = charts.category_heatmap(category_means(board), "Mean score per category")
    figs["pairwise_matrix"] = charts.pairwise_matrix(pair_frame(board), models, "Paired differences (row − column)")
    if board.friedman is not None:
        figs["critical_difference"] = critical_difference_figure(board.friedman.mean_ranks, board.friedman.cd,
                                                                 "Critical difference (Nemenyi)")
    return figs, []
