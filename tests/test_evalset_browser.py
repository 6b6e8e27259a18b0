"""The Eval set page in a real browser (Debian Chromium through Playwright): demo pool, preparation,
category step, selection and audit render without a traceback. The page is served by app.py."""

from __future__ import annotations

import pytest

from tests.test_browser import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, VIEWPORT, streamlit_server

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

WAIT_MS = 120_000  # preparation of the demo pool on a busy 2-core machine


def test_demo_pool_to_reviewed_selection_in_a_browser(tmp_path):
    expect = sync_api.expect
    with streamlit_server(tmp_path / "evalboard.db", tmp_path / "streamlit.log") as url, \
            sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(f"{url}/evalset")
            expect(page.get_by_role("heading", name="Eval set", exact=True)).to_be_visible()
            page.get_by_role("button", name="Use the demo pool").click()
            expect(page.get_by_text("Pool: 2,000 queries")).to_be_visible()
            page.get_by_role("button", name="Prepare: dedup, filter, categorise").click()
            expect(page.get_by_role("heading", name="2 · Categories")).to_be_visible()
            page.get_by_role("button", name="Select the eval set").click()
            expect(page.get_by_role("heading", name="3 · Review")).to_be_visible()
            expect(page.get_by_text("Automatic checks passed")).to_be_visible()
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=ARTIFACTS / "evalset_review.png")
            assert page.get_by_text("Traceback").count() == 0
            assert page.get_by_test_id("stException").count() == 0
        finally:
            browser.close()
