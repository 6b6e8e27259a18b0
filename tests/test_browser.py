"""The Data page in a real browser (Debian's Chromium, driven by Playwright) against a real server.

A module server (``streamlit run app.py`` on a free port with its own store, EVALBOARD_DB in a temp
folder) serves the tests that add data; each test opens its own browser context (a new Streamlit
session), stores files under names of its own and checks only what it stored, so the tests pass in any
order. The tests that need an empty store start a server of their own. Every wait is on the app's state
(tests/browser_support.py). Screenshots go to tests/artifacts/.

st.dataframe draws into a canvas, but glide-data-grid keeps an accessible ``<table role="grid">``
with the visible cells as text; the tests read cells from there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser_support import (  # noqa: F401 — re-exported for the other browser test modules
    ARTIFACTS,
    CHROMIUM,
    LAUNCH_ARGS,
    REPO,
    VIEWPORT,
    WAIT_MS,
    PlaywrightTimeout,
    _free_port,
    act,
    by_key,
    chromium,
    expect,
    grid_cell,
    grid_cells,
    new_page,
    screenshot,
    serve,
    sidebar_picker,
    streamlit_server,
    sync_playwright,
    upload_files,
    wait_idle,
)
from tests.conftest import snapshot

pytestmark = pytest.mark.browser

VOTES_CSV = "model_a,model_b,winner\nalpha,beta,model_a\nbeta,gamma,model_b\nalpha,gamma,tie\n"
BAD_CSV = "model_a,model_b,winner\nalpha,beta,model_a\nbeta,gamma,maybe\ndelta,delta,tie\n"
SCRIPT_NAME = "<script>window.__pwned=1</script>"
XSS_CSV = f"model_a,model_b,winner\n{SCRIPT_NAME},a|b,model_a\n=cmd,{SCRIPT_NAME},model_b\n"
STORED_ID = r"\(id \d+\)"  # ids depend on what other tests stored first


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """(URL, store path) of the module's server."""
    folder = tmp_path_factory.mktemp("browser")
    db = folder / "evalboard.db"
    with streamlit_server(db, folder / "streamlit.log") as url:
        yield url, db


