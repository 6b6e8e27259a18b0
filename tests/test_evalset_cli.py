"""``evalboard evalset`` on the offline path (no model configured): files, store, audit, exit codes."""

from __future__ import annotations

import io
import itertools
import json
import sqlite3

import pandas as pd
import pytest

from core.cli import main
from core.collect.queries import load_queries
from core.evalset.demo_pool import demo_pool
from core.evalset.store import load, load_reserves
from tests.conftest import snapshot


@pytest.fixture
def pool_file(tmp_path):
    path = tmp_path / "pool.csv"
    demo_pool(600, seed=2).to_csv(path, index=False)
    return path


def test_offline_build_writes_the_set_the_audit_and_stores_it(pool_file, tmp_path, db_path, capsys):
    out = tmp_path / "out" / "set.csv"
    assert main(["evalset", "build", str(pool_file), "--size", "25", "--output", str(out), "--seed", "3"]) == 0
    printed = capsys.readouterr().out
    assert "stored as eval set 'set'" in printed
    table = pd.read_csv(out)
    assert list(table.columns[:3]) == ["query_id", "prompt", "category"]
    assert len(table) == 25 and table["query_id"].is_unique  # exactly --size (it used to be up to size + 2)
    spare = pd.read_csv(tmp_path / "out" / "set.reserves.csv")
    assert len(spare) == 2 and set(spare["reason"]) == {"reserve"}
    assert not set(spare["query_id"]) & set(table["query_id"])
    assert "and 2 reserves" in printed
    assert len(load_queries(out)) == len(table)
    audit = json.loads((tmp_path / "out" / "set.audit.json").read_text())
    assert audit["settings"]["model"] == "none (offline path)"
    stages = {s["stage"]: s for s in audit["stages"]}
    assert stages["relevance"]["method"] == "skipped" and stages["scoring"]["method"] == "heuristic"
    assert stages["exact dedup"]["dropped"]["exact_duplicate"] > 0
    # in/out counts chain from one stage to the next, and every drop has a reason
    chain = [s for s in audit["stages"] if s["stage"] not in ("exclusion suggestions", "selection")]
    for prev, nxt in itertools.pairwise(chain):
        assert nxt["in"] == prev["out"]
    for s in chain:
        assert s["in"] - s["out"] == sum(s["dropped"].values())
    assert all(v == "passed" for v in audit["checks"].values())
    assert "| exact dedup |" in (tmp_path / "out" / "set.audit.md").read_text()
    drops = pd.read_csv(tmp_path / "out" / "set.drops.csv")
    assert len(drops) + stages["selection"]["in"] == 600
    info, stored = load("set", db_path)
    assert info.size == len(table) and stored["query_id"].tolist() == table["query_id"].astype(str).tolist()
    assert load_reserves("set", db_path)["query_id"].tolist() == spare["query_id"].astype(str).tolist()
    assert main(["evalset", "show", "set", "--reserves", "--format", "csv"]) == 0
    assert pd.read_csv(io.StringIO(capsys.readouterr().out))["query_id"].tolist() == spare["query_id"].tolist()
    assert main(["evalset", "show", "set"]) == 0
    assert table["query_id"].iloc[0] in capsys.readouterr().out
    assert main(["evalset", "list"]) == 0
    assert "set" in capsys.readouterr().out


def test_same_seed_same_set(pool_file, tmp_path, db_path):
    for name in ("a", "b"):
        assert main(["evalset", "build", str(pool_file), "--size", "15",
                     "--output", str(tmp_path / f"{name}.jsonl")]) == 0
    a = (tmp_path / "a.jsonl").read_text().splitlines()
    b = (tmp_path / "b.jsonl").read_text().splitlines()
    assert a == b and len(a) >= 15


