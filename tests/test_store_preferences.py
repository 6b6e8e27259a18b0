"""Judged preferences in the store: the ``preferences`` table holds the normalised frame of core.io.preferences
(docs/design.md "Inputs") and gives it back exactly; listing, duplicates and deletion work as for every kind."""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

from core.cli import main
from core.io import Loaded, content_fingerprint, load
from core.samples.files import SAMPLES_DIR
from core.store import Store
from core.store.tables import PREFERENCE_SQL_TYPES, TABLE_OF_KIND
from tests.conftest import shared_file


def preferences_frame(rows: int = 12, seed: int = 0, *, with_optional: bool = True) -> pd.DataFrame:
    """A normalised preferences frame as core.io.preferences makes it (docs: J contract columns)."""
    rng = np.random.default_rng(seed)
    models = np.array(["alpha", "beta", "gamma"])[np.arange(rows) % 3]
    frame = pd.DataFrame({"model": pd.array(models, dtype="str"),
                          "baseline": pd.array(["base"] * rows, dtype="str"),
                          "query_id": pd.array([str(i // 3) for i in range(rows)], dtype="str"),
                          "preference": rng.uniform(0, 1, rows).round(6)})
    if with_optional:
        frame["category"] = pd.array(np.where(np.arange(rows) % 2 == 0, "coding", "chat"), dtype="str")
        frame["len_model"] = rng.integers(10, 3000, rows).astype(np.float64)
        frame["len_baseline"] = rng.integers(10, 3000, rows).astype(np.float64)
        frame.loc[1, "len_model"] = np.nan  # a missing length stays missing
        frame["judge"] = pd.array(["gpt4"] * rows, dtype="str")
    return frame


def loaded(frame: pd.DataFrame, source: str = "prefs.csv") -> Loaded:
    return Loaded("preferences", frame, source, content_fingerprint("preferences", frame))


def test_kind_has_its_own_table_with_every_contract_column():
    assert TABLE_OF_KIND["preferences"] == "preferences"
    assert list(PREFERENCE_SQL_TYPES) == ["model", "baseline", "query_id", "preference", "category", "len_model",
                                          "len_baseline", "judge"]


def test_every_store_file_has_the_table(db_path):
    Store(db_path).close()
    con = sqlite3.connect(db_path)
    try:
        columns = [r[1] for r in con.execute("PRAGMA table_info(preferences)")]
    finally:
        con.close()
    assert columns == ["dataset_id", "row", *PREFERENCE_SQL_TYPES]


@pytest.mark.parametrize("with_optional", [True, False])
def test_round_trip_gives_the_frame_back_exactly(store, with_optional):
    frame = preferences_frame(with_optional=with_optional)
    result = store.ingest(loaded(frame), name="judged")
    assert result.created and result.dataset.kind == "preferences" and result.dataset.rows == len(frame)
    assert result.dataset.columns == tuple(frame.columns)
    back = store.load("judged")
    pdt.assert_frame_equal(back, frame)
    assert store.load("judged", limit=5).equals(frame.head(5))
    assert store.load("judged", columns=["model", "preference"]).equals(frame[["model", "preference"]])
    assert "1 model" not in result.summary() and "preferences rows" in result.summary()


def test_listed_deduplicated_and_deleted(store):
    first = store.ingest(loaded(preferences_frame()), name="judged")
    again = store.ingest(loaded(preferences_frame()), name="judged again")
    assert not again.created and again.dataset.id == first.dataset.id
    assert [(d.name, d.kind) for d in store.datasets()] == [("judged", "preferences")]
    store.delete("judged")
    assert store.datasets() == []
    assert store.db.execute("SELECT COUNT(*) FROM preferences").fetchone()[0] == 0


def test_replace_keeps_the_id(store):
    first = store.ingest(loaded(preferences_frame(seed=0)), name="judged")
    newer = preferences_frame(rows=6, seed=1)
    result = store.ingest(loaded(newer), name="judged", replace=first.dataset.id)
    assert result.created and result.dataset.id == first.dataset.id
    pdt.assert_frame_equal(store.load(first.dataset.id), newer)


@pytest.mark.parametrize("name", ["judge_demo.csv"])
def test_read_file_round_trip_and_listing(store, name):
    """Through core.io's reader: what ``evalboard ingest`` stores is what a load gives back."""
    read = load(SAMPLES_DIR / name)
    assert read.kind == "preferences"
    result = store.ingest(read, name="demo")
    assert result.summary() == "stored 960 preferences rows as dataset 'demo' (id 1)"
    pdt.assert_frame_equal(store.load("demo"), read.frame)
    assert store.ingest(load(SAMPLES_DIR / name), name="again").created is False


def test_real_file_through_the_reader(store):
    read = load(shared_file("alpaca_eval_annotations/preferences.csv"))
    store.ingest(read, name="alpaca")
    pdt.assert_frame_equal(store.load("alpaca"), read.frame)


def test_real_alpaca_eval_preferences_round_trip(store):
    raw = pd.read_csv(shared_file("alpaca_eval_annotations/preferences.csv"))
    frame = pd.DataFrame({"model": pd.array(raw["model"].astype(str), dtype="str"),
                          "baseline": pd.array(raw["baseline"].astype(str), dtype="str"),
                          "query_id": pd.array(raw["instruction_id"].astype(str), dtype="str"),
                          "preference": raw["score"].to_numpy(dtype=np.float64),
                          "category": pd.array(raw["dataset"].astype(str), dtype="str"),
                          "len_model": raw["len_model_chars"].to_numpy(dtype=np.float64),
                          "len_baseline": raw["len_baseline_chars"].to_numpy(dtype=np.float64)})
    store.ingest(loaded(frame, "preferences.csv"), name="alpaca")
    pdt.assert_frame_equal(store.load("alpaca"), frame)
    pdt.assert_frame_equal(store.load("alpaca"), frame)  # the second load reads the columnar snapshot


def test_cli_ingest_datasets_delete(tmp_path, capsys):
    db = str(tmp_path / "cli.db")
    assert main(["ingest", str(SAMPLES_DIR / "judge_demo.csv"), "--db", db]) == 0
    assert "stored 960 preferences rows as dataset 'judge_demo'" in capsys.readouterr().out
    assert main(["datasets", "--db", db]) == 0
    listing = capsys.readouterr().out
    assert "preferences" in listing and "judge_demo" in listing
    assert main(["delete", "judge_demo", "--db", db]) == 0
    with Store(db) as store:
        assert store.datasets() == []
        assert store.db.execute("SELECT COUNT(*) FROM preferences").fetchone()[0] == 0
