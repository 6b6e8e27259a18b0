"""The Data page in a real browser (Debian's Chromium, driven by Playwright) against a real server.

One ``streamlit run app.py`` serves the module, on a free port with its own store (EVALBOARD_DB in
a temp folder). Each test opens a new browser context, i.e. a new Streamlit session; the store is
shared, so the tests run in file order (empty store first). Screenshots go to tests/artifacts/.

st.dataframe draws into a canvas, but glide-data-grid keeps an accessible ``<table role="grid">``
with the visible cells as text; the tests read cells from there.
"""

from __future__ import annotations

import json

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import snapshot

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
expect, sync_playwright = sync_api.expect, sync_api.sync_playwright
PlaywrightTimeout = sync_api.TimeoutError

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
STARTUP_S = 60
WAIT_MS = 20_000  # for anything a script run has to produce
VIEWPORT = {"width": 1400, "height": 1800}  # tall: Streamlit scrolls inside the page, full_page does not help

VOTES_CSV = "model_a,model_b,winner\nalpha,beta,model_a\nbeta,gamma,model_b\nalpha,gamma,tie\n"
BAD_CSV = "model_a,model_b,winner\nalpha,beta,model_a\nbeta,gamma,maybe\ndelta,delta,tie\n"
SCRIPT_NAME = "<script>window.__pwned=1</script>"
XSS_CSV = f"model_a,model_b,winner\n{SCRIPT_NAME},a|b,model_a\n=cmd,{SCRIPT_NAME},model_b\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(db: Path, log: Path, script: str | Path = "app.py", port: int | None = None,
          env: dict[str, str] | None = None) -> Iterator[tuple[str, subprocess.Popen]]:
    """``streamlit run SCRIPT`` on 127.0.0.1 (a free port unless given) with its own store; yields
    (URL, process) once /_stcore/health says ok, and stops the process at the end unless the caller
    already did (a test may kill it to simulate a crash)."""
    port = port or _free_port()
    with log.open("a") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(script), "--server.address", "127.0.0.1",
             "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            cwd=REPO, env={**os.environ, "EVALBOARD_DB": str(db), **(env or {})}, stdout=out,
            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.read().decode().strip() == "ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit did not answer within {STARTUP_S} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


@contextlib.contextmanager
def streamlit_server(db: Path, log: Path) -> Iterator[str]:
    """``streamlit run app.py`` on a free port; yields its URL once /_stcore/health says ok."""
    with serve(db, log) as (url, _):
        yield url


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("browser")
    db = folder / "evalboard.db"
    with streamlit_server(db, folder / "streamlit.log") as url:
        yield url, db


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, server):
    """A new session on the Data page, after its first script run has finished."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(server[0])
    expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_role("button", name="Load the sample datasets")).to_be_visible()
    yield page
    context.close()


def router_page_count() -> int:
    """Pages of app.py's navigation (the ``st.Page(`` entries of its PAGES sections)."""
    source = (REPO / "app.py").read_text()
    start = source.index("PAGES = {")
    return source[start:source.index("\n}", start)].count("st.Page(")


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"{name}.png")


def sidebar_picker(page):
    """The active-dataset selectbox; its shown choice is the combobox's value."""
    return page.get_by_test_id("stSidebar").get_by_role("combobox", name="Active dataset")


def grid_cell(page, index: int, text: str):
    """Cells of the index-th st.dataframe whose whole text is ``text`` (the grid's fallback table sits
    inside the canvas, outside the accessibility tree, so get_by_role does not see it)."""
    cells = page.get_by_test_id("stDataFrame").nth(index).locator('[role="gridcell"]')
    return cells.filter(has_text=re.compile(f"^{re.escape(text)}$"))


def grid_cells(page, index: int) -> list[str]:
    """Text of the visible cells of the index-th st.dataframe."""
    return page.get_by_test_id("stDataFrame").nth(index).locator('[role="gridcell"]').all_text_contents()


