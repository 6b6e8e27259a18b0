"""Helpers shared by the figure builders: escaped labels, NaN-safe matrices and cell texts."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core.formats import html_text

DIVERGING = "RdBu"
SEQUENTIAL = "Blues"


def labels(names: Iterable[Any]) -> list[str]:
    """Model (or category) names as safe plotly text: HTML-escaped, so plotly shows them verbatim."""
    return [html_text(n) for n in names]


def finite(v: Any) -> bool:
    try:
        return v is not None and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def matrix(df: pd.DataFrame) -> list[list[float | None]]:
    """A DataFrame as a list of rows, NaN/inf/missing as None (a blank heatmap cell)."""
    return [[float(v) if finite(v) else None for v in row] for row in df.to_numpy(dtype=object)]


def cell_text(z: list[list[float | None]], fmt: Callable[[float], str]) -> list[list[str]]:
    return [["" if v is None else fmt(v) for v in row] for row in z]


def heatmap_layout(fig: go.Figure, title: str, x_title: str, y_title: str, n_rows: int, n_cols: int) -> go.Figure:
    """Matrix layout: first row at the top, columns along the top-to-bottom reading order, square-ish."""
    fig.update_xaxes(title=x_title, type="category", side="bottom", tickangle=-30 if n_cols > 4 else 0)
    fig.update_yaxes(title=y_title, type="category", autorange="reversed")
    fig.update_layout(title=title, height=max(300, 160 + 42 * n_rows), plot_bgcolor="white",
                      margin={"l": 20, "r": 20, "t": 70, "b": 20})
    return fig


def symmetric_limit(z: list[list[float | None]]) -> float:
    values = [abs(v) for row in z for v in row if v is not None]
    return max(values, default=0.0) or 1.0


def as_float_array(values: Iterable[Any]) -> np.ndarray:
    return np.array([float(v) if finite(v) else np.nan for v in values], dtype=float)


def none_if_nan(values: Iterable[Any]) -> list[float | None]:
    return [float(v) if finite(v) else None for v in values]


def unavailable(fig: go.Figure, text: str = "not available", **where: Any) -> None:
    fig.add_annotation(text=text, showarrow=False, font={"size": 14, "color": "#777"}, **where)
