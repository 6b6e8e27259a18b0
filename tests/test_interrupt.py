"""Ctrl-C during a command: exit status 130, one line on stderr, and an ingest under way leaves the store
exactly as it was (its transaction is rolled back)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.io import load
from core.samples import write_arena_csv
from core.store import Store
from tests.conftest import snapshot

EVALBOARD = [sys.executable, "-m", "core.cli"]
REPO = Path(__file__).resolve().parents[1]


def start(args: list[str], db: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([*EVALBOARD, *args, "--db", str(db)], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def interrupt(proc: subprocess.Popen) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """Votes enough that storing them takes a while (and fills the write-ahead log past 4 MB)."""
    return write_arena_csv(tmp_path_factory.mktemp("interrupt") / "big.csv", 500_000, seed=2)


def test_ctrl_c_while_storing_rolls_back_and_exits_130(tmp_path, big):
    db = tmp_path / "store.db"
    small = write_arena_csv(tmp_path / "small.csv", 50, seed=1)
    with Store(db) as store:
        store.ingest(load(small))
    before = snapshot(db)
    wal = Path(str(db) + "-wal")
    proc = start(["ingest", str(big)], db)
    deadline = time.monotonic() + 300
    # Rows spill into the write-ahead log before COMMIT once the page cache is full: a log of several MB
    # means the ingest is inside its transaction.
    while proc.poll() is None and time.monotonic() < deadline:
        if wal.exists() and wal.stat().st_size > 4 * 2**20:
            break
        time.sleep(0.02)
    if proc.poll() is not None:
        pytest.fail(f"the ingest ended before it could be interrupted: {proc.communicate()}")
    code, err = interrupt(proc)
    assert code == 130, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "interrupted" in err
    assert snapshot(db) == before
    with Store(db) as store:  # the store still opens and takes the next ingest
        assert [d.rows for d in store.datasets()] == [50]


def test_ctrl_c_while_loading_exits_130_without_a_traceback(tmp_path, big):
    db = tmp_path / "store.db"
    proc = start(["ingest", str(big)], db)
    time.sleep(2.0)  # past the interpreter's own start-up (the modules, reading and checks take longer)
    # whenever the signal lands (importing modules, reading, validating), the answer is one line and 130
    if proc.poll() is not None:
        pytest.skip("the ingest finished before the signal")
    code, err = interrupt(proc)
    assert code == 130, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
