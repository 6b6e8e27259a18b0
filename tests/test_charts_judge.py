"""The judge figures (core.charts.judge): the raw vs LC scatter keeps every model in the hover, labels only the
extremes of a large field, draws the diagonal and the baseline, leaves out models without LC with a note; the
per-category heatmap diverges at 50. No NaN reaches a figure."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.charts.judge import (
    EXTREMES,
    LABEL_ALL_UP_TO,
    LABEL_HEIGHT,
    LABEL_WIDTH,
    MOVERS,
    category_winrate_heatmap,
    labelled_models,
    lc_vs_raw_scatter,
)


def rates(n: int, seed: int = 0, baseline: str | None = "base") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    raw = rng.uniform(20, 80, n)  # LC stays inside (0, 100): no ties at the ends
    frame = pd.DataFrame({"model": [f"m{i:03d}" for i in range(n)], "win_rate": raw,
                          "length_controlled_winrate": raw + rng.normal(0, 4, n),
                          "avg_length": rng.uniform(300, 4000, n)})
    if baseline:
        frame.loc[len(frame)] = [baseline, 50.0, 50.0, 1500.0]
    return frame


def points(fig):
    """The model points: the coloured trace (models with an average length)."""
    return [t for t in fig.data if t.mode == "markers" and t.customdata is not None][0]


def grey(fig) -> list:
    return [t for t in fig.data if t.mode == "markers" and t.customdata is not None][1:]


def labelled(fig) -> list[str]:
    return [a.text for a in fig.layout.annotations if a.xref != "paper"]


def test_every_model_is_a_point_with_its_name_in_the_hover():
    frame = rates(40)
    fig = lc_vs_raw_scatter(frame, "base")
    trace = points(fig)
    assert len(trace.x) == 40  # the baseline is its own marker
    assert [c[0] for c in trace.customdata] == list(frame["model"][:40])
    assert list(trace.x) == pytest.approx(list(frame["win_rate"][:40]))
    assert list(trace.y) == pytest.approx(list(frame["length_controlled_winrate"][:40]))
    assert list(trace.marker.color) == pytest.approx(list(frame["avg_length"][:40]))


def test_the_diagonal_and_the_baseline_are_drawn():
    fig = lc_vs_raw_scatter(rates(10), "base")
    lines = [t for t in fig.data if t.mode == "lines"]
    assert len(lines) == 1 and list(lines[0].x) == list(lines[0].y)  # LC = raw
    base = [t for t in fig.data if t.mode == "markers" and t.customdata is None]
    assert len(base) == 1 and list(base[0].x) == [50.0] and list(base[0].y) == [50.0]
    assert fig.layout.xaxis.range == fig.layout.yaxis.range  # one scale: the diagonal is at 45°
    assert fig.layout.yaxis.scaleanchor == "x"


@pytest.mark.parametrize("n", [58, 250])
def test_a_large_field_labels_only_the_extremes_without_overlap(n):
    frame = rates(n, baseline=None)
    fig = lc_vs_raw_scatter(frame)
    names = labelled(fig)
    assert 1 <= len(names) <= EXTREMES * 2 + MOVERS and names == labelled_models(frame)
    lc = frame.set_index("model")["length_controlled_winrate"]
    raw = frame.set_index("model")["win_rate"]
    moved = (lc - raw).abs()
    candidates = (set(moved.nlargest(MOVERS).index) | set(lc.nlargest(EXTREMES).index)
                  | set(lc.nsmallest(EXTREMES).index))
    assert set(names) <= candidates and moved.idxmax() in names  # the largest move is always named
    span = max(lc.max() - lc.min(), raw.max() - raw.min())
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert abs(lc[a] - lc[b]) > LABEL_HEIGHT * span or abs(raw[a] - raw[b]) > LABEL_WIDTH * span
    assert fig.layout.height >= 600


def test_labels_that_would_collide_are_left_to_the_hover():
    """Three of the worst models sit on one spot: one label there, not three on top of each other."""
    frame = rates(40, baseline=None)
    frame.loc[[0, 1, 2], ["win_rate", "length_controlled_winrate"]] = [[1.0, 1.0], [1.2, 1.1], [1.1, 1.3]]
    names = labelled_models(frame)
    assert len({"m000", "m001", "m002"} & set(names)) == 1


def test_a_small_field_labels_every_model():
    frame = rates(LABEL_ALL_UP_TO, baseline=None)
    assert labelled_models(frame) == list(frame["model"])
    assert sorted(labelled(lc_vs_raw_scatter(frame))) == sorted(frame["model"])


def test_models_without_lc_are_left_out_with_a_note_and_no_nan_reaches_the_figure():
    frame = rates(6)
    frame.loc[[1, 3], "length_controlled_winrate"] = np.nan
    frame.loc[2, "avg_length"] = np.nan
    fig = lc_vs_raw_scatter(frame, "base")
    assert len(points(fig).x) == 3
    (no_length,) = grey(fig)  # m002: no average length, a grey point
    assert [c[0] for c in no_length.customdata] == ["m002"] and no_length.customdata[0][1] == "—"
    assert any("2 models without an LC rate" in a.text for a in fig.layout.annotations)
    assert "NaN" not in fig.to_json()


def test_without_lengths_one_colour_and_no_colour_bar():
    frame = rates(5).drop(columns="avg_length")
    fig = lc_vs_raw_scatter(frame, "base")
    assert points(fig).marker.color == "#999" and not points(fig).marker.showscale
    assert len(points(fig).x) == 5


def test_names_are_escaped():
    frame = pd.DataFrame({"model": ["<b>x</b>", "y"], "win_rate": [60.0, 40.0],
                          "length_controlled_winrate": [55.0, 45.0], "avg_length": [1.0, 2.0]})
    fig = lc_vs_raw_scatter(frame, "<i>base</i>")
    text = json.dumps([a.text for a in fig.layout.annotations] + [fig.layout.title.text])
    assert "<b>" not in text and "&lt;b&gt;" in text and "<i>" not in fig.layout.title.text


def test_the_as_dict_model_list_works_as_it_is():
    models = [{"model": "a", "win_rate": 70.0, "length_controlled_winrate": 60.0, "avg_length": 2000,
               "categories": {}}, {"model": "base", "win_rate": 50.0, "length_controlled_winrate": 50.0,
                                   "avg_length": 1500, "categories": {}}]
    fig = lc_vs_raw_scatter(models, "base")
    assert list(points(fig).x) == [70.0]


def test_empty_input_gives_an_empty_scatter():
    fig = lc_vs_raw_scatter(pd.DataFrame(columns=["model", "win_rate", "length_controlled_winrate"]))
    assert fig.layout.xaxis.range == (0.0, 100.0)


def test_category_heatmap_diverges_at_fifty_and_leaves_missing_cells_blank():
    table = pd.DataFrame({"coding": [70.0, np.nan], "chat": [40.0, 55.5]}, index=["a", "b"])
    fig = category_winrate_heatmap(table)
    (heat,) = fig.data
    assert heat.zmid == 50.0 and heat.zmin == 0.0 and heat.zmax == 100.0
    assert heat.z[1][0] is None and heat.z[1][1] == 55.5
    assert list(heat.y) == ["a", "b"] and list(heat.x) == ["coding", "chat"]
