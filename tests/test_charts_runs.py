"""core.charts.runs: score-table figures on small hand-made data (values, NaN cells, axis titles,
model order, escaping), and the batch PNG export (skipped without a Chromium for kaleido)."""

from __future__ import annotations

import struct

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from core.charts.export import export_png, png_available
from core.charts.runs import category_heatmap, leaderboard_bars, pairwise_matrix

NASTY = "<b>x</b>|y"
ESC = "&lt;b&gt;x&lt;/b&gt;|y"
MODELS = ["m1", NASTY, "m3"]
NAN = np.nan


def grid(cells) -> list[list]:
    return [list(row) for row in cells]


def sample_figures() -> dict[str, go.Figure]:
    board = pd.DataFrame({"model_id": MODELS, "mean_score": [0.81, 0.74, 0.60],
                          "mean_ci_lo": [0.78, 0.70, NAN], "mean_ci_hi": [0.85, 0.77, NAN]})
    means = pd.DataFrame({"math": [0.9, 0.7, NAN], "<code>": [0.72, 0.78, 0.6]}, index=MODELS)
    pairs = pd.DataFrame({"model_a": ["m1", "m1", NASTY, "ghost"], "model_b": [NASTY, "m3", "m3", "m1"],
                          "diff": [0.07, 0.21, 0.14, 0.5], "significant": [False, True, True, True]})
    return {"leaderboard_bars": leaderboard_bars(board), "category_heatmap": category_heatmap(means),
            "pairwise_matrix": pairwise_matrix(pairs, MODELS)}


def test_leaderboard_bars_rank_order_ci_and_escaping():
    fig = sample_figures()["leaderboard_bars"]
    (bar,) = fig.data
    assert bar.type == "bar" and bar.orientation == "h"
    assert list(bar.y) == ["m1", ESC, "m3"] and list(bar.x) == [0.81, 0.74, 0.60]
    assert bar.error_x.array[0] == pytest.approx(0.04) and bar.error_x.arrayminus[1] == pytest.approx(0.04)
    assert bar.error_x.array[2] is None and bar.error_x.arrayminus[2] is None  # NaN CI → no bar
    assert fig.layout.yaxis.autorange == "reversed" and list(fig.layout.yaxis.categoryarray) == list(bar.y)
    assert fig.layout.xaxis.title.text == "mean score" and fig.layout.yaxis.title.text == "model"
    assert fig.layout.title.text == "Mean score"


def test_category_heatmap_text_and_nan():
    means = pd.DataFrame({"math": [0.9, 0.7, NAN], "<code>": [0.72, 0.78, 0.6]}, index=MODELS)
    fig = category_heatmap(means, title="By category")
    (hm,) = fig.data
    assert list(hm.y) == ["m1", ESC, "m3"] and list(hm.x) == ["math", "&lt;code&gt;"]
    assert grid(hm.z) == [[0.9, 0.72], [0.7, 0.78], [None, 0.6]]
    assert grid(hm.text) == [["0.90", "0.72"], ["0.70", "0.78"], ["", "0.60"]]
    assert fig.layout.title.text == "By category"
    assert fig.layout.xaxis.title.text == "category" and fig.layout.yaxis.title.text == "model"


def test_pairwise_matrix_antisymmetric_with_significance_marks():
    fig = sample_figures()["pairwise_matrix"]
    (hm,) = fig.data
    assert list(hm.x) == list(hm.y) == ["m1", ESC, "m3"]
    z = grid(hm.z)
    assert z == [[None, 0.07, 0.21], [-0.07, None, 0.14], [-0.21, -0.14, None]]  # "ghost" ignored
    assert grid(hm.text) == [["", "+0.07", "+0.21*"], ["-0.07", "", "+0.14*"], ["-0.21*", "-0.14*", ""]]
    assert hm.zmid == 0.0 and hm.zmin == -hm.zmax == pytest.approx(-0.21)
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text and fig.layout.title.text


def test_pairwise_matrix_follows_the_given_order_and_leaves_missing_pairs_blank():
    pairs = pd.DataFrame({"model_a": ["m1"], "model_b": ["m3"], "diff": [-0.1], "significant": [np.nan]})
    fig = pairwise_matrix(pairs, ["m3", NASTY, "m1"], title="P")
    (hm,) = fig.data
    assert list(hm.y) == ["m3", ESC, "m1"]
    assert grid(hm.z) == [[None, None, 0.1], [None, None, None], [-0.1, None, None]]
    assert grid(hm.text)[0][2] == "+0.10"  # NaN significance → not marked


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.skipif(not png_available(), reason="no Chromium for kaleido")
def test_export_png_runs_figures_with_scale(tmp_path):
    figs = sample_figures()
    paths = export_png({"bars": figs["leaderboard_bars"], "cats": figs["category_heatmap"]}, tmp_path,
                       width=600, height=400, scale=2.0)
    assert [_png_size(p) for p in paths] == [(1200, 800), (1200, 800)]
