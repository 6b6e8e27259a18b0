"""The Decisions page's Drift tab in a real browser: a file with one planted change (alpha up 60 Elo from week 3
of 6) and the real Tulu 1 human evaluation (timestamps over three weeks), both stored before the server starts.
Each test opens the tab, checks the headline, and screenshots the rating-over-time chart
(tests/artifacts/drift_*.png). Any Streamlit exception element fails the test.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from core.io import load
from core.store import Store
from tests.browser_support import (
    ARTIFACTS,
    act,
    by_key,
    choose_dataset,
    chromium,
    expect,
    go,
    new_page,
    screenshot,
    streamlit_server,
    wait_idle,
)
from tests.conftest import SHARED_DATA
from tests.test_drift_app import planted_file

pytestmark = pytest.mark.browser
SLOW_MS = 180_000
TULU = SHARED_DATA / "tulu1_human_eval" / "annotations.csv"
TULU_OUTCOMES = {"a-is-better": "model_a", "a-is-slightly-better": "model_a", "b-is-better": "model_b",
                 "b-is-slightly-better": "model_b", "tie": "tie"}


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("drift")
    db = folder / "evalboard.db"
    with Store(db) as store:
        store.ingest(load(planted_file(), name="planted.csv"), name="planted")
        if TULU.exists():
            store.ingest(load(TULU, columns={"winner": "preference"}, outcomes=TULU_OUTCOMES), name="tulu1")
    with streamlit_server(db, folder / "streamlit.log") as url:
        yield url


@pytest.fixture
def session(server) -> Iterator:
    with chromium() as browser, new_page(browser, server) as page:
        yield page


def open_drift(page, label: str) -> None:
    choose_dataset(page, label)
    go(page, "Decisions")
    act(page, lambda: page.get_by_role("tab", name="Drift").click(), until=by_key(page, "drift_chart"),
        timeout_ms=SLOW_MS)
    expect(by_key(page, "drift_chart").locator(".main-svg").first).to_be_visible(timeout=SLOW_MS)
    wait_idle(page, SLOW_MS)


def shoot_chart(page, name: str) -> None:
    chart = by_key(page, "drift_chart")
    chart.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    chart.screenshot(path=ARTIFACTS / f"{name}.png")


def test_the_planted_change(session):
    page = session
    open_drift(page, "planted · votes · 15,000 rows")
    expect(page.get_by_text("1 of 6 models tested changed over 6 week periods")).to_be_visible()
    expect(by_key(page, "drift_chart").get_by_text("alpha (changed)")).to_be_visible()
    shoot_chart(page, "drift_planted_chart")
    screenshot(page, "drift_planted_page")


def test_real_tulu_votes_per_day(session):
    if not TULU.exists():
        pytest.skip(f"real dataset not available: {TULU}")
    page = session
    open_drift(page, "tulu1 · votes · 1,150 rows")
    act(page, lambda: page.get_by_role("radio", name="Day", exact=True).click(),
        until=page.get_by_text(re.compile(r"changed over \d+ day periods")), timeout_ms=SLOW_MS)
    shoot_chart(page, "drift_tulu_chart")
