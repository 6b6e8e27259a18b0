"""Figures of the bias diagnostics (docs/methods.md §4): per-model exposure shares and the length curve.

Pure functions of :mod:`core.bias.diagnose` results; names are HTML-escaped like every other chart.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from core.bias.diagnose import relative_length
from core.charts._common import category_ticks, hover_note, labels, unavailable
from core.formats import p_text
from core.stats.intervals import wilson_array
from core.stats.significance import Logit

FLAGGED, NORMAL, EXPECTED = "#d62728", "#1f77b4", "#7f7f7f"


def model_share_chart(per_model, p0: float, share_label: str, title: str) -> go.Figure:
    """One bar per model: the share of its appearances that were ``share_label`` (e.g. "on the left"), with
    its Wilson CI, against the expected share ``p0``; red where the test detected a difference (Holm).
    ``per_model``: the ``ModelShare`` rows of a :class:`core.bias.diagnose.TableTest`."""
    fig = go.Figure()
    if not per_model:
        unavailable(fig, "no model has appearances")
        return fig
    rows = sorted(per_model, key=lambda r: -r.test.share)
    names = labels(r.model for r in rows)
    share = np.array([r.test.share for r in rows], dtype=float)
    lo = np.array([r.test.ci_low for r in rows], dtype=float)
    hi = np.array([r.test.ci_high for r in rows], dtype=float)
    fig.add_trace(go.Bar(
        x=names, y=share, marker_color=[FLAGGED if r.detected else NORMAL for r in rows],
        error_y={"type": "data", "symmetric": False, "array": hi - share, "arrayminus": share - lo,
                 "color": "#444", "thickness": 1.2, "width": 3},
        customdata=[[r.test.k, r.test.n, r.test.ci_low, r.test.ci_high, p_text(r.p_holm)] for r in rows],
        hovertemplate=(f"%{{x}}<br>{share_label}: %{{y:.3f}} (%{{customdata[0]:,}} of %{{customdata[1]:,}})"
                       "<br>CI %{customdata[2]:.3f}–%{customdata[3]:.3f}<br>Holm %{customdata[4]}"
                       "<extra></extra>"), showlegend=False))
    fig.add_hline(y=p0, line={"color": EXPECTED, "dash": "dash", "width": 1.5},
                  annotation_text=f"expected {p0:.3f}", annotation_position="top right")
    fig.update_xaxes(title=hover_note("model", len(names)), type="category", categoryorder="array",
                     categoryarray=names, **category_ticks(len(names)))
    fig.update_yaxes(title=f"share of appearances {share_label}", range=[0, 1], showgrid=True, gridcolor="#eee")
    fig.update_layout(title=title, height=420, plot_bgcolor="white", margin={"l": 20, "r": 20, "t": 70, "b": 20})
    return fig


def length_curve(len_left: np.ndarray, len_right: np.ndarray, left_chosen: np.ndarray, fit: Logit,
                 bins: int = 10, alpha: float = 0.05,
                 title: str = "Left answer chosen by relative length") -> go.Figure:
    """Observed share of decisive votes won by the left answer in bins of the relative length difference
    f = (l - r)/(l + r + 1), with Wilson CIs, and the fitted logistic curve P(left) = σ(β0 + β1 f)."""
    fig = go.Figure()
    if len(left_chosen) == 0:
        unavailable(fig, "no decisive vote with both lengths")
        return fig
    f = relative_length(np.asarray(len_left, float), np.asarray(len_right, float))
    edges = np.unique(np.quantile(f, np.linspace(0, 1, bins + 1)))
    if len(edges) < 2:
        edges = np.array([f.min() - 1e-9, f.max() + 1e-9])
    which = np.clip(np.searchsorted(edges, f, side="right") - 1, 0, len(edges) - 2)
    n = np.bincount(which, minlength=len(edges) - 1).astype(float)
    k = np.bincount(which, weights=left_chosen.astype(float), minlength=len(edges) - 1)
    centre = np.bincount(which, weights=f, minlength=len(edges) - 1) / np.maximum(n, 1)
    keep = n > 0
    share = k[keep] / n[keep]
    lo, hi = wilson_array(k[keep], n[keep], alpha)
    fig.add_trace(go.Scatter(
        x=centre[keep], y=share, mode="markers", name="observed (binned)", marker={"size": 9, "color": NORMAL},
        error_y={"type": "data", "symmetric": False, "array": hi - share, "arrayminus": share - lo,
                 "color": NORMAL, "thickness": 1.2, "width": 3},
        customdata=np.column_stack([k[keep], n[keep]]),
        hovertemplate="f ≈ %{x:.3f}<br>left chosen %{y:.3f} (%{customdata[0]:,.0f} of %{customdata[1]:,.0f})"
                      "<extra></extra>"))
    if fit.flag is None and np.all(np.isfinite(fit.beta)):
        grid = np.linspace(f.min(), f.max(), 101)
        curve = 1.0 / (1.0 + np.exp(-(fit.beta[0] + fit.beta[1] * grid)))
        fig.add_trace(go.Scatter(x=grid, y=curve, mode="lines", line={"color": FLAGGED, "width": 2},
                                 name=f"logistic fit (β₀ = {fit.beta[0]:.2f}, β₁ = {fit.beta[1]:.2f})",
                                 hovertemplate="f = %{x:.3f}<br>fitted %{y:.3f}<extra></extra>"))
    else:
        unavailable(fig, f"no logistic fit ({(fit.flag or 'not finite').replace('_', ' ')})")
    fig.add_hline(y=0.5, line={"color": EXPECTED, "dash": "dash", "width": 1})
    fig.update_xaxes(title="relative length difference (left − right) / (left + right + 1)", showgrid=True,
                     gridcolor="#eee", zeroline=True, zerolinecolor="#ccc")
    fig.update_yaxes(title="share of decisive votes won by the left answer", range=[0, 1], showgrid=True,
                     gridcolor="#eee")
    fig.update_layout(title=title, height=440, plot_bgcolor="white", legend={"orientation": "h", "y": -0.25},
                      margin={"l": 20, "r": 20, "t": 70, "b": 20})
    return fig
