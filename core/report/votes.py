"""The votes bundle: ``BT_ANALYSIS_REPORT.md``, ``BT_ANALYSIS_REPORT.csv``, ``report.json``, ``figures/``.

Rankings: scheme bt, ties half, bootstrap intervals (B = ``--bootstrap``), for the global data and per
game (of the analysed dimension), per dimension and per game × dimension. Every part reads the votes
:func:`core.ranking.request.prepare_votes` prepared once: one dimension (``--dimension``, else the first of
several) and one annotator policy (``--policy``, default ``exclude``), as ``rank``, ``bias`` and
``annotators`` do.
Figure definitions: :mod:`core.report.votes_data`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

import core.report.votes_crowd as vc
import core.report.votes_data as vd
import core.report.votes_drift as vdr
import core.report.votes_plan as vp
import core.report.votes_robustness as vr
import core.report.votes_style as vs
from core.annotators import render as annotator_render
from core.annotators.report import build_prepared
from core.bias import render as bias_report
from core.bias.diagnose import diagnose
from core.charts import style as style_charts
from core.charts import votes as charts
from core.charts.drift import drift_chart
from core.formats import csv_table, dumps, markdown_text
from core.ranking import Ranking, RankSettings
from core.ranking.inputs import rank_prepared, require_votes_after_policy, vote_groups
from core.ranking.render import model_fields, ranking_dict
from core.ranking.render import to_markdown as ranking_markdown
from core.ranking.request import PreparedVotes, prepare_votes
from core.report.bundle import (
    REPORT_JSON,
    ReportResult,
    ReportSettings,
    Steps,
    figures_markdown,
    png_status,
    safe_name,
    write_pngs,
)

MARKDOWN = "BT_ANALYSIS_REPORT.md"
CSV = "BT_ANALYSIS_REPORT.csv"
CSV_FIELDS = ("scope", "game_id", "dimension", "model", "rank", "rating", "ci_low", "ci_high", "rank_low",
              "rank_high", "n_votes", "interval_note")
SCOPE_TITLES = {"game": "Per game", "dimension": "Per dimension (all games)", "game_dimension": "Per game × dimension"}


def build_votes_report(frame: pd.DataFrame, out: Path, settings: ReportSettings, common: dict[str, Any],
                       progress=None) -> ReportResult:
    steps = Steps(14, progress)
    rank_settings = RankSettings("bt", "half", "bootstrap", settings.bootstrap, settings.alpha, settings.seed)
    notes: list[str] = []
    steps("annotator policy")
    prepared = prepare_votes(frame, settings.annotators, dimension=settings.dimension, alpha=settings.alpha,
                             qualify=settings.qualify)
    votes, summary = prepared.votes, prepared.policy.legacy()
    require_votes_after_policy(prepared.before_policy, votes, summary)
    steps("global ranking (bootstrap)")
    global_rank = rank_prepared(prepared, rank_settings)[0]
    order = [r.model for r in global_rank.rows]
    steps("group rankings (bootstrap)")
    scopes: dict[str, dict[tuple, Ranking]] = {}
    for scope, by in vd.SCOPES.items():
        missing = [b for b in by if not vd.has_column(votes, b)]
        if missing:
            notes.append(f"no {', '.join(missing)} column: no {scope.replace('_', ' × ')} rankings")
            continue
        scoped = prepared.all_dimensions if "dimension" in by else votes  # a dimension each, never pooled
        scopes[scope] = vd.rank_scope(scoped, by, rank_settings, notes, prepared)
    steps("bias diagnostics")
    bias = diagnose(votes, alpha=settings.alpha)
    steps("annotator report")
    annotators = build_prepared(prepared, alpha=settings.alpha)
    steps("style control")
    style = vs.style_section(prepared, settings.alpha, settings.seed)
    steps("how many more votes")
    planned = vp.plan_section(prepared, settings.alpha)
    steps("robustness of the top")
    robust = vr.robustness_section(prepared)
    steps("drift over time")
    drifted = vdr.drift_section(prepared, settings.alpha)
    steps("annotator reliability (Crowd-BT)")
    crowd = vc.crowd_section(prepared, settings.alpha, settings.seed)
    png, png_note = png_status(settings.png)
    steps("figures")
    figures, figure_notes = _figures(votes, global_rank, scopes, bias, order, build=png,
                                     all_dimensions=prepared.all_dimensions)
    if figures and style.view is not None:
        figures[vs.FIGURE] = style_charts.slope_chart(style.view, "Rank without and with style control (plain "
                                                                  "Bradley–Terry → style-controlled)")
    if figures and drifted.result is not None:
        figures[vdr.FIGURE] = drift_chart(drifted.result, title="Rating per ISO week")
    notes += figure_notes
    steps("PNG export")
    png, png_note, pngs = write_pngs(figures, out, png, png_note)
    names = list(figures) if figures else (_figure_names(votes, scopes) + ([vs.FIGURE] if style.view else [])
                                           + ([vdr.FIGURE] if drifted.result else []))
    steps("write markdown, CSV, JSON")
    params = {"scheme": "bt", "ties": "half", "ci": "bootstrap", "bootstrap": settings.bootstrap,
              "alpha": settings.alpha, "seed": settings.seed, **summary, **prepared.as_dict()}
    (out / MARKDOWN).write_text(_markdown(global_rank, scopes, bias, annotators, names, png, png_note, notes, params,
                                          common, prepared, style, planned, robust, drifted,
                                          crowd), encoding="utf-8")
    (out / CSV).write_text(_csv(global_rank, scopes), encoding="utf-8")
    timings = steps.done()
    doc = {"kind": "votes", "rank": ranking_dict(global_rank),
           "groups": {scope: [{"group": dict(zip(vd.SCOPES[scope], key)), **ranking_dict(r)}
                              for key, r in rankings.items()] for scope, rankings in scopes.items()},
           "style_control": style.as_dict(), "plan": planned.as_dict(), "robustness": robust.as_dict(),
           "drift": drifted.as_dict(), "crowd": crowd.as_dict(),
           "bias": bias_report.report_dict(bias, prepared), "annotators": annotator_render.report_dict(annotators),
           "params": params, **common, "png": png, "png_note": png_note, "figures": names,
           "figure_definitions": _DEFINITIONS, "notes": notes, "timings": timings}
    (out / REPORT_JSON).write_text(dumps(doc) + "\n", encoding="utf-8")
    files = [out / MARKDOWN, out / CSV, out / REPORT_JSON, *pngs]
    return ReportResult("votes", out, files, figures, png, png_note, timings)


_DEFINITIONS = {
    "winrate_{game_id}_{dimension}": "observed win rate of the row model against the column model in that game "
                                     "and dimension (ties half)",
    "winrate_predicted": "Bradley–Terry predicted win rate from the global ranking",
    "rank_vs_dimension": "colour: BT Elo per dimension (fit over all games); text: the rank in that dimension",
    "winrate_scatter": "raw vs stratified (side × period, docs/methods.md §5) win rate against the field",
    "winrate_diff_heatmap_all": "stratified minus raw head-to-head win rate; stratified = mean over the non-empty "
                                "(side × period) strata of the row model's win rate against the column model",
    "winrate_share_stacked": "per game, each model's gap to the game's top model in observed win rate, split "
                             "into dimension shares: share = that dimension's gap / number of dimensions, so the "
                             "bar sums to the mean gap over dimensions",
    "elo_share_stacked": "as winrate_share_stacked, in Elo",
    "forest": "global BT Elo with bootstrap CIs",
    "battles": "number of votes per pair",
    "bias_panel": "position, model-position, time-exposure and length shares with their CIs",
    vs.FIGURE: vs.DEFINITION,
    vdr.FIGURE: vdr.DEFINITION,
}


def _figure_names(votes: pd.DataFrame, scopes: dict[str, dict[tuple, Ranking]]) -> list[str]:
    names = [f"winrate_{g}_{d}" for g, d in scopes.get("game_dimension", {})]
    names += ["winrate_predicted"]
    if "dimension" in scopes:
        names.append("rank_vs_dimension")
    names += ["winrate_scatter", "winrate_diff_heatmap_all"]
    if "game_dimension" in scopes and "game" in scopes:
        names += ["winrate_share_stacked", "elo_share_stacked"]
    return names + ["forest", "battles", "bias_panel"]


def _figures(votes, global_rank, scopes, bias, order, build: bool, all_dimensions=None
             ) -> tuple[dict[str, Any], list[str]]:
    """The figures (plotly) of the report; none when not wanted."""
    if not build:
        return {}, []
    figs: dict[str, Any] = {}
    cell_rank = scopes.get("game_dimension", {})
    if cell_rank:
        for (game, dim), group in vote_groups(votes if all_dimensions is None else all_dimensions,
                                              ["game_id", "dimension"]):
            if (game, dim) in cell_rank:
                rates, counts = vd.winrate_frames(group, order)
                figs[safe_name(f"winrate_{game}_{dim}")] = charts.winrate_heatmap(
                    rates, counts, f"Observed win rate — {game} × {dim}")
    figs["winrate_predicted"] = charts.winrate_heatmap(vd.predicted_frame(global_rank), None,
                                                       "Predicted win rate (Bradley–Terry, all data)")
    if "dimension" in scopes:
        strength, ranks = vd.dimension_frames(scopes["dimension"], order)
        figs["rank_vs_dimension"] = charts.rank_vs_dimension(strength, ranks, "Rank vs dimension (BT Elo)")
    raw, strat = vd.scatter_series(votes, order)
    figs["winrate_scatter"] = charts.winrate_scatter(raw, strat, "Raw vs stratified win rate")
    figs["winrate_diff_heatmap_all"] = charts.winrate_diff_heatmap(vd.head_to_head_diff(votes, order),
                                                                   "Stratified − raw head-to-head win rate")
    if "game_dimension" in scopes and "game" in scopes:
        figs["winrate_share_stacked"] = charts.share_stacked(
            vd.gap_shares(scopes["game"], cell_rank, "winrate"), "win-rate gap to the game's top model",
            "Gap to the top model per game (win rate; dimension shares)")
        figs["elo_share_stacked"] = charts.share_stacked(
            vd.gap_shares(scopes["game"], cell_rank, "elo"), "Elo gap to the game's top model",
            "Gap to the top model per game (Elo; dimension shares)")
    figs["forest"] = charts.forest_plot(vd.forest_rows(global_rank), "Elo", "Bradley–Terry Elo with bootstrap CIs")
    rates, counts = vd.winrate_frames(votes, order)
    figs["battles"] = charts.battle_heatmap(counts, "Votes per pair")
    figs["bias_panel"] = charts.bias_panel(**vd.bias_panel_args(bias), title="Bias diagnostics")
    return figs, []


def _demote(markdown: str) -> str:
    """Headings one level down, so a sub-report nests under the bundle's sections."""
    return "\n".join("#" + line if line.startswith("#") else line for line in markdown.splitlines())


