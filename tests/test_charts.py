"""core.charts: the critical-difference diagram (Demšar 2006) as a plotly figure."""

from __future__ import annotations

from core.charts import cd_groups, critical_difference_figure
from tests.reference_values import D3_MEAN_RANKS, D3_NEMENYI

# docs/methods.md §8, D3: average ranks and the Nemenyi critical difference at α = 0.05
D3_RANKS = dict(zip("XYZ", D3_MEAN_RANKS))
D3_CD = D3_NEMENYI[1]


def test_d3_groups_join_only_models_within_the_cd():
    # X–Y (0.55) and Y–Z (0.85) are within the CD; X–Z (1.40) is not (docs/methods.md §8: only X vs Z differs)
    assert cd_groups(D3_RANKS, D3_CD) == [("X", "Y"), ("Y", "Z")]


def test_groups_are_maximal_and_ordered():
    ranks = {"a": 1.0, "b": 1.5, "c": 1.9, "d": 3.5, "e": 3.6}
    assert cd_groups(ranks, 1.0) == [("a", "b", "c"), ("d", "e")]
    assert cd_groups(ranks, 0.15) == [("d", "e")]
    assert cd_groups(ranks, 10.0) == [("a", "b", "c", "d", "e")]


def test_figure_labels_every_model_with_its_rank_and_scales_the_cd():
    fig = critical_difference_figure(D3_RANKS, D3_CD)
    texts = [a.text for a in fig.layout.annotations]
    assert "X (1.35)" in texts and "Y (1.90)" in texts and "Z (2.75)" in texts
    assert "CD = 1.048" in texts
    cd_bar = [s for s in fig.layout.shapes if s.line.color == "#1f77b4"]
    assert len(cd_bar) == 1 and abs((cd_bar[0].x1 - cd_bar[0].x0) - D3_CD) < 1e-12
    group_bars = [s for s in fig.layout.shapes if s.line.color == "#d62728"]
    assert len(group_bars) == 2


def test_model_names_are_escaped_in_labels():
    fig = critical_difference_figure({"<b>x</b>": 1.0, "y": 2.0}, 0.5)
    texts = [a.text for a in fig.layout.annotations]
    assert "&lt;b&gt;x&lt;/b&gt; (1.00)" in texts
