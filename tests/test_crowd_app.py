"""Scheme crowd on the dashboard, through app.py with AppTest: the Rankings page's Crowd-BT toggle (ratings
beside plain BT, the reliability table below) and η next to golden accuracy on the Annotators page. Numbers
are checked against the core call on the same stored votes."""

from __future__ import annotations

import numpy as np

from core.io import load
from core.ranking import RankSettings
from core.ranking.inputs import rank_input
from core.samples import RANDOM_CLICKERS
from core.samples.crowd import crowd_votes
from core.store import Store
from tests.app_pages import app_router, open_page, samples  # noqa: F401 - fixtures
from tests.test_app_data import run, texts


def core_crowd(db_path, dataset_id: int, policy: str):
    with Store(db_path) as store:
        frame = store.load(dataset_id)
    return rank_input("votes", frame, RankSettings("crowd", ci="sandwich", replicates=200), annotators=policy)


def frame_with(at, column: str):
    [table] = [d.value for d in at.main.dataframe if column in d.value.columns]
    return table


def test_rankings_page_offers_crowd_bt_with_the_reliability_table(app_router, samples, db_path):
    at = open_page("rankings", samples["arena_demo"], rank_bootstrap=200)
    assert "Crowd-BT (annotator reliability)" in at.radio(key="rank_scheme").options
    at.radio(key="rank_scheme").set_value("crowd")
    run(at)
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="rank_ci").value == "sandwich"  # the scheme's interval, picked on switching
    assert {"Crowd-BT", "Plain Bradley–Terry", "Annotator reliability"} <= set(texts(at.subheader))
    ranking = core_crowd(db_path, samples["arena_demo"], "exclude")
    table = frame_with(at, "Reliability η")
    assert list(table["Annotator"]) == [a.annotator_id for a in ranking.annotators]
    np.testing.assert_allclose(table["Reliability η"], [a.reliability for a in ranking.annotators], rtol=1e-9)
    assert ((table["CI low (95%)"] <= table["Reliability η"]) & (table["Reliability η"] <= table["CI high (95%)"])
            ).all()
    ratings = [d.value for d in at.main.dataframe if "Elo" in d.value.columns]
    assert list(ratings[0]["Model"]) == [r.model for r in ranking.rows]
    assert list(ratings[1]["Model"]) == [r.model for r in ranking.plain.rows]


def test_annotators_page_shows_reliability_next_to_golden_accuracy(app_router, samples, db_path):
    at = open_page("annotators", samples["arena_demo"])
    assert not at.error
    assert "Reliability without golden questions (Crowd-BT)" in texts(at.subheader)
    table = frame_with(at, "Reliability η")
    ranking = core_crowd(db_path, samples["arena_demo"], "keep")  # every annotator gets an η
    eta = {a.annotator_id: a.reliability for a in ranking.annotators}
    shown = table.dropna(subset=["Reliability η"])
    assert dict(zip(shown["Annotator"], shown["Reliability η"])) == eta
    assert {"Golden accuracy", "Accuracy low (95%)", "η low (95%)"} <= set(table.columns)
    quality = at.dataframe[0].value  # the quality table keeps its place
    assert set(quality["Annotator"]) <= set(table["Annotator"])
    clickers = shown[shown["Annotator"].isin(RANDOM_CLICKERS)]["Reliability η"]
    others = shown[~shown["Annotator"].isin(RANDOM_CLICKERS)]["Reliability η"]
    assert len(clickers) and clickers.max() < others.median()  # the random clickers are the least reliable


def test_annotators_page_without_golden_questions_shows_eta_alone(app_router, db_path):
    csv = crowd_votes(5, 6, 40, seed=2).votes.to_csv(index=False).encode()
    with Store(db_path) as store:
        dataset = store.ingest(load(csv, name="crowd.csv")).dataset
    at = open_page("annotators", dataset.id)
    assert not at.error
    table = frame_with(at, "Reliability η")
    assert len(table) == 6 and "Golden accuracy" not in table.columns
    assert any("No annotator answered golden questions" in c.value for c in at.caption)
