"""Figures for A/B-vote results (Bradley–Terry rankings, win rates, bias diagnostics).

Pure functions: results in, a plotly ``go.Figure`` out, no I/O. Model, dimension and game names are
HTML-escaped (:func:`core.formats.html_text`) wherever they become text or labels, and every figure
keeps the model order it is given."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from core.charts._common import (
    DIVERGING,
    SEQUENTIAL,
    TEXT_LIMIT,
    category_ticks,
    cell_text_args,
    finite,
    heatmap_layout,
    hover_note,
    labels,
    matrix,
    none_if_nan,
    row_height,
    symmetric_limit,
    unavailable,
)


def winrate_heatmap(rates: pd.DataFrame, counts: pd.DataFrame | None = None, title: str = "Win rate") -> go.Figure:
    """K×K win rates: cell (row, column) is how often the row model beats the column model. NaN cells
    (the diagonal, pairs never compared) stay blank; the hover shows the number of battles when given."""
    z = matrix(rates)
    rows, cols = labels(rates.index), labels(rates.columns)
    n = None
    if counts is not None:
        n = matrix(counts.reindex(index=rates.index, columns=rates.columns))
    hover = []
    for i, r in enumerate(rows):
        line = []
        for j, c in enumerate(cols):
            rate = "–" if z[i][j] is None else f"{z[i][j]:.3f}"
            h = f"{r} beats {c}: {rate}"
            if n is not None:
                h += f"<br>battles: {'–' if n[i][j] is None else round(n[i][j])}"
            line.append(h)
        hover.append(line)
    fig = go.Figure(go.Heatmap(
        z=z, x=cols, y=rows, **cell_text_args(z, lambda v: f"{v:.2f}"),
        hovertext=hover, hoverinfo="text", colorscale=DIVERGING, zmin=0.0, zmax=1.0, zmid=0.5,
        colorbar={"title": {"text": "win rate"}}, xgap=1, ygap=1, hoverongaps=False))
    return heatmap_layout(fig, title, "column model (opponent)", "row model (wins)", len(rows), len(cols))


def battle_heatmap(counts: pd.DataFrame, title: str = "Battles") -> go.Figure:
    """K×K number of battles between each pair of models; NaN cells stay blank."""
    z = matrix(counts)
    rows, cols = labels(counts.index), labels(counts.columns)
    fig = go.Figure(go.Heatmap(
        z=z, x=cols, y=rows, **cell_text_args(z, lambda v: f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"),
        colorscale=SEQUENTIAL, zmin=0.0, colorbar={"title": {"text": "battles"}},
        hovertemplate="%{y} vs %{x}: %{z} battles<extra></extra>", xgap=1, ygap=1, hoverongaps=False))
    return heatmap_layout(fig, title, "model", "model", len(rows), len(cols))


def _rank_text(v: float) -> str:
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"


def rank_vs_dimension(strength: pd.DataFrame, ranks: pd.DataFrame, title: str = "Rank per dimension",
                      value_label: str = "strength") -> go.Figure:
    """Models (rows) × dimensions (columns): colour = Bradley–Terry strength (or Elo), text = rank."""
    ranks = ranks.reindex(index=strength.index, columns=strength.columns)
    z = matrix(strength)
    r = matrix(ranks)
    rows, cols = labels(strength.index), labels(strength.columns)
    hover = [[f"{rows[i]} · {cols[j]}<br>{value_label}: {'–' if z[i][j] is None else f'{z[i][j]:.3f}'}"
              f"<br>rank: {'–' if r[i][j] is None else _rank_text(r[i][j])}" for j in range(len(cols))]
             for i in range(len(rows))]
    fig = go.Figure(go.Heatmap(
        z=z, x=cols, y=rows, **cell_text_args(r, _rank_text), hovertext=hover,
        hoverinfo="text", colorscale="Viridis", colorbar={"title": {"text": value_label}}, xgap=1, ygap=1,
        hoverongaps=False))
    return heatmap_layout(fig, title, "dimension", "model", len(rows), len(cols))


def winrate_scatter(raw: pd.Series, stratified: pd.Series, title: str = "Raw vs stratified win rate") -> go.Figure:
    """One point per model (the series' index, in ``raw``'s order): x = raw win rate, y = stratified win
    rate, with the diagonal y = x. Models missing either value are left out."""
    strat = stratified.reindex(raw.index)
    keep = [finite(a) and finite(b) for a, b in zip(raw.to_numpy(), strat.to_numpy())]
    names = labels(m for m, k in zip(raw.index, keep) if k)
    x = [float(v) for v, k in zip(raw.to_numpy(), keep) if k]
    y = [float(v) for v, k in zip(strat.to_numpy(), keep) if k]
    lo = min([0.0, *x, *y])
    hi = max([1.0, *x, *y])
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="y = x", hoverinfo="skip",
                             line={"color": "#999", "dash": "dash", "width": 1}))
    fig.add_trace(go.Scatter(x=x, y=y, mode="markers+text" if len(names) <= TEXT_LIMIT else "markers", text=names,
                             textposition="top center",
                             name="models", marker={"size": 9, "color": "#1f77b4"},
                             hovertemplate="%{text}<br>raw: %{x:.3f}<br>stratified: %{y:.3f}<extra></extra>"))
    pad = 0.04 * (hi - lo)
    fig.update_xaxes(title="raw win rate", range=[lo - pad, hi + pad], zeroline=False, constrain="domain")
    fig.update_yaxes(title="stratified win rate", range=[lo - pad, hi + pad], zeroline=False,
                     scaleanchor="x", scaleratio=1, constrain="domain")
    fig.update_layout(title=title, showlegend=False, height=560, plot_bgcolor="white",
                      margin={"l": 20, "r": 20, "t": 70, "b": 20})
    fig.update_xaxes(showgrid=True, gridcolor="#eee")
    fig.update_yaxes(showgrid=True, gridcolor="#eee")
    return fig


def winrate_diff_heatmap(diff: pd.DataFrame, title: str = "Stratified minus raw win rate") -> go.Figure:
    """K×K stratified minus raw win rate per pair (row model beats column model), diverging at 0."""
    z = matrix(diff)
    rows, cols = labels(diff.index), labels(diff.columns)
    lim = symmetric_limit(z)
    fig = go.Figure(go.Heatmap(
        z=z, x=cols, y=rows, **cell_text_args(z, lambda v: f"{v:+.2f}"),
        colorscale=DIVERGING, zmin=-lim, zmax=lim, zmid=0.0, colorbar={"title": {"text": "difference"}},
        hovertemplate="%{y} beats %{x}: %{z:+.3f}<extra></extra>", xgap=1, ygap=1, hoverongaps=False))
    return heatmap_layout(fig, title, "column model (opponent)", "row model (wins)", len(rows), len(cols))


def _unique(values) -> list:
    return list(dict.fromkeys(values))


def share_stacked(gaps: pd.DataFrame, value_label: str, title: str = "Gap to the top model by dimension") -> go.Figure:
    """Per game, one stacked bar per model: its gap to the game's top model, split into each dimension's
    share (``gaps``: columns game_id, model, dimension, gap). One subplot per game, one colour per dimension,
    models and dimensions in their order of first appearance."""
    games = _unique(gaps["game_id"]) if len(gaps) else []
    dims = _unique(gaps["dimension"]) if len(gaps) else []
    colours = {d: qualitative.Plotly[i % len(qualitative.Plotly)] for i, d in enumerate(dims)}
    if not games:
        fig = go.Figure()
        unavailable(fig, "no data", x=0.5, y=0.5, xref="paper", yref="paper")
        fig.update_xaxes(title="model")
        fig.update_yaxes(title=value_label)
        fig.update_layout(title=title)
        return fig
    ncols = min(len(games), 3)
    nrows = math.ceil(len(games) / ncols)
    fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=labels(games), shared_yaxes=True,
                        horizontal_spacing=0.04, vertical_spacing=0.25 / max(nrows, 1) + 0.08)
    for g, game in enumerate(games):
        row, col = g // ncols + 1, g % ncols + 1
        sub = gaps[gaps["game_id"] == game]
        models = _unique(sub["model"])
        names = labels(models)
        for d in dims:
            part = sub[sub["dimension"] == d].groupby("model", sort=False)["gap"].sum()
            y = none_if_nan(part.reindex(models).to_numpy())
            fig.add_trace(go.Bar(x=names, y=y, name=labels([d])[0], legendgroup=str(d), showlegend=g == 0,
                                 marker_color=colours[d],
                                 hovertemplate=f"%{{x}} · {labels([d])[0]}: %{{y:.3f}}<extra></extra>"),
                          row=row, col=col)
        fig.update_xaxes(title=hover_note("model", len(names)), type="category", categoryorder="array",
                         categoryarray=names, row=row, col=col, **category_ticks(len(names)))
        if col == 1:
            fig.update_yaxes(title=value_label, row=row, col=col)
    fig.update_layout(title=title, barmode="stack", legend_title_text="dimension",
                      height=max(380, 320 * nrows), plot_bgcolor="white",
                      margin={"l": 20, "r": 20, "t": 90, "b": 20})
    fig.update_yaxes(showgrid=True, gridcolor="#eee")
    return fig


def forest_plot(rows: pd.DataFrame, value_label: str = "Elo",
                title: str = "Ratings with confidence intervals") -> go.Figure:
    """Ratings with horizontal CI bars (``rows``: model, rating, ci_low, ci_high, best first), best at the top."""
    names = labels(rows["model"])
    rating = np.array(none_if_nan(rows["rating"]), dtype=float)
    lo = np.array(none_if_nan(rows["ci_low"]), dtype=float)
    hi = np.array(none_if_nan(rows["ci_high"]), dtype=float)
    plus = none_if_nan(hi - rating)
    minus = none_if_nan(rating - lo)
    fig = go.Figure(go.Scatter(
        x=none_if_nan(rating), y=names, mode="markers", marker={"size": 9, "color": "#1f77b4"},
        error_x={"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, "color": "#1f77b4",
                 "thickness": 1.5, "width": 4},
        customdata=[[a, b] for a, b in zip(none_if_nan(lo), none_if_nan(hi))],
        hovertemplate="%{y}: %{x:.1f} [%{customdata[0]:.1f}, %{customdata[1]:.1f}]<extra></extra>"))
    fig.update_xaxes(title=value_label, showgrid=True, gridcolor="#eee", zeroline=False)
    fig.update_yaxes(title=hover_note("model", len(names)), type="category", categoryorder="array",
                     categoryarray=names, autorange="reversed", **category_ticks(len(names)))
    fig.update_layout(title=title, height=max(300, 140 + min(32, row_height(len(names))) * len(names)),
                      showlegend=False, plot_bgcolor="white",
                      margin={"l": 20, "r": 20, "t": 70, "b": 20})
    return fig


_BIAS_TITLES = ("Left answer chosen", "Model shown on the left", "Model shown early in a session",
                "Longer answer chosen")


def _not_available(fig: go.Figure, row: int, col: int) -> None:
    """Say "not available" in the middle of subplot (row, col) (paper coordinates of its domain)."""
    n = (row - 1) * 2 + col
    xd = fig.layout[f"xaxis{'' if n == 1 else n}"].domain
    yd = fig.layout[f"yaxis{'' if n == 1 else n}"].domain
    unavailable(fig, xref="paper", yref="paper", x=(xd[0] + xd[1]) / 2, y=(yd[0] + yd[1]) / 2,
                xanchor="center", yanchor="middle")
    fig.update_xaxes(visible=False, row=row, col=col)
    fig.update_yaxes(visible=False, row=row, col=col)


def _share_with_ci(fig: go.Figure, share: float | None, ci: Sequence[float] | None, name: str, row: int,
                   col: int) -> None:
    if share is None or not finite(share):
        _not_available(fig, row, col)
        return
    error = None
    if ci is not None and len(ci) == 2 and finite(ci[0]) and finite(ci[1]):
        error = {"type": "data", "symmetric": False, "array": [float(ci[1]) - share],
                 "arrayminus": [share - float(ci[0])], "color": "#1f77b4", "thickness": 2, "width": 8}
    fig.add_trace(go.Scatter(x=[name], y=[float(share)], mode="markers", marker={"size": 12, "color": "#1f77b4"},
                             error_y=error, name=name, showlegend=False,
                             hovertemplate=f"{name}: %{{y:.3f}}<extra></extra>"), row=row, col=col)
    fig.add_hline(y=0.5, line={"color": "#d62728", "dash": "dash", "width": 1}, row=row, col=col)
    fig.update_yaxes(range=[0, 1], row=row, col=col)


def _model_shares(fig: go.Figure, shares: pd.Series | None, row: int, col: int, p0: float = 0.5) -> None:
    valid = shares is not None and any(finite(v) for v in shares.to_numpy())
    if not valid:
        _not_available(fig, row, col)
        return
    names = labels(shares.index)
    fig.add_trace(go.Bar(x=names, y=none_if_nan(shares.to_numpy()), marker_color="#1f77b4", showlegend=False,
                         hovertemplate="%{x}: %{y:.3f}<extra></extra>"), row=row, col=col)
    fig.add_hline(y=p0, line={"color": "#d62728", "dash": "dash", "width": 1}, row=row, col=col)
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=names, row=row, col=col,
                     showticklabels=len(names) <= TEXT_LIMIT, tickangle=-90, tickfont={"size": 10})
    fig.update_yaxes(range=[0, 1], row=row, col=col)


def bias_panel(position_share: float | None, position_ci: Sequence[float] | None,
               model_left_share: pd.Series | None, model_early_share: pd.Series | None,
               length_share: float | None, length_ci: Sequence[float] | None,
               title: str = "Position and time biases", early_share_expected: float = 0.5) -> go.Figure:
    """The 2×2 bias panel (docs/methods.md §4, position × time): the share of decisive votes for the left answer
    with its CI against 0.5; per model, the share of its appearances on the left; per model, the share of
    its appearances early in a session (against ``early_share_expected``, the share of early votes); the
    share won by the longer answer with its CI against 0.5. Any argument may be None: that panel then
    says "not available"."""
    # Model names stand rotated under the top-right panel: the gap to the bottom row grows with the
    # longest name, and past TEXT_LIMIT models the names are hover-only (they would overlap).
    shown = [list(map(str, s.index)) for s in (model_left_share, model_early_share) if s is not None]
    many = max((len(names) for names in shown), default=0) > TEXT_LIMIT
    label_px = 0 if many else int(6.5 * max((len(n) for names in shown for n in names), default=0))
    height = 720 + label_px
    fig = make_subplots(rows=2, cols=2, subplot_titles=_BIAS_TITLES, horizontal_spacing=0.1,
                        vertical_spacing=(110 + label_px) / height)
    _share_with_ci(fig, position_share, position_ci, "left", 1, 1)
    _model_shares(fig, model_left_share, 1, 2)
    _model_shares(fig, model_early_share, 2, 1, early_share_expected)
    _share_with_ci(fig, length_share, length_ci, "longer", 2, 2)
    fig.update_xaxes(title="", row=1, col=1)
    fig.update_yaxes(title="share of decisive votes", row=1, col=1)
    model_title = "model (hover for names)" if many else "model"
    fig.update_xaxes(title=model_title, row=1, col=2)
    fig.update_yaxes(title="share shown on the left", row=1, col=2)
    fig.update_xaxes(title=model_title, row=2, col=1)
    fig.update_yaxes(title="share of early appearances", row=2, col=1)
    fig.update_xaxes(title="", row=2, col=2)
    fig.update_yaxes(title="share of decisive votes", row=2, col=2)
    fig.update_layout(title=title, height=height + label_px, showlegend=False, plot_bgcolor="white",
                      margin={"l": 20, "r": 20, "t": 90, "b": 20 + label_px})
    fig.update_yaxes(showgrid=True, gridcolor="#eee")
    return fig
