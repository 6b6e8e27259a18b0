"""`evalboard report` at scale (issue goal): 1,000,000 demo votes, 12 models, 3 games × 3 dimensions,
the full bundle with PNG figures and 1,000 bootstrap replicates. Goal ≤ 30 s end to end. Prints the
median of a few runs and the per-step times (report.json "timings") of the median run."""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from core.cli import main as cli
from core.samples import write_arena_csv

OUT = Path(__file__).resolve().parent / "out"
VOTES = OUT / "arena_1m.csv"
REPEATS = 2


def run_once(index: int) -> tuple[float, dict]:
    bundle = OUT / f"report_{index}"
    start = time.perf_counter()
    code = cli(["report", str(VOTES), "--out", str(bundle), "--bootstrap", "1000", "--seed", "0"])
    elapsed = time.perf_counter() - start
    if code != 0:
        sys.exit(f"evalboard report exited {code}")
    doc = json.loads((bundle / "report.json").read_text())
    return elapsed, doc


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    if not VOTES.exists():
        t = time.perf_counter()
        write_arena_csv(VOTES, 1_000_000, 12)
        print(f"wrote {VOTES} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    runs = [run_once(i) for i in range(REPEATS)]
    times = [t for t, _ in runs]
    median = statistics.median(times)
    _, doc = min(runs, key=lambda r: abs(r[0] - median))
    print(f"evalboard report, 1,000,000 votes, 12 models, 3 games × 3 dimensions, B = 1,000, PNG = {doc['png']}:")
    print(f"  runs {', '.join(f'{t:.1f}' for t in times)} s; median {median:.1f} s (goal ≤ 30 s)")
    steps = doc["timings"]
    print(f"  read + validate CSV (not in report.json timings): ~{median - sum(steps.values()):.1f} s")
    for label, seconds in steps.items():
        print(f"  {label:<32} {seconds:7.2f} s")
    print(f"  figures: {len(doc['figures'])}")


if __name__ == "__main__":
    main()
