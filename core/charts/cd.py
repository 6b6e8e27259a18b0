"""Critical-difference diagram (Demšar 2006): pure plotly figure builders."""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go

from core.charts._common import LABEL_LIMIT
from core.formats import html_text
from core.leaderboard.nemenyi import cd_groups

DIAGRAM_LIMIT = 20  # beyond this many models the labels of Demšar's layout no longer fit: one row per model


def critical_difference_figure(mean_ranks: Mapping[str, float], cd: float, title: str | None = None) -> go.Figure:
    """Demšar's critical-difference diagram: average ranks on an axis (1 = best, on the left), each
    model labelled, bars joining models the Nemenyi test cannot tell apart, and the CD for scale.
    Past :data:`DIAGRAM_LIMIT` models, :func:`critical_difference_rows` draws the same test row by row."""
    if len(mean_ranks) > DIAGRAM_LIMIT:
        return critical_difference_rows(mean_ranks, cd, title)
    order = sorted(mean_ranks, key=lambda m: (mean_ranks[m], m))
    k = len(order)
    fig = go.Figure()
    half = (k + 1) // 2
    fig.add_shape(type="line", x0=1, x1=max(k, 2), y0=0, y1=0, line={"color": "#222", "width": 2})
    for tick in range(1, max(k, 2) + 1):
        fig.add_shape(type="line", x0=tick, x1=tick, y0=0, y1=0.08, line={"color": "#222", "width": 2})
    label_y = {m: -(1 + (i if i < half else k - 1 - i)) * 0.35 for i, m in enumerate(order)}
    for i, model in enumerate(order):
        r = mean_ranks[model]
        left_side = i < half
        x_label = 0.6 if left_side else k + 0.4
        y = label_y[model]
        fig.add_shape(type="line", x0=r, x1=r, y0=0, y1=y, line={"color": "#444", "width": 1})
        fig.add_shape(type="line", x0=r, x1=x_label, y0=y, y1=y, line={"color": "#444", "width": 1})
        fig.add_annotation(x=x_label, y=y, text=f"{html_text(model)} ({r:.2f})", showarrow=False,
                           xanchor="right" if left_side else "left", font={"size": 12})
    for level, group in enumerate(cd_groups(mean_ranks, cd)):
        y = -0.12 - 0.1 * level
        fig.add_shape(type="line", x0=mean_ranks[group[0]] - 0.03, x1=mean_ranks[group[-1]] + 0.03, y0=y, y1=y,
                      line={"color": "#d62728", "width": 5})
    fig.add_shape(type="line", x0=1, x1=1 + cd, y0=0.45, y1=0.45, line={"color": "#1f77b4", "width": 3})
    fig.add_annotation(x=1 + cd / 2, y=0.6, text=f"CD = {cd:.3f}", showarrow=False)
    lowest = min(label_y.values(), default=-1.0) - 0.3
    # Room for the labels beside the axis: at ~7 px per character on a ~960 px plot, `room` rank units
    # on each side hold the longest label however long the names are.
    label_px = 7 * max((len(f"{m} ({mean_ranks[m]:.2f})") for m in order), default=0) + 12
    room = max(1.5 + 0.2 * k, label_px * (max(k, 2) - 1) / max(960 - 2 * label_px, 160))
    fig.update_xaxes(range=[0.6 - room, k + 0.4 + room], tickvals=list(range(1, max(k, 2) + 1)),
                     side="top", showgrid=False, zeroline=False, title="average rank (1 = best)")
    fig.update_yaxes(range=[lowest, 0.8], visible=False)
    fig.update_layout(title=title or "Critical difference (Nemenyi)", height=160 + 45 * half,
                      margin={"l": 20, "r": 20, "t": 90, "b": 20}, plot_bgcolor="white", showlegend=False)
    return fig


def critical_difference_rows(mean_ranks: Mapping[str, float], cd: float, title: str | None = None) -> go.Figure:
    """The Nemenyi test for many models: one row per model (best at the top), its average rank with a
    bar of ±CD/2. Two models differ iff their bars do not overlap (|R_i − R_j| > CD), the same verdict
    as the diagram's thick lines, with every name on its own row."""
    order = sorted(mean_ranks, key=lambda m: (mean_ranks[m], m))
    names = [html_text(m) for m in order]
    ranks = [float(mean_ranks[m]) for m in order]
    fig = go.Figure(go.Scatter(
        x=ranks, y=names, mode="markers", marker={"size": 7, "color": "#1f77b4"},
        error_x={"type": "constant", "value": cd / 2, "color": "#d62728", "thickness": 1.5, "width": 0},
        hovertemplate="%{y}: average rank %{x:.2f}<extra></extra>"))
    k = len(order)
    fig.update_xaxes(title=f"average rank (1 = best); bars ±CD/2, CD = {cd:.3f}: models whose bars do not overlap "
                           "differ", range=[0.5 - cd / 2, k + 0.5 + cd / 2], showgrid=True, gridcolor="#eee",
                     side="top", zeroline=False)
    ticks = {"tickfont": {"size": 9}} if k <= LABEL_LIMIT else {"showticklabels": False}
    fig.update_yaxes(title="model" if k <= LABEL_LIMIT else f"model ({k} — hover for names)", type="category",
                     categoryorder="array", categoryarray=names, autorange="reversed", automargin=True, **ticks)
    fig.update_layout(title=title or "Critical difference (Nemenyi)",
                      height=max(300, 160 + (16 if k <= LABEL_LIMIT else 10) * k),
                      showlegend=False, plot_bgcolor="white", margin={"l": 20, "r": 20, "t": 110, "b": 20})
    return fig

