"""The Vote page in a real browser: the time a tab spends hidden is not counted in the response time, and
an answer's own headings are drawn smaller than the "Answer A/B" labels.

Headless Chromium under Playwright keeps every page visible (there is no window to minimise or tab to
switch away from), so the test hides the page the way the browser does it: ``document.visibilityState``
reads ``hidden`` and a ``visibilitychange`` event fires; the Vote page's screen clock listens to exactly
that. The seconds the page stays hidden are real seconds on the server's clock.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pandas as pd
import pytest

from core.campaign import IDLE_AFTER_S, create_campaign, issue_tokens, read_answers
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

HIDDEN_S = 4.0  # how long the tab stays hidden: long next to the delay of a report on a loaded machine
ANSWER = ("# {topic} heading\n\nSome text.\n\n## A section\n\n```python\n# a comment, not a heading\n```\n\n"
          "Setext title\n============\n\nBody.")
ANSWERS = pd.DataFrame([{"query_id": f"q{q}", "prompt": f"## Question {q}\n\nWhich answer is clearer?",
                         "model": model, "answer": ANSWER.format(topic=topic)}
                        for q in range(2) for model, topic in (("alpha", "Tea"), ("beta", "Coffee"))])
HIDE_JS = """(hidden) => {
  Object.defineProperty(document, "visibilityState", {configurable: true, get: () => hidden ? "hidden" : "visible"});
  Object.defineProperty(document, "hidden", {configurable: true, get: () => hidden});
  document.dispatchEvent(new Event("visibilitychange"));
}"""


@pytest.fixture
def timing_db(tmp_path) -> tuple[Path, str]:
    db = tmp_path / "evalboard.db"
    conn = connect(db)
    try:
        answers = read_answers(ANSWERS.to_csv(index=False).encode(), name="answers.csv")
        campaign = create_campaign(conn, "timing", answers, golden_rate=0.0, target=2, seed=3)
        token = issue_tokens(conn, campaign, 1)[0].token
    finally:
        conn.close()
    return db, token


def screen_row(db: Path) -> tuple | None:
    """(shown_at, seconds, on_since) of the open item's screen clock, or None before any report."""
    conn = connect(db)
    try:
        return conn.execute("SELECT s.shown_at, s.seconds, s.on_since FROM campaign_screen_time s JOIN "
                            "campaign_assignments a ON a.id = s.assignment_id WHERE a.voted = 0").fetchone()
    finally:
        conn.close()


def wait_for_screen_clock(page) -> None:
    """The screen clock's script runs in the page (it loads after the run that mounts it has ended)."""
    page.wait_for_function("() => Number.isInteger(window.__evalboardScreenClock?.item)")


