"""Open one page of the real router (app.py) in AppTest, with a dataset active and widget state preset.

Use with the ``app_router`` fixture (tests/conftest.py style: request it in the test module):

    at = open_page("bias", samples["arena_demo"], bias_alpha=0.01)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.samples.demo import ensure_samples
from core.store import Store
from tests.test_app_data import run

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")


@pytest.fixture
def app_router(db_path) -> str:
    return APP


@pytest.fixture
def samples(db_path) -> dict[str, int]:
    with Store(db_path) as store:
        ensure_samples(store)
        return {d.name: d.id for d in store.datasets()}


def open_page(page: str, active: int | None = None, **state) -> AppTest:
    """Run app.py switched to pages/<page>.py; ``state`` presets session keys (widget values)."""
    at = AppTest.from_file(APP, default_timeout=120)
    if active is not None:
        at.session_state["active_dataset"] = active
    for key, value in state.items():
        at.session_state[key] = value
    at.switch_page(str(REPO / "pages" / f"{page}.py"))
    return run(at)
