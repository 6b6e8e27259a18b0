"""The Eval set page in a real browser (Debian Chromium through Playwright): demo pool, preparation,
category step, selection and audit render without a traceback. The page is served through a router
written to tmp_path (Data default, Eval set added), as the tests/test_app_* router tests do."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_browser import (
    ARTIFACTS,
    CHROMIUM,
    LAUNCH_ARGS,
    STARTUP_S,
    VIEWPORT,
    _free_port,
)

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
ROUTER = '''
import sys
sys.path.insert(0, {repo!r})
import streamlit as st

st.set_page_config(page_title="EvalBoard", layout="wide")
st.navigation([st.Page({data!r}, title="Data", url_path="data", default=True),
               st.Page({page!r}, title="Eval set", url_path="evalset")]).run()
'''
WAIT_MS = 120_000  # preparation of the demo pool on a busy 2-core machine


@contextlib.contextmanager
def router_server(folder: Path) -> Iterator[str]:
    router = folder / "router.py"
    router.write_text(ROUTER.format(repo=str(REPO), data=str(REPO / "pages" / "data.py"),
                                    page=str(REPO / "pages" / "evalset.py")))
    port = _free_port()
    log = folder / "streamlit.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(router), "--server.address", "127.0.0.1",
             "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            cwd=REPO, env={**os.environ, "EVALBOARD_DB": str(folder / "evalboard.db")}, stdout=out,
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
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def test_demo_pool_to_reviewed_selection_in_a_browser(tmp_path):
    expect = sync_api.expect
    with router_server(tmp_path) as url, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(f"{url}/evalset")
            expect(page.get_by_role("heading", name="Eval set", exact=True)).to_be_visible()
            page.get_by_role("button", name="Use the demo pool").click()
            expect(page.get_by_text("Pool: 2,000 queries")).to_be_visible()
            page.get_by_role("button", name="Prepare: dedup, filter, categorise").click()
            expect(page.get_by_role("heading", name="2 · Categories")).to_be_visible()
            page.get_by_role("button", name="Select the eval set").click()
            expect(page.get_by_role("heading", name="3 · Review")).to_be_visible()
            expect(page.get_by_text("Automatic checks passed")).to_be_visible()
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=ARTIFACTS / "evalset_review.png")
            assert page.get_by_text("Traceback").count() == 0
            assert page.get_by_test_id("stException").count() == 0
        finally:
            browser.close()
