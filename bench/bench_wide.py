"""Wide-table benchmark: a score table of 3 rows and up to 10,000 columns, read, validated and stored, then
ranked as a leaderboard. Every check is linear in the number of columns: the times for 1,250 … 10,000
columns grow about in proportion (a quadratic check would show 4x per doubling).

Two shapes: one row per model and a column per task (3 models x 10,000 tasks), and one row per task and a
column per model (10,000 models x 3 tasks; its leaderboard compares every pair of models, which is
quadratic by nature, so only its ingest is timed).
Run: ``.venv/bin/python bench/bench_wide.py [--columns 10000] [--repeats 3] [--bootstrap 200]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.io import load  # noqa: E402
from core.leaderboard.aggregate import LeaderboardSettings, aggregate  # noqa: E402
from core.store import Store  # noqa: E402


def wide_csv(path: Path, key: str, columns: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    prefix = "task" if key == "model" else "model"
    lines = [key + "," + ",".join(f"{prefix}{k}" for k in range(columns))]
    for r in range(3):
        lines.append(f"row{r}," + ",".join(f"{v:.4f}" for v in rng.random(columns)))
    path.write_text("\n".join(lines) + "\n")
    return path


def median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bootstrap", type=int, default=200)
    args = parser.parse_args()
    sizes = [args.columns // 8, args.columns // 4, args.columns // 2, args.columns]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        print(f"median of {args.repeats} runs, seconds")
        print(f"{'shape':<28}{'columns':>9}{'read+validate':>15}{'+ store':>10}{'leaderboard':>13}")
        for key in ("model", "task_id"):
            for n in sizes:
                path = wide_csv(tmp / f"{key}_{n}.csv", key, n)
                read = median_seconds(lambda: load(path), args.repeats)
                counter = iter(range(10**6))

                def store() -> None:
                    with Store(tmp / f"{key}_{n}_{next(counter)}.db") as s:
                        s.ingest(load(path))

                stored = median_seconds(store, args.repeats)
                board = ""
                if key == "model":
                    frame = load(path).frame
                    settings = LeaderboardSettings(replicates=args.bootstrap)
                    board = f"{median_seconds(lambda: aggregate(frame, settings), args.repeats):13.2f}"
                shape = "3 models x N tasks" if key == "model" else "N models x 3 tasks"
                print(f"{shape:<28}{n:>9,}{read:>15.2f}{stored:>10.2f}{board:>13}", flush=True)


if __name__ == "__main__":
    main()
