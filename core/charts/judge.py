"""Figures for judged preferences against a baseline (AlpacaEval-style win rates, docs/methods.md §12).

Pure functions: a table of per-model rates in, a plotly ``go.Figure`` out. The scatter of the raw win rate
against the length-controlled one stays readable with hundreds of models: every point carries its name in
the hover, and only the extremes (the best and worst by LC, and the models LC moves most) get a text label.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.charts._common import cell_text_args, finite, heatmap_layout, labels, matrix

RAW, LC, LENGTH = "win_rate", "length_controlled_winrate", "avg_length"
EXTREMES = 3  # best and worst by LC, labelled
MOVERS = 4  # the models whose LC moves furthest from the raw rate, labelled
LABEL_ALL_UP_TO = 12  # with this few models every point is labelled
LABEL_HEIGHT, LABEL_WIDTH = 0.035, 0.3  # a label's size as a share of the axes' span (for overlap checks)


def labelled_models(rates: pd.DataFrame) -> list[str]:
    """Which models get a text label on the scatter: all of a small field, else the MOVERS largest |LC − raw|
    and the EXTREMES best and worst by LC, in that priority, each only where its label would not cover one
    already placed (names in the order of ``rates``)."""
    if len(rates) <= LABEL_ALL_UP_TO:
        return [str(m) for m in rates["model"]]
    raw = rates[RAW].to_numpy(dtype=float)
    lc = rates[LC].to_numpy(dtype=float)
    order = np.argsort(-lc, kind="stable")
    candidates = [*np.argsort(-np.abs(lc - raw), kind="stable")[:MOVERS], *order[:EXTREMES], *order[::-1][:EXTREMES]]
    span = max(float(np.nanmax(lc) - np.nanmin(lc)), float(np.nanmax(raw) - np.nanmin(raw)), 1.0)
    placed: list[int] = []
    for i in candidates:
        # A label runs to the right of its point: it collides with one about a line high and a name wide.
        if i not in placed and all(abs(lc[i] - lc[j]) > LABEL_HEIGHT * span or abs(raw[i] - raw[j]) > LABEL_WIDTH * span
                                   for j in placed):
            placed.append(i)
    return [str(m) for i, m in enumerate(rates["model"]) if i in placed]


def lc_vs_raw_scatter(models: pd.DataFrame | list[dict[str, Any]], baseline: str | None = None,
                      title: str = "Raw vs length-controlled win rate") -> go.Figure:
    """Raw win rate (x) against the length-controlled win rate (y), both in percent, one point per model,
    coloured by the model's average answer length, with the diagonal LC = raw: a point above it is a model
    whose raw rate its answer length held down, below it one that length helped.

    ``models``: rows with ``model``, ``win_rate``, ``length_controlled_winrate`` and optionally ``avg_length``
    (the ``models`` list of ``JudgeResult.as_dict()`` works as it is). Models without an LC rate (no lengths)
    are left out and counted in a note; the baseline is drawn as a hollow marker at 50 / 50.
    """
    frame = pd.DataFrame(list(models) if not isinstance(models, pd.DataFrame) else models)
    for col in ("model", RAW, LC, LENGTH):
        if col not in frame:
            frame[col] = np.nan if col != "model" else []
    raw = pd.to_numeric(frame[RAW], errors="coerce")
    lc = pd.to_numeric(frame[LC], errors="coerce")
    shown = frame[np.isfinite(raw.to_numpy(dtype=float)) & np.isfinite(lc.to_numpy(dtype=float))].copy()
    shown[RAW], shown[LC] = raw[shown.index].astype(float), lc[shown.index].astype(float)
    is_base = shown["model"].astype(str) == str(baseline) if baseline is not None else pd.Series(False, shown.index)
    points = shown[~is_base.to_numpy()]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 100], y=[0, 100], mode="lines", line={"color": "#999", "dash": "dash", "width": 1},
                             hoverinfo="skip", showlegend=False, name="LC = raw"))
    length = pd.to_numeric(points[LENGTH], errors="coerce").to_numpy(dtype=float)
    known = np.isfinite(length)
    names = labels(points["model"])
    hover = [[n, f"{v:,.0f}" if finite(v) else "—"] for n, v in zip(names, length)]
    template = "%{customdata[0]}<br>raw %{x:.1f} · LC %{y:.1f}<br>average length %{customdata[1]}<extra></extra>"
    base_marker: dict[str, Any] = {"size": 9, "line": {"width": 0.5, "color": "#333"}}
    # A colour scale cannot hold a missing value: models without lengths are grey points of their own trace.
    for part, marker in ((known, base_marker | {
            "color": length[known].tolist(), "colorscale": "Viridis", "showscale": True,
            "colorbar": {"title": {"text": "average length<br>(characters)"}}}),
            (~known, base_marker | {"color": "#999"})):
        if part.any():
            fig.add_trace(go.Scatter(
                x=points[RAW][part].tolist(), y=points[LC][part].tolist(), mode="markers", marker=marker,
                showlegend=False, customdata=[h for h, keep in zip(hover, part) if keep], hovertemplate=template))
    chosen = set(labelled_models(points)) if len(points) else set()
    for model, x, y in zip(points["model"], points[RAW], points[LC]):
        if str(model) in chosen:
            fig.add_annotation(x=x, y=y, text=labels([model])[0], showarrow=False, font={"size": 10},
                               xanchor="left", xshift=6, yanchor="middle")
    if is_base.any():
        fig.add_trace(go.Scatter(x=[50.0], y=[50.0], mode="markers", showlegend=False,
                                 marker={"size": 11, "symbol": "circle-open", "color": "#d62728", "line": {"width": 2}},
                                 hovertemplate=f"baseline {labels([baseline])[0]}: 50 / 50<extra></extra>"))
        fig.add_annotation(x=50.0, y=50.0, text="baseline", showarrow=False, font={"size": 10, "color": "#d62728"},
                           xanchor="right", xshift=-8, yanchor="middle")
    left_out = len(frame) - len(shown)
    if left_out:
        fig.add_annotation(text=f"{left_out} model{'s' if left_out != 1 else ''} without an LC rate not shown",
                           xref="paper", yref="paper", x=0.0, y=1.0, xanchor="left", yanchor="bottom",
                           showarrow=False, font={"size": 11, "color": "#555"})
    low, high = _axis_range(shown[[RAW, LC]].to_numpy(dtype=float))
    # One scale on both axes (the diagonal at 45°); the plot area shrinks to a square rather than the x range
    # growing past 0 and 100 to fill a wide figure.
    fig.update_xaxes(title="raw win rate (%)", range=[low, high], showgrid=True, gridcolor="#eee", zeroline=False,
                     constrain="domain")
    fig.update_yaxes(title="length-controlled win rate (%)", range=[low, high], showgrid=True, gridcolor="#eee",
                     zeroline=False, scaleanchor="x", scaleratio=1, constrain="domain")
    against = f" against {labels([baseline])[0]}" if baseline is not None else ""
    fig.update_layout(title=title + against, height=760, plot_bgcolor="white",
                      margin={"l": 20, "r": 20, "t": 80, "b": 20})
    return fig


def _axis_range(values: np.ndarray) -> tuple[float, float]:
    """One range for both axes (the diagonal stays at 45°), padded, within [0, 100]."""
    finite_values = values[np.isfinite(values)]
    if finite_values.size == 0:
        return 0.0, 100.0
    low, high = float(finite_values.min()), float(finite_values.max())
    pad = max(2.0, 0.05 * (high - low))
    return max(0.0, low - pad), min(100.0, high + pad)


def category_winrate_heatmap(rates: pd.DataFrame, title: str = "Win rate per category (%)") -> go.Figure:
    """Models (rows) × categories (columns) win rates in percent, diverging at 50 (the baseline's rate);
    cells without prompts are blank."""
    z = matrix(rates)
    rows, cols = labels(rates.index), labels(rates.columns)
    fig = go.Figure(go.Heatmap(
        z=z, x=cols, y=rows, **cell_text_args(z, lambda v: f"{v:.0f}"), colorscale="RdBu", zmin=0.0, zmax=100.0,
        zmid=50.0, colorbar={"title": {"text": "win rate (%)"}},
        hovertemplate="%{y} · %{x}: %{z:.1f}<extra></extra>", xgap=1, ygap=1, hoverongaps=False))
    return heatmap_layout(fig, title, "category", "model", len(rows), len(cols))
