"""The eval set's prompt lengths before and after selection: one cumulative distribution per group."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

COLOURS = {"eligible": "#9aa5b1", "chosen": "#1f77b4", "reserves": "#ff7f0e"}
NICE_TICKS = (1, 2, 5)  # ticks at 10, 20, 50, 100, 200, … characters: plotly's own log ticks read "2 3 4 … 100"


def length_figure(groups: Mapping[str, Sequence[int]]) -> go.Figure:
    """Empirical cumulative distribution of the prompt length (characters, log axis) per group, e.g.
    ``{"eligible": …, "chosen": …}``: where the curves run together the set has the pool's lengths."""
    fig = go.Figure()
    seen: list[float] = []
    for name, values in groups.items():
        x = np.sort(np.asarray(list(values), dtype=float))
        if x.size == 0:
            continue
        seen += [x[0], x[-1]]
        y = np.arange(1, x.size + 1) / x.size
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", line={"shape": "hv", "color": COLOURS.get(name)},
                                 name=f"{name} (n = {x.size:,})",
                                 hovertemplate="%{x:,.0f} characters or fewer: %{y:.0%}<extra>" + name + "</extra>"))
    fig.update_layout(height=260, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      title={"text": "Prompt length: eligible queries and the chosen set", "font": {"size": 14}},
                      legend={"orientation": "h", "y": -0.3})
    fig.update_xaxes(type="log", title="characters (log scale)", tickvals=log_ticks(min(seen, default=1),
                                                                                    max(seen, default=1000)))
    fig.update_yaxes(title="share ≤ length", tickformat=".0%", range=[0, 1])
    return fig


def log_ticks(low: float, high: float) -> list[int]:
    """1, 2, 5 × powers of ten covering [low, high]."""
    low, high = max(1.0, low), max(1.0, high)
    out = []
    for power in range(int(np.floor(np.log10(low))), int(np.ceil(np.log10(high))) + 1):
        out += [m * 10 ** power for m in NICE_TICKS if low / 2 <= m * 10 ** power <= high * 2]
    return out