def upload(page, tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    page.locator('input[type="file"]').first.set_input_files(path)  # the main uploader comes first
    expect(page.get_by_text(name, exact=True)).to_be_visible()  # the uploader lists the file
    page.get_by_role("button", name="Validate and store").click()


def test_a_page_loads_with_the_empty_store_info(page):
    expect(page).to_have_title("EvalBoard")
    expect(page.get_by_text("The store is empty: upload a file above or load the sample datasets.")).to_be_visible()
    expect(page.get_by_test_id("stSidebar")).to_contain_text("No datasets yet: add one on the Data page.")
    expect(page.get_by_test_id("stSidebar")).to_contain_text("EvalBoard — rankings you can defend")
    expect(page.get_by_test_id("stException")).to_have_count(0)
    screenshot(page, "01_empty_store")


def test_b_upload_valid_votes(page, tmp_path):
    upload(page, tmp_path, "votes.csv", VOTES_CSV)
    expect(page.get_by_text("stored 3 votes rows as dataset 'votes' (id 1)")).to_be_visible()
    expect(sidebar_picker(page)).to_have_value("votes · votes · 3 rows")
    expect(page.get_by_test_id("stDataFrame")).to_have_count(2)
    expect(grid_cell(page, 1, "gamma")).to_have_count(2)
    cells = grid_cells(page, 1)
    assert {"alpha", "beta", "gamma", "model_a", "model_b", "tie"} <= set(cells)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    screenshot(page, "02_uploaded_votes")


def test_c_bad_file_names_the_rows(page, tmp_path, server):
    before = snapshot(server[1])
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
    expect(sidebar_picker(page)).to_have_value("votes · votes · 3 rows")  # still the only dataset
    expect(page.get_by_test_id("stExpander").filter(has_text="Map columns and outcomes")).to_have_count(1)
    assert snapshot(server[1]) == before
    screenshot(page, "03_bad_file")


def test_d_script_in_a_model_name_is_text(page, tmp_path):
    upload(page, tmp_path, "xss.csv", XSS_CSV)
    expect(page.get_by_text("stored 2 votes rows as dataset 'xss' (id 2)")).to_be_visible()
    expect(sidebar_picker(page)).to_have_value("xss · votes · 2 rows")
    expect(grid_cell(page, 1, SCRIPT_NAME)).to_have_count(2)
    cells = grid_cells(page, 1)
    assert cells.count(SCRIPT_NAME) == 2 and "a|b" in cells and "=cmd" in cells
    assert page.evaluate("window.__pwned") is None
    assert page.locator("script", has_text="__pwned").count() == 0
    screenshot(page, "04_script_name_as_text")


def test_e_load_the_samples(page):
    page.get_by_role("button", name="Load the sample datasets").click()
    expect(page.get_by_text("stored 20,000 votes rows as dataset 'arena_demo'")).to_be_visible()
    expect(page.get_by_text("stored 36 eval runs rows as dataset 'evalruns_demo'")).to_be_visible()
    expect(grid_cell(page, 0, "evalruns_demo")).to_have_count(1)
    names = grid_cells(page, 0)
    assert {"votes", "xss", "arena_demo", "evalruns_demo"} <= set(names)
    sidebar_picker(page).click()
    options = page.get_by_role("option")
    expect(options).to_have_count(4)
    expect(options.filter(has_text="arena_demo · votes · 20,000 rows")).to_have_count(1)
    screenshot(page, "05_samples_loaded")
    page.keyboard.press("Escape")

    page.get_by_role("button", name="Load the sample datasets").click()
    expect(page.get_by_text("already stored as dataset 'arena_demo'")).to_be_visible()


def test_first_request_to_data_after_a_restart_goes_through_the_router(browser, tmp_path):
    with streamlit_server(tmp_path / "evalboard.db", tmp_path / "streamlit.log") as url:
        context = browser.new_context(viewport=VIEWPORT)
        try:
            page = context.new_page()
            page.goto(f"{url}/data")
            expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible(timeout=WAIT_MS)
            expect(page.get_by_text("The store is empty")).to_be_visible(timeout=WAIT_MS)
            expect(page.get_by_role("button", name="Load the sample datasets")).to_be_visible()
            screenshot(page, "06_first_request_to_data")
            expect(page.get_by_test_id("stSidebar")).to_contain_text("No datasets yet", timeout=3_000)
            # the router's pages only: no helper module (pages/_shared.py …) listed as a page
            nav = page.get_by_test_id("stSidebarNav")
            expect(nav).to_contain_text("Rankings")
            expect(nav.get_by_role("link")).to_have_count(router_page_count())
            for helper in ("shared", "mapping", "uploads", "parts"):
                expect(nav).not_to_contain_text(helper)
        finally:
            context.close()


def test_f_several_lm_eval_files(page, tmp_path):
    paths = []
    for name, model, arc in [("small.json", "org/small", 0.4), ("large.json", "org/large", 0.7)]:
        path = tmp_path / name
        path.write_text(json.dumps({"results": {"arc": {"acc": arc, "acc_stderr": 0.01}},
                                    "config": {"model_args": f"pretrained={model}", "num_fewshot": 0}}))
        paths.append(path)
    page.get_by_text("Several files").click()
    page.locator('input[type="file"]').nth(1).set_input_files(paths)
    page.get_by_role("button", name="Validate and store these files").click()
    expect(page.get_by_text("stored 2 eval runs rows as dataset '2 lm-eval files'")).to_be_visible()
    expect(sidebar_picker(page)).to_have_value("2 lm-eval files · eval runs · 2 rows")
    screenshot(page, "07_lm_eval_files")
