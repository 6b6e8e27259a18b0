"""Figures of a style-controlled ranking (docs/methods.md §11), from :class:`core.ranking.style_view.StyleView`:
the slope chart (plain rank → controlled rank per model) and the coefficients as odds multipliers.

Pure functions, as in :mod:`core.charts.votes`: a view in, a plotly ``go.Figure`` out; names HTML-escaped.
The slope chart labels both ends only (a label per rank on each side, never in the middle), so 60 models
stay readable: the figure grows a fixed number of pixels per rank and the margins fit the longest label."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from core.charts._common import labels, unavailable
from core.ranking.style_view import RankMove, StyleView

UP, DOWN, SAME = "#1a9850", "#d73027", "#b8b8b8"
GROUPS = (("moves up", UP), ("moves down", DOWN), ("same rank", SAME))
PX_PER_RANK = 20  # room for one line of 11 px text per rank at both ends
CHAR_PX = 6.6  # width of one character of the labels' font, for the side margins


def slope_chart(view: StyleView, title: str = "Rank without and with style control") -> go.Figure:
    """One line per model from its plain Bradley–Terry rank (left) to its style-controlled rank (right); rank 1
    at the top. Models that move are coloured by direction (up green, down red), the rest grey and drawn
    underneath. Both ends carry "rank. name" labels; models tied at a rank share one label."""
    fig = go.Figure()
    moves = sorted(view.moves, key=lambda m: (m.change != 0, m.controlled_rank))  # movers drawn last, on top
    shown = set()
    for move in moves:
        group, colour = _group(move)
        name = labels([move.model])[0]
        fig.add_trace(go.Scatter(
            x=[0, 1], y=[move.plain_rank, move.controlled_rank], mode="lines+markers", name=group,
            legendgroup=group, showlegend=group not in shown, line={"color": colour, "width": 2 if move.change else 1},
            marker={"size": 6, "color": colour},
            hovertemplate=(f"{name}<br>plain: rank {move.plain_rank}, Elo {move.plain_rating:.1f}<br>controlled: rank "
                           f"{move.controlled_rank}, Elo {move.controlled_rating:.1f}<br>change {move.change:+d}"
                           "<extra></extra>")))
        shown.add(group)
    left, right = _end_labels(view.moves, "plain_rank"), _end_labels(view.moves, "controlled_rank")
    gap = "\u00a0\u00a0"  # keeps a label off its line's marker (plotly trims ordinary spaces)
    for x, texts, position in ((0, {r: t + gap for r, t in left.items()}, "middle left"),
                               (1, {r: gap + t for r, t in right.items()}, "middle right")):
        fig.add_trace(go.Scatter(x=[x] * len(texts), y=list(texts), text=list(texts.values()), mode="text",
                                 textposition=position, textfont={"size": 11}, hoverinfo="skip", showlegend=False,
                                 cliponaxis=False))
    n = max((max(m.plain_rank, m.controlled_rank) for m in view.moves), default=1)
    longest = max((len(t) for t in [*left.values(), *right.values()]), default=4)
    side = int(30 + CHAR_PX * min(longest, 60))
    fig.update_xaxes(range=[-0.02, 1.02], tickvals=[0, 1], ticktext=["plain Bradley–Terry", "style-controlled"],
                     side="top", showgrid=False, zeroline=False, fixedrange=True)
    fig.update_yaxes(range=[n + 0.7, 0.3], showticklabels=False, showgrid=False, zeroline=False, title="")
    moved = f"{view.n_moved} of {len(view.moves)} models change rank"
    fig.update_layout(title={"text": f"{title}<br><sup>{moved}</sup>"}, height=max(360, 150 + PX_PER_RANK * n),
                      plot_bgcolor="white", legend={"orientation": "h", "yanchor": "top", "y": -0.01, "x": 0.5,
                                                    "xanchor": "center"},
                      margin={"l": side, "r": side, "t": 110, "b": 50})
    if not view.moves:
        unavailable(fig, "no models", x=0.5, y=0.5, xref="paper", yref="paper")
    return fig


def _group(move: RankMove) -> tuple[str, str]:
    return GROUPS[0] if move.change > 0 else GROUPS[1] if move.change < 0 else GROUPS[2]


def _end_labels(moves, rank_field: str) -> dict[int, str]:
    """{rank: "rank. name[, name …]"}: one label per rank, so tied models never print on top of each other."""
    by_rank: dict[int, list[str]] = {}
    for m in moves:
        by_rank.setdefault(getattr(m, rank_field), []).append(labels([m.model])[0])
    return {rank: f"{rank}. {', '.join(names)}" for rank, names in sorted(by_rank.items())}


def coefficient_chart(view: StyleView, title: str = "Style effects: odds multiplier per standard deviation"
                      ) -> go.Figure:
    """exp(β) per feature with its interval on a log axis, 1 (no effect) marked; a feature whose interval
    covers 1 is drawn grey (the data cannot tell its direction)."""
    rows = [c for c in view.coefficients if math.isfinite(c.odds)]
    names = labels(c.label for c in rows)
    fig = go.Figure()
    for c, name in zip(rows, names):
        colour = SAME if not c.direction_known else UP if c.odds > 1 else DOWN
        error = None
        if math.isfinite(c.odds_low) and math.isfinite(c.odds_high):
            error = {"type": "data", "symmetric": False, "array": [c.odds_high - c.odds],
                     "arrayminus": [c.odds - c.odds_low], "color": colour, "thickness": 2, "width": 6}
        fig.add_trace(go.Scatter(x=[c.odds], y=[name], mode="markers", marker={"size": 11, "color": colour},
                                 error_x=error, showlegend=False,
                                 hovertemplate=(f"{name}: × {c.odds:.3f} ({view.level} CI {c.odds_low:.3f}–"
                                                f"{c.odds_high:.3f})<br>β = {c.estimate:.4f} (SE {c.se:.4f})"
                                                "<extra></extra>")))
    fig.add_vline(x=1, line={"color": "#555", "dash": "dash", "width": 1})
    if not rows:
        unavailable(fig, "no coefficients", x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_xaxes(type="log", title=f"odds multiplier per standard deviation ({view.level} CI; 1 = no effect)",
                     showgrid=True, gridcolor="#eee")
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=names, autorange="reversed",
                     automargin=True)
    fig.update_layout(title=title, height=max(260, 140 + 48 * len(rows)), showlegend=False, plot_bgcolor="white",
                      margin={"l": 20, "r": 20, "t": 70, "b": 20})
    return fig
