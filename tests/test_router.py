"""Every page runs inside the router (app.py), also when Streamlit runs the page file by itself.

A fresh server's first request for a page's URL, and every AppTest run, start in Streamlit's older
pages-folder mode (a pages/ folder sits next to app.py): Streamlit runs the page file without app.py.
``pages._shared.through_router`` then runs app.py around the page in the same run. The first real request
is checked in Chromium (tests/test_browser.py::test_first_request_to_data_after_a_restart_goes_through_the_router).
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from pages._shared import routed, through_router
from tests.app_pages import APP, REPO
from tests.test_app_data import run, texts

CAPTION = "EvalBoard — rankings you can defend"  # app.py's sidebar


def test_a_page_is_drawn_once_with_the_routers_sidebar(db_path):
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page(str(REPO / "pages" / "rankings.py"))
    run(at)
    assert texts(at.title) == ["Rankings"]
    assert CAPTION in [c.value for c in at.sidebar.caption]
    assert [s.key for s in at.sidebar.selectbox] == [] and "No datasets yet" in texts(at.sidebar.info)[0]


def test_the_click_of_a_run_without_the_router_is_kept(db_path):
    """No rerun: the button press reaches the page. Asked for by its URL (not the default page), the Data
    page file is what Streamlit runs first in every AppTest run."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page(str(REPO / "pages" / "data.py"))
    run(at)
    at.button(key="load_samples").click()
    run(at)
    assert any("stored 20,000 votes rows as dataset 'arena_demo'" in t for t in texts(at.main.success))
    assert CAPTION in [c.value for c in at.sidebar.caption]


def test_inside_the_router_a_page_goes_on():
    with routed():
        assert through_router() is None  # returns: no router run, no stop
