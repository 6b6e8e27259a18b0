"""``python -m core.samples``: regenerate data/samples/, or write one big arena CSV for benchmarks.

Examples
--------
    python -m core.samples                       # rewrites data/samples/*.csv (seed 0)
    python -m core.samples --votes 10000000 --models 200 --seed 1 --out /tmp/arena_10m.csv
"""

from __future__ import annotations

import argparse
import sys
import time

from core.samples.files import SAMPLES_DIR, write_arena_csv, write_samples
from core.samples.judge import write_judge_sample


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m core.samples",
        description="Without options: regenerate the committed demo CSVs in data/samples/. "
        "With --out: write one demo arena CSV of any size, in chunks.",
    )
    parser.add_argument("--votes", type=int, default=None, help="number of votes (default 20000)")
    parser.add_argument("--models", type=int, default=None, help="number of models, >= 3 (default 12)")
    parser.add_argument("--seed", type=int, default=None, help="non-negative seed (default 0)")
    parser.add_argument("--chunk-size", type=int, default=1_000_000, help="votes per chunk (default 1000000)")
    parser.add_argument("--out", default=None, help="output CSV for a big arena file")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    if args.out is None:
        if (args.votes, args.models, args.seed) != (None, None, None):
            parser.error("--votes/--models/--seed need --out (the committed samples are fixed).")
        for path in (*write_samples(SAMPLES_DIR).values(), write_judge_sample(SAMPLES_DIR)):
            print(f"wrote {path} ({path.stat().st_size:,} bytes)")
        return 0
    try:
        path = write_arena_csv(
            args.out,
            20_000 if args.votes is None else args.votes,
            12 if args.models is None else args.models,
            0 if args.seed is None else args.seed,
            chunk_size=args.chunk_size,
        )
    except ValueError as exc:
        parser.error(str(exc))
    print(f"wrote {path} ({path.stat().st_size:,} bytes) in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
