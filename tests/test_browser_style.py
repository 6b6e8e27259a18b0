"""Scheme Style-controlled BT in a real browser: the Rankings page on LLMFAO's crowd votes (59 models, both
answers joined from results.jsonl), the coefficient table and the slope chart, screenshotted to
tests/artifacts/style_*.png; then the Bias page's pointer back to it."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
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
    streamlit_server,
)
from tests.browser_support import screenshot as page_screenshot
from tests.conftest import shared_file

pytestmark = pytest.mark.browser


def llmfao_with_answers() -> pd.DataFrame:
    """LLMFAO crowd votes with both answers (results.jsonl joined on prompt and model, as bench/bench_style.py)."""
    votes = pd.read_csv(shared_file("llmfao/crowd-comparisons.csv"))
    answers = pd.read_json(shared_file("llmfao/results.jsonl"), lines=True)[["prompt", "model", "result"]]
    for side, column in (("x", "answer_a"), ("y", "answer_b")):
        votes = votes.merge(answers.rename(columns={"model": f"model_{side}", "result": column}),
                            on=["prompt", f"model_{side}"], how="left")
    return votes.drop(columns=["model_x", "model_y"])


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[str, str]]:
    folder = tmp_path_factory.mktemp("style")
    path = folder / "llmfao_answers.csv"
    llmfao_with_answers().to_csv(path, index=False)
    with Store(folder / "evalboard.db") as store:
        dataset = store.ingest(load(path, name="llmfao"), name="llmfao").dataset
    with streamlit_server(folder / "evalboard.db", folder / "streamlit.log") as url:
        yield url, f"llmfao · votes · {dataset.rows:,} rows"


def test_style_on_the_rankings_page_and_the_bias_pointer(server):
    url, label = server
    with chromium() as browser, new_page(browser, url) as page:
        choose_dataset(page, label)
        go(page, "Rankings")
        act(page, lambda: page.get_by_test_id("stRadio").get_by_text("Style-controlled BT", exact=True).click(),
            until=page.get_by_role("heading", name="Style effects"))
        expect(page.get_by_text("Style-controlled BT: 59 models")).to_be_visible()
        expect(by_key(page, "rank_features")).to_contain_text("length")
        expect(page.get_by_text("One standard deviation more relative length").first).to_be_visible()
        page.get_by_role("heading", name="Style effects").scroll_into_view_if_needed()
        page_screenshot(page, "style_rankings_effects")
        slope = by_key(page, "rank_style_slope")
        expect(slope.locator(".main-svg").first).to_be_visible()
        slope.scroll_into_view_if_needed()
        ARTIFACTS.mkdir(exist_ok=True)
        slope.screenshot(path=ARTIFACTS / "style_slope_llmfao.png")
        by_key(page, "rank_style_coefficient_chart").screenshot(path=ARTIFACTS / "style_coefficients_llmfao.png")
        # every model is labelled at both ends of the slope chart
        texts = slope.locator("g.textpoint text").all_text_contents()
        assert len(texts) == 2 * 59 and sum(t.startswith("59. ") or t.endswith("59. ") for t in texts) >= 1
        page_screenshot(page, "style_rankings_page")

        go(page, "Bias")
        act(page, lambda: page.get_by_role("tab", name="Length").click(),
            until=page.get_by_text("Rank with scheme Style-controlled BT on the Rankings page"))
        link = page.get_by_test_id("stPageLink").get_by_role("link")
        act(page, link.click, until=page.get_by_role("heading", name="Rankings", exact=True))
