"""Helpers shared by the figure builders: escaped labels, NaN-safe matrices and cell texts."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from core.formats import html_text

DIVERGING = "RdBu"
SEQUENTIAL = "Blues"
TEXT_LIMIT = 25  # beyond this many rows or columns, heatmap cells carry no text (hover shows it)
LABEL_LIMIT = 80  # beyond this many categories on an axis, their names are hover-only


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


def cell_text_args(z: list[list[float | None]], fmt: Callable[[float], str]) -> dict[str, Any]:
    """``text``/``texttemplate`` of a heatmap when its cells are big enough to read, else nothing: past
    :data:`TEXT_LIMIT` rows or columns the numbers are in the hover only."""
    if len(z) > TEXT_LIMIT or max((len(row) for row in z), default=0) > TEXT_LIMIT:
        return {}
    return {"text": cell_text(z, fmt), "texttemplate": "%{text}"}


def category_ticks(n: int) -> dict[str, Any]:
    """Axis settings for ``n`` category labels: full size up to TEXT_LIMIT, smaller up to LABEL_LIMIT,
    then none (names in the hover), so labels never run into each other or into titles."""
    if n <= TEXT_LIMIT:
        return {"automargin": True}
    if n <= LABEL_LIMIT:
        return {"automargin": True, "tickfont": {"size": 9}, "dtick": 1}
    return {"showticklabels": False}


def hover_note(title: str, n: int) -> str:
    """An axis title that says where the names went when they are hover-only."""
    return f"{title} ({n} — hover for names)" if n > LABEL_LIMIT else title


def row_height(n: int) -> int:
    """Pixels per heatmap row or bar: room for cell text up to TEXT_LIMIT rows, compact after."""
    return 42 if n <= TEXT_LIMIT else 16 if n <= LABEL_LIMIT else 10


def heatmap_layout(fig: go.Figure, title: str, x_title: str, y_title: str, n_rows: int, n_cols: int) -> go.Figure:
    """Matrix layout: first row at the top, columns along the top-to-bottom reading order, square-ish;
    labels and cell text scale with the number of rows and columns (see :func:`category_ticks`)."""
    fig.update_xaxes(title=hover_note(x_title, n_cols), type="category", side="bottom",
                     tickangle=(-30 if n_cols <= TEXT_LIMIT else -90) if n_cols > 4 else 0, **category_ticks(n_cols))
    fig.update_yaxes(title=hover_note(y_title, n_rows), type="category", autorange="reversed", **category_ticks(n_rows))
    fig.update_layout(title=title, height=max(300, 160 + row_height(n_rows) * n_rows), plot_bgcolor="white",
                      margin={"l": 20, "r": 20, "t": 70, "b": 20})
    return fig


def symmetric_limit(z: list[list[float | None]]) -> float:
    values = [abs(v) for row in z for v in row if v is not None]
    return max(values, default=0.0) or 1.0


def none_if_nan(values: Iterable[Any]) -> list[float | None]:
    return [float(v) if finite(v) else None for v in values]


def unavailable(fig: go.Figure, text: str = "not available", **where: Any) -> None:
    fig.add_annotation(text=text, showarrow=False, font={"size": 14, "color": "#777"}, **where)
