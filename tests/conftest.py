"""Shared fixtures: a throw-away store per test, the optional real datasets in ../shared/data, and the
Hypothesis profiles."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from hypothesis import settings

from core.store import Store

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

# How many examples each property test tries. `dev` (make test) is quick to iterate with: at most 25, also
# for tests that ask for more in their own @settings. `ci` (.ci/run) runs every test as it is written: its
# own @settings (up to 300) or Hypothesis' default of 100. HYPOTHESIS_PROFILE picks one; dev when unset.
settings.register_profile("dev", max_examples=25)
settings.register_profile("ci", max_examples=100)
EXAMPLE_CAPS = {"dev": 25, "ci": 300}  # the most examples a test may try under each profile
HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "dev")
if HYPOTHESIS_PROFILE not in EXAMPLE_CAPS:
    raise pytest.UsageError(f"HYPOTHESIS_PROFILE={HYPOTHESIS_PROFILE!r}: use one of {', '.join(EXAMPLE_CAPS)}")
settings.load_profile(HYPOTHESIS_PROFILE)
EXAMPLE_CAP = EXAMPLE_CAPS[HYPOTHESIS_PROFILE]


def cap_examples(test, cap: int) -> None:
    """Lower a @given test's max_examples to ``cap`` (its other settings kept). Hypothesis lets a test's
    own @settings win over the loaded profile and has no public way to cap them, so this replaces the
    settings Hypothesis keeps on the test; it fails loudly if Hypothesis stops keeping them there."""
    if not getattr(test, "is_hypothesis_test", False):
        return
    chosen = getattr(test, "_hypothesis_internal_use_settings", None)
    if not isinstance(chosen, settings):
        raise RuntimeError(f"Hypothesis no longer keeps a test's settings where cap_examples looks ({test!r}): "
                           "update tests/conftest.py::cap_examples")
    if chosen.max_examples > cap:
        test._hypothesis_internal_use_settings = settings(chosen, max_examples=cap)


def pytest_collection_modifyitems(items):
    for item in items:
        cap_examples(getattr(item, "obj", None), EXAMPLE_CAP)


@pytest.fixture
def db_path(tmp_path, monkeypatch) -> Path:
    """A fresh SQLite file, also made the default store (EVALBOARD_DB) for code that opens its own."""
    path = tmp_path / "evalboard.db"
    monkeypatch.setenv("EVALBOARD_DB", str(path))
    return path


@pytest.fixture
def store(db_path):
    with Store(db_path) as s:
        yield s


def snapshot(path: Path) -> dict[str, list[tuple]]:
    """Every row of every table, to prove that a rejected or interrupted ingest changed nothing."""
    con = sqlite3.connect(path)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: sorted(con.execute(f"SELECT * FROM [{t}]").fetchall(), key=repr) for t in tables}
    finally:
        con.close()


def shared_file(relative: str) -> Path:
    """A file under ../shared/data, or skip the test when that folder is not there."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"real dataset not available: {path}")
    return path
