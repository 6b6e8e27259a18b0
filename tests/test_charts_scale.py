"""Figures at many models (core/charts): cell text and names that fit, or hover-only past the limits.

The PNGs themselves are looked at with bench/render_figures.py (12, 60 and 150 models); these tests
pin the rules that keep them readable."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.charts import critical_difference_figure
from core.charts._common import LABEL_LIMIT, TEXT_LIMIT
from core.charts.runs import pairwise_matrix
from core.charts.votes import bias_panel, winrate_heatmap, winrate_scatter

NAMES = [f"org/model-family-{i:03d}-instruct" for i in range(150)]


def rates(k: int) -> pd.DataFrame:
    z = np.random.default_rng(k).uniform(0, 1, (k, k))
    return pd.DataFrame(z, index=NAMES[:k], columns=NAMES[:k])


@pytest.mark.parametrize("k", [12, 60, 150])
def test_heatmap_text_and_labels_scale(k):
    fig = winrate_heatmap(rates(k))
    heat = fig.data[0]
    assert (heat.texttemplate is not None) == (k <= TEXT_LIMIT)  # unreadable cell text is left to the hover
    assert fig.layout.xaxis.showticklabels is (False if k > LABEL_LIMIT else None)
    assert ("hover for names" in fig.layout.xaxis.title.text) == (k > LABEL_LIMIT)
    assert fig.layout.height <= 160 + 42 * 25 or fig.layout.height <= 160 + 16 * k  # compact rows past the limit
    if TEXT_LIMIT < k <= LABEL_LIMIT:
        assert fig.layout.xaxis.tickangle == -90 and fig.layout.xaxis.tickfont.size == 9


def test_pairwise_matrix_keeps_significance_in_the_hover():
    models = NAMES[:60]
    pairs = pd.DataFrame([{"model_a": a, "model_b": b, "diff": 0.1, "significant": True}
                          for i, a in enumerate(models) for b in models[i + 1:]])
    fig = pairwise_matrix(pairs, models)
    assert fig.data[0].texttemplate is None and "%{customdata}" in fig.data[0].hovertemplate
    assert fig.data[0].customdata[0][1] == " (significant)"
    assert fig.layout.annotations[0].text == "significance: in the hover"


def test_critical_difference_switches_to_rows_with_every_name():
    ranks = dict(zip(NAMES[:60], np.linspace(1, 60, 60)))
    fig = critical_difference_figure(ranks, 3.0)
    assert list(fig.data[0].y) == NAMES[:60] and fig.data[0].error_x.value == 1.5
    small = critical_difference_figure(dict(zip(NAMES[:12], np.linspace(1, 12, 12))), 3.0)
    lo, hi = small.layout.xaxis.range
    room = 7 * len(f"{NAMES[0]} (1.00)") * 11 / (960 - 2 * 7 * len(f"{NAMES[0]} (1.00)"))
    assert lo <= 0.6 - room + 1e-9 and hi >= 12.4 + room - 1e-9  # the labels beside the axis are not cut


def test_bias_panel_names_never_reach_the_next_row():
    few = pd.Series(0.5, index=NAMES[:12])
    fig = bias_panel(0.5, (0.4, 0.6), few, few, 0.5, (0.4, 0.6))
    gap = fig.layout.yaxis2.domain[0] - fig.layout.yaxis3.domain[1]  # row 1 bottom − row 2 top (paper units)
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    assert gap * plot_px >= 6.5 * len(NAMES[0])  # the rotated names fit in the gap
    many = pd.Series(0.5, index=NAMES[:60])
    fig = bias_panel(0.5, (0.4, 0.6), many, many, 0.5, (0.4, 0.6))
    assert fig.layout.xaxis2.showticklabels is False and "hover" in fig.layout.xaxis2.title.text


def test_scatter_labels_only_when_few():
    assert winrate_scatter(pd.Series(0.5, index=NAMES[:12]), pd.Series(0.5, index=NAMES[:12])).data[1].mode \
        == "markers+text"
    assert winrate_scatter(pd.Series(0.5, index=NAMES[:60]), pd.Series(0.5, index=NAMES[:60])).data[1].mode \
        == "markers"
