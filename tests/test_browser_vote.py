"""Voting in a real browser: two annotators at once against a voting-only server, and a server restart.

The server is ``streamlit run app.py`` with ``EVALBOARD_MODE=vote`` (the Vote page only) on a free port,
with its own store. Two browser contexts (two Streamlit sessions) vote at the same time; half way the
server is killed and started again on the same store and port, and both annotators go on. Then the
store must hold every submitted vote exactly once, and no page ever held a model name or ran script
from an answer. Every wait is on the app's state (tests/browser_support.py): a vote is cast only on a
page whose run has ended and whose choice is checked, so no click lands on a page being redrawn.
Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.campaign import create_campaign, issue_tokens, read_answers, read_golden
from core.campaign.store import token_hash
from core.store.connection import connect
from tests.browser_support import (
    ARTIFACTS,
    CHROMIUM,
    LAUNCH_ARGS,
    VIEWPORT,
    WAIT_MS,
    expect,
    free_port,
    serve,
    sync_playwright,
    wait_idle,
)

pytestmark = pytest.mark.browser

MODELS = ("secret-model-alpha", "secret-model-beta", "secret-model-gamma")
TARGET = 6
SCRIPT = "<script>window.__pwned=1</script><img src=x onerror='window.__pwned=2'>"
ANSWERS_CSV = "\n".join(["query_id,prompt,model,answer"] + [
    f'q{q},"Question {q}: which answer is clearer?",{m},"**Answer {q}.{i}** — {SCRIPT if i == 0 else "plain"}"'
    for q in range(4) for i, m in enumerate(MODELS)]).encode()
GOLDEN_CSV = b"question,correct_answer,wrong_answer\nLargest planet?,Jupiter,Mars\nSpider legs?,8,6\n"


@contextlib.contextmanager
def voting_server(db: Path, log: Path, port: int) -> Iterator[subprocess.Popen]:
    """A voting-only server; the caller may kill it (the fixture then only reaps it)."""
    with serve(db, log, port=port, env={"EVALBOARD_MODE": "vote"}) as (_, proc):
        yield proc


@pytest.fixture
def campaign_db(tmp_path) -> tuple[Path, list[str]]:
    db = tmp_path / "evalboard.db"
    conn = connect(db)
    try:
        campaign = create_campaign(conn, "browser", read_answers(ANSWERS_CSV, name="answers.csv"),
                                   read_golden(GOLDEN_CSV, name="golden.csv"), golden_rate=0.2, target=TARGET,
                                   seed=11)
        tokens = [t.token for t in issue_tokens(conn, campaign, 2)]
    finally:
        conn.close()
    return db, tokens


def progress_text(done: int) -> str:
    return f"{done} / {TARGET} done"


def sign_in(page, url: str, token: str, done: int) -> None:
    page.goto(url)
    box = page.get_by_label("Your annotator token", exact=True)
    box.fill(token)
    box.press("Enter")
    expect(page.get_by_text(progress_text(done))).to_be_visible()
    expect(page.get_by_role("heading", name="Answer B")).to_be_visible()
    wait_idle(page)


def choose_and_submit(page, choice: str, double: bool = False) -> None:
    """Check ``choice`` on an idle page (the item's run has ended) and submit it."""
    wait_idle(page)
    radio = page.get_by_role("radio", name=choice, exact=True)
    radio.check(force=True)  # the radio's own input is visually hidden behind its label
    expect(radio).to_be_checked()
    submit = page.get_by_role("button", name="Submit")
    submit.dblclick() if double else submit.click()


def expect_progress(page, done: int) -> None:
    """The page moved on to item ``done + 1`` (or to the end) and its run has ended."""
    expect(page.get_by_text("All done" if done >= TARGET else progress_text(done))).to_be_visible()
    wait_idle(page)


def open_items(db: Path) -> dict[str, tuple[int, str]]:
    """Per token hash: the item served and not yet voted on, and its question."""
    conn = connect(db)
    try:
        return {digest: (item, question) for digest, item, question in conn.execute(
            "SELECT a.token_hash, a.id, coalesce(q.prompt, g.question) FROM campaign_assignments a "
            "LEFT JOIN campaign_queries q ON q.campaign_id = a.campaign_id AND q.query_id = a.query_id "
            "LEFT JOIN campaign_golden g ON g.id = a.golden_id WHERE a.voted = 0")}
    finally:
        conn.close()


def check_page_is_clean(page) -> None:
    html = page.content()
    for name in (*MODELS, "golden:"):
        assert name not in html
    assert page.evaluate("window.__pwned") is None


def test_two_annotators_vote_concurrently_across_a_restart(campaign_db, tmp_path):
    db, tokens = campaign_db
    port = free_port()
    log = tmp_path / "streamlit.log"
    url = f"http://127.0.0.1:{port}"
    submitted = {token: 0 for token in tokens}
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        contexts = [browser.new_context(viewport=VIEWPORT) for _ in tokens]
        pages = [c.new_page() for c in contexts]
        for page in pages:
            page.set_default_timeout(WAIT_MS)
        try:
            with voting_server(db, log, port) as server:
                # The first request a fresh server gets asks for an analysis page: it gets the Vote page.
                pages[0].goto(f"{url}/data")
                expect(pages[0].get_by_role("heading", name="Vote", exact=True)).to_be_visible()
                wait_idle(pages[0])
                expect(pages[0].get_by_role("heading", name="Data", exact=True)).to_have_count(0)
                expect(pages[0].get_by_test_id("stSidebarNav")).to_have_count(0)
                for page, token in zip(pages, tokens):
                    sign_in(page, url, token, 0)
                    check_page_is_clean(page)
                pages[0].screenshot(path=ARTIFACTS / "vote_01_item.png")
                for round_ in range(3):
                    # Both submit before either waits: the two sessions' script runs overlap on the server.
                    for page, choice in zip(pages, ("A", "Tie")):
                        choose_and_submit(page, choice, double=round_ == 1)
                    for page, token in zip(pages, tokens):
                        submitted[token] += 1
                        expect_progress(page, submitted[token])
                        check_page_is_clean(page)
                pending = open_items(db)
                server.kill()  # a crash, with an item on each screen
                server.wait(timeout=10)
            with voting_server(db, log, port):
                for page, token in zip(pages, tokens):
                    sign_in(page, url, token, submitted[token])
                    # the annotator continues with the item that was on screen: no new item was made
                    expect(page.get_by_text(pending[token_hash(token)][1], exact=True)).to_be_visible()
                assert open_items(db) == pending
                while any(n < TARGET for n in submitted.values()):
                    active = [(page, token) for page, token in zip(pages, tokens) if submitted[token] < TARGET]
                    for page, _ in active:
                        choose_and_submit(page, "Both bad")
                    for page, token in active:
                        submitted[token] += 1
                        expect_progress(page, submitted[token])
                        check_page_is_clean(page)
                for page in pages:
                    expect(page.get_by_text("All done")).to_be_visible()
                    check_page_is_clean(page)
                pages[1].screenshot(path=ARTIFACTS / "vote_02_done.png")
        finally:
            for context in contexts:
                context.close()
            browser.close()
    conn = connect(db)
    try:
        rows = conn.execute("SELECT t.label, count(*), count(DISTINCT v.assignment_id) FROM campaign_votes v "
                            "JOIN campaign_assignments a ON a.id = v.assignment_id "
                            "JOIN campaign_tokens t ON t.token_hash = a.token_hash GROUP BY t.label").fetchall()
        voted = conn.execute("SELECT count(*) FROM campaign_assignments WHERE voted = 1").fetchone()[0]
    finally:
        conn.close()
    assert sorted(rows) == [("annotator-1", TARGET, TARGET), ("annotator-2", TARGET, TARGET)]
    assert voted == 2 * TARGET == sum(submitted.values())
