"""The Judge page in a real browser when a model has no answer lengths: its LC cell reads "—" (not "None"), the
caption says why; screenshot tests/artifacts/judge_missing_lc.png."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.io import load
from core.samples.judge import judge_demo
from core.store import Store
from tests.browser_support import (
    by_key,
    choose_dataset,
    chromium,
    expect,
    go,
    grid_cell,
    grid_cells,
    new_page,
    screenshot,
    streamlit_server,
    wait_idle,
)

pytestmark = pytest.mark.browser
SLOW_MS = 180_000


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("judge_missing_lc")
    path = folder / "no_lengths.csv"
    frame = judge_demo(n_prompts=40, seed=1)
    frame.loc[frame["model"] == "nimbus-1b", "len_model"] = None
    frame.to_csv(path, index=False)
    with Store(folder / "evalboard.db") as store:
        store.ingest(load(path), name="no_lengths")
    with streamlit_server(folder / "evalboard.db", folder / "streamlit.log") as url:
        yield url


def test_the_lc_cell_of_a_model_without_lengths(server):
    with chromium() as browser, new_page(browser, server) as page:
        choose_dataset(page, "no_lengths · preferences · 320 rows")
        go(page, "Judge")
        expect(by_key(page, "judge_scatter")).to_be_visible(timeout=SLOW_MS)
        wait_idle(page, SLOW_MS)
        expect(grid_cell(page, 0, "—").first).to_be_attached()
        cells = grid_cells(page, 0)
        assert "None" not in cells and "gpt-base" in cells
        page.get_by_test_id("stDataFrame").nth(0).scroll_into_view_if_needed()
        expect(page.get_by_text("no length-controlled win rate for")).to_be_visible()
        screenshot(page, "judge_missing_lc")
