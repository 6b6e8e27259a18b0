"""The rating-over-time chart of a drift answer (docs/methods.md §15): one line per chosen model through its
anchored Elo rating in each period, with its interval as a band.

Pure functions, as in :mod:`core.charts.votes`: a result in, a plotly ``go.Figure`` out; names HTML-escaped.
Readable with 60 models: only the chosen models are drawn (:func:`default_models`: the models that changed and
the top few), the models that changed in strong colours and thick lines, the others thin and grey-toned.
A period where a model has no rating leaves a gap in its line.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.colors import qualitative

from core.charts._common import labels, unavailable
from core.decisions.drift import Drift, ModelDrift

CHANGED_COLOURS = qualitative.Set1
STABLE_COLOURS = ("#7f7f7f", "#9ecae1", "#a1d99b", "#bcbddc", "#fdae6b", "#c7c7c7", "#6baed6", "#74c476")
DEFAULT_TOP = 5  # stable models shown by default: the best-rated few
DEFAULT_LIMIT = 12  # at most this many lines by default


def default_models(result: Drift, top: int = DEFAULT_TOP, limit: int = DEFAULT_LIMIT) -> list[str]:
    """The models a chart shows unless asked otherwise: those that changed (smallest p first), then the
    best-rated others, ``limit`` at most."""
    changed = [m.model for m in result.models if m.changed]
    stable = sorted((m for m in result.models if not m.changed), key=lambda m: -m.overall_rating)
    return (changed + [m.model for m in stable[:top]])[:limit]


def drift_chart(result: Drift, models: Sequence[str] | None = None, title: str = "Rating over time") -> go.Figure:
    """Elo per period (x: the periods in time order) with a band for each model's interval."""
    chosen = list(default_models(result) if models is None else models)
    by_name = {m.model: m for m in result.models}
    drawn = [by_name[name] for name in chosen if name in by_name]
    drawn.sort(key=lambda m: m.changed)  # changed models drawn last, on top
    periods = labels(p.period for p in result.periods)
    fig = go.Figure()
    changed_index = stable_index = 0
    for model in drawn:
        if model.changed:
            colour, changed_index = CHANGED_COLOURS[changed_index % len(CHANGED_COLOURS)], changed_index + 1
        else:
            colour, stable_index = STABLE_COLOURS[stable_index % len(STABLE_COLOURS)], stable_index + 1
        _add_model(fig, model, periods, colour, result.alpha)
    level = f"{100 * (1 - result.alpha):g}%"
    shown = f"{len(drawn)} of {len(result.models)} models" if len(drawn) < len(result.models) else \
        f"all {len(result.models)} models"
    changed = sum(m.changed for m in result.models)
    which = (f"thick lines: the {changed} model{'s' if changed != 1 else ''} whose rating changed (Holm-adjusted)"
             if changed else "no model's rating changed (Holm-adjusted)")
    subtitle = f"{shown}; bands: {level} intervals; {which}"
    fig.update_xaxes(title=f"{result.period} period", type="category", categoryorder="array",
                     categoryarray=periods, tickangle=-30 if len(periods) > 8 else 0, automargin=True)
    fig.update_yaxes(title="Elo (anchored to the overall fit)", automargin=True, zeroline=False)
    fig.update_layout(title={"text": f"{title}<br><sup>{subtitle}</sup>"}, plot_bgcolor="white", height=520,
                      hovermode="closest", legend={"title": {"text": "model"}, "itemclick": "toggle"},
                      margin={"l": 20, "r": 20, "t": 90, "b": 20})
    fig.update_xaxes(showgrid=True, gridcolor="#eee")
    fig.update_yaxes(showgrid=True, gridcolor="#eee")
    if not drawn:
        unavailable(fig, "no model chosen", x=0.5, y=0.5, xref="paper", yref="paper")
    return fig


def _add_model(fig: go.Figure, model: ModelDrift, periods: list[str], colour: str, alpha: float) -> None:
    name = labels([model.model])[0]
    legend = f"{name} (changed)" if model.changed else name
    band = _transparent(colour, 0.18 if model.changed else 0.10)
    for segment in _rated_runs(model):  # one closed band per run of rated periods, so gaps stay gaps
        xs = [periods[i] for i in segment]
        ys = [model.periods[i].ci_high for i in segment] + [model.periods[i].ci_low for i in reversed(segment)]
        fig.add_trace(go.Scatter(x=xs + xs[::-1], y=ys, mode="lines", line={"width": 0}, fill="toself",
                                 fillcolor=band, hoverinfo="skip", legendgroup=name, showlegend=False))
    hover = [f"{name} · {period}<br>" + (f"Elo {p.rating:.0f} ({p.ci_low:.0f}–{p.ci_high:.0f})"
                                          if p.rating is not None else "no rating: " + (p.note or ""))
             + f"<br>{p.n_votes:,} votes" for period, p in zip(periods, model.periods)]
    fig.add_trace(go.Scatter(
        x=periods, y=[p.rating for p in model.periods], mode="lines+markers", name=legend, legendgroup=name,
        line={"color": colour, "width": 3.5 if model.changed else 1.5, "dash": "solid" if model.changed else "dot"},
        marker={"size": 8 if model.changed else 5, "color": colour}, connectgaps=False,
        hovertext=hover, hoverinfo="text"))


def _rated_runs(model: ModelDrift) -> list[list[int]]:
    """Runs of consecutive periods where the model has a rating."""
    runs: list[list[int]] = []
    for index, period in enumerate(model.periods):
        if period.rating is None:
            continue
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs


def _transparent(colour: str, opacity: float) -> str:
    """A hex or rgb() colour as rgba with ``opacity``."""
    if colour.startswith("#"):
        red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    else:
        red, green, blue = (int(float(v)) for v in colour[colour.index("(") + 1:colour.index(")")].split(",")[:3])
    return f"rgba({red},{green},{blue},{opacity})"
