"""Every analysis page in a real browser, as a first-time user meets them.

A module server holds one votes dataset (arena_small, stored before the server starts); every test
opens its own session, picks that dataset and walks its pages through the sidebar navigation: toggle
the ranking scheme, filter, build the report and download its JSON. The first-visit test has a server
with an empty store of its own, and the upload test stores a file under its own name, so the tests
pass in any order. Any Streamlit exception element fails the test; every wait is on the app's state
(tests/browser_support.py). Screenshots go to tests/artifacts/ (pages_*.png).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.io import load
from core.samples import arena_demo
from core.store import Store
from tests.browser_support import (
    act,
    choose_dataset,
    chromium,
    expect,
    go,
    grid_cells,
    new_page,
    screenshot,
    sidebar_picker,
    streamlit_server,
    upload_files,
)

pytestmark = pytest.mark.browser
N_VOTES = 9000  # three dimensions, analysed one at a time: about 3,000 votes each
DATASET = f"arena_small · votes · {N_VOTES:,} rows"


def _votes_csv(folder: Path, name: str, seed: int) -> Path:
    path = folder / name
    arena_demo(n_votes=N_VOTES, seed=seed).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    """A server whose store holds arena_small (3,000 simulated votes, 12 models)."""
    folder = tmp_path_factory.mktemp("pages")
    db = folder / "evalboard.db"
    with Store(db) as store:
        store.ingest(load(_votes_csv(folder, "arena_small.csv", seed=3), name="arena_small"))
    with streamlit_server(db, folder / "streamlit.log") as url:
        yield url


@pytest.fixture
def session(browser, server) -> Iterator:
    """A new session on the Data page with arena_small as the active dataset."""
    with new_page(browser, server, accept_downloads=True) as page:
        expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
        choose_dataset(page, DATASET)
        yield page


def test_1_a_first_time_user_sees_the_data_page(browser, tmp_path):
    with streamlit_server(tmp_path / "evalboard.db", tmp_path / "streamlit.log") as url, \
            new_page(browser, url) as page:
        expect(page.get_by_text("The store is empty")).to_be_visible()
        nav = page.get_by_test_id("stSidebarNav")
        for title in ("Data", "Rankings", "Leaderboard", "Bias", "Annotators", "Reports"):
            expect(nav.get_by_role("link", name=title)).to_be_visible()
        go(page, "Rankings")
        expect(page.get_by_text("Rankings need a votes dataset")).to_be_visible()
        screenshot(page, "pages_01_rankings_empty")
        go(page, "Data")


def test_2_upload_votes_through_the_file_input(session, tmp_path):
    page = session
    votes_csv = _votes_csv(tmp_path, "arena_upload.csv", seed=4)
    store = page.get_by_role("button", name="Validate and store", exact=True)
    upload_files(page, "upload_file", [votes_csv], then=store)
    act(page, store.click, until=page.get_by_text(f"stored {N_VOTES:,} votes rows as dataset 'arena_upload'"))
    expect(sidebar_picker(page)).to_have_value(f"arena_upload · votes · {N_VOTES:,} rows")
    expect(page.get_by_test_id("stSidebar")).to_contain_text("Filters")
    screenshot(page, "pages_02_uploaded")


def _rating_column(page, rows: int) -> list[str]:
    """The rows' values of the rankings grid's rating column, once the grid shows ``rows`` rows."""
    cells = page.get_by_test_id("stDataFrame").first.locator('[role="gridcell"]')
    expect(cells).to_have_count(rows * 8)
    values = grid_cells(page, 0)  # the grid's accessible cells hold the raw values, 8 per row
    table = [values[i:i + 8] for i in range(0, len(values), 8)]
    assert [r[0] for r in table] == [str(i) for i in range(1, rows + 1)]
    return [r[2] for r in table]


def test_3_rankings_and_the_scheme_toggle(session):
    page = session
    go(page, "Rankings")
    expect(page.get_by_text("Bradley–Terry (Elo): 12 models")).to_be_visible()
    elo = [float(v) for v in _rating_column(page, 12)]
    assert elo == sorted(elo, reverse=True) and 1200 < min(elo) and max(elo) < 1800
    screenshot(page, "pages_03_rankings_bt")
    act(page, lambda: page.get_by_test_id("stRadio").get_by_text("Win rate", exact=True).click(),
        until=page.get_by_text("Win rate: 12 models"))
    # the grid redraws its cells just after the run ends: wait for win rates in the rating column
    expect(page.get_by_test_id("stDataFrame").first.locator('[role="gridcell"]').nth(2)).to_have_text(
        re.compile(r"^0\.\d+$"))
    rates = [float(v) for v in _rating_column(page, 12)]
    assert rates == sorted(rates, reverse=True) and 0 < min(rates) and max(rates) < 1
    screenshot(page, "pages_04_rankings_winrate")


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
    heading = re.compile(r"^Bradley–Terry \(Elo\): 12 models from ([\d,]+) judged items")
    expect(page.get_by_text(heading)).to_be_visible()
    all_votes = heading.match(page.get_by_text(heading).inner_text()).group(1)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_role("combobox", name="Game").click()
    act(page, lambda: page.get_by_role("option", name="chat").click(),
        until=page.get_by_text("filtered: game_id ∈ {chat}").first)
    page.keyboard.press("Escape")
    filtered = page.get_by_text(heading)
    expect(filtered).to_have_text(re.compile(r"from \d{3}|1,\d{3} judged items"))
    assert int(heading.match(filtered.inner_text()).group(1).replace(",", "")) < int(all_votes.replace(",", ""))
    screenshot(page, "pages_08_rankings_filtered")
    act(page, lambda: sidebar.get_by_role("button", name="Clear all").first.click(),
        until=page.get_by_text(re.compile(rf"^Bradley–Terry \(Elo\): 12 models from {all_votes} judged items")))
    expect(page.get_by_text("filtered:")).to_have_count(0)


def test_6_reports_download_the_json(session, tmp_path):
    page = session
    go(page, "Reports")
    page.get_by_label("Bootstrap replicates").fill("100")
    png = page.get_by_test_id("stCheckbox").filter(has_text="PNG figures")
    if png.locator("input").is_checked():
        png.get_by_text("PNG figures").click()  # PNG export has a test of its own; keep this one quick
    expect(png.locator("input")).not_to_be_checked()
    act(page, lambda: page.get_by_role("button", name="Build the report").click(),
        until=page.get_by_text("Report ready"))
    screenshot(page, "pages_09_reports")
    with page.expect_download() as download:
        page.get_by_role("button", name="JSON", exact=True).click()
    path = tmp_path / "report.json"
    download.value.save_as(path)
    doc = json.loads(path.read_text())
    assert doc["kind"] == "votes" and doc["params"]["bootstrap"] == 100
    assert doc["rank"]["n_models"] == 12 and len(doc["rank"]["models"]) == 12
    assert 0 < doc["rank"]["n_votes"] <= N_VOTES
    assert doc["input"]["source"].startswith("dataset arena_small")
    assert {"position", "length", "pairing"} <= set(doc["bias"])
    assert doc["annotators"]["annotators"]
