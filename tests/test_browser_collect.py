"""The Collect page in a real browser: a run started in one tab goes on after the tab is closed; another tab
sees its progress move on its own (the page refreshes it from the store) and stops it."""

from __future__ import annotations

import re
from contextlib import closing

import pytest

from core.collect import jobs
from core.store.connection import connect
from tests.browser_support import by_key, chromium, expect, new_page, screenshot, serve, upload_files, wait_idle
from tests.fake_openai import FakeOpenAI
from tests.test_collect import stored
from tests.test_collect_jobs import no_process_left  # noqa: F401 - a fixture

pytestmark = pytest.mark.browser
QUERIES = 20


def test_a_run_outlives_its_tab_and_another_tab_follows_and_stops_it(tmp_path, db_path, no_process_left):
    with FakeOpenAI(latency_s=1.0) as server, chromium() as browser, \
            serve(db_path, tmp_path / "streamlit.log") as (url, _):
        models = tmp_path / "models.toml"
        models.write_text("".join(f'[[models]]\nname = "m{i}"\nprovider = "local"\nbase_url = "{server.base_url}"\n'
                                  f'model = "m{i}-id"\nconcurrency = 1\n' for i in range(2)))
        queries = tmp_path / "evalset.csv"
        queries.write_text("query_id,prompt\n" + "".join(f"q{i},question {i}\n" for i in range(QUERIES)))
        with new_page(browser, f"{url}/collect") as first:
            upload_files(first, "collect_models_upload", [models], then=by_key(first, "collect_queries_upload"))
            upload_files(first, "collect_queries_upload", [queries], then=by_key(first, "collect_start"))
            by_key(first, "collect_start").get_by_role("button").click()
            expect(first.get_by_role("heading", name="Being collected now")).to_be_visible()
        # the tab is closed; the run goes on
        with new_page(browser, f"{url}/collect") as second:
            expect(second.get_by_role("heading", name="Being collected now")).to_be_visible()
            bar = second.get_by_text(re.compile(rf"^\d+ of {2 * QUERIES} answers"))
            expect(bar).to_be_visible()
            before = int(bar.inner_text().split()[0])
            # no click: the page redraws the progress from the store by itself
            expect(second.get_by_text(re.compile(rf"^(?!{before} of)\d+ of {2 * QUERIES} answers"))).to_be_visible()
            screenshot(second, "collect_background_job")
            stop = second.get_by_role("button", name="Stop", exact=True)
            stop.click()
            expect(second.get_by_text(re.compile(r"Last background job .*: interrupted"))).to_be_visible()
            wait_idle(second)
            expect(second.get_by_role("heading", name="Being collected now")).to_have_count(0)
            screenshot(second, "collect_stopped")
        with closing(connect(db_path)) as con:
            job = jobs.latest_job(con, "collection-1")
        assert (job.status, job.exit_code) == ("interrupted", 130)
        assert 0 < len(stored(db_path)) == len(server.requests) < 2 * QUERIES