def test_given_categories_and_exclusion(tmp_path, db_path):
    pool = tmp_path / "pool.jsonl"
    rows = [{"id": f"r{i}", "prompt": p} for i, p in enumerate(
        [f"Best cooking method for {x} at home without an oven?" for x in ("rice", "fish", "eggs", "tofu")]
        + [f"Plan my travel to {x} for three days with kids" for x in ("Rome", "Oslo", "Lima", "Kyiv")]
        + ["Tell me something about the stock market today"])]
    pool.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "set.csv"
    assert main(["evalset", "build", str(pool), "--size", "4", "--output", str(out), "--categories",
                 "Cooking,Travel", "--exclude", "travel"]) == 0
    table = pd.read_csv(out)
    assert set(table["category"]) <= {"Cooking", "Other"}
    audit = json.loads((tmp_path / "set.audit.json").read_text())
    excl = next(s for s in audit["stages"] if s["stage"] == "category exclusion")
    assert excl["dropped"] == {"excluded": 4}


@pytest.mark.parametrize("args, message", [
    (["--size", "0"], "--size must be a positive integer"),
    (["--size", "5", "--exclude", "Nonexistent"], "cannot exclude unknown categories: Nonexistent"),
    (["--size", "5", "--model", "m"], "both --base-url and --model"),
    (["--size", "5", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--api-key-env", "EVALSET_NO_SUCH_KEY"],
     "EVALSET_NO_SUCH_KEY"),
    (["--size", "5", "--slice", "magic=0.5"], "--slice 'magic=0.5'"),
])
def test_invalid_options_exit_2_and_store_nothing(pool_file, tmp_path, db_path, capsys, args, message):
    out = tmp_path / "set.csv"
    assert main(["evalset", "build", str(pool_file), "--output", str(out), *args]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
    if db_path.exists():
        assert not snapshot(db_path).get("evalset_sets")


def test_bad_pool_exits_2_naming_rows_and_columns(tmp_path, db_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("query_id,query\nx,How do I cook rice well?\nx,\n")
    assert main(["evalset", "build", str(bad), "--size", "3", "--output", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert "'query_id'" in err and "'query'" in err and "2 (" in err


def test_a_stored_name_is_not_overwritten_without_replace(pool_file, tmp_path, db_path, capsys):
    out = tmp_path / "set.csv"
    assert main(["evalset", "build", str(pool_file), "--size", "5", "--output", str(out)]) == 0
    first = out.read_text()
    assert main(["evalset", "build", str(pool_file), "--size", "7", "--output", str(out)]) == 2
    assert "already stored" in capsys.readouterr().err
    assert out.read_text() == first
    assert main(["evalset", "build", str(pool_file), "--size", "7", "--output", str(out), "--replace"]) == 0
    con = sqlite3.connect(db_path)
    assert con.execute("SELECT COUNT(*) FROM evalset_sets").fetchone()[0] == 1
    assert con.execute("SELECT COUNT(*) FROM evalset_items").fetchone()[0] >= 7
    assert {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
            if r[0].startswith("evalset")} == {"evalset_sets", "evalset_items", "evalset_audit"}


def test_show_unknown_exits_2(db_path, capsys):
    assert main(["evalset", "show", "nope"]) == 2
    assert "no stored eval set named 'nope'" in capsys.readouterr().err


def test_a_pool_of_junk_gives_an_empty_set_and_says_so(tmp_path, db_path, capsys):
    pool = tmp_path / "junk.txt"
    pool.write_text("hi\nok\n🙂🙂🙂🙂🙂🙂🙂\n", encoding="utf-8")
    out = tmp_path / "set.csv"
    assert main(["evalset", "build", str(pool), "--size", "3", "--output", str(out)]) == 0
    assert "only 0 eligible queries for 3 places" in capsys.readouterr().out
    assert pd.read_csv(out).empty
    audit = json.loads((tmp_path / "set.audit.json").read_text())
    prefilter = next(s for s in audit["stages"] if s["stage"] == "pre-filter")
    assert prefilter["dropped"] == {"too_short": 2, "unreadable": 1}
