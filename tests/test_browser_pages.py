"""Every analysis page in a real browser, as a first-time user meets them.

One server with an empty store; the tests run in file order like a session: upload a votes CSV through
the real file input, visit each page through the sidebar navigation, toggle the ranking scheme, filter,
build the report and download its JSON. Any Streamlit exception element fails the test. Screenshots go
to tests/artifacts/ (pages_*.png).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.samples import arena_demo
from tests.test_browser import (
    CHROMIUM,
    PlaywrightTimeout,
    LAUNCH_ARGS,
    VIEWPORT,
    WAIT_MS,
    expect,
    grid_cells,
    screenshot,
    sidebar_picker,
    streamlit_server,
    sync_playwright,
)

pytestmark = pytest.mark.browser
N_VOTES = 3000


@pytest.fixture(scope="module")
def votes_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("votes") / "arena_small.csv"
    frame = arena_demo(n_votes=N_VOTES, seed=3)
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> Iterator:
    """One browser page kept across the tests of this module (one Streamlit session)."""
    folder = tmp_path_factory.mktemp("pages")
    with streamlit_server(folder / "evalboard.db", folder / "streamlit.log") as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(url)
        expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible(timeout=WAIT_MS)
        yield page
        context.close()
        browser.close()


# Records every change of Streamlit's run state (``data-test-script-state`` on the app root) so a fast
# run that starts and ends between two polls is still seen.
WATCH_JS = """() => {
  if (window.__runStates) { window.__runStates.length = 0; return; }
  window.__runStates = [];
  const app = document.querySelector('[data-testid="stApp"]');
  new MutationObserver(() => window.__runStates.push(app.getAttribute('data-test-script-state')))
    .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""
IDLE_JS = "() => document.querySelector('[data-testid=\"stApp\"]').getAttribute('data-test-script-state') === 'notRunning'"


def act(page, action, timeout_ms: int = 60_000) -> bool:
    """Do ``action`` (a click …), wait for the script run it starts to end, fail on any exception element.
    Returns whether a run was seen (False: the action started none within 2 s)."""
    page.evaluate(WATCH_JS)
    action()
    try:
        page.wait_for_function("() => window.__runStates.includes('running')", timeout=2_000)
        seen = True
    except PlaywrightTimeout:
        seen = False
    page.wait_for_function(IDLE_JS, timeout=timeout_ms)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    return seen


def go(page, title: str) -> None:
    act(page, lambda: page.get_by_test_id("stSidebarNav").get_by_role("link", name=title).click())
    expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible()


def test_1_a_first_time_user_sees_the_data_page(session):
    page = session
    expect(page.get_by_text("The store is empty")).to_be_visible()
    nav = page.get_by_test_id("stSidebarNav")
    for title in ("Data", "Rankings", "Leaderboard", "Bias", "Annotators", "Reports"):
        expect(nav.get_by_role("link", name=title)).to_be_visible()
    go(page, "Rankings")
    expect(page.get_by_text("Rankings need a votes dataset")).to_be_visible()
    screenshot(page, "pages_01_rankings_empty")
    go(page, "Data")


def test_2_upload_votes_through_the_file_input(session, votes_csv):
    page = session
    page.locator('input[type="file"]').first.set_input_files(votes_csv)
    expect(page.get_by_text(votes_csv.name, exact=True)).to_be_visible()
    act(page, lambda: page.get_by_role("button", name="Validate and store").click())
    expect(page.get_by_text(f"stored {N_VOTES:,} votes rows as dataset 'arena_small'")).to_be_visible()
    expect(sidebar_picker(page)).to_have_value(f"arena_small · votes · {N_VOTES:,} rows")
    expect(page.get_by_test_id("stSidebar")).to_contain_text("Filters")
    screenshot(page, "pages_02_uploaded")


def test_3_rankings_and_the_scheme_toggle(session):
    page = session
    go(page, "Rankings")
    expect(page.get_by_text("Bradley–Terry (Elo): 12 models")).to_be_visible()
    expect(page.get_by_test_id("stDataFrame").first.locator('[role="gridcell"]')).to_have_count(12 * 8)
    cells = grid_cells(page, 0)  # the grid's accessible cells hold the raw values, 8 per row
    rows = [cells[i:i + 8] for i in range(0, len(cells), 8)]
    assert len(rows) == 12 and [r[0] for r in rows] == [str(i) for i in range(1, 13)]
    elo = [float(r[2]) for r in rows]
    assert elo == sorted(elo, reverse=True) and 1200 < min(elo) and max(elo) < 1800
    screenshot(page, "pages_03_rankings_bt")
    act(page, lambda: page.get_by_test_id("stRadio").get_by_text("Win rate", exact=True).click())
    expect(page.get_by_text("Win rate: 12 models")).to_be_visible()
    # the grid redraws its cells just after the run ends: wait for win rates in the rating column
    expect(page.get_by_test_id("stDataFrame").first.locator('[role="gridcell"]').nth(2)).to_have_text(
        re.compile(r"^0\.\d+$"))
    cells = grid_cells(page, 0)
    rates = [float(cells[i + 2]) for i in range(0, len(cells), 8)]
    assert len(rates) == 12 and rates == sorted(rates, reverse=True) and 0 < min(rates) and max(rates) < 1
    screenshot(page, "pages_04_rankings_winrate")
    act(page, lambda: page.get_by_test_id("stRadio").get_by_text("Bradley–Terry (Elo)", exact=True).click())


def test_4_bias_annotators_leaderboard(session):
    page = session
    go(page, "Bias")
    expect(page.get_by_text("At a glance: position × time")).to_be_visible()
    expect(page.get_by_text("Left answer chosen").first).to_be_visible()
    expect(page.get_by_test_id("stPlotlyChart").first).to_be_visible()
    screenshot(page, "pages_05_bias")
    go(page, "Annotators")
    expect(page.get_by_text("Krippendorff's α")).to_be_visible()
    screenshot(page, "pages_06_annotators")
    go(page, "Leaderboard")
    expect(page.get_by_text("The leaderboard ranks EvalRuns")).to_be_visible()
    screenshot(page, "pages_07_leaderboard_needs_runs")


def test_5_a_sidebar_filter_narrows_the_rankings(session):
    page = session
    go(page, "Rankings")
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_role("combobox", name="Game").click()
    act(page, lambda: page.get_by_role("option", name="chat").click())
    page.keyboard.press("Escape")
    expect(page.get_by_text("filtered: game_id ∈ {chat}").first).to_be_visible()
    expect(page.get_by_text(re.compile(r"^Bradley–Terry \(Elo\): 12 models from 1,\d{3} votes"))).to_be_visible()
    screenshot(page, "pages_08_rankings_filtered")
    act(page, lambda: sidebar.get_by_role("button", name="Clear all").first.click())
    expect(page.get_by_text("filtered:")).to_have_count(0)


def test_6_reports_download_the_json(session, tmp_path):
    page = session
    go(page, "Reports")
    page.get_by_label("Bootstrap replicates").fill("100")
    png = page.get_by_test_id("stCheckbox").filter(has_text="PNG figures")
    if png.locator("input").is_checked():
        png.get_by_text("PNG figures").click()  # PNG export is tested without the browser; keep this quick
    act(page, lambda: page.get_by_role("button", name="Build the report").click(), timeout_ms=120_000)
    expect(page.get_by_text("Report ready")).to_be_visible()
    screenshot(page, "pages_09_reports")
    with page.expect_download() as download:
        page.get_by_role("button", name="JSON", exact=True).click()
    path = tmp_path / "report.json"
    download.value.save_as(path)
    doc = json.loads(path.read_text())
    assert doc["kind"] == "votes" and doc["params"]["bootstrap"] == 100
    assert doc["rank"]["n_models"] == 12 and len(doc["rank"]["models"]) == 12
    assert doc["rank"]["n_votes"] > 0
    assert doc["input"]["source"].startswith("dataset arena_small")
    assert {"position", "length", "pairing"} <= set(doc["bias"])
    assert doc["annotators"]["annotators"]