def wait_for_report(page, db: Path, on_screen: bool) -> tuple:
    """Wait until the store holds the report the page just sent (on or off screen); returns the row."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        row = screen_row(db)
        if row is not None and (row[2] is not None) == on_screen:
            return row
        page.wait_for_timeout(100)  # the report's run writes the store; poll it
    pytest.fail(f"no {'on' if on_screen else 'off'}-screen report reached the store")


def test_a_hidden_tab_is_not_counted_and_answer_headings_stay_below_the_labels(timing_db, tmp_path):
    db, token = timing_db
    ARTIFACTS.mkdir(exist_ok=True)
    with serve(db, tmp_path / "streamlit.log", port=free_port(), env={"EVALBOARD_MODE": "vote"}) as (url, _), \
            sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(url)
            box = page.get_by_label("Your annotator token", exact=True)
            box.fill(token)
            box.press("Enter")
            label = page.get_by_role("heading", name="Answer A", exact=True)
            expect(label).to_be_visible()
            wait_idle(page)
            wait_for_screen_clock(page)
            # Headings: the answer's "# … heading" is an h4, smaller than the h3 label; code stays code.
            assert "alpha" not in page.content() and "beta" not in page.content()
            own = page.get_by_role("heading", name=re.compile("^(Tea|Coffee) heading$"))
            expect(own.first).to_be_visible()
            assert own.first.evaluate("e => e.tagName") == "H4"
            size = "e => parseFloat(getComputedStyle(e).fontSize)"
            assert own.first.evaluate(size) < label.evaluate(size)
            assert page.get_by_role("heading", name="Setext title").first.evaluate("e => e.tagName") == "H4"
            expect(page.get_by_text("# a comment, not a heading").first).to_be_visible()
            page.screenshot(path=ARTIFACTS / "vote_headings.png")

            radio = page.get_by_role("radio", name="A", exact=True)
            radio.check(force=True)
            expect(radio).to_be_checked()
            page.evaluate(HIDE_JS, True)
            shown_at, seconds_before_hiding, _ = wait_for_report(page, db, on_screen=False)
            hidden_from = time.time()
            page.wait_for_timeout(HIDDEN_S * 1000)  # the tab stays hidden this long (real time, on purpose)
            page.evaluate(HIDE_JS, False)
            *_, back_at = wait_for_report(page, db, on_screen=True)
            wait_idle(page)
            expect(radio).to_be_checked()  # the reports' reruns keep the annotator's choice
            page.get_by_role("button", name="Submit").click()
            expect(page.get_by_text("1 / 2 done")).to_be_visible()
            wait_idle(page)
        finally:
            browser.close()
    conn = connect(db)
    try:
        on_screen, served, winner = conn.execute(
            "SELECT response_time_s, served_time_s, winner FROM campaign_votes").fetchone()
    finally:
        conn.close()
    assert winner == "model_a"
    hidden = back_at - (shown_at + seconds_before_hiding)  # off and on stamped by the server
    assert hidden >= HIDDEN_S - 0.01 and back_at >= hidden_from + HIDDEN_S - 0.01
    assert on_screen == pytest.approx(served - hidden, abs=1e-6)
    assert on_screen < served - HIDDEN_S + 0.01


def test_a_pause_without_any_touch_stops_the_clock_until_the_next_touch(timing_db, tmp_path):
    """The page's own clock is moved past the idle limit (Playwright's clock: no five-minute wait); the
    server stamps the off report, the real pause that follows, and the touch that ends it."""
    db, token = timing_db
    with serve(db, tmp_path / "streamlit.log", port=free_port(), env={"EVALBOARD_MODE": "vote"}) as (url, _), \
            sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.set_default_timeout(WAIT_MS)
            page.clock.install()
            page.goto(url)
            box = page.get_by_label("Your annotator token", exact=True)
            box.fill(token)
            box.press("Enter")
            expect(page.get_by_role("heading", name="Answer A", exact=True)).to_be_visible()
            wait_idle(page)
            wait_for_screen_clock(page)
            page.clock.fast_forward(int(IDLE_AFTER_S * 1000) + 1000)
            shown_at, seconds_before_idle, _ = wait_for_report(page, db, on_screen=False)
            idle_from = time.time()
            page.wait_for_timeout(HIDDEN_S * 1000)  # nobody touches the page this long (real time, on purpose)
            page.mouse.move(200, 300)
            page.mouse.move(220, 320)
            *_, back_at = wait_for_report(page, db, on_screen=True)
            wait_idle(page)
            radio = page.get_by_role("radio", name="B", exact=True)
            radio.check(force=True)
            expect(radio).to_be_checked()
            page.get_by_role("button", name="Submit").click()
            expect(page.get_by_text("1 / 2 done")).to_be_visible()
            wait_idle(page)
        finally:
            browser.close()
    conn = connect(db)
    try:
        on_screen, served = conn.execute("SELECT response_time_s, served_time_s FROM campaign_votes").fetchone()
    finally:
        conn.close()
    paused = back_at - (shown_at + seconds_before_idle)
    assert paused >= HIDDEN_S - 0.01 and back_at >= idle_from + HIDDEN_S - 0.01
    assert on_screen == pytest.approx(served - paused, abs=1e-6)
