"""Eval-set builder speed.

1. Offline, 100,000 queries (synthetic pool: ``core.evalset.demo_pool`` with two made-up detail words per
   templated query, so most queries are distinct): the whole offline build — exact dedup, pre-filter,
   offline embeddings, K-NN semantic dedup, categories, scoring, Hamilton allocation, slice backfill,
   post-selection similarity check — in a fresh process per repetition; median time per stage and the
   process's peak memory (``ru_maxrss``). Target: ≤ 60 s on this machine.
2. Model stages against the fake OpenAI-compatible server at 200 ms per call: every model stage of a
   build with concurrency C; efficiency = ideal / wall time per stage, ideal = ceil(calls / C) × 0.2 s.
   Target: ≥ 0.8 for the per-query stages (relevance, rewrite). The batch stages make few calls in
   dependent rounds (discovery, then classification, then exclusion suggestions; review, then canonical
   choice), and their wall time includes local work (embeddings, clustering), so their ratio is lower.

Run: ``.venv/bin/python bench/bench_evalset.py [--n 100000] [--repeats 3] [--llm-pool 200]``
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def stage_marks(marks: list[tuple[str, float]]):
    """A progress callback recording when each stage starts (the events of its model calls are skipped)."""
    return lambda event: None if event.total else marks.append((event.stage, time.perf_counter()))


def offline_child(n: int, size: int, seed: int) -> dict:
    """One offline build, timed per stage (runs in its own process so ru_maxrss is this build's peak)."""
    from core.evalset.demo_pool import demo_pool
    from core.evalset.pipeline import build
    from core.evalset.results import eval_set
    from core.evalset.settings import BuildSettings

    pool = demo_pool(n, seed=seed, detail_words=2)
    marks: list[tuple[str, float]] = []
    start = time.perf_counter()
    state = build(pool, BuildSettings(size=size, seed=seed), progress=stage_marks(marks))
    end = time.perf_counter()
    marks.append(("end", end))
    stages = {name: marks[i + 1][1] - t for i, (name, t) in enumerate(marks[:-1])}
    counts = {s.stage: [s.n_in, s.n_out] for s in state.audit.stages}
    method = next(s.notes[0] for s in state.audit.stages if s.stage == "semantic dedup")
    return {"total_s": end - start, "stages": stages, "counts": counts, "selected": len(eval_set(state)),
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "neighbours": method}


def bench_offline(n: int, size: int, repeats: int) -> None:
    runs = []
    for r in range(repeats):
        out = subprocess.run([sys.executable, __file__, "--child", str(n), str(size), str(r)], capture_output=True,
                             text=True, check=True, cwd=REPO)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"offline build, {n:,} queries -> {size:,} (median of {repeats}, each in a fresh process)")
    for stage in runs[0]["stages"]:
        print(f"  {stage:<45} {statistics.median(r['stages'][stage] for r in runs):7.2f} s")
    core = ("Exact deduplication", "Pre-filter", "Embeddings and semantic deduplication", "Selection")
    core_s = statistics.median(sum(r["stages"][k] for k in core) for r in runs)
    print(f"  {'dedup + pre-filter + embeddings + K-NN + selection':<45} {core_s:7.2f} s")
    total = statistics.median(r["total_s"] for r in runs)
    peak = statistics.median(r["peak_mb"] for r in runs)
    print(f"  {'total':<45} {total:7.2f} s   (target ≤ 60 s: {'met' if total <= 60 else 'MISSED'})")
    print(f"  peak memory {peak:,.0f} MB; {runs[0]['neighbours']}; selected {runs[0]['selected']:,}")
    for stage, (n_in, n_out) in runs[0]["counts"].items():
        print(f"    {stage:<24} {n_in:>9,} -> {n_out:>9,}")


def bench_model(n: int, concurrency: int, latency: float) -> None:
    from core.evalset.demo_pool import demo_pool
    from core.evalset.pipeline import build
    from core.evalset.settings import BuildSettings, ModelConfig
    from tests.fake_openai import FakeOpenAI
    from tests.test_evalset_llm import responder

    with FakeOpenAI(responder=responder, latency_s=latency) as server:
        config = ModelConfig(server.base_url, "judge", concurrency=concurrency)
        marks: list[tuple[str, float]] = []
        state = build(demo_pool(n, seed=1), BuildSettings(size=40, model=config), progress=stage_marks(marks))
        marks.append(("end", time.perf_counter()))
        wall = {name: marks[i + 1][1] - t for i, (name, t) in enumerate(marks[:-1])}
        print(f"\nmodel stages, fake server at {latency * 1000:.0f} ms per call, concurrency {concurrency}, "
              f"pool {n:,}; max in flight seen by the server: {server.max_in_flight}")
        print(f"  {'stage':<28} {'calls':>6} {'wall s':>8} {'ideal s':>8} {'efficiency':>10}")
        by_progress = {"relevance": "Relevance", "rewrite": "Rewrite", "semantic dedup": "Embeddings and semantic "
                       "deduplication", "classification": "Categories", "subcategories": "Subcategories",
                       "scoring": "Scoring"}
        for record in state.audit.stages:
            calls = record.calls.get("calls", 0)
            label = by_progress.get(record.stage)
            if not calls or label not in wall:
                continue
            seconds = wall[label]
            ideal = math.ceil(calls / concurrency) * latency  # full lanes of C calls, one latency each
            print(f"  {record.stage:<28} {calls:>6} {seconds:>8.2f} {ideal:>8.2f} {ideal / seconds:>10.2f}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(offline_child(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--llm-pool", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--skip-offline", action="store_true")
    parser.add_argument("--skip-model", action="store_true")
    args = parser.parse_args()
    if not args.skip_offline:
        bench_offline(args.n, args.size, args.repeats)
    if not args.skip_model:
        bench_model(args.llm_pool, args.concurrency, args.latency)


if __name__ == "__main__":
    main()
