"""Ranking benchmark: compress + Bradley–Terry fit + 1,000-replicate bootstrap + rank intervals.

Our engine runs in this venv on the synthetic votes of bench/synthetic.py (exact BT with 10% ties,
known ratings); the peer recipes (evalica, choix, arena-rank) run on the same votes in
bench/.venv-peers (bench/setup_peers.sh), through bench/peers.py. Each size runs in its own process,
so the peak memory printed is that size's own. Medians over repeats; ratios = peer time / ours.

    .venv/bin/python bench/bench_rank.py                       # 1M/50 and 10M/200, peers too
    .venv/bin/python bench/bench_rank.py --sizes 1000000x50 --no-peers
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import synthetic  # noqa: E402

from core import bradley_terry as bt  # noqa: E402
from core.ranking.bootstrap import bootstrap_bt  # noqa: E402
from core.ranking.cells import compress, win_matrix  # noqa: E402

OUT = HERE / "out"
PEERS_PYTHON = HERE / ".venv-peers" / "bin" / "python"
REPLICATES = 1000


def measure(n_votes: int, n_models: int, repeats: int) -> dict:
    """Our pipeline on one size (run in a worker process): medians, estimates and peak memory."""
    data = synthetic.make_votes(n_votes, n_models, tie_share=0.10, seed=0)
    models = data["models"]
    steps: dict[str, list[float]] = {"compress": [], "fit": [], "bootstrap": [], "total": [], "sandwich": []}
    for _ in range(repeats):
        t0 = time.perf_counter()
        cells = compress(data["left"], data["right"], data["outcome"], models)
        t1 = time.perf_counter()
        fit = bt.fit(win_matrix(cells), models)
        t2 = time.perf_counter()
        boot = bootstrap_bt(cells, np.log(fit.pi), REPLICATES, seed=0)
        t3 = time.perf_counter()
        theta = np.log(fit.pi)
        cov = bt.covariance(cells.left, cells.right, cells.s, cells.count, cells.weight, theta - theta[0])
        se = np.sqrt(np.diag(bt.elo_covariance(theta, cov)))
        t4 = time.perf_counter()
        for name, seconds in (("compress", t1 - t0), ("fit", t2 - t1), ("bootstrap", t3 - t2),
                              ("total", t3 - t0), ("sandwich", t4 - t3 + t2 - t0)):
            steps[name].append(seconds)
    elo = fit.elo
    return {
        "n_votes": n_votes, "n_models": n_models, "cells": len(cells), "mm_iterations": fit.iterations,
        "median": {k: statistics.median(v) for k, v in steps.items()}, "times": steps,
        "elo": dict(zip(models, elo.tolist())), "true_elo": dict(zip(models, data["true_elo"].tolist())),
        "ci_width_bootstrap": float(np.median(boot.ci_high - boot.ci_low)),
        "ci_width_sandwich": float(np.median(2 * 1.959963984540054 * se)),
        "nonidentifiable_replicates": boot.nonidentifiable,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_peers(n_votes: int, n_models: int, path: Path, extra: list[str]) -> dict | None:
    if not PEERS_PYTHON.exists():
        print(f"  (no peer venv at {PEERS_PYTHON}: run bench/setup_peers.sh)")
        return None
    cmd = [str(PEERS_PYTHON), str(HERE / "peers.py"), "--votes", str(n_votes), "--models", str(n_models),
           "--json", str(path), *extra]
    subprocess.run(cmd, check=True)
    return json.loads(path.read_text())


def table(ours: dict, peers: dict | None) -> None:
    med = ours["median"]
    print(f"\n== {ours['n_votes']:,} votes, {ours['n_models']} models, {ours['cells']:,} cells; "
          f"medians of {len(ours['times']['total'])} runs; peak {ours['peak_mb']:.0f} MB ==")
    print(f"{'step':<52}{'seconds':>10}{'peak MB':>10}{'peer/ours':>10}")
    for name in ("compress", "fit", "bootstrap", "total", "sandwich"):
        label = {"total": "ours: compress + fit + 1000-replicate bootstrap + rank CIs",
                 "sandwich": "ours: compress + fit + sandwich CIs"}.get(name, f"ours: {name}")
        print(f"{label:<52}{med[name]:>10.3f}{'':>10}{'':>10}")
    if not peers:
        return
    best = None
    for name, rec in peers.get("recipes", {}).items():
        if "seconds" not in rec:
            print(f"{'peer ' + name:<52}{'—':>10}  {rec.get('error', rec.get('skipped', 'not run'))}")
            continue
        reps = rec.get("replicates", 0)
        seconds = rec.get("seconds_1000", rec["seconds"]) if reps else rec["seconds"]
        # like for like: bootstraps vs our full bootstrap, sandwich CIs vs ours, single fits vs compress + fit
        ref = med["total"] if reps else med["sandwich"] if "sandwich" in name else med["fit"] + med["compress"]
        tag = " (extrapolated)" if rec.get("extrapolated") else ""
        peak = rec.get("peak_mb", float("nan"))
        print(f"{'peer ' + name + tag:<52}{seconds:>10.3f}{peak:>10.0f}{seconds / ref:>9.1f}x")
        if reps:
            best = seconds if best is None else min(best, seconds)
        elo = rec.get("elo")
        if elo:
            diff = max(abs(elo[m] - ours["elo"][m]) for m in ours["elo"])
            print(f"{'':<6}max |ΔElo| vs ours: {diff:.2e}")
    if best:
        print(f"\nfull bootstrap: fastest peer recipe {best:.2f} s vs ours {med['total']:.3f} s: "
              f"{best / med['total']:.1f}x faster")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000x50,10000000x200")
    parser.add_argument("--repeats", type=int, default=0, help="default: 5 at 1M, 3 above")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--reuse-peers", action="store_true", help="use bench/out/peers_*.json if present")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        n, k, r = map(int, args.worker.split("x"))
        print(json.dumps(measure(n, k, r)))
        return
    OUT.mkdir(exist_ok=True)
    for size in args.sizes.split(","):
        n, k = map(int, size.split("x"))
        repeats = args.repeats or (5 if n <= 1_000_000 else 3)
        proc = subprocess.run([sys.executable, __file__, "--worker", f"{n}x{k}x{repeats}"], capture_output=True,
                              text=True, check=True, env={**os.environ, "PYTHONPATH": str(HERE.parent)})
        ours = json.loads(proc.stdout)
        peers_path = OUT / f"peers_{n}x{k}.json"
        peers = None
        if not args.no_peers:
            if args.reuse_peers and peers_path.exists():
                peers = json.loads(peers_path.read_text())
            else:
                extra = [] if n <= 1_000_000 else ["--timeout", "300", "--arena-rounds", "10,50"]
                peers = run_peers(n, k, peers_path, extra)
        table(ours, peers)
        (OUT / f"ours_{n}x{k}.json").write_text(json.dumps(ours))


if __name__ == "__main__":
    main()
