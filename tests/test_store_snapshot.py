"""Columnar snapshots of stored datasets: same frames as SQLite gives, written once, never stale."""

from __future__ import annotations

import pandas.testing as pdt
import pytest

from core.io import load
from core.samples.demo import ensure_samples
from core.store import snapshot


@pytest.fixture
def stored(store):
    ensure_samples(store)
    return store


def snapshots(store) -> list[str]:
    return sorted(p.name for p in snapshot.folder(store.path).glob("*.arrow"))


@pytest.mark.parametrize("name", ["arena_demo", "evalruns_demo", "judge_demo"])
def test_a_snapshot_loads_exactly_what_sqlite_loads(stored, name):
    info = stored.dataset(name)
    from_sqlite = stored._load_sqlite(info, list(info.columns), info.rows)
    first = stored.load(name)  # reads SQLite, writes the snapshot
    assert snapshots(stored) == [f"{info.id}-{info.sha256[:32]}.arrow"]
    second = stored.load(name)  # reads the snapshot
    pdt.assert_frame_equal(first, from_sqlite)
    pdt.assert_frame_equal(second, from_sqlite)
    subset = list(info.columns[::-2])
    pdt.assert_frame_equal(stored.load(name, subset), from_sqlite[subset])


def test_subsets_and_previews_do_not_write_a_snapshot(stored):
    stored.load("arena_demo", ["model_a", "winner"])
    stored.load("arena_demo", limit=10)
    assert snapshots(stored) == []


def test_delete_removes_the_snapshot_and_a_reused_id_never_reads_it(stored):
    info = stored.dataset("evalruns_demo")
    stored.load(info.id)
    stored.delete(info.id)
    assert snapshots(stored) == []
    other = stored.ingest(load(b"model_id,task_id,score\nm1,t1,0.5\nm2,t1,0.25\n", name="other.csv")).dataset
    frame = stored.load(other.id)
    assert list(frame["model_id"]) == ["m1", "m2"]


def test_a_damaged_snapshot_falls_back_to_sqlite_and_is_rewritten(stored):
    info = stored.dataset("arena_demo")
    good = stored.load(info.id)
    path = snapshot.path_for(stored.path, info.id, info.sha256)
    path.write_bytes(path.read_bytes()[:1000])  # truncated
    pdt.assert_frame_equal(stored.load(info.id), good)
    pdt.assert_frame_equal(snapshot.read(path, list(info.columns)), good)  # rewritten whole


def test_an_unwritable_folder_only_costs_speed(stored, monkeypatch):
    monkeypatch.setattr(snapshot, "folder", lambda db: stored.path / "not-a-folder")  # under a file: fails
    frame = stored.load("evalruns_demo")
    assert len(frame) == 36
