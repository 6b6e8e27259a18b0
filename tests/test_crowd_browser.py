"""Scheme crowd in a real browser on LLMFAO's crowd votes (59 models, 124 workers): the Rankings page's Crowd-BT
(ratings beside plain BT, the reliability table) and the Annotators page's reliability next to golden accuracy,
screenshotted to tests/artifacts/crowd_*.png."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.io import load
from core.store import Store
from tests.browser_support import act, choose_dataset, chromium, expect, go, new_page, streamlit_server
from tests.browser_support import screenshot as page_screenshot
from tests.conftest import shared_file

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[str, str]]:
    folder = tmp_path_factory.mktemp("crowd")
    with Store(folder / "evalboard.db") as store:
        dataset = store.ingest(load(shared_file("llmfao/crowd-comparisons.csv"), name="llmfao"),
                               name="llmfao").dataset
    with streamlit_server(folder / "evalboard.db", folder / "streamlit.log") as url:
        yield url, f"llmfao · votes · {dataset.rows:,} rows"


def test_crowd_bt_on_the_rankings_and_annotators_pages(server):
    url, label = server
    with chromium() as browser, new_page(browser, url) as page:
        choose_dataset(page, label)
        go(page, "Rankings")
        act(page, lambda: page.get_by_test_id("stRadio").get_by_text("Crowd-BT (annotator reliability)",
                                                                     exact=True).click(),
            until=page.get_by_role("heading", name="Annotator reliability"))
        expect(page.get_by_role("heading", name="Plain Bradley–Terry")).to_be_visible()
        expect(page.get_by_text("Crowd-BT (annotator reliability): 59 models")).to_be_visible()
        page.get_by_role("heading", name="Crowd-BT", exact=True).scroll_into_view_if_needed()
        page_screenshot(page, "crowd_rankings_ratings")
        table = page.get_by_test_id("stDataFrame").nth(2)  # Crowd-BT, plain BT, then the reliabilities
        table.scroll_into_view_if_needed()
        expect(table).to_be_visible()
        page_screenshot(page, "crowd_rankings_reliability")

        go(page, "Annotators")
        heading = page.get_by_role("heading", name="Reliability without golden questions (Crowd-BT)")
        expect(heading).to_be_visible()
        heading.scroll_into_view_if_needed()
        expect(page.get_by_test_id("stDataFrame").nth(1)).to_be_visible()  # after the quality table
        page_screenshot(page, "crowd_annotators")
