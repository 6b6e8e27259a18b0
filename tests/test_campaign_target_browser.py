"""The rank target on the Data page in a real browser: a campaign with target top:3 and 150 votes cast by
Bradley–Terry annotators, stored before the server starts. The Manage tab must show the target and its
pairs' table; the New campaign tab must offer the option. Screenshots: tests/artifacts/campaign_target_*.png.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from core.campaign import create_campaign, issue_tokens, record_vote, serve_next
from core.store.connection import connect
from tests.browser_support import (
    ARTIFACTS,
    by_key,
    chromium,
    expect,
    go,
    grid_cell,
    new_page,
    streamlit_server,
    wait_idle,
)
from tests.test_campaign_target import TRUE_THETA, answers_table, bt_vote

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("target")
    db = folder / "evalboard.db"
    conn = connect(db)
    try:
        campaign = create_campaign(conn, "goal", answers_table(list(TRUE_THETA), 100), golden_rate=0,
                                   target=1000, seed=2, rank_target="top:3")
        tokens = [t.token for t in issue_tokens(conn, campaign, 5)]
        rng = random.Random(0)
        for _ in range(150):
            token = rng.choice(tokens)
            item = serve_next(conn, token)
            record_vote(conn, token, item.assignment_id, bt_vote(conn, item, rng))
    finally:
        conn.close()
    with streamlit_server(db, folder / "streamlit.log") as url:
        yield url


def test_the_manage_tab_shows_the_target_and_the_form_offers_it(server):
    with chromium() as browser, new_page(browser, server) as page:
        go(page, "Data")
        page.get_by_text("Voting campaigns: blind A/B votes from annotators with tokens").click()
        expect(page.get_by_text("Rank target top:3: ranks 1–3 separated from each other and from rank 4.")
               ).to_be_visible()
        expect(page.get_by_text("150 votes so far")).to_be_visible()
        # The target pairs' table is drawn above the annotators' progress table (a keyed dataframe has no
        # st-key class to find it by).
        expect(page.get_by_test_id("stDataFrame").nth(1)).to_be_visible()
        pairs = page.get_by_test_id("stDataFrame").nth(0)
        expect(grid_cell(page, 0, "3").first).to_be_attached()  # rank 3: the last target pair
        wait_idle(page)
        assert page.get_by_test_id("stException").count() == 0
        ARTIFACTS.mkdir(exist_ok=True)
        pairs.scroll_into_view_if_needed()
        page.screenshot(path=ARTIFACTS / "campaign_target_manage.png")
        page.get_by_role("tab", name="New campaign").click()
        expect(by_key(page, "campaign_rank_target")).to_be_visible()
        wait_idle(page)
        by_key(page, "campaign_rank_target").scroll_into_view_if_needed()
        page.screenshot(path=ARTIFACTS / "campaign_target_form.png")
