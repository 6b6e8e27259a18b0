"""What the browser tests share: Debian's Chromium driven by Playwright against a real ``streamlit run``.

Every wait is on the app's state, never on time. Streamlit marks its root element with the script's run
state (``data-test-script-state``: ``running`` while a script run draws, ``notRunning`` once it is done)
and the connection state; :func:`wait_idle` waits for a finished run on a live connection, and
:func:`act` does something, waits for what it must produce, then for the run to end. Playwright's
``expect`` polls until a generous upper bound (:data:`WAIT_MS`), which only a broken app reaches.
Widgets are found by their key (Streamlit gives each keyed widget the class ``st-key-<key>``), never by
their position on the page. Importing this module skips the importing test module when
``/usr/bin/chromium`` or Playwright is missing.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is not installed (make test installs it as root; else apt-get install chromium)",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
expect, sync_playwright = sync_api.expect, sync_api.sync_playwright
PlaywrightTimeout = sync_api.TimeoutError

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
STARTUP_S = 180  # upper bound for a server to answer /_stcore/health on a loaded machine
WAIT_MS = 120_000  # upper bound for anything a script run has to produce on a loaded 2-core machine
VIEWPORT = {"width": 1400, "height": 1800}  # tall: Streamlit scrolls inside the page, full_page does not help

# Every expect() without its own timeout polls up to WAIT_MS (Playwright's default is 5 s).
expect.set_options(timeout=WAIT_MS)

IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return app !== null && app.getAttribute('data-test-script-state') === 'notRunning'
    && app.getAttribute('data-test-connection-state') === 'CONNECTED';
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_free_port = free_port  # the name older test modules import


@contextlib.contextmanager
def serve(db: Path, log: Path, script: str | Path = "app.py", port: int | None = None,
          env: dict[str, str] | None = None) -> Iterator[tuple[str, subprocess.Popen]]:
    """``streamlit run SCRIPT`` on 127.0.0.1 (a free port unless given) with its own store; yields
    (URL, process) once /_stcore/health says ok, and stops the process at the end unless the caller
    already did (a test may kill it to simulate a crash)."""
    port = port or free_port()
    with log.open("a") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(script), "--server.address", "127.0.0.1",
             "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            cwd=REPO, env={**os.environ, "EVALBOARD_DB": str(db), **(env or {})}, stdout=out,
            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while not _healthy(url):
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit did not answer within {STARTUP_S} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)  # between two polls of the health endpoint
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as response:
            return response.read().decode().strip() == "ok"
    except OSError:
        return False


@contextlib.contextmanager
def streamlit_server(db: Path, log: Path) -> Iterator[str]:
    """``streamlit run app.py`` on a free port; yields its URL once /_stcore/health says ok."""
    with serve(db, log) as (url, _):
        yield url


@contextlib.contextmanager
def chromium() -> Iterator:
    """Debian's Chromium under Playwright (never a downloaded browser)."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def new_page(browser, url: str, **context_options) -> Iterator:
    """A new Streamlit session (its own browser context) at ``url``, once its first script run ended."""
    context = browser.new_context(viewport=VIEWPORT, **context_options)
    try:
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(url)
        wait_idle(page)
        yield page
    finally:
        context.close()


def wait_idle(page, timeout_ms: int = WAIT_MS) -> None:
    """Wait until the session's script run has ended (Streamlit's "running" indicator is gone) on a live
    connection, then fail on any exception element the run drew."""
    page.wait_for_function(IDLE_JS, timeout=timeout_ms)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def act(page, action: Callable[[], object], until, timeout_ms: int = WAIT_MS) -> None:
    """Do ``action`` (a click …), wait for ``until`` (a locator the run it starts draws) to be visible,
    then for that run to end. ``until`` proves the run happened: idle alone could be the state from
    before the click."""
    action()
    expect(until).to_be_visible(timeout=timeout_ms)
    wait_idle(page, timeout_ms)


def by_key(page, key: str):
    """The element of the widget with this Streamlit key."""
    return page.locator(f".st-key-{key}")


def upload_files(page, key: str, paths: Sequence[Path], then) -> None:
    """Choose files in the uploader with this key, wait until it lists them all and the run that sees
    them has drawn ``then`` (the control that uses the files) and ended."""
    uploader = by_key(page, key)
    uploader.locator('input[type="file"]').set_input_files(list(paths))
    # The chip shortens a long name and a long list is paged, but a chip's remove button carries the whole
    # name: any of the files listed proves the upload reached the uploader.
    names = "|".join(re.escape(path.name) for path in paths)
    expect(uploader.get_by_role("button", name=re.compile(f"^Remove ({names})$")).first).to_be_attached()
    expect(then).to_be_visible()
    wait_idle(page)


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"{name}.png")


def sidebar_picker(page):
    """The active-dataset selectbox; its shown choice is the combobox's value."""
    return page.get_by_test_id("stSidebar").get_by_role("combobox", name="Active dataset")


def choose_dataset(page, label: str) -> None:
    """Make the dataset shown as ``label`` (``name · kind · N rows``) the session's active one."""
    picker = sidebar_picker(page)
    if picker.input_value() == label:
        return
    picker.click()
    page.get_by_role("option", name=label, exact=True).click()
    expect(picker).to_have_value(label)
    wait_idle(page)


def go(page, title: str) -> None:
    """Open a page through the sidebar navigation and wait for its run to end."""
    act(page, lambda: page.get_by_test_id("stSidebarNav").get_by_role("link", name=title).click(),
        until=page.get_by_role("heading", name=title, exact=True))


def grid_cell(page, index: int, text: str):
    """Cells of the index-th st.dataframe whose whole text is ``text`` (the grid's fallback table sits
    inside the canvas, outside the accessibility tree, so get_by_role does not see it)."""
    cells = page.get_by_test_id("stDataFrame").nth(index).locator('[role="gridcell"]')
    return cells.filter(has_text=re.compile(f"^{re.escape(text)}$"))


def grid_cells(page, index: int) -> list[str]:
    """Text of the visible cells of the index-th st.dataframe."""
    return page.get_by_test_id("stDataFrame").nth(index).locator('[role="gridcell"]').all_text_contents()
