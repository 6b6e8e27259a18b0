"""Answer collector speed: N queries × 5 models on 5 fake providers (fixed latency) at the default limits.

    .venv/bin/python bench/bench_collect.py [--queries 1000] [--latency 0.2]

The providers are openai (10 at once), azure (10), gemini (5), doubao (3) and a local server (5), one fake
OpenAI-compatible HTTP server each, run in a separate process so that serving does not compete with the
collector for the interpreter lock. The ideal wall time is set by the limits: max over providers of
ceil(requests / limit) × latency. Printed: wall time, ideal, their ratio (goal ≤ 1.2), and the overhead
per answer: the median of client-side request time minus the server's latency, and the store write time.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.collect import CollectStore, Query, RunSettings, collect, parse_models
from core.llm.client import run_sync

PROVIDERS = ("openai", "azure", "gemini", "doubao", "local")


def serve(latency_s: float, count: int, urls, stop) -> None:
    from tests.fake_openai import FakeOpenAI

    servers = [FakeOpenAI(latency_s=latency_s) for _ in range(count)]
    urls.send([s.base_url for s in servers])
    stop.recv()
    for server in servers:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2, help="server latency in seconds (default 0.2)")
    args = parser.parse_args()

    urls_parent, urls_child = multiprocessing.Pipe()
    stop_parent, stop_child = multiprocessing.Pipe()
    server_process = multiprocessing.Process(target=serve, args=(args.latency, len(PROVIDERS), urls_child, stop_child),
                                             daemon=True)
    server_process.start()
    try:
        urls = urls_parent.recv()
        config = parse_models({"models": [{"name": f"{p}-model", "provider": p, "base_url": url, "model": f"{p}-id"}
                                          for p, url in zip(PROVIDERS, urls)]})
        queries = [Query(f"q{i:05d}", f"Benchmark question number {i}: explain something briefly.")
                   for i in range(args.queries)]
        ideal = max(math.ceil(args.queries / limit) for limit in config.provider_limits.values()) * args.latency
        with tempfile.TemporaryDirectory() as folder:
            db = Path(folder) / "bench.db"
            started = time.perf_counter()
            outcome = run_sync(collect(config, queries, db, RunSettings("bench")))
            wall = time.perf_counter() - started
            with CollectStore(db) as store:
                latencies = store.answers(store.run_id("bench"))["latency_s"].to_numpy()
        n = outcome.answered
        print(f"answers: {n:,} of {args.queries * len(PROVIDERS):,} ({outcome.failed} failed); limits "
              + ", ".join(f"{p} {limit}" for p, limit in config.provider_limits.items()))
        print(f"wall time: {wall:.2f} s   ideal: {ideal:.2f} s   ratio: {wall / ideal:.3f} (goal <= 1.2)")
        overhead = [lat - args.latency for lat in latencies]
        print("client overhead per answer (request time - server latency): "
              f"median {statistics.median(overhead) * 1e3:.2f} ms, "
              f"p90 {statistics.quantiles(overhead, n=10)[-1] * 1e3:.2f} ms")
        print(f"store write per answer: {outcome.store_write_s / max(n, 1) * 1e3:.3f} ms "
              f"({outcome.store_write_s:.2f} s in all)")
    finally:
        stop_parent.send("stop")
        server_process.join(timeout=10)


if __name__ == "__main__":
    main()
