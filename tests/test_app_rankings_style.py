"""The Rankings page with scheme style (Style-controlled BT), through the router with AppTest: the features
multiselect, the coefficient table and sentences, the charts, the rating table with the rank change, and
what the page says when the dataset lacks the markdown counts. Numbers are checked against the core call
on the same stored votes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.io import load
from core.ranking import RankSettings
from core.ranking.inputs import rank_input
from core.ranking.schemes.style import offered_features
from core.ranking.style_view import FEATURE_LABELS, HOW_TO_GET
from core.samples.demo import ensure_samples
from core.store import Store
from tests.app_pages import APP
from tests.test_app_data import VOTES_CSV, click, run, texts, upload
from tests.test_style_scheme import votes_with_texts

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def samples(db_path) -> dict[str, int]:
    with Store(db_path) as store:
        ensure_samples(store)
        return {d.name: d.id for d in store.datasets()}


def style_page(at: AppTest, **widgets) -> AppTest:
    at.session_state["rank_scheme"] = "style"
    at.session_state["rank_ci"] = "sandwich"
    at.session_state["rank_bootstrap"] = 200
    for key, value in widgets.items():
        at.session_state[key] = value
    at.switch_page(str(REPO / "pages" / "rankings.py"))
    return run(at)


def fresh(active: int | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    if active is not None:
        at.session_state["active_dataset"] = active
    return at


def core_ranking(db_path, dataset_id: int, features: tuple[str, ...]):
    with Store(db_path) as store:
        frame = store.load(dataset_id)
    return rank_input("votes", frame, RankSettings(scheme="style", ci="sandwich", replicates=200, features=features))


def coefficients(at: AppTest):
    [table] = [d.value for d in at.main.dataframe if "Odds ×" in d.value.columns]
    return table


def test_demo_with_lengths_only(samples, db_path):
    at = style_page(fresh(samples["arena_demo"]))
    assert not at.error and "Style-controlled BT" in at.radio(key="rank_scheme").options
    choice = at.multiselect(key="rank_features")
    assert choice.options == ["length", "shown on the left"] and choice.value == ["length"]
    ranking = core_ranking(db_path, samples["arena_demo"], ("length",))
    table = coefficients(at)
    assert list(table["Feature"]) == ["Length"]
    np.testing.assert_allclose(table["β"], [ranking.covariates[0].estimate], rtol=1e-12)
    np.testing.assert_allclose(table["Odds ×"], [math.exp(ranking.covariates[0].estimate)], rtol=1e-12)
    sentences = [m.value for m in at.markdown if "multiplies the odds of winning" in m.value]
    assert len(sentences) == 1 and "relative length" in sentences[0]
    [note] = [t for t in texts(at.main.info) if t.startswith("Not available")]
    assert "headers, lists, bold" in note and HOW_TO_GET in note
    assert {"Style effects", "Rank without and with style control", "Ratings (style-controlled)"} <= \
        set(texts(at.subheader))
    assert len(at.get("plotly_chart")) == 4  # coefficients, slope, forest, the open heatmap tab
    [ratings] = [d.value for d in at.main.dataframe if "Plain rank" in d.value.columns]
    assert list(ratings.columns[:4]) == ["Rank", "Plain rank", "Change", "Model"]
    assert (ratings["Change"] == ratings["Plain rank"] - ratings["Rank"]).all()
    assert list(ratings["Model"]) == [r.model for r in ranking.rows]
    plain = {r.model: r.rank for r in ranking.plain.rows}
    assert list(ratings["Plain rank"]) == [plain[m] for m in ratings["Model"]]

    # adding position changes the fit: two coefficients, the length effect estimated net of the left slot
    at.multiselect(key="rank_features").select("position")
    run(at)
    with_position = core_ranking(db_path, samples["arena_demo"], ("length", "position"))
    table = coefficients(at)
    assert list(table["Feature"]) == ["Length", "Shown on the left"]
    np.testing.assert_allclose(table["β"], [c.estimate for c in with_position.covariates], rtol=1e-12)
    assert table["β"][0] != ranking.covariates[0].estimate


def test_no_feature_chosen_says_so(samples):
    at = style_page(fresh(samples["arena_demo"]), rank_features=[])
    assert not at.error and "Pick at least one feature to control for." in texts(at.main.info)
    assert not at.get("plotly_chart")


def test_uploaded_answer_texts(db_path):
    """Votes with answer texts uploaded on the Data page: the page offers what the store keeps of them."""
    at = run(fresh())
    upload(at, "texts.csv", votes_with_texts(300, seed=5).to_csv(index=False).encode())
    click(at, "upload_store")
    with Store(db_path) as store:
        [dataset] = store.datasets()
    offered = offered_features(dataset.columns)
    at = style_page(at)
    assert not at.error
    assert at.multiselect(key="rank_features").options == [FEATURE_LABELS[f].lower() for f in offered]
    expected = [f for f in ("length", "headers", "lists", "bold") if f in offered]
    ranking = core_ranking(db_path, dataset.id, tuple(expected))
    table = coefficients(at)
    assert len(table) == len(expected) and "length" in expected
    np.testing.assert_allclose(table["β"], [c.estimate for c in ranking.covariates], rtol=1e-12)
    notes = [t for t in texts(at.main.info) if t.startswith("Not available")]
    assert bool(notes) == (len(expected) < 4)  # the store keeps the counts, or the page says how to get them

    at.multiselect(key="rank_features").set_value(["length"])
    run(at)
    assert list(coefficients(at)["Feature"]) == ["Length"]


def test_votes_without_lengths_say_how_to_add_them(samples, db_path):
    with Store(db_path) as store:
        bare = store.ingest(load(VOTES_CSV, name="bare.csv"), name="bare").dataset.id
    at = style_page(fresh(bare))
    choice = at.multiselect(key="rank_features")
    assert choice.options == ["shown on the left"] and choice.value == []
    [info] = texts(at.main.info)
    assert info.startswith("Pick at least one feature") and HOW_TO_GET in info and not at.error


def test_direction_in_words(samples):
    at = style_page(fresh(samples["arena_demo"]))
    [row] = coefficients(at).to_dict("records")
    assert row["Direction"] == ("favoured" if row["CI low"] > 1 else "penalised" if row["CI high"] < 1
                                else "unclear (CI covers 1)")
    at = style_page(fresh(samples["arena_demo"]), rank_ci="none")
    [row] = coefficients(at).to_dict("records")
    assert row["Direction"] == "no interval (intervals: none)" and not at.error
    assert all("CI" not in m.value for m in at.markdown if "multiplies the odds" in m.value)


def test_picking_style_defaults_to_sandwich_intervals_and_the_user_can_change_them(samples):
    at = fresh(samples["arena_demo"])
    at.switch_page(str(REPO / "pages" / "rankings.py"))
    run(at)
    assert at.selectbox(key="rank_ci").value == "bootstrap"  # every other scheme's default
    at.radio(key="rank_scheme").set_value("style")
    run(at)
    assert not at.error and at.selectbox(key="rank_ci").value == "sandwich"
    at.selectbox(key="rank_ci").set_value("none")
    run(at)
    assert not at.error and at.selectbox(key="rank_ci").value == "none"
    assert at.radio(key="rank_scheme").value == "style"
