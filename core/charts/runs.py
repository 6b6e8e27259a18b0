"""Figures for score-table runs (leaderboards, per-category means, pairwise differences).

Pure functions: results in, a plotly ``go.Figure`` out, no I/O. Model and category names are
HTML-escaped (:func:`core.formats.html_text`) wherever they become text or labels, and every figure
keeps the model order it is given."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from core.charts._common import (
    DIVERGING,
    category_ticks,
    cell_text,
    cell_text_args,
    finite,
    heatmap_layout,
    hover_note,
    labels,
    matrix,
    none_if_nan,
    row_height,
    symmetric_limit,
)


def leaderboard_bars(rows: pd.DataFrame, title: str = "Mean score") -> go.Figure:
    """Horizontal bars of mean_score with [mean_ci_lo, mean_ci_hi] error bars (``rows`` in rank order:
    columns model_id, mean_score, mean_ci_lo, mean_ci_hi), best at the top."""
    names = labels(rows["model_id"])
    mean = none_if_nan(rows["mean_score"])
    lo = none_if_nan(rows["mean_ci_lo"])
    hi = none_if_nan(rows["mean_ci_hi"])
    plus = [h - m if m is not None and h is not None else None for m, h in zip(mean, hi)]
    minus = [m - lo_ if m is not None and lo_ is not None else None for m, lo_ in zip(mean, lo)]
    fig = go.Figure(go.Bar(
        x=mean, y=names, orientation="h", marker_color="#1f77b4",
        error_x={"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, "color": "#333",
                 "thickness": 1.5, "width": 4},
        customdata=[[a, b] for a, b in zip(lo, hi)],
        hovertemplate="%{y}: %{x:.3f} [%{customdata[0]:.3f}, %{customdata[1]:.3f}]<extra></extra>"))
    fig.update_xaxes(title="mean score", showgrid=True, gridcolor="#eee")
    fig.update_yaxes(title=hover_note("model", len(names)), type="category", categoryorder="array",
                     categoryarray=names, autorange="reversed", **category_ticks(len(names)))
    fig.update_layout(title=title, height=max(300, 140 + min(32, row_height(len(names))) * len(names)),
                      showlegend=False, plot_bgcolor="white",
                      margin={"l": 20, "r": 20, "t": 70, "b": 20})
    return fig


def category_heatmap(means: pd.DataFrame, title: str = "Mean score by category") -> go.Figure:
    """Models (rows) × categories (columns) mean scores, text to 2 decimals, NaN cells blank."""
    z = matrix(means)
    rows, cols = labels(means.index), labels(means.columns)
    fig = go.Figure(go.Heatmap(
        z=z, x=cols, y=rows, **cell_text_args(z, lambda v: f"{v:.2f}"),
        colorscale="Viridis", colorbar={"title": {"text": "mean score"}},
        hovertemplate="%{y} · %{x}: %{z:.3f}<extra></extra>", xgap=1, ygap=1, hoverongaps=False))
    return heatmap_layout(fig, title, "category", "model", len(rows), len(cols))


def pairwise_matrix(pairs: pd.DataFrame, models: list[str], title: str = "Pairwise differences") -> go.Figure:
    """K×K matrix of mean-score differences (row − column) from ``pairs`` (columns model_a, model_b, diff,
    significant), filled antisymmetrically; significant cells are marked "*"; diverging at 0. Pairs with a
    model outside ``models`` are ignored; pairs never given stay blank."""
    index = {m: i for i, m in enumerate(models)}
    k = len(models)
    z: list[list[float | None]] = [[None] * k for _ in range(k)]
    sig = [[False] * k for _ in range(k)]
    for a, b, d, s in zip(pairs["model_a"], pairs["model_b"], pairs["diff"], pairs["significant"]):
        if a not in index or b not in index or a == b or not finite(d):
            continue
        i, j = index[a], index[b]
        flag = bool(s) if s is not None and not (isinstance(s, float) and math.isnan(s)) else False
        z[i][j], z[j][i] = float(d), -float(d)
        sig[i][j] = sig[j][i] = flag
    text = cell_text(z, lambda v: f"{v:+.2f}")
    text = [[t + ("*" if sig[i][j] and t else "") for j, t in enumerate(row)] for i, row in enumerate(text)]
    names = labels(models)
    lim = symmetric_limit(z)
    shown = {"text": text, "texttemplate": "%{text}"} if cell_text_args(z, str) else {}  # hover-only past the limit
    verdict = [[" (significant)" if flag else "" for flag in row] for row in sig]
    fig = go.Figure(go.Heatmap(
        z=z, x=names, y=names, **shown, customdata=verdict, colorscale=DIVERGING, zmin=-lim, zmax=lim,
        zmid=0.0, colorbar={"title": {"text": "row − column"}},
        hovertemplate="%{y} − %{x}: %{z:+.3f}%{customdata}<extra></extra>", xgap=1, ygap=1, hoverongaps=False))
    heatmap_layout(fig, title, "model (column)", "model (row)", k, k)
    fig.add_annotation(text="* significant" if shown else "significance: in the hover", xref="paper",
                       yref="paper", x=1.0, y=1.0, xanchor="right",
                       yanchor="bottom", showarrow=False, font={"size": 11, "color": "#555"})
    return fig
