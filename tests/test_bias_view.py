"""Every bias test result says whether it detected a bias (``detected``), and everything drawn from the
diagnostics (the Bias page's tiles and tables, the per-model chart) reads that flag instead of comparing
p-values again."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from core.bias.diagnose import BiasReport, ModelShare, TableTest, diagnose
from core.bias.view import bias_view, corrections_table, tiles
from core.charts.bias import FLAGGED, NORMAL, model_share_chart
from core.io import load
from core.samples import arena_demo
from core.stats.significance import PairingTest, binomial, pairing_test


@pytest.fixture(scope="module")
def demo_votes() -> pd.DataFrame:
    return load(arena_demo(n_votes=4_000, seed=3).to_csv(index=False).encode(), name="demo.csv").frame


@pytest.fixture(scope="module")
def demo_report(demo_votes) -> BiasReport:
    return diagnose(demo_votes)


def test_every_test_result_carries_detected(demo_report):
    for name in ("position", "order", "model_position", "time_exposure", "length", "pairing"):
        test = getattr(demo_report, name)
        assert isinstance(test.detected, bool), name
    for table in (demo_report.model_position, demo_report.time_exposure):
        assert all(r.detected == (r.p_holm < demo_report.alpha) for r in table.per_model)
        assert table.detected == (table.p_value < demo_report.alpha or any(r.detected for r in table.per_model))
    assert demo_report.pairing.detected == (demo_report.pairing.p_value < demo_report.alpha)


@pytest.mark.parametrize("counts, detected", [([50, 50, 50, 50], False), ([5, 200, 5, 200], True)])
def test_pairing_decides_once(counts, detected):
    test = pairing_test(np.array(counts), alpha=0.05)
    assert test.detected is detected
    assert ("a pairing bias" in test.verdict) is detected


def test_too_few_pairs_detect_nothing():
    assert pairing_test(np.array([7])).detected is False


def _table(per_model: tuple[ModelShare, ...]) -> TableTest:
    return TableTest(12.0, len(per_model) - 1, 0.2, 0.5, per_model, "verdict", 0.0, False, False)


def test_tiles_count_the_flagged_models_from_detected(demo_report):
    # p_holm says "flagged" for both, ``detected`` only for one: the tile follows the test's own decision.
    rows = (ModelShare("a", binomial(60, 100), 0.001, True), ModelShare("b", binomial(40, 100), 0.001, False))
    report = replace(demo_report, model_position=_table(rows))
    left = tiles(report)[2]
    assert left.title == "Model shown on the left" and "1 of 2 models flagged (Holm)" in left.detail
    assert left.flagged == "none"  # the table test itself detected nothing


def test_model_share_chart_colours_what_was_detected():
    rows = (ModelShare("a", binomial(60, 100), 0.9, True), ModelShare("b", binomial(40, 100), 1e-9, False))
    bar = model_share_chart(rows, 0.5, "on the left", "t").data[0]
    assert list(bar.marker.color) == [FLAGGED, NORMAL]


def test_bias_view_draws_the_report(demo_votes, demo_report):
    view = bias_view(demo_votes, alpha=0.05)
    assert view.report == demo_report
    assert [t.title for t in view.tiles] == ["Left answer chosen", "Order (fatigue)", "Model shown on the left",
                                             "Model shown early"]
    table = corrections_table(view.report)
    pd.testing.assert_frame_equal(view.corrections, table)
    assert view.moved == int(table["Rank changed"].sum())
    order = list(table["Model"])
    assert list(view.battles.index) == order and list(view.battles.columns) == order
    assert list(view.raw.index) == order and list(view.diff.index) == order
    assert view.raw.tolist() == pytest.approx(table["Raw win rate"].tolist())
    assert isinstance(view.report.pairing, PairingTest)


def test_bias_view_of_no_votes_has_tiles_and_nothing_else(demo_votes):
    golden_only = demo_votes.head(5).assign(is_golden=True)
    view = bias_view(golden_only)
    assert view.report.n_votes == 0 and len(view.tiles) == 4 and all(t.flagged is None for t in view.tiles)
    assert view.battles is None and view.corrections is None
