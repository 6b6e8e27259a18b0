"""The rank target on the Data page's campaign administration (AppTest through the router)."""

from __future__ import annotations

import random

from streamlit.testing.v1 import AppTest

from core.campaign import create_campaign, get_campaign, issue_tokens, record_vote, serve_next
from core.campaign.target import target_state
from core.store.connection import connect
from tests.test_app_data import run, texts
from tests.test_app_vote import ANSWERS_CSV, APP, app, fixed_tokens, table_with  # noqa: F401 (fixtures)
from tests.test_campaign_target import TRUE_THETA, answers_table, bt_vote


def new_campaign_form(name: str) -> AppTest:
    at = run(AppTest.from_file(APP, default_timeout=60))
    at.text_input(key="campaign_name").set_value(name)
    at.file_uploader(key="campaign_answers").set_value(("answers.csv", ANSWERS_CSV, "text/csv"))
    return at


def test_create_a_campaign_with_a_rank_target_on_the_data_page(app, db_path):
    at = new_campaign_form("goal")
    assert at.number_input(key="campaign_rank_target_n").disabled  # N only matters for "top N"
    at.selectbox(key="campaign_rank_target").set_value("top")
    run(at)
    at.number_input(key="campaign_rank_target_n").set_value(2)
    run(at)
    at.button(key="campaign_create").click()
    run(at)
    assert "Campaign 'goal' created." in texts(at.success)
    with connect(db_path) as conn:
        assert get_campaign(conn, "goal").rank_target == "top:2"
    # The Manage tab then shows the target, warming up (no vote yet).
    assert any("Rank target top:2: ranks 1–2 separated from each other and from rank 3. Not reached: served "
               "balanced until every pair has a vote" in i for i in texts(at.info))


def test_adjacent_and_none_are_stored_as_chosen(app, db_path):
    for name, choice, stored in (("every", "adjacent", "adjacent"), ("plain", "none", None)):
        at = new_campaign_form(name)
        at.selectbox(key="campaign_rank_target").set_value(choice)
        run(at)
        at.button(key="campaign_create").click()
        run(at)
        with connect(db_path) as conn:
            assert get_campaign(conn, name).rank_target == stored


def test_a_rank_target_with_active_sampling_is_refused_on_the_page(app, db_path):
    at = new_campaign_form("both")
    at.selectbox(key="campaign_rank_target").set_value("adjacent")
    at.checkbox(key="campaign_active").check()
    run(at)
    at.button(key="campaign_create").click()
    run(at)
    assert any("The campaign was not created: choose active sampling or a rank target" in e for e in texts(at.error))
    with connect(db_path) as conn:
        assert conn.execute("SELECT count(*) FROM campaign_campaigns").fetchone()[0] == 0


def test_the_manage_tab_shows_each_target_pair_and_when_the_target_is_reached(app, db_path):
    conn = connect(db_path)
    campaign = create_campaign(conn, "sim", answers_table(list(TRUE_THETA), 200), golden_rate=0, target=10_000,
                               seed=3, rank_target="top:1")
    tokens = [t.token for t in issue_tokens(conn, campaign, 6)]
    rng = random.Random(0)
    for _ in range(60):
        token = rng.choice(tokens)
        item = serve_next(conn, token)
        record_vote(conn, token, item.assignment_id, bt_vote(conn, item, rng))
    at = run(AppTest.from_file(APP, default_timeout=60))
    assert any("Not reached: serving the pairs whose votes help it most (60 votes so far)" in i
               for i in texts(at.info))
    pairs = table_with(at, "gap (Elo)")
    (expected,) = target_state(conn, campaign).pairs  # the page draws what core says
    assert pairs[["rank", "higher", "lower"]].values.tolist() == [[1, expected.higher, expected.lower]]
    assert pairs["gap (Elo)"].iloc[0] == expected.gap
    assert bool(pairs["separated"].iloc[0]) is False and pairs["CI low"].iloc[0] < pairs["gap (Elo)"].iloc[0]
    while not conn.execute("SELECT reached_at FROM campaign_target_fit").fetchone()[0]:
        token = rng.choice(tokens)
        item = serve_next(conn, token)
        record_vote(conn, token, item.assignment_id, bt_vote(conn, item, rng))
    reached_at = conn.execute("SELECT reached_at FROM campaign_target_fit").fetchone()[0]
    at = run(AppTest.from_file(APP, default_timeout=60))
    assert any(f"Reached (at {reached_at:,} votes; served balanced since)" in s for s in texts(at.success))
    conn.close()
