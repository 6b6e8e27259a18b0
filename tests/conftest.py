"""Shared fixtures: a throw-away store per test, and the optional real datasets in ../shared/data."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.store import Store

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


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
