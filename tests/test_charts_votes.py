"""core.charts.votes: the A/B-vote figures on small hand-made data (values, NaN cells, axis titles,
model order, escaping), and the batch PNG export (skipped without a Chromium for kaleido)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from core.charts.export import export_png, png_available
from core.charts.votes import (
    battle_heatmap,
    bias_panel,
    forest_plot,
    rank_vs_dimension,
    share_stacked,
    winrate_diff_heatmap,
    winrate_heatmap,
    winrate_scatter,
)

NASTY = "<b>x</b>|y"
ESC = "&lt;b&gt;x&lt;/b&gt;|y"
MODELS = ["m1", NASTY, "m3"]
NAN = np.nan


def rates() -> pd.DataFrame:
    return pd.DataFrame([[NAN, 0.7, 0.55], [0.3, NAN, NAN], [0.45, NAN, NAN]], index=MODELS, columns=MODELS)


def counts() -> pd.DataFrame:
    return pd.DataFrame([[NAN, 10, 20], [10, NAN, 0], [20, 0, NAN]], index=MODELS, columns=MODELS)


def sample_figures() -> dict[str, go.Figure]:
    """One figure of each kind (also used to save the artifacts under tests/artifacts/charts/)."""
    strength = pd.DataFrame({"helpful": [0.8, 0.1, -0.9], "safe": [0.2, 0.5, -0.7]}, index=MODELS)
    ranks = pd.DataFrame({"helpful": [1, 2, 3], "safe": [2, 1, 3]}, index=MODELS)
    raw = pd.Series([0.62, 0.35, 0.50], index=MODELS)
    strat = pd.Series([0.58, 0.41, 0.49], index=MODELS)
    gaps = pd.DataFrame({"game_id": ["g1"] * 4 + ["g2"] * 4,
                         "model": ["m1", "m1", NASTY, NASTY, "m3", "m3", "m1", "m1"],
                         "dimension": ["helpful", "safe"] * 4,
                         "gap": [0.0, 0.0, 0.3, 0.1, 0.2, 0.25, 0.05, 0.0]})
    forest = pd.DataFrame({"model": MODELS, "rating": [1100.0, 1000.0, 900.0],
                           "ci_low": [1060.0, 950.0, NAN], "ci_high": [1140.0, 1050.0, NAN]})
    return {
        "winrate_heatmap": winrate_heatmap(rates(), counts()),
        "battle_heatmap": battle_heatmap(counts()),
        "rank_vs_dimension": rank_vs_dimension(strength, ranks),
        "winrate_scatter": winrate_scatter(raw, strat),
        "winrate_diff_heatmap": winrate_diff_heatmap(rates() - rates().T * 0 - 0.5),
        "share_stacked": share_stacked(gaps, "gap in BT strength"),
        "forest_plot": forest_plot(forest),
        "bias_panel": bias_panel(0.58, (0.52, 0.64), pd.Series([0.5, 0.62, 0.41], index=MODELS),
                                 pd.Series([0.45, 0.55, 0.5], index=MODELS), 0.61, (0.55, 0.67)),
        "bias_panel_partial": bias_panel(0.5, None, None, pd.Series([0.45, 0.55, 0.5], index=MODELS), None, None),
    }


def grid(cells) -> list[list]:
    return [list(row) for row in cells]


def titles(fig: go.Figure) -> tuple[str | None, str | None]:
    return fig.layout.xaxis.title.text, fig.layout.yaxis.title.text


def test_winrate_heatmap_values_text_nan_and_hover_counts():
    fig = winrate_heatmap(rates(), counts(), title="Win rate (all)")
    (hm,) = fig.data
    assert hm.type == "heatmap"
    assert list(hm.x) == ["m1", ESC, "m3"] and list(hm.y) == ["m1", ESC, "m3"]
    assert hm.z[0][1] == 0.7 and hm.z[1][0] == 0.3 and hm.z[0][0] is None and hm.z[1][2] is None
    assert hm.text[0][1] == "0.70" and hm.text[2][0] == "0.45" and hm.text[1][1] == ""
    assert (hm.zmin, hm.zmax, hm.zmid) == (0.0, 1.0, 0.5)
    assert "battles: 10" in hm.hovertext[0][1] and "battles: 0" in hm.hovertext[1][2]
    assert hm.hovertext[1][0].startswith(f"{ESC} beats m1")
    assert fig.layout.title.text == "Win rate (all)"
    assert all(titles(fig)) and fig.layout.yaxis.autorange == "reversed"  # first model at the top


def test_winrate_heatmap_without_counts_and_with_nonsquare_order():
    r = rates().loc[["m3", "m1"], ["m1", NASTY]]
    fig = winrate_heatmap(r)
    (hm,) = fig.data
    assert list(hm.y) == ["m3", "m1"] and list(hm.x) == ["m1", ESC]
    assert grid(hm.z) == [[0.45, None], [None, 0.7]]
    assert not any("battles" in h for row in hm.hovertext for h in row)
    assert fig.layout.title.text == "Win rate"


def test_battle_heatmap():
    fig = battle_heatmap(counts())
    (hm,) = fig.data
    assert hm.z[0][2] == 20 and hm.z[1][2] == 0 and hm.z[2][2] is None
    assert hm.text[0][1] == "10" and hm.text[1][2] == "0" and hm.text[0][0] == ""
    assert list(hm.x) == ["m1", ESC, "m3"] and fig.layout.title.text == "Battles" and all(titles(fig))


def test_rank_vs_dimension_colour_is_strength_text_is_rank():
    strength = pd.DataFrame({"helpful": [0.8, NAN], "<i>safe</i>": [0.2, 0.5]}, index=["m1", NASTY])
    ranks = pd.DataFrame({"<i>safe</i>": [2, 1], "helpful": [1, NAN]}, index=[NASTY, "m1"])  # other order
    fig = rank_vs_dimension(strength, ranks, title="Ranks")
    (hm,) = fig.data
    assert list(hm.y) == ["m1", ESC] and list(hm.x) == ["helpful", "&lt;i&gt;safe&lt;/i&gt;"]
    assert grid(hm.z) == [[0.8, 0.2], [None, 0.5]]
    assert grid(hm.text) == [["", "1"], ["1", "2"]]  # ranks aligned to strength's rows/columns
    assert fig.layout.title.text == "Ranks" and all(titles(fig))


def test_winrate_scatter_points_diagonal_and_missing_models():
    raw = pd.Series([0.62, 0.35, 0.50, NAN], index=[*MODELS, "m4"])
    strat = pd.Series([0.41, 0.58, 0.49], index=[NASTY, "m1", "m3"])  # other order, m4 missing
    fig = winrate_scatter(raw, strat)
    diag, pts = fig.data
    assert list(diag.x) == list(diag.y)  # y = x
    assert diag.x[0] <= 0.0 and diag.x[-1] >= 1.0
    assert list(pts.text) == ["m1", ESC, "m3"]
    assert list(pts.x) == [0.62, 0.35, 0.50] and list(pts.y) == [0.58, 0.41, 0.49]
    assert titles(fig) == ("raw win rate", "stratified win rate") and fig.layout.title.text


def test_winrate_diff_heatmap_diverges_at_zero():
    diff = pd.DataFrame([[NAN, 0.05], [-0.05, NAN]], index=["m1", NASTY], columns=["m1", NASTY])
    fig = winrate_diff_heatmap(diff)
    (hm,) = fig.data
    assert hm.zmid == 0.0 and hm.zmin == -hm.zmax and hm.zmax == pytest.approx(0.05)
    assert grid(hm.text) == [["", "+0.05"], ["-0.05", ""]] and hm.z[0][0] is None
    assert list(hm.y) == ["m1", ESC] and all(titles(fig)) and fig.layout.title.text


def test_share_stacked_facets_per_game_colours_per_dimension():
    fig = sample_figures()["share_stacked"]
    assert fig.layout.barmode == "stack"
    assert [a.text for a in fig.layout.annotations] == ["g1", "g2"]  # one facet per game
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 4  # 2 games × 2 dimensions
    g1 = [t for t in bars if t.xaxis == "x"]
    assert [t.name for t in g1] == ["helpful", "safe"]
    assert list(g1[0].x) == ["m1", ESC] and list(g1[0].y) == [0.0, 0.3] and list(g1[1].y) == [0.0, 0.1]
    g2 = [t for t in bars if t.xaxis == "x2"]
    assert list(g2[0].x) == ["m3", "m1"] and list(g2[1].y) == [0.25, 0.0]
    assert g1[0].marker.color == g2[0].marker.color != g1[1].marker.color  # colour = dimension
    assert [t.showlegend for t in bars] == [True, True, False, False]
    assert fig.layout.yaxis.title.text == "gap in BT strength" and fig.layout.xaxis.title.text == "model"
    assert fig.layout.xaxis2.title.text == "model"


def test_share_stacked_empty():
    fig = share_stacked(pd.DataFrame(columns=["game_id", "model", "dimension", "gap"]), "gap", title="T")
    assert not fig.data and fig.layout.annotations[0].text == "no data" and fig.layout.title.text == "T"


def test_forest_plot_best_on_top_with_asymmetric_errors():
    fig = sample_figures()["forest_plot"]
    (pts,) = fig.data
    assert list(pts.y) == ["m1", ESC, "m3"] and list(pts.x) == [1100.0, 1000.0, 900.0]
    assert list(pts.error_x.array) == [40.0, 50.0, None] and list(pts.error_x.arrayminus) == [40.0, 50.0, None]
    assert fig.layout.yaxis.autorange == "reversed" and list(fig.layout.yaxis.categoryarray) == list(pts.y)
    assert titles(fig) == ("Elo", "model")
    assert forest_plot(pd.DataFrame({"model": ["a"], "rating": [0.1], "ci_low": [0.0], "ci_high": [0.3]}),
                       value_label="BT strength").layout.xaxis.title.text == "BT strength"


def test_bias_panel_full():
    fig = sample_figures()["bias_panel"]
    assert [a.text for a in fig.layout.annotations] == ["Left answer chosen", "Model shown on the left",
                                                         "Model shown early in a session", "Longer answer chosen"]
    left, per_left, per_early, longer = fig.data
    assert left.y == (0.58,) and left.error_y.array[0] == pytest.approx(0.06)
    assert left.error_y.arrayminus[0] == pytest.approx(0.06)
    assert list(per_left.x) == ["m1", ESC, "m3"] and list(per_left.y) == [0.5, 0.62, 0.41]
    assert per_left.xaxis == "x2" and per_early.xaxis == "x3" and longer.xaxis == "x4"
    assert longer.y == (0.61,)
    assert len([s for s in fig.layout.shapes if s.y0 == 0.5 == s.y1]) == 4  # a 0.5 line in every panel
    assert fig.layout.yaxis.title.text and fig.layout.xaxis2.title.text == "model"
    assert fig.layout.title.text


def test_bias_panel_missing_parts_say_not_available():
    fig = sample_figures()["bias_panel_partial"]
    texts = [a.text for a in fig.layout.annotations]
    assert texts.count("not available") == 2  # model-left share and length
    na = [a for a in fig.layout.annotations if a.text == "not available"]
    assert na[0].x > 0.5 and na[0].y > 0.5 and na[1].x > 0.5 and na[1].y < 0.5  # top right, bottom right
    (left, early) = fig.data
    assert left.error_y.array is None and early.xaxis == "x3"
    empty = bias_panel(None, None, None, None, None, None)
    assert not empty.data and [a.text for a in empty.layout.annotations].count("not available") == 4
    nan_share = bias_panel(math.nan, (math.nan, math.nan), pd.Series([NAN], index=["a"]), None, None, None)
    assert not nan_share.data


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.skipif(not png_available(), reason="no Chromium for kaleido")
def test_export_png_batch(tmp_path):
    figs = sample_figures()
    batch = {"heat": figs["winrate_heatmap"], "forest": figs["forest_plot"], "bias": figs["bias_panel"]}
    paths = export_png(batch, tmp_path / "png", width=800, scale=1.0)
    assert [p.name for p in paths] == ["heat.png", "forest.png", "bias.png"]
    sizes = [_png_size(p) for p in paths]
    assert all(w == 800 for w, _ in sizes)
    assert sizes[2][1] == figs["bias_panel"].layout.height  # height=None → the figure's own height
    assert export_png({}, tmp_path / "none") == []
    with pytest.raises(ValueError):
        export_png({"../evil": figs["forest_plot"]}, tmp_path)
