"""The Judge page in a real browser: the demo judged preferences and the real AlpacaEval 2.0 annotations (58
models against gpt4_1106_preview), both stored before the server starts. Each test picks its dataset, opens
the page through the sidebar, changes the baseline or the bootstrap, and screenshots the raw vs LC scatter
(tests/artifacts/judge_*.png). Any Streamlit exception element fails the test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.io import load
from core.samples.files import SAMPLES_DIR
from core.samples.judge import JUDGE_SAMPLE, judge_demo
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

pytestmark = pytest.mark.browser
SLOW_MS = 300_000  # the real file's joint difficulty fit and bootstrap on a loaded 2-core machine
ALPACA = SHARED_DATA / "alpaca_eval_annotations" / "preferences.csv"


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("judge")
    db = folder / "evalboard.db"
    two = folder / "two_baselines.csv"
    frames = [judge_demo(n_prompts=40, seed=1), judge_demo(n_prompts=40, seed=2).assign(baseline="other-base")]
    frames[1] = frames[1][frames[1]["model"].isin(["terse-pro", "nimbus-1b"])]
    with open(two, "w", encoding="utf-8") as handle:
        for i, frame in enumerate(frames):
            frame.to_csv(handle, index=False, header=i == 0)
    with Store(db) as store:
        store.ingest(load(SAMPLES_DIR / JUDGE_SAMPLE), name="judge_demo")
        store.ingest(load(two), name="two_baselines")
        if ALPACA.exists():
            store.ingest(load(ALPACA), name="alpaca_eval_2")
    with streamlit_server(db, folder / "streamlit.log") as url:
        yield url


@pytest.fixture
def session(server) -> Iterator:
    with chromium() as browser, new_page(browser, server) as page:
        yield page


def scatter(page):
    return by_key(page, "judge_scatter")


def shoot_scatter(page, name: str) -> None:
    chart = scatter(page)
    expect(chart.locator(".main-svg").first).to_be_visible()
    chart.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    chart.screenshot(path=ARTIFACTS / f"{name}.png")


def test_demo_page_and_the_bootstrap(session):
    page = session
    choose_dataset(page, "judge_demo · preferences · 960 rows")
    expect(page.get_by_text("win rates are on the Judge page")).to_be_visible()
    go(page, "Judge")
    expect(scatter(page)).to_be_visible(timeout=SLOW_MS)
    wait_idle(page, SLOW_MS)
    expect(page.get_by_text("500 win-rate replicates, 100 LC replicates")).to_be_visible()
    shoot_scatter(page, "judge_demo_scatter")
    screenshot(page, "judge_demo_page")
    field = by_key(page, "judge_bootstrap").locator("input")
    act(page, lambda: (field.fill("100"), field.press("Enter")),
        until=page.get_by_text("100 win-rate replicates"), timeout_ms=SLOW_MS)
    expect(scatter(page)).to_be_visible()


def test_the_baseline_picker(session):
    page = session
    choose_dataset(page, "two_baselines · preferences · 400 rows")
    go(page, "Judge")
    picker = page.get_by_role("combobox", name="Baseline")
    expect(picker).to_have_value("gpt-base", timeout=SLOW_MS)
    wait_idle(page, SLOW_MS)
    picker.click()
    act(page, lambda: page.get_by_role("option", name="other-base", exact=True).click(),
        until=page.get_by_text("2 models against other-base"), timeout_ms=SLOW_MS)
    shoot_scatter(page, "judge_two_baselines_scatter")


def test_real_alpaca_eval_2_scatter(session):
    if not ALPACA.exists():
        pytest.skip(f"real dataset not available: {ALPACA}")
    page = session
    choose_dataset(page, "alpaca_eval_2 · preferences · 46,680 rows")
    go(page, "Judge")
    expect(scatter(page)).to_be_visible(timeout=SLOW_MS)
    wait_idle(page, SLOW_MS)
    expect(page.get_by_text("57 models against gpt4_1106_preview")).to_be_visible()
    shoot_scatter(page, "judge_alpaca2_scatter")
    screenshot(page, "judge_alpaca2_page")
    expect(by_key(page, "judge_categories")).to_be_visible()