@pytest.fixture
def empty_server(tmp_path) -> Iterator[str]:
    """A server of the test's own, with an empty store."""
    with streamlit_server(tmp_path / "evalboard.db", tmp_path / "streamlit.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(browser, server):
    """A new session on the Data page, after its first script run has finished."""
    with new_page(browser, server[0]) as page:
        expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
        expect(page.get_by_role("button", name="Load the sample datasets")).to_be_visible()
        yield page


def router_page_count() -> int:
    """Pages of app.py's navigation (the ``st.Page(`` entries of its PAGES sections)."""
    source = (REPO / "app.py").read_text()
    start = source.index("PAGES = {")
    return source[start:source.index("\n}", start)].count("st.Page(")


def upload(page, tmp_path: Path, name: str, text: str) -> None:
    """Choose ``text`` as file ``name`` in the main uploader and press "Validate and store"; returns once
    the run that stores (or rejects) it has ended."""
    path = tmp_path / name
    path.write_text(text)
    button = page.get_by_role("button", name="Validate and store", exact=True)
    upload_files(page, "upload_file", [path], then=button)
    act(page, button.click, until=page.get_by_test_id("stAlert").filter(
        has_text=re.compile(r"stored .* as dataset|already stored|The file was not stored")).first)


def test_a_page_loads_with_the_empty_store_info(browser, empty_server):
    with new_page(browser, empty_server) as page:
        expect(page).to_have_title("EvalBoard")
        expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
        expect(page.get_by_text("The store is empty: upload a file above or load the sample datasets.")).to_be_visible()
        expect(page.get_by_test_id("stSidebar")).to_contain_text("No datasets yet: add one on the Data page.")
        expect(page.get_by_test_id("stSidebar")).to_contain_text("EvalBoard — rankings you can defend")
        expect(page.get_by_test_id("stException")).to_have_count(0)
        screenshot(page, "01_empty_store")


def test_b_upload_valid_votes(page, tmp_path):
    upload(page, tmp_path, "votes.csv", VOTES_CSV)
    expect(page.get_by_text(re.compile(rf"^stored 3 votes rows as dataset 'votes' {STORED_ID}"))).to_be_visible()
    expect(sidebar_picker(page)).to_have_value("votes · votes · 3 rows")
    expect(page.get_by_test_id("stDataFrame")).to_have_count(2)
    expect(grid_cell(page, 1, "gamma")).to_have_count(2)  # the preview shows the stored dataset
    cells = grid_cells(page, 1)
    assert {"alpha", "beta", "gamma", "model_a", "model_b", "tie"} <= set(cells)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    screenshot(page, "02_uploaded_votes")


def test_c_bad_file_names_the_rows(page, tmp_path, server):
    before = snapshot(server[1])
    active_before = sidebar_picker(page).input_value() if sidebar_picker(page).count() else None
    upload(page, tmp_path, "bad.csv", BAD_CSV)
    expect(page.get_by_text("The file was not stored.")).to_be_visible()
    code = page.get_by_test_id("stCode")
    expect(code).to_contain_text("bad.csv: rejected, nothing was stored (2 problems")
    expect(code).to_contain_text("unknown winner label")
    expect(code).to_contain_text("1 row: 2 ('maybe')")
    expect(code).to_contain_text("model_a == model_b")
    expect(code).to_contain_text("1 row: 3 ('delta')")
    expect(code).to_contain_text("--outcome a-is-better=model_a")  # the hint, at the end of a long line
    assert code.locator("pre").evaluate("e => e.scrollWidth <= e.clientWidth")  # wrapped, no sideways scrolling
    if active_before is not None:
        expect(sidebar_picker(page)).to_have_value(active_before)  # no new dataset became active
    expect(page.get_by_test_id("stExpander").filter(has_text="Map columns and outcomes")).to_have_count(1)
    assert snapshot(server[1]) == before
    screenshot(page, "03_bad_file")


def test_d_script_in_a_model_name_is_text(page, tmp_path):
    upload(page, tmp_path, "xss.csv", XSS_CSV)
    expect(page.get_by_text(re.compile(rf"^stored 2 votes rows as dataset 'xss' {STORED_ID}"))).to_be_visible()
    expect(sidebar_picker(page)).to_have_value("xss · votes · 2 rows")
    expect(grid_cell(page, 1, SCRIPT_NAME)).to_have_count(2)
    cells = grid_cells(page, 1)
    assert cells.count(SCRIPT_NAME) == 2 and "a|b" in cells and "=cmd" in cells
    assert page.evaluate("window.__pwned") is None
    assert page.locator("script", has_text="__pwned").count() == 0
    screenshot(page, "04_script_name_as_text")


def test_e_load_the_samples(page):
    load = page.get_by_role("button", name="Load the sample datasets")
    act(page, load.click, until=page.get_by_text(re.compile("stored 20,000 votes rows as dataset 'arena_demo'")))
    expect(page.get_by_text(re.compile("stored 36 eval runs rows as dataset 'evalruns_demo'"))).to_be_visible()
    expect(page.get_by_text(re.compile("stored 960 preferences rows as dataset 'judge_demo'"))).to_be_visible()
    expect(grid_cell(page, 0, "evalruns_demo")).to_have_count(1)
    assert {"arena_demo", "evalruns_demo"} <= set(grid_cells(page, 0))
    sidebar_picker(page).click()
    options = page.get_by_role("option")
    expect(options.filter(has_text="arena_demo · votes · 20,000 rows")).to_have_count(1)
    expect(options.filter(has_text="evalruns_demo · eval runs · 36 rows")).to_have_count(1)
    screenshot(page, "05_samples_loaded")
    page.keyboard.press("Escape")
    expect(options).to_have_count(0)

    act(page, load.click, until=page.get_by_text(re.compile("already stored as dataset 'arena_demo'")))


def test_first_request_to_data_after_a_restart_goes_through_the_router(browser, empty_server):
    with new_page(browser, f"{empty_server}/data") as page:
        expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
        expect(page.get_by_text("The store is empty")).to_be_visible()
        expect(page.get_by_role("button", name="Load the sample datasets")).to_be_visible()
        screenshot(page, "06_first_request_to_data")
        expect(page.get_by_test_id("stSidebar")).to_contain_text("No datasets yet")
        # the router's pages only: no helper module (pages/_shared.py …) listed as a page
        nav = page.get_by_test_id("stSidebarNav")
        expect(nav).to_contain_text("Rankings")
        expect(nav.get_by_role("link")).to_have_count(router_page_count())
        for helper in ("shared", "mapping", "uploads", "parts"):
            expect(nav).not_to_contain_text(helper)


def test_f_several_lm_eval_files(page, tmp_path):
    paths = []
    for name, model, arc in [("small.json", "org/small", 0.4), ("large.json", "org/large", 0.7)]:
        path = tmp_path / name
        path.write_text(json.dumps({"results": {"arc": {"acc": arc, "acc_stderr": 0.01}},
                                    "config": {"model_args": f"pretrained={model}", "num_fewshot": 0}}))
        paths.append(path)
    page.get_by_text("Several files").click()
    store = page.get_by_role("button", name="Validate and store these files")
    upload_files(page, "lm_eval_files", paths, then=store)
    act(page, store.click,
        until=page.get_by_text(re.compile(rf"^stored 2 eval runs rows as dataset '2 lm-eval files' {STORED_ID}")))
    expect(sidebar_picker(page)).to_have_value("2 lm-eval files · eval runs · 2 rows")
    screenshot(page, "07_lm_eval_files")
