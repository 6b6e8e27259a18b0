"""The Vote page's response time and headings, through the router with Streamlit's AppTest.

AppTest runs no browser script, so the screen clock's reports are made here with the core call the page
makes for them (the browser path is in tests/test_browser_vote_timing.py); what this checks is that the
page mounts the clock for the item it shows and that its vote stores the time on screen next to the time
since the item was served.
"""

from __future__ import annotations

import json
import time

import pandas as pd

from core.campaign import IDLE_AFTER_S, create_campaign, issue_tokens, read_answers, record_screen_event
from core.store.connection import connect
from tests.test_app_vote import app, campaign_tokens, choose, fixed_tokens, vote_page  # noqa: F401


def open_item(conn) -> tuple[int, float]:
    return conn.execute("SELECT id, shown_at FROM campaign_assignments WHERE voted = 0").fetchone()


def test_the_page_mounts_the_screen_clock_for_the_item_it_shows(app, campaign_tokens):
    conn, _, (token, _) = campaign_tokens
    at = vote_page(token)
    item, _ = open_item(conn)
    clocks = [e.proto for e in at.main.children.values() if e.type == "bidi_component"]
    assert [c.component_name for c in clocks] == ["evalboard_screen_clock"]
    assert json.loads(clocks[0].json) == {"item": item, "idle_after_s": IDLE_AFTER_S}
    assert clocks[0].id.endswith(f"vote_screen_{item}")
    at = choose(at, "B", "B")  # the next item gets its own clock
    following, _ = open_item(conn)
    clocks = [e.proto for e in at.main.children.values() if e.type == "bidi_component"]
    assert following != item and [json.loads(c.json)["item"] for c in clocks] == [following]


def test_a_vote_stores_the_time_on_screen_and_the_time_since_served(app, campaign_tokens):
    conn, _, (token, _) = campaign_tokens
    at = vote_page(token)
    item, shown_at = open_item(conn)
    # The item was served 100 s ago and was hidden from 10 s to 95 s after: 15 s on screen, plus the run.
    conn.execute("UPDATE campaign_assignments SET shown_at = ? WHERE id = ?", [shown_at - 100, item])
    conn.commit()
    record_screen_event(conn, token, item, "off", now=shown_at - 90)
    record_screen_event(conn, token, item, "on", now=shown_at - 5)
    before = time.time()
    at = choose(at, "A", "Tie")
    after = time.time()
    rows = conn.execute("SELECT response_time_s, served_time_s FROM campaign_votes WHERE assignment_id = ?",
                        [item]).fetchall()
    assert len(rows) == 2 and rows[0] == rows[1]
    on_screen, served = rows[0]
    assert before - shown_at + 100 <= served <= after - shown_at + 100
    assert on_screen == served - 85.0


def test_answer_headings_are_drawn_below_the_answer_labels(app, db_path):
    answers = pd.DataFrame([{"query_id": "q1", "prompt": "# Big question", "model": m,
                             "answer": f"# Title {i}\n\n```\n# code\n```\n\nSub\n---\ntext"}
                            for i, m in enumerate(("m1", "m2"))])
    conn = connect(db_path)
    campaign = create_campaign(conn, "headings", read_answers(answers.to_csv(index=False).encode(), name="a.csv"),
                               golden_rate=0.0, target=1, seed=1)
    token = issue_tokens(conn, campaign, 1)[0].token
    conn.close()
    at = vote_page(token)
    texts = [m.value for m in at.main.markdown]
    assert "#### Big question" in texts
    answers_shown = [t for t in texts if "Title" in t]
    assert len(answers_shown) == 2
    for text in answers_shown:
        assert text.startswith("#### Title") and "```\n# code\n```" in text and "##### Sub" in text
