"""The rating-over-time chart (core/charts/drift.py) and the Drift tab of the Decisions page."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core.charts.drift import DEFAULT_LIMIT, DEFAULT_TOP, default_models, drift_chart
from core.decisions.drift import drift
from core.io.votes import votes_from_frame
from core.ranking.request import prepare_votes

MONDAY = pd.Timestamp("2026-03-02T00:00:00Z")


def sixty_models(seed: int = 0, per_week: int = 20_000) -> pd.DataFrame:
    """60 models over 8 weeks; model 7 up 90 Elo from week 4, model 40 down 90 from week 6; "<b>x</b>" a name."""
    rng = np.random.default_rng(seed)
    k, p = 60, 8
    elo = np.tile(np.linspace(-300, 300, k), (p, 1))
    elo[3:, 7] += 90
    elo[5:, 40] -= 90
    period = np.repeat(np.arange(p), per_week)
    left = rng.integers(0, k, len(period))
    right = rng.integers(0, k - 1, len(period))
    right += right >= left
    prob = 1 / (1 + 10 ** ((elo[period, right] - elo[period, left]) / 400))
    names = np.array([f"model-{i:02d}" for i in range(k)], dtype=object)
    names[59] = "<b>x</b>"
    stamps = MONDAY + pd.to_timedelta(period * 7 * 86400 + rng.random(len(period)) * 6 * 86400, unit="s")
    raw = pd.DataFrame({"model_a": names[left], "model_b": names[right],
                        "winner": np.where(rng.random(len(period)) < prob, "model_a", "model_b"),
                        "timestamp": stamps.astype(str)})
    return votes_from_frame(raw, "sixty")[0]


@pytest.fixture(scope="module")
def sixty():
    return drift(prepare_votes(sixty_models(), "keep"), "week")


def model_lines(fig):
    return [t for t in fig.data if t.mode == "lines+markers"]


def test_default_shows_the_changed_models_and_the_top_few(sixty):
    assert set(sixty.changed) == {"model-07", "model-40"}
    chosen = default_models(sixty)
    assert chosen[:2] == list(sixty.changed) and len(chosen) == 2 + DEFAULT_TOP <= DEFAULT_LIMIT
    best = sorted((m for m in sixty.models if not m.changed), key=lambda m: -m.overall_rating)[:DEFAULT_TOP]
    assert chosen[2:] == [m.model for m in best]
    fig = drift_chart(sixty)
    lines = model_lines(fig)
    assert len(lines) == len(chosen)
    thick = [t for t in lines if t.line.width > 2]
    assert sorted(t.name for t in thick) == ["model-07 (changed)", "model-40 (changed)"]
    assert "7 of 60 models" in fig.layout.title.text


def test_names_are_escaped_and_nothing_is_nan(sixty):
    fig = drift_chart(sixty, ["<b>x</b>", "model-07"])
    names = [t.name for t in model_lines(fig)]
    assert "&lt;b&gt;x&lt;/b&gt;" in names
    for trace in fig.data:
        for value in trace.y:
            assert value is None or math.isfinite(value)


def test_a_period_without_a_rating_is_a_gap_not_a_bridge():
    frame = sixty_models(per_week=6000)
    week_three = frame["timestamp"].dt.isocalendar()["week"].to_numpy() == 12  # the third week, 2026-W12
    rare = (frame["model_a"] == "model-10") | (frame["model_b"] == "model-10")
    result = drift(prepare_votes(frame[~(week_three & rare.to_numpy())].reset_index(drop=True), "keep"), "week")
    fig = drift_chart(result, ["model-10"])
    line = model_lines(fig)[0]
    assert line.y[2] is None and line.connectgaps is False
    bands = [t for t in fig.data if t.fill == "toself"]
    assert len(bands) == 2  # weeks 1–2 and 4–8: the band does not cross week 3
    assert all(None not in t.y for t in bands)


def test_no_model_chosen_says_so(sixty):
    fig = drift_chart(sixty, [])
    assert not model_lines(fig) and "no model chosen" in fig.layout.annotations[0].text
