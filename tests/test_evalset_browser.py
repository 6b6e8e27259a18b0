"""The Eval set page in a real browser (Debian Chromium through Playwright): demo pool, preparation,
category step, selection and audit render without a traceback. The page is served by app.py, on a
server of the test's own; every wait is on the app's state (tests/browser_support.py)."""

from __future__ import annotations

import pytest

from tests.browser_support import act, chromium, expect, new_page, screenshot, streamlit_server

pytestmark = pytest.mark.browser


def test_demo_pool_to_reviewed_selection_in_a_browser(tmp_path):
    with streamlit_server(tmp_path / "evalboard.db", tmp_path / "streamlit.log") as url, chromium() as browser, \
            new_page(browser, f"{url}/evalset") as page:
        expect(page.get_by_role("heading", name="Eval set", exact=True)).to_be_visible()
        act(page, page.get_by_role("button", name="Use the demo pool").click,
            until=page.get_by_text("Pool: 2,000 queries"))
        act(page, page.get_by_role("button", name="Prepare: dedup, filter, categorise").click,
            until=page.get_by_role("heading", name="2 · Categories"))
        act(page, page.get_by_role("button", name="Select the eval set").click,
            until=page.get_by_role("heading", name="3 · Review"))
        expect(page.get_by_text("Automatic checks passed")).to_be_visible()
        expect(page.get_by_text("Reserves (2): not in the set")).to_be_visible()
        chart_title = page.get_by_text("Prompt length: eligible queries and the chosen set")
        expect(chart_title).to_be_visible()
        screenshot(page, "evalset_review")
        chart_title.scroll_into_view_if_needed()
        screenshot(page, "evalset_reserves_and_lengths")
        assert page.get_by_text("Traceback").count() == 0
        assert page.get_by_test_id("stException").count() == 0
