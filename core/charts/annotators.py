"""Figures of annotator quality (docs/methods.md §7): accuracy against fast answers, and response times."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.charts._common import labels, unavailable

STATUS_COLOURS = {"qualified": "#2ca02c", "unqualified": "#d62728", "not_evaluable": "#7f7f7f"}


NO_GOLDS_Y = -0.12  # the row where annotators without golden answers are drawn (accuracy unknown)


def quality_scatter(quality: pd.DataFrame, max_fast_rate: float, min_accuracy: float,
                    title: str = "Golden accuracy vs fast answers") -> go.Figure:
    """One point per annotator (size ~ votes, colour = status) with the two qualification thresholds.
    Annotators without golden answers (accuracy unknown) sit on their own row below 0, labelled so."""
    fig = go.Figure()
    if len(quality) == 0:
        unavailable(fig, "no annotator_id column")
        return fig
    size = 8 + 22 * np.sqrt(quality["n_votes"].to_numpy(float) / max(quality["n_votes"].max(), 1))
    for status, colour in STATUS_COLOURS.items():
        rows = (quality["status"] == status).to_numpy()
        if not rows.any():
            continue
        q = quality[rows]
        accuracy = q["golden_accuracy"].to_numpy(float)
        fast = q["fast_rate"].to_numpy(float)
        fig.add_trace(go.Scatter(
            x=np.nan_to_num(fast, nan=0.0), y=np.where(np.isfinite(accuracy), accuracy, NO_GOLDS_Y),
            mode="markers", name=status.replace("_", " "),
            marker={"size": size[rows], "color": colour, "opacity": 0.75, "line": {"width": 1, "color": "white"}},
            text=labels(q["annotator_id"]),
            customdata=np.column_stack([q["n_votes"], q["n_golden"], accuracy, fast]),
            hovertemplate="%{text}<br>%{customdata[0]:,} votes, %{customdata[1]:,} golden<br>"
                          "golden accuracy %{customdata[2]:.2f}<br>fast answers %{customdata[3]:.1%}<extra></extra>"))
    fig.add_vline(x=max_fast_rate, line={"color": "#d62728", "dash": "dash", "width": 1},
                  annotation_text=f"fast rate {max_fast_rate:.0%}", annotation_position="top right")
    fig.add_hline(y=min_accuracy, line={"color": "#d62728", "dash": "dash", "width": 1},
                  annotation_text=f"accuracy {min_accuracy:.2f}", annotation_position="bottom right")
    fig.update_xaxes(title="share of votes faster than the threshold", range=[-0.03, 1.03], tickformat=".0%",
                     showgrid=True, gridcolor="#eee")
    ticks = [NO_GOLDS_Y, 0, 0.2, 0.4, 0.6, 0.8, 1.0]
    fig.update_yaxes(title="golden-question accuracy", range=[NO_GOLDS_Y - 0.06, 1.05], showgrid=True,
                     gridcolor="#eee", tickvals=ticks, ticktext=["no golds", *(f"{t:.1f}" for t in ticks[1:])])
    fig.update_layout(title=title, height=460, plot_bgcolor="white", legend={"orientation": "h", "y": -0.2},
                      margin={"l": 20, "r": 20, "t": 70, "b": 20})
    return fig


def response_time_histogram(seconds: np.ndarray, fast_seconds: float, bins: int = 60,
                            title: str = "Response times") -> go.Figure:
    """Histogram of response times on a log axis (binned here, so a million votes draw as 60 bars), with
    the fast-answer threshold."""
    fig = go.Figure()
    t = np.asarray(seconds, dtype=float)
    t = t[np.isfinite(t) & (t > 0)]
    if len(t) == 0:
        unavailable(fig, "no response times")
        return fig
    lo, hi = np.log10(max(t.min(), 0.05)), np.log10(t.max())
    edges = 10 ** np.linspace(lo, max(hi, lo + 1e-6), bins + 1)
    counts, _ = np.histogram(np.clip(t, edges[0], edges[-1]), bins=edges)
    centres = np.sqrt(edges[:-1] * edges[1:])
    fast = edges[1:] <= fast_seconds
    fig.add_trace(go.Bar(x=centres, y=counts, width=np.diff(edges), marker_color=np.where(fast, "#d62728", "#1f77b4"),
                         customdata=np.column_stack([edges[:-1], edges[1:]]), showlegend=False,
                         hovertemplate="%{customdata[0]:.2f}–%{customdata[1]:.2f} s: %{y:,} votes<extra></extra>"))
    fig.add_vline(x=fast_seconds, line={"color": "#d62728", "dash": "dash", "width": 1},
                  annotation_text=f"{fast_seconds:g} s", annotation_position="top right")
    fig.update_xaxes(title="response time (s, log scale)", type="log", showgrid=True, gridcolor="#eee")
    fig.update_yaxes(title="votes", showgrid=True, gridcolor="#eee")
    fig.update_layout(title=title, height=380, plot_bgcolor="white", bargap=0,
                      margin={"l": 20, "r": 20, "t": 70, "b": 20})
    return fig


def screen_path(log_lr: np.ndarray, threshold: float, annotator: str, flagged_at: int = 0) -> go.Figure:
    """One annotator's running log likelihood ratio of the sequential screen (docs/methods.md §17) over their
    votes, with the flagging line log(1/α) and the vote where it was first reached (``flagged_at``, 1-based;
    0 = never)."""
    fig = go.Figure()
    if len(log_lr) == 0:
        unavailable(fig, "no screened votes")
        return fig
    votes = np.arange(1, len(log_lr) + 1)
    fig.add_trace(go.Scatter(x=votes, y=log_lr, mode="lines", name="running log LR",
                             hovertemplate="vote %{x}<br>log LR %{y:.2f}<extra></extra>"))
    fig.add_hline(y=threshold, line_dash="dash", line_color="#d62728",
                  annotation_text=f"flag: log(1/α) = {threshold:.2f}", annotation_position="top left")
    if flagged_at:
        fig.add_trace(go.Scatter(x=[flagged_at], y=[log_lr[flagged_at - 1]], mode="markers", name="flagged",
                                 marker={"color": "#d62728", "size": 11, "symbol": "x"}))
    fig.update_layout(title=f"Sequential screen: {annotator}", xaxis_title="the annotator's votes, in time order",
                      yaxis_title="log likelihood ratio", height=360, showlegend=False)
    return fig
