"""core.store: one transaction per ingest, dedupe by content, list/load/delete, crash safety."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from core.io import load
from core.samples import arena_demo
from core.samples.demo import SAMPLES_DIR
from core.store import DatasetNotFound, Store, default_db_path
from tests.conftest import REPO, snapshot

ARENA = SAMPLES_DIR / "arena_demo.csv"
RUNS = SAMPLES_DIR / "evalruns_demo.csv"


@pytest.fixture
def arena_loaded():
    return load(ARENA)


def test_default_path_follows_environment(db_path):
    assert default_db_path() == db_path
    with Store() as store:
        assert store.path == db_path
    assert db_path.exists()


def test_wal_mode(store):
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_ingest_round_trip_and_listing(store, arena_loaded):
    result = store.ingest(arena_loaded, name="arena")
    assert result.created
    info = result.dataset
    assert (info.name, info.kind, info.rows) == ("arena", "votes", 20_000)
    assert info.sha256 == arena_loaded.sha256
    assert info.columns == tuple(arena_loaded.frame.columns)
    pd.testing.assert_frame_equal(store.load("arena"), arena_loaded.frame)
    pd.testing.assert_frame_equal(store.load(info.id), arena_loaded.frame)
    assert [d.name for d in store.datasets()] == ["arena"]


def test_load_selected_columns_keeps_categories(store, arena_loaded):
    info = store.ingest(arena_loaded).dataset
    part = store.load(info.id, ["model_a", "model_b", "winner"])
    assert list(part.columns) == ["model_a", "model_b", "winner"]
    assert list(part["model_a"].cat.categories) == list(part["model_b"].cat.categories)
    assert list(part["model_a"].cat.categories) == sorted(part["model_a"].cat.categories)
    pd.testing.assert_frame_equal(part, arena_loaded.frame[["model_a", "model_b", "winner"]])
    with pytest.raises(KeyError, match="no column nonexistent"):
        store.load(info.id, ["model_a", "nonexistent"])


def test_same_file_twice_is_reported_not_duplicated(store, arena_loaded):
    first = store.ingest(arena_loaded)
    before = snapshot(store.path)
    again = store.ingest(load(ARENA), name="another name")
    assert not again.created
    assert again.dataset.id == first.dataset.id
    assert "already stored" in again.summary()
    assert snapshot(store.path) == before


def test_same_file_read_differently_is_a_new_dataset(store, tmp_path):
    path = tmp_path / "votes.csv"
    path.write_text("model_a,model_b,winner\nx,y,a\ny,x,b\n")
    plain = store.ingest(load(path))
    remapped = store.ingest(load(path, outcomes={"a": "model_b", "b": "model_a"}))
    assert plain.created and remapped.created
    assert list(store.load(remapped.dataset.id)["winner"]) == ["model_b", "model_a"]


def test_names_are_made_unique(store, tmp_path):
    for i in range(3):
        path = tmp_path / f"run{i}" / "votes.csv"
        path.parent.mkdir()
        path.write_text(f"model_a,model_b,winner\nx,y,a\nx,z{i},b\n")
        store.ingest(load(path))
    assert [d.name for d in store.datasets()] == ["votes", "votes (2)", "votes (3)"]


def test_delete_removes_every_row(store, arena_loaded):
    keep = store.ingest(load(RUNS)).dataset
    gone = store.ingest(arena_loaded).dataset
    store.delete(gone.name)
    with pytest.raises(DatasetNotFound):
        store.dataset(gone.id)
    for table in ("votes", "labels"):
        assert store.db.execute(f"SELECT COUNT(*) FROM {table} WHERE dataset_id = ?", [gone.id]).fetchone()[0] == 0
    assert store.load(keep.id).shape == (36, 6)


def test_unknown_dataset(store):
    with pytest.raises(DatasetNotFound, match="no dataset named or numbered 'missing'"):
        store.load("missing")


def test_labeled_view_shows_names(store, arena_loaded):
    info = store.ingest(arena_loaded).dataset
    row = store.db.execute("SELECT model_a, model_b, winner, timestamp FROM votes_labeled WHERE dataset_id = ? "
                           "ORDER BY row LIMIT 1", [info.id]).fetchone()
    first = arena_loaded.frame.iloc[0]
    assert row[:3] == (first["model_a"], first["model_b"], first["winner"])
    assert pd.Timestamp(row[3]) == first["timestamp"]


def test_missing_values_round_trip(store, tmp_path):
    path = tmp_path / "gaps.csv"
    path.write_text("model_a,model_b,winner,annotator_id,timestamp,response_time_s,category\n"
                    "x,y,a,u1,2026-01-01T00:00:00Z,3.5,math\n"
                    "y,x,tie,,,,\n")
    loaded = load(path)
    back = store.load(store.ingest(loaded).dataset.id)
    pd.testing.assert_frame_equal(back, loaded.frame)
    assert back["annotator_id"].isna().tolist() == [False, True]
    assert back["timestamp"].isna().tolist() == [False, True]


def test_failed_ingest_rolls_back(store, arena_loaded):
    store.ingest(load(RUNS))
    before = snapshot(store.path)

    def explode(done, total):
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        store.ingest(arena_loaded, progress=explode)
    assert snapshot(store.path) == before
    assert store.ingest(arena_loaded).created  # the store is still usable


def test_killed_ingest_leaves_store_as_before(db_path):
    """SIGKILL a process midway through its insert: the next opener sees the store exactly as before."""
    with Store(db_path) as store:
        store.ingest(load(RUNS))
    before = snapshot(db_path)
    script = textwrap.dedent(f"""
        import os, signal
        import core.store.database
        from core.io import load
        core.store.database.CHUNK_ROWS = 1000  # many chunks, so the kill lands between two of them
        store = core.store.Store({str(db_path)!r})
        def die(done, total):
            if done >= 5000:
                print("killing at", done, flush=True)
                os.kill(os.getpid(), signal.SIGKILL)
        store.ingest(load({str(ARENA)!r}), progress=die)
        print("not killed")
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == -9, proc.stderr
    assert "killing at 5000" in proc.stdout
    # The killed writer left rows in the WAL file, uncommitted: a new connection must not see them.
    assert snapshot(db_path) == before
    con = sqlite3.connect(db_path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    with Store(db_path) as store:
        assert store.ingest(load(ARENA)).dataset.rows == 20_000


def test_large_ingest_in_chunks_reports_progress(store):
    frame = arena_demo(250_000, 20, seed=3)
    from core.io import Loaded
    from core.io.votes import votes_from_frame

    canonical, notes = votes_from_frame(frame, "generated")
    seen = []
    store.ingest(Loaded("votes", canonical, "generated", "sha-generated", tuple(notes)),
                 progress=lambda done, total: seen.append((done, total)))
    assert seen == [(100_000, 250_000), (200_000, 250_000), (250_000, 250_000)]
    back = store.load("generated", ["model_a", "winner", "timestamp"])
    pd.testing.assert_frame_equal(back, canonical[["model_a", "winner", "timestamp"]])


@pytest.mark.parametrize("sample", [ARENA, RUNS])
def test_limit_reads_the_first_rows(store, sample):
    loaded = load(sample)
    info = store.ingest(loaded).dataset
    head = store.load(info.id, limit=7)
    pd.testing.assert_frame_equal(head, loaded.frame.head(7))
    assert len(store.load(info.id, limit=10**9)) == info.rows
    assert len(store.load(info.id, ["model_a"] if info.kind == "votes" else ["score"], limit=0)) == 0
