"""Bias verdicts tell the size of an effect next to its p-value, call an effect under the practical
threshold small, and say when a session order comes from the file's rows (no timestamps)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.bias.diagnose import PRACTICAL_SHARE, diagnose
from core.bias.render import report_dict, to_markdown
from core.io import load


def votes(n: int, left_share: float, timestamps: bool, seed: int = 0) -> pd.DataFrame:
    """n decisive votes, exactly round(n · left_share) won by the left answer, 40 annotators."""
    rng = np.random.default_rng(seed)
    left = np.zeros(n, bool)
    left[rng.choice(n, int(round(n * left_share)), replace=False)] = True
    a = rng.choice(list("ABCDEF"), n)
    frame = pd.DataFrame({"model_a": a, "model_b": pd.Series(a).map(dict(zip("ABCDEF", "BCDEFA"))),
                          "winner": np.where(left, "model_a", "model_b"), "annotator_id": rng.integers(0, 40, n)})
    if timestamps:
        frame["timestamp"] = 1_700_000_000 + rng.permutation(n) * 60
    return load(frame.to_csv(index=False).encode(), name="votes.csv").frame


def test_a_one_point_lean_over_many_votes_is_detected_but_small():
    report = diagnose(votes(40_000, 0.51, timestamps=True), with_corrections=False)
    pos = report.position
    assert pos.test.p_value < 0.001 and pos.detected and not pos.practical
    assert pos.effect == pytest.approx(0.01)
    assert "+1.0 points from 50%" in pos.verdict and "statistically detectable but small" in pos.verdict
    assert "2-point practical threshold" in pos.verdict
    block = report_dict(report)["position"]
    assert {"k", "n", "share", "p_value", "ci_low", "ci_high", "verdict"} <= set(block)  # the contract stays
    assert block["detected"] is True and block["practical"] is False
    assert block["effect"] == pytest.approx(0.01) and block["practical_threshold"] == PRACTICAL_SHARE
    assert json.loads(json.dumps(report_dict(report)))['position']['practical'] is False


def test_a_large_lean_is_a_bias():
    pos = diagnose(votes(4_000, 0.56, timestamps=True), with_corrections=False).position
    assert pos.detected and pos.practical and pos.verdict.endswith("a position bias toward the left.")
    assert "+6.0 points from 50%" in pos.verdict


def test_no_lean_is_no_evidence():
    pos = diagnose(votes(4_000, 0.5, timestamps=True), with_corrections=False).position
    assert not pos.detected and not pos.practical and pos.verdict.endswith("no evidence of a position bias.")


def test_order_without_timestamps_says_it_used_file_order():
    untimed = diagnose(votes(3_000, 0.5, timestamps=False), with_corrections=False).order
    assert untimed.ordered_by == "file order" and untimed.verdict.startswith("No timestamps: sessions follow")
    timed = diagnose(votes(3_000, 0.5, timestamps=True), with_corrections=False)
    assert timed.order.ordered_by == "timestamp" and "No timestamps" not in timed.order.verdict
    assert report_dict(timed)["order"]["ordered_by"] == "timestamp"
    assert "file order" in to_markdown(diagnose(votes(3_000, 0.5, timestamps=False), with_corrections=False))


def test_model_position_effect_is_the_furthest_flagged_model():
    test = diagnose(votes(3_000, 0.5, timestamps=True), with_corrections=False).model_position
    assert not test.detected or test.per_model  # defined either way
    assert np.isfinite(test.effect) and abs(test.effect) == max(abs(r.test.share - 0.5) for r in test.per_model)
