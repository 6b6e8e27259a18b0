"""The Drift tab of the Decisions page through app.py with AppTest: a planted change found as the command
finds it, the period chooser, the chart's models, the CSV, votes without timestamps and one-period data."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.decisions.drift import drift
from core.io import load
from core.ranking.request import prepare_votes
from core.store import Store
from tests.app_pages import app_router, open_page, samples  # noqa: F401 - fixtures
from tests.test_app_data import run, texts
from tests.test_drift import draw

NAMES = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"])


def planted_file(with_time: bool = True, weeks: int = 6) -> bytes:
    """6 models, ``weeks`` weeks of 2,500 votes; alpha up 60 Elo from week 3 (tests/test_drift.py's draw)."""
    period, left, right, score = draw(7, 2500, n_periods=weeks)
    frame = pd.DataFrame({"model_a": NAMES[left], "model_b": NAMES[right],
                          "winner": np.where(score == 1.0, "model_a", "model_b")})
    if with_time:
        offsets = period * 7 * 86400.0 + np.random.default_rng(0).random(len(period)) * 6.9 * 86400.0
        frame["timestamp"] = (pd.Timestamp("2026-01-05T00:00:00Z") + pd.to_timedelta(offsets, unit="s")).strftime(
            "%Y-%m-%dT%H:%M:%SZ")
    return frame.to_csv(index=False).encode()


def stored(db_path, data: bytes, name: str) -> int:
    with Store(db_path) as store:
        return store.ingest(load(data, name=f"{name}.csv"), name=name).dataset.id


def drift_tab(dataset: int, **state):
    at = open_page("decisions", dataset, decisions_tab="Drift", **state)
    assert not at.error
    return at


def models_table(at) -> pd.DataFrame:
    [table] = [d.value for d in at.main.dataframe if "p (Holm)" in d.value.columns]
    return table


def test_the_planted_change_is_found_as_the_command_finds_it(app_router, db_path):
    dataset = stored(db_path, planted_file(), "planted")
    at = drift_tab(dataset)
    assert [t.label for t in at.tabs][-1] == "Drift"
    table = models_table(at)
    assert list(table.loc[table["Changed"], "Model"]) == ["alpha"]
    with Store(db_path) as store:
        expected = drift(prepare_votes(store.load(dataset), "exclude"), "week")
    shown = table.set_index("Model")["p (Holm)"]
    for model in expected.models:
        assert shown[model.model] == model.p_adjusted
    assert "1 of 6 models tested changed over 6 week periods" in " ".join(texts(at.main.markdown))
    assert at.multiselect(key="drift_chart_models").value[0] == "alpha"
    assert [c.proto.label for c in at.main.get("download_button")] == ["Download ratings per period (CSV)"]
    assert len(at.main.get("plotly_chart")) == 1


def test_the_period_chooser_and_the_chart_models(app_router, db_path):
    at = drift_tab(stored(db_path, planted_file(), "planted"))
    at.segmented_control(key="drift_period").set_value("Day")
    run(at)
    [periods] = [d.value for d in at.main.dataframe if "Period" in d.value.columns]
    assert len(periods) == 42 and periods["Period"].iloc[0] == "2026-01-05"
    at.segmented_control(key="drift_period").set_value("Blocks of N votes")
    run(at)
    at.number_input(key="drift_block").set_value(3000)
    run(at)
    [periods] = [d.value for d in at.main.dataframe if "Period" in d.value.columns]
    assert list(periods["Votes"]) == [3000] * 5
    at.multiselect(key="drift_chart_models").set_value(["beta"])
    run(at)
    assert not at.error


def test_votes_without_timestamps_are_cut_into_blocks(app_router, db_path):
    at = drift_tab(stored(db_path, planted_file(with_time=False), "untimed"))
    assert "no timestamps" in texts(at.main.info)[0]
    assert at.segmented_control(key="drift_period").options == ["Blocks of N votes"]
    assert "p (Holm)" in models_table(at).columns


def test_one_period_says_why(app_router, db_path):
    at = drift_tab(stored(db_path, planted_file(weeks=1), "one_week"))
    assert any("at least two periods" in t for t in texts(at.main.info))


def test_the_arena_sample_runs(app_router, samples):
    at = drift_tab(samples["arena_demo"])
    assert len(models_table(at)) > 2
