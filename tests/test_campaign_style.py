"""A campaign's votes carry the style counts of the answers as the Vote page showed them (core.campaign.style):
counted once per answer, equal to counting the served texts, and scheme style ranks the published campaign
as it ranks an exported file of the same votes."""

from __future__ import annotations

import json
import secrets
from contextlib import closing

import numpy as np
import pandas as pd
import pytest

import core.campaign.style as campaign_style
from core.campaign import (
    create_campaign,
    get_campaign,
    issue_tokens,
    publish,
    read_answers,
    read_golden,
    record_vote,
    serve_next,
    vote_records,
)
from core.campaign.headings import demote_headings
from core.campaign.publish import annotator_labels
from core.cli import main
from core.io.style_features import answer_features
from core.schema import STYLE_COUNT_COLUMNS
from core.store.connection import connect

MODELS = ["plain", "lister", "shouter", "bolder"]


def markdown_answer(model: str, q: int) -> str:
    """Answers whose style differs by model, with headings (ATX and setext), lists, bold and code."""
    words = "word " * (5 + 7 * q + 3 * MODELS.index(model))
    if model == "plain":
        return f"{words}\n\n```python\n# not a header\n- not a list\n```"
    if model == "lister":
        return f"# Answer {q}\n\n" + "".join(f"- point {i}\n" for i in range(q + 2)) + words
    if model == "shouter":
        return f"Answer {q}\n========\n\n## Detail\n{words}\n1. one\n2) two\r\n"
    return f"**{words}** and __more__ **bold {q}**\n\n- single"


def answers_csv() -> bytes:
    rows = [{"query_id": f"q{q}", "prompt": f"question {q}?", "model": m, "answer": markdown_answer(m, q)}
            for q in range(6) for m in MODELS]
    return pd.DataFrame(rows).to_csv(index=False).encode()


GOLDEN_CSV = pd.DataFrame({"question": ["Largest planet?", "Legs of a spider?", "Boiling water?"],
                           "correct_answer": ["# Jupiter\n- by far", "**Eight**", "100 °C"],
                           "wrong_answer": ["Mars", "## Six\n1. six", "__50__ °C"]}).to_csv(index=False).encode()


@pytest.fixture(autouse=True)
def fixed_tokens(monkeypatch):
    numbers = iter(range(10_000))
    monkeypatch.setattr(secrets, "token_urlsafe", lambda n: f"style-secret-{next(numbers):04d}")


@pytest.fixture
def voted(tmp_path):
    """A campaign voted on by three annotators through the store API; the texts each vote showed."""
    db = tmp_path / "store.db"
    with closing(connect(db)) as conn:
        campaign = create_campaign(conn, "styled", read_answers(answers_csv(), name="answers.csv"),
                                   read_golden(GOLDEN_CSV, name="golden.csv"), golden_rate=0.1, target=33, seed=4)
        rng = np.random.default_rng(0)
        shown = []
        for issued in issue_tokens(conn, campaign, 3):
            while (item := serve_next(conn, issued.token)) is not None:
                longer_wins = len(item.answer_a) > len(item.answer_b)  # a planted style preference, plus noise
                outcome = "model_a" if longer_wins ^ (rng.random() < 0.25) else "model_b"
                record_vote(conn, issued.token, item.assignment_id, {"overall": outcome})
                shown.append((item.answer_a, item.answer_b))
    return db, shown


def test_votes_carry_the_counts_of_the_displayed_texts(voted):
    db, shown = voted
    with closing(connect(db)) as conn:
        frame = vote_records(conn, get_campaign(conn, "styled"))
    assert len(frame) == len(shown)  # one dimension: one row per served item, in voting order
    left = answer_features([demote_headings(a) for a, _ in shown])
    right = answer_features([demote_headings(b) for _, b in shown])
    for feature in ("headers", "lists", "bold"):
        np.testing.assert_array_equal(frame[f"{feature}_a"].to_numpy(), left[feature].to_numpy(float))
        np.testing.assert_array_equal(frame[f"{feature}_b"].to_numpy(), right[feature].to_numpy(float))
    np.testing.assert_array_equal(frame["len_a"].to_numpy(), [len(a) for a, _ in shown])
    # the setext heading the page draws as a heading is counted (demoted to '####'), code is not
    shouter = frame[frame["model_a"] == "shouter"]
    assert (shouter["headers_a"] == 2).all() and (shouter["lists_a"] == 2).all()
    assert (frame.loc[frame["model_a"] == "plain", ["headers_a", "lists_a", "bold_a"]] == 0).all().all()
    assert frame["is_golden"].any()


def test_each_answer_is_counted_once(voted, monkeypatch):
    db, shown = voted
    calls = []
    monkeypatch.setattr(campaign_style, "demote_headings", lambda text: calls.append(text) or demote_headings(text))
    with closing(connect(db)) as conn:
        vote_records(conn, get_campaign(conn, "styled"))
    distinct = {t for pair in shown for t in pair}
    assert len(calls) == len(set(calls)) <= len(distinct) < 2 * len(shown)


def test_rank_of_the_campaign_equals_rank_of_its_exported_votes(voted, tmp_path, capsys):
    db, _ = voted
    publish(db, "styled")
    with closing(connect(db)) as conn:
        campaign = get_campaign(conn, "styled")
        exported = vote_records(conn, campaign)
        names = annotator_labels(conn, campaign)  # what the published dataset calls the annotators
    exported["annotator_id"] = exported["annotator_id"].map(names)
    assert set(STYLE_COUNT_COLUMNS) <= set(exported.columns)
    path = tmp_path / "exported.csv"
    exported.to_csv(path, index=False)
    outputs = []
    for source in ("styled", path):
        assert main(["rank", str(source), "--db", str(db), "--scheme", "style", "--format", "json",
                     "--annotators", "keep"]) == 0  # votes cast in no time: keep them
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    ranked = json.loads(outputs[0])
    assert [c["name"] for c in ranked["covariates"]] == ["length", "headers", "lists", "bold"]
    assert not any("not controlled for" in n for n in ranked["params"]["notes"])


def test_a_campaign_without_votes_gives_an_empty_frame_with_the_columns(tmp_path):
    with closing(connect(tmp_path / "store.db")) as conn:
        campaign = create_campaign(conn, "empty", read_answers(answers_csv(), name="answers.csv"), golden_rate=0,
                                   seed=1)
        frame = vote_records(conn, campaign)
    assert frame.empty and set(STYLE_COUNT_COLUMNS) <= set(frame.columns)
