"""The owner's annotator names on the analysis pages (never on the Vote page), and a campaign's stable
dataset name in the dataset lists, through the router (app.py) with AppTest."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.campaign import create_campaign, issue_tokens, publish, read_answers, read_golden
from core.store import Store
from core.store.connection import connect
from tests.app_pages import app_router, open_page  # noqa: F401 - fixtures
from tests.test_app_data import run
from tests.test_app_vote import (
    APP,
    choose,
    everything_shown,
    fixed_tokens,  # noqa: F401 - fixture
    vote_page,
)
from tests.test_campaign import ANSWERS_CSV, GOLDEN_CSV
from tests.test_campaign_names import LABELS, vote


@pytest.fixture
def labelled(app_router, db_path):
    """Campaign 'demo', published: Zelda Quill took her time, Yorick Moss clicked within a second."""
    conn = connect(db_path)
    campaign = create_campaign(conn, "demo", read_answers(ANSWERS_CSV, name="answers.csv"),
                               read_golden(GOLDEN_CSV, name="golden.csv"), dimensions=("overall",),
                               golden_rate=0.3, target=5, seed=3)
    tokens = issue_tokens(conn, campaign, labels=LABELS)
    vote(conn, tokens[0].token)
    vote(conn, tokens[1].token, outcome="model_b", seconds=0.5)
    dataset = publish(db_path, "demo")
    yield conn, campaign, tokens, dataset
    conn.close()


def hashed_ids_shown(at: AppTest, tokens) -> list[str]:
    page = everything_shown(at)
    return [t.annotator_id for t in tokens if t.annotator_id in page]


def test_the_annotators_page_names_the_annotators(labelled):
    _, _, tokens, dataset = labelled
    at = open_page("annotators", dataset.id)
    assert not at.exception and not at.error
    assert sorted(at.dataframe[0].value["Annotator"]) == sorted(LABELS)
    assert hashed_ids_shown(at, tokens) == []


def test_the_rankings_page_names_the_unqualified_annotators(labelled):
    _, _, tokens, dataset = labelled
    at = open_page("rankings", dataset.id)
    assert not at.exception and not at.error
    assert "Unqualified annotators: Yorick Moss" in [c.value for c in at.caption]
    assert hashed_ids_shown(at, tokens) == []


def test_the_bias_page_shows_no_hashed_id(labelled):
    _, _, tokens, dataset = labelled
    at = open_page("bias", dataset.id)
    assert not at.exception
    assert hashed_ids_shown(at, tokens) == []


def test_the_dataset_lists_show_the_stable_name_and_the_vote_count_apart(labelled):
    _, _, _, dataset = labelled
    at = run(AppTest.from_file(APP, default_timeout=60))
    listed = next(d.value for d in at.dataframe if {"name", "rows", "source"} <= set(d.value.columns))
    [row] = listed[listed["id"] == dataset.id].to_dict("records")
    assert (row["name"], row["rows"]) == ("campaign demo", dataset.rows)
    picker = at.sidebar.selectbox(key="active_dataset")
    assert picker.format_func(dataset.id) == f"campaign demo · votes · {dataset.rows:,} rows"


def test_no_annotator_name_reaches_the_vote_page(labelled):
    conn, _, _, dataset = labelled
    fresh = issue_tokens(conn, labelled[1], labels=["Xavier Plum"])[0]
    with Store() as store:
        assert store.dataset("demo").id == dataset.id  # the labelled votes are in the store
    at = vote_page(fresh.token)
    pages = [everything_shown(at)]
    while at.main.radio:
        at = choose(at, "A")
        pages.append(everything_shown(at))
    assert "All done" in at.success[0].value
    for page in pages:
        for label in (*LABELS, "Xavier Plum"):
            assert label not in page
        assert "annotator-" not in page
