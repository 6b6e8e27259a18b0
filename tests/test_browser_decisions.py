"""The Decisions page in a real browser: the Robustness tab on the arena sample (the headline, the ratings, who
cast the votes, the votes and their CSV button), then a pair's order chosen with the pair selector, and on the
real LLMFAO crowd votes; screenshots in tests/artifacts/decisions_*.png. Any Streamlit exception element fails
the test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.io import load
from core.samples.files import SAMPLES_DIR
from core.store import Store
from tests.browser_support import (
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

pytestmark = pytest.mark.browser
SLOW_MS = 180_000  # the search's refits on a loaded 2-core machine
LLMFAO = SHARED_DATA / "llmfao" / "crowd-comparisons.csv"


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[str, dict[str, str]]]:
    folder = tmp_path_factory.mktemp("decisions")
    labels = {}
    with Store(folder / "evalboard.db") as store:
        arena = store.ingest(load(SAMPLES_DIR / "arena_demo.csv"), name="arena_demo").dataset
        labels["arena"] = f"arena_demo · votes · {arena.rows:,} rows"
        if LLMFAO.exists():
            llmfao = store.ingest(load(LLMFAO), name="llmfao").dataset
            labels["llmfao"] = f"llmfao · votes · {llmfao.rows:,} rows"
    with streamlit_server(folder / "evalboard.db", folder / "streamlit.log") as url:
        yield url, labels


def metric(page, label: str):
    return page.get_by_test_id("stMetric").filter(has=page.get_by_text(label, exact=True))


def open_robustness_tab(page) -> None:
    """Plan is the page's first tab; the robustness search runs when its tab opens."""
    act(page, lambda: page.get_by_role("tab", name="Robustness").click(), until=metric(page, "Votes to drop"),
        timeout_ms=SLOW_MS)


def test_robustness_tab_and_the_pair_selector(server):
    url, labels = server
    with chromium() as browser, new_page(browser, url) as page:
        choose_dataset(page, labels["arena"])
        go(page, "Decisions")
        open_robustness_tab(page)
        wait_idle(page, SLOW_MS)
        expect(page.get_by_role("tab", name="Robustness")).to_be_visible()
        expect(metric(page, "Top model")).to_contain_text("lumen-9b")
        expect(page.get_by_text("Who cast these votes")).to_be_visible()
        expect(by_key(page, "robustness_csv").get_by_role("button")).to_be_visible()
        expect(page.get_by_text("The 85 votes")).to_be_visible()
        expect(page.get_by_test_id("stDataFrame")).to_have_count(5)  # ratings, annotator, game, week, votes
        screenshot(page, "decisions_robustness_arena")
        act(page, lambda: by_key(page, "robustness_question").get_by_text("A pair's order", exact=True).click(),
            until=page.get_by_role("combobox", name="Model B"), timeout_ms=SLOW_MS)
        expect(metric(page, "Ahead now")).to_be_visible(timeout=SLOW_MS)
        wait_idle(page, SLOW_MS)
        screenshot(page, "decisions_robustness_pair")


def test_real_llmfao_votes(server):
    url, labels = server
    if "llmfao" not in labels:
        pytest.skip(f"real dataset not available: {LLMFAO}")
    with chromium() as browser, new_page(browser, url) as page:
        choose_dataset(page, labels["llmfao"])
        go(page, "Decisions")
        open_robustness_tab(page)
        wait_idle(page, SLOW_MS)
        screenshot(page, "decisions_robustness_llmfao")
