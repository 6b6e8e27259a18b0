"""The Decisions page's Plan tab in a real browser: a three-model votes file stored before the server starts;
the test opens the page through the sidebar, moves the power slider, and screenshots the tab
(tests/artifacts/decisions_plan*.png). Any Streamlit exception element fails the test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.io import load
from core.store import Store
from tests.browser_support import (
    choose_dataset,
    chromium,
    expect,
    go,
    new_page,
    screenshot,
    streamlit_server,
    wait_idle,
)
from tests.test_plan_app import three_models

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("plan")
    db = folder / "evalboard.db"
    with Store(db) as store:
        store.ingest(load(three_models().to_csv(index=False).encode(), name="three.csv"), name="three")
    with streamlit_server(db, folder / "streamlit.log") as url:
        yield url


def test_plan_tab(server):
    with chromium() as browser, new_page(browser, server) as page:
        choose_dataset(page, "three · votes · 350 rows")
        go(page, "Decisions")
        expect(page.get_by_text("Neighbours in the ranking")).to_be_visible()
        sentence = page.get_by_text("more votes between A and B")
        expect(sentence).to_be_visible()
        wait_idle(page)
        screenshot(page, "decisions_plan")
        slider = page.get_by_role("slider").first
        slider.focus()
        for _ in range(10):  # 0.80 → 0.90 in steps of 0.01
            page.keyboard.press("ArrowRight")
        expect(page.get_by_text("with 90 % power").first).to_be_visible()
        wait_idle(page)
        screenshot(page, "decisions_plan_power")
