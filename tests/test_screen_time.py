"""Response time = time on screen (core.campaign.screen_time), on explicit server clocks."""

from __future__ import annotations

import sqlite3

import pytest

from core.campaign import (
    CampaignError,
    TokenError,
    create_campaign,
    issue_tokens,
    read_answers,
    record_screen_event,
    record_vote,
    revoke_token,
    serve_next,
    vote_records,
)
from core.store.schema import SCHEMA_VERSION, ensure_schema
from tests.test_campaign import conn, fixed_tokens  # noqa: F401 - fixtures

ANSWERS_CSV = ("query_id,prompt,model,answer\n" + "".join(
    f"q{q},Question {q}?,{m},Answer {q} {m}\n" for q in range(3) for m in ("alpha", "beta", "gamma"))).encode()
VOTE = {"overall": "model_a"}


@pytest.fixture
def campaign(conn):
    return create_campaign(conn, "timing", read_answers(ANSWERS_CSV, name="answers.csv"), golden_rate=0.0,
                           target=5, seed=1)


@pytest.fixture
def token(conn, campaign) -> str:
    return issue_tokens(conn, campaign, 1)[0].token


def times(conn) -> list[tuple[float, float]]:
    return conn.execute("SELECT response_time_s, served_time_s FROM campaign_votes ORDER BY id").fetchall()


def test_without_reports_the_time_on_screen_is_the_time_since_served(conn, token):
    item = serve_next(conn, token, now=1000.0)
    record_vote(conn, token, item.assignment_id, VOTE, now=1012.5)
    assert times(conn) == [(12.5, 12.5)]


def test_a_hidden_stretch_is_left_out_and_the_served_time_kept(conn, token):
    item = serve_next(conn, token, now=1000.0)
    assert record_screen_event(conn, token, item.assignment_id, "off", now=1005.0)  # tab hidden after 5 s
    assert record_screen_event(conn, token, item.assignment_id, "on", now=1000.0 + 8 * 3600)  # next morning
    record_vote(conn, token, item.assignment_id, VOTE, now=1000.0 + 8 * 3600 + 20)
    assert times(conn) == [(25.0, 8 * 3600 + 20.0)]


def test_several_stretches_add_up_and_repeated_reports_change_nothing(conn, token):
    item = serve_next(conn, token, now=0.0)
    events = [("off", 10.0, True), ("off", 11.0, False), ("on", 100.0, True), ("on", 101.0, False),
              ("off", 130.0, True), ("on", 500.0, True)]
    for state, at, changed in events:
        assert record_screen_event(conn, token, item.assignment_id, state, now=at) is changed
    record_vote(conn, token, item.assignment_id, VOTE, now=505.0)
    assert times(conn) == [(10.0 + 30.0 + 5.0, 505.0)]


def test_an_item_off_screen_at_the_vote_counts_up_to_its_last_stretch(conn, token):
    """A vote cannot come from a hidden page, but a late report must not make the time negative or longer."""
    item = serve_next(conn, token, now=0.0)
    record_screen_event(conn, token, item.assignment_id, "off", now=7.0)
    record_vote(conn, token, item.assignment_id, VOTE, now=60.0)
    assert times(conn) == [(7.0, 60.0)]


def test_a_reload_restarts_the_clock_and_earlier_reports_no_longer_count(conn, token):
    item = serve_next(conn, token, now=0.0)
    record_screen_event(conn, token, item.assignment_id, "off", now=3.0)
    again = serve_next(conn, token, now=1000.0)  # a new page shows the same item: a new display
    assert again.assignment_id == item.assignment_id
    record_vote(conn, token, item.assignment_id, VOTE, now=1004.0)
    assert times(conn) == [(4.0, 4.0)]


def test_the_same_page_keeps_its_reports_across_reruns(conn, token):
    item = serve_next(conn, token, now=0.0)
    record_screen_event(conn, token, item.assignment_id, "off", now=3.0)
    record_screen_event(conn, token, item.assignment_id, "on", now=50.0)
    serve_next(conn, token, now=51.0, on_screen=item.assignment_id)  # the rerun a report itself causes
    record_vote(conn, token, item.assignment_id, VOTE, now=60.0)
    assert times(conn) == [(13.0, 60.0)]


def test_a_report_older_than_its_display_counts_from_the_display(conn, token):
    item = serve_next(conn, token, now=100.0)
    record_screen_event(conn, token, item.assignment_id, "off", now=90.0)  # clocks never go back: clamped
    record_screen_event(conn, token, item.assignment_id, "on", now=110.0)
    record_vote(conn, token, item.assignment_id, VOTE, now=115.0)
    assert times(conn) == [(5.0, 15.0)]


def test_reports_after_the_vote_change_nothing(conn, token):
    item = serve_next(conn, token, now=0.0)
    record_vote(conn, token, item.assignment_id, VOTE, now=9.0)
    assert not record_screen_event(conn, token, item.assignment_id, "off", now=10.0)
    assert times(conn) == [(9.0, 9.0)]


def test_published_votes_carry_the_time_on_screen(conn, campaign, token):
    item = serve_next(conn, token, now=0.0)
    record_screen_event(conn, token, item.assignment_id, "off", now=4.0)
    record_screen_event(conn, token, item.assignment_id, "on", now=40.0)
    record_vote(conn, token, item.assignment_id, VOTE, now=42.0)
    assert vote_records(conn, campaign)["response_time_s"].tolist() == [6.0]


def test_reports_are_checked_like_votes(conn, campaign, token):
    item = serve_next(conn, token, now=0.0)
    other = issue_tokens(conn, campaign, 1)[0].token
    with pytest.raises(CampaignError, match="not served to this token"):
        record_screen_event(conn, other, item.assignment_id, "off", now=1.0)
    with pytest.raises(CampaignError, match="a screen state is on or off"):
        record_screen_event(conn, token, item.assignment_id, "hidden", now=1.0)
    with pytest.raises(TokenError):
        record_screen_event(conn, "no-such-token", item.assignment_id, "off", now=1.0)
    revoke_token(conn, campaign, token)
    with pytest.raises(TokenError):
        record_screen_event(conn, token, item.assignment_id, "off", now=1.0)


def test_a_version_1_store_keeps_its_votes_timed_from_serving(tmp_path):
    path = tmp_path / "old.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE campaign_votes (id INTEGER PRIMARY KEY, assignment_id INTEGER NOT NULL, "
                "dimension TEXT NOT NULL, winner TEXT NOT NULL, voted_at REAL NOT NULL, "
                "response_time_s REAL NOT NULL, UNIQUE (assignment_id, dimension))")
    con.execute("INSERT INTO campaign_votes VALUES (1, 1, 'overall', 'tie', 5.0, 42.0)")
    con.execute("PRAGMA user_version = 1")
    con.commit()
    ensure_schema(con)
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert con.execute("SELECT response_time_s, served_time_s FROM campaign_votes").fetchall() == [(42.0, 42.0)]
    assert con.execute("SELECT count(*) FROM campaign_screen_time").fetchone()[0] == 0
    con.close()
