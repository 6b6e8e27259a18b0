"""The stand-in names of golden questions (``golden:correct``, ``golden:wrong``, ``golden:<id>``) never
reach a person: rankings, their outputs, the Rankings caption and the Data preview show plain words."""

from __future__ import annotations

import secrets

import pandas as pd
import pytest

from core.annotators.golden_names import GOLDEN_WORDS, is_internal, plain_frame, plain_name
from core.campaign import (
    GOLDEN_CORRECT,
    GOLDEN_WRONG,
    create_campaign,
    issue_tokens,
    publish,
    read_answers,
    read_golden,
    record_vote,
    serve_next,
)
from core.ranking import RankSettings
from core.ranking.inputs import rank_input
from core.ranking.render import to_csv, to_json, to_markdown
from core.store import Store
from core.store.connection import connect
from tests.app_pages import app_router, open_page  # noqa: F401 - fixtures
from tests.test_campaign import ANSWERS_CSV, GOLDEN_CSV


def test_every_reserved_name_has_plain_words():
    assert set(GOLDEN_WORDS) == {GOLDEN_CORRECT, GOLDEN_WRONG}
    assert plain_name(GOLDEN_CORRECT) == "golden question: correct answer"
    assert plain_name("golden:7") == "golden question 7" and plain_name("alpha") == "alpha"
    assert is_internal(GOLDEN_WRONG) and not is_internal("gold")


def test_plain_frame_renames_categories_and_text_and_leaves_the_rest():
    frame = pd.DataFrame({"model_a": pd.Categorical([GOLDEN_CORRECT, "alpha"]),
                          "model_b": [GOLDEN_WRONG, "beta"], "query_id": ["golden:3", None],
                          "winner": ["model_a", "model_b"]})
    shown = plain_frame(frame)
    assert list(shown["model_a"].astype(str)) == ["golden question: correct answer", "alpha"]
    assert list(shown["model_b"]) == ["golden question: wrong answer", "beta"]
    assert shown["query_id"].iloc[0] == "golden question 3" and pd.isna(shown["query_id"].iloc[1])
    assert frame["model_b"].iloc[0] == GOLDEN_WRONG  # the data itself is untouched
    plain = pd.DataFrame({"model_a": ["x"], "model_b": ["y"]})
    assert plain_frame(plain) is plain


@pytest.fixture
def published(db_path, monkeypatch):
    numbers = iter(range(10_000))
    monkeypatch.setattr(secrets, "token_urlsafe", lambda n: f"fixed-secret-{next(numbers):04d}")
    conn = connect(db_path)
    campaign = create_campaign(conn, "demo", read_answers(ANSWERS_CSV, name="answers.csv"),
                               read_golden(GOLDEN_CSV, name="golden.csv"), dimensions=("overall", "style"),
                               golden_rate=0.3, target=5, seed=3)
    for i, token in enumerate(t.token for t in issue_tokens(conn, campaign, 2)):
        while (item := serve_next(conn, token)) is not None:
            record_vote(conn, token, item.assignment_id, dict.fromkeys(item.dimensions, "model_a" if i else "tie"))
    conn.close()
    dataset = publish(db_path, "demo")
    with Store(db_path) as store:
        frame = store.load(dataset.id)
    assert frame["is_golden"].any() and frame["model_a"].astype(str).map(is_internal).any()
    return dataset, frame


def test_rankings_and_their_outputs_carry_no_internal_name(published):
    _, frame = published
    ranking = rank_input("votes", frame, RankSettings(ci="none"), annotators="keep")
    assert ranking.policy.models_without_votes is None  # the stand-ins are not models without votes
    for text in (to_json(ranking), to_markdown(ranking), to_csv(ranking)):
        assert "golden:" not in text


def test_the_rankings_caption_and_the_data_preview_speak_plainly(app_router, published):  # noqa: F811
    dataset, _ = published
    # every annotator here answers at once (the test votes instantly): keep them, or nothing is left to rank
    at = open_page("rankings", dataset.id, rank_ci="none", annotator_policy="keep")
    assert not at.exception and not at.error
    captions = " ".join(c.value for c in at.main.caption)
    assert "judged items" in captions and "golden:" not in captions
    at = open_page("data", dataset.id, preview_dataset=dataset.id)
    assert not at.exception and not at.error
    [preview] = [d.value for d in at.dataframe if "model_a" in d.value.columns]
    shown = [str(value) for value in preview.to_numpy().ravel()]
    assert not any("golden:" in value for value in shown)
    assert "golden question: correct answer" in set(shown)