def _markdown(global_rank, scopes, bias, annotators, names, png, png_note, notes, params, common,
              prepared: PreparedVotes, style: vs.StyleSection, planned: vp.PlanSection,
              robust: vr.RobustnessSection,
              drifted: vdr.DriftSection, crowd: vc.CrowdSection) -> str:
    source = common.get("input", {})
    parts = ["# Bradley–Terry analysis report", "",
             (f"Input: {markdown_text(source.get('source', '?'))} (sha256 `{source.get('sha256', '?')}`, "
             f"{source.get('rows', '?')} rows). Scheme bt, ties half, {params['bootstrap']:,} bootstrap replicates, "
             f"seed {params['seed']}, α = {params['alpha']}. "
             + markdown_text(". ".join(prepared.lines())) + "."), "",
             "## Global ranking", "", ranking_markdown(global_rank), ""]
    for scope, title in SCOPE_TITLES.items():
        if scopes.get(scope):
            parts += [f"## {title}", "", ranking_markdown(scopes[scope], vd.SCOPES[scope]), ""]
    parts += [vs.style_markdown(style), vp.plan_markdown(planned), vr.robustness_markdown(robust),
              vdr.drift_markdown(drifted), vc.crowd_markdown(crowd)]
    parts += [_demote(bias_report.to_markdown(bias, prepared, style_pointer=False)), "",
              _demote(annotator_render.to_markdown(annotators)), "",
              figures_markdown(names, png, png_note), "Figure definitions:", ""]
    parts += [f"- `{markdown_text(k)}`: {v}" for k, v in _DEFINITIONS.items()]
    if notes:
        parts += ["", "Notes:", ""] + [f"- {markdown_text(n)}" for n in notes]
    return "\n".join(parts) + "\n"


def _csv(global_rank: Ranking, scopes: dict[str, dict[tuple, Ranking]]) -> str:
    rows = []

    def add(scope: str, game, dim, ranking: Ranking):
        for r in ranking.rows:
            d = model_fields(ranking, r)
            rows.append([scope, game, dim, *(d[f] for f in CSV_FIELDS[3:])])

    add("global", "", "", global_rank)
    for scope, rankings in scopes.items():
        for key, ranking in rankings.items():
            group = dict(zip(vd.SCOPES[scope], key))
            add(scope, group.get("game_id", ""), group.get("dimension", ""), ranking)
    return csv_table(CSV_FIELDS, rows)
