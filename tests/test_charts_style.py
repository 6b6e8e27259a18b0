"""core.charts.style: the slope chart (plain → controlled rank) and the coefficient chart of a style view,
on hand-made views: one line per model at its two ranks, colours by direction, rank 1 at the top, a label
per rank at both ends only (ties share one), escaping, height growing with the models; odds on a log axis
with 1 marked and grey where the interval covers 1."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from core.charts.style import DOWN, PX_PER_RANK, SAME, UP, coefficient_chart, slope_chart
from core.ranking.style_view import Coefficient, RankMove, StyleView

NASTY = "<b>x</b>|y"
ESC = "&lt;b&gt;x&lt;/b&gt;|y"


def view(moves, coefficients=()) -> StyleView:
    moved = tuple(m for m in moves if m.change)
    return StyleView(tuple(coefficients), tuple(moves), moved, len(moved), ("length",), (), (), (), "95%",
                     "sandwich (robust)")


def move(model, plain, controlled):
    return RankMove(model, plain, controlled, plain - controlled, 1500.0 - plain, 1500.0 - controlled)


def coefficient(feature, odds, low, high):
    b = math.log(odds)
    return Coefficient(feature, feature.title(), b, 0.1, math.log(low), math.log(high), odds, low, high, 0.0, 0.3,
                       low > 1 or high < 1, "")


def lines(fig: go.Figure) -> list[go.Scatter]:
    return [t for t in fig.data if t.mode == "lines+markers"]


def test_one_line_per_model_from_plain_to_controlled_rank_coloured_by_direction():
    fig = slope_chart(view([move("a", 1, 1), move(NASTY, 3, 2), move("c", 2, 3)]))
    by_name = {t.hovertemplate.split("<br>")[0]: t for t in lines(fig)}
    assert set(by_name) == {"a", ESC, "c"}  # escaped, never raw HTML
    assert list(by_name[ESC].x) == [0, 1] and list(by_name[ESC].y) == [3, 2]
    assert (by_name[ESC].line.color, by_name["c"].line.color, by_name["a"].line.color) == (UP, DOWN, SAME)
    assert lines(fig)[0].line.color == SAME  # unchanged models are drawn first, underneath
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]  # rank 1 at the top
    assert sorted(t.name for t in lines(fig) if t.showlegend) == ["moves down", "moves up", "same rank"]
    assert "2 of 3 models change rank" in fig.layout.title.text


def test_labels_at_both_ends_only_one_per_rank():
    fig = slope_chart(view([move("a", 1, 2), move("b", 2, 1), move("c", 2, 3)]))  # a tie at plain rank 2
    texts = [t for t in fig.data if t.mode == "text"]
    assert [list(t.x) for t in texts] == [[0, 0], [1, 1, 1]]
    left, right = ([s.replace("\u00a0", "") for s in t.text] for t in texts)
    assert left == ["1. a", "2. b, c"] and right == ["1. b", "2. a", "3. c"]
    assert [t.textposition for t in texts] == ["middle left", "middle right"]
    assert fig.layout.annotations == ()  # nothing floats in the middle


def test_sixty_models_get_room_for_every_label():
    moves = [move(f"model with a long name {i:02d}", i, 61 - i) for i in range(1, 61)]
    fig = slope_chart(view(moves))
    assert fig.layout.height >= 60 * PX_PER_RANK
    longest = max(len(s) for t in fig.data if t.mode == "text" for s in t.text)
    assert fig.layout.margin.l >= 6 * longest and fig.layout.margin.r >= 6 * longest


def test_coefficient_chart_log_axis_with_one_marked():
    fig = coefficient_chart(view([move("a", 1, 1)], [coefficient("length", 1.3, 1.2, 1.4),
                                                     coefficient("headers", 0.8, 0.7, 0.9),
                                                     coefficient("bold", 1.05, 0.9, 1.2)]))
    assert fig.layout.xaxis.type == "log"
    assert [s.x0 for s in fig.layout.shapes] == [1]
    colours = [t.marker.color for t in fig.data]
    assert colours == [UP, DOWN, SAME]
    length = fig.data[0]
    assert list(length.x) == [1.3]
    assert (length.error_x.array[0], length.error_x.arrayminus[0]) == (1.4 - 1.3, 1.3 - 1.2)  # to the CI ends
    assert list(fig.layout.yaxis.categoryarray) == ["Length", "Headers", "Bold"]
