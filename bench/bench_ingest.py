"""Ingest benchmark: a 1,000,000-vote CSV (every optional column) into SQLite, ready to analyse.

Prints medians over repeats and ratios against the common peer recipes measured in the same run:
pandas.read_csv + sqlite-utils ``insert_all`` (without and with ``db.atomic()``) and pandas
``DataFrame.to_sql``; then loading the stored votes back (all columns, and only the three that a
ranking needs). Run: ``.venv/bin/python bench/bench_ingest.py [--votes 1000000] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import sqlite_utils

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.io import load  # noqa: E402
from core.samples import write_arena_csv  # noqa: E402
from core.store import Store  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
# Without db.atomic() sqlite-utils commits every batch (100 rows): a full million takes minutes, so
# that recipe is timed on this many rows and scaled linearly (stated in the output).
NON_ATOMIC_ROWS = 100_000


def timed(fn, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def fresh_db(tmp: Path, name: str) -> Path:
    path = tmp / f"{name}-{time.perf_counter_ns()}.db"
    return path


def evalboard_ingest(csv: Path, tmp: Path) -> Path:
    path = fresh_db(tmp, "evalboard")
    with Store(path) as store:
        store.ingest(load(csv), name="bench")
    return path


def sqlite_utils_insert(csv: Path, tmp: Path, atomic: bool, rows: int | None = None) -> Path:
    path = fresh_db(tmp, "sqlite-utils")
    frame = pd.read_csv(csv, nrows=rows)
    db = sqlite_utils.Database(path)
    db.execute("PRAGMA journal_mode=WAL")
    records = frame.to_dict(orient="records")
    if atomic:
        with db.atomic():
            db["votes"].insert_all(records)
    else:
        db["votes"].insert_all(records)
    db.close()
    return path


def to_sql(csv: Path, tmp: Path) -> Path:
    path = fresh_db(tmp, "to_sql")
    frame = pd.read_csv(csv)
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    frame.to_sql("votes", con, index=False)
    con.close()
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--votes", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    csv = OUT / f"arena_{args.votes}x{args.models}.csv"
    if not csv.exists():
        write_arena_csv(csv, args.votes, args.models, seed=0)
    size_mb = csv.stat().st_size / 1e6
    print(f"input: {csv.name}, {args.votes:,} votes, {args.models} models, {size_mb:.0f} MB, "
          f"repeats={args.repeats} (medians)")
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        ours, db_path = timed(lambda: evalboard_ingest(csv, tmp), args.repeats)
        t_load, _ = timed(lambda: load(csv), args.repeats)
        atomic, _ = timed(lambda: sqlite_utils_insert(csv, tmp, atomic=True), args.repeats)
        sql, sql_db = timed(lambda: to_sql(csv, tmp), args.repeats)
        part, _ = timed(lambda: sqlite_utils_insert(csv, tmp, atomic=False, rows=NON_ATOMIC_ROWS), 1)
        non_atomic = part * args.votes / NON_ATOMIC_ROWS
        rows = [
            ("evalboard ingest (parse + validate + store)", ours),
            ("  of which parse + validate (core.io.load)", t_load),
            ("sqlite-utils insert_all in db.atomic()", atomic),
            (f"sqlite-utils insert_all, no atomic (x{args.votes // NON_ATOMIC_ROWS} of {NON_ATOMIC_ROWS:,})",
             non_atomic),
            ("pandas DataFrame.to_sql", sql),
        ]
        print(f"\n{'ingest CSV -> SQLite':<58}{'median s':>10}{'vs evalboard':>14}")
        for label, seconds in rows:
            print(f"{label:<58}{seconds:>10.2f}{seconds / ours:>13.1f}x")
        print("  (peer recipes read with pandas.read_csv and validate nothing)")

        with Store(db_path) as store:
            load_all, frame = timed(lambda: store.load("bench"), args.repeats)
            load_three, _ = timed(lambda: store.load("bench", ["model_a", "model_b", "winner"]), args.repeats)
        con = sqlite3.connect(sql_db)
        read_sql, _ = timed(lambda: pd.read_sql("SELECT * FROM votes", con), args.repeats)
        read_sql3, _ = timed(lambda: pd.read_sql("SELECT model_a, model_b, winner FROM votes", con), args.repeats)
        con.close()
        print(f"\n{'load stored votes for analysis':<58}{'median s':>10}{'vs evalboard':>14}")
        for label, seconds, ref in [
            ("evalboard Store.load, all 16 columns (categoricals)", load_all, load_all),
            ("pandas read_sql on the to_sql table, all columns", read_sql, load_all),
            ("evalboard Store.load, model_a/model_b/winner", load_three, load_three),
            ("pandas read_sql on the to_sql table, 3 columns", read_sql3, load_three),
        ]:
            print(f"{label:<58}{seconds:>10.2f}{seconds / ref:>13.1f}x")
        print(f"\nstore file: evalboard {db_path.stat().st_size / 1e6:.0f} MB, "
              f"to_sql {sql_db.stat().st_size / 1e6:.0f} MB; loaded frame "
              f"{frame.memory_usage(deep=True).sum() / 1e6:.0f} MB in memory")


if __name__ == "__main__":
    main()
