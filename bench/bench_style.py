"""Style-controlled ranking: the arena-rank cross-check on real votes, speed, feature extraction, and the
planted-effect simulation.

    .venv/bin/python bench/bench_style.py                              # everything (peers need bench/setup_peers.sh)
    .venv/bin/python bench/bench_style.py --sections real,simulation --no-peers

* real: LLMFAO crowd votes (answers joined from results.jsonl on prompt and model) and Tulu 1 (completion_a/b);
  our fit (λ = 1, sandwich) against arena-rank's ContextualBradleyTerry set to the same objective
  (bench/peers_style.py); coefficients with SEs and the models whose rank moves between plain and controlled.
* speed: 1,000,000 synthetic votes, 50 models, 4 features: fit + sandwich (median of --repeats), 1,000
  bootstrap replicates (once), arena-rank's fit + sandwich on the same rows in the same run.
* features: core.io.style_features on 1,000,000 pairs of ~2 kB answers (median of --repeats).
* simulation: 200 seeds with planted length and list effects (the quick test runs 30).
Figures are printed and written to bench/out/style.json. Timings are wall-clock with the CPU time beside
them (the machine is shared; CPU time is the steadier figure).
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
import pandas as pd
import pyarrow as pa
from scipy.stats import kendalltau

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from core.io.style_features import SIDE_COLUMNS, pair_features  # noqa: E402
from core.ranking.style_fit import fit_style  # noqa: E402
from core.samples.style import PLANTED_FEATURES, style_votes  # noqa: E402

OUT = HERE / "out"
PEERS_PYTHON = HERE / ".venv-peers" / "bin" / "python"
DATA = HERE.parent.parent / "shared" / "data"
FEATURES = ("length", "headers", "lists", "bold")


def cpu_seconds() -> float:
    """CPU time of this process and of its finished child processes (the bootstrap's workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def cpu_wait_seconds() -> float:
    """Time this process's threads spent runnable but waiting for a core (Linux /proc schedstat; else 0):
    on a shared machine, most of the gap between wall-clock and CPU time."""
    total = 0.0
    for stat in Path("/proc/self/task").glob("*/schedstat"):
        try:
            total += int(stat.read_text().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            pass
    return total


def timed(fn, waits: list | None = None):
    wall, cpu, wait = time.perf_counter(), cpu_seconds(), cpu_wait_seconds()
    out = fn()
    if waits is not None:
        waits.append(cpu_wait_seconds() - wait)
    return out, time.perf_counter() - wall, cpu_seconds() - cpu


def llmfao_crowd():
    votes = pd.read_csv(DATA / "llmfao" / "crowd-comparisons.csv")
    answers = pd.read_json(DATA / "llmfao" / "results.jsonl", lines=True)[["prompt", "model", "result"]]
    for side, column in (("x", "answer_a"), ("y", "answer_b")):
        votes = votes.merge(answers.rename(columns={"model": f"model_{side}", "result": column}),
                            on=["prompt", f"model_{side}"], how="left")
    y = votes["winner"].map({"left": 1.0, "right": 0.0, "tie": 0.5}).to_numpy()
    return votes["left"], votes["right"], y, votes["answer_a"], votes["answer_b"], 0


def tulu1():
    votes = pd.read_csv(DATA / "tulu1_human_eval" / "annotations.csv")
    complete = votes["completion_a"].notna() & votes["completion_b"].notna()
    votes = votes[complete].reset_index(drop=True)
    y = votes["preference"].map(lambda p: 0.5 if p == "tie" else 1.0 if p.startswith("a-") else 0.0).to_numpy()
    return votes["model_a"], votes["model_b"], y, votes["completion_a"], votes["completion_b"], int((~complete).sum())


def run_peer(left, right, y, d, name: str, repeats: int) -> dict | None:
    if not PEERS_PYTHON.exists():
        print("  (no peer venv: bash bench/setup_peers.sh)")
        return None
    OUT.mkdir(exist_ok=True)
    data, out = OUT / f"style_{name}.npz", OUT / f"style_{name}_peer.json"
    np.savez(data, left=left, right=right, y=y, d=d)
    subprocess.run([str(PEERS_PYTHON), str(HERE / "peers_style.py"), str(data), str(out), "--repeats", str(repeats)],
                   check=True)
    return json.loads(out.read_text())


def raw_d(sides: dict) -> np.ndarray:
    return np.column_stack([(a - b) / (a + b + 1.0) for a, b in (sides[f] for f in FEATURES)])


def real(peers: bool) -> dict:
    report = {}
    for name, load in (("llmfao_crowd", llmfao_crowd), ("tulu1", tulu1)):
        a, b, y, text_a, text_b, dropped = load()
        models = sorted(set(a) | set(b))
        left, right = a.map(models.index).to_numpy(), b.map(models.index).to_numpy()
        counts = pair_features(text_a, text_b)
        sides = {f: (counts[ca].to_numpy(float), counts[cb].to_numpy(float)) for f, (ca, cb) in SIDE_COLUMNS.items()}
        fit = fit_style(left, right, y, sides, models)
        plain = fit_style(left, right, y, sides, models, features=())
        rank = lambda elo: 1 + (elo[None, :] > elo[:, None]).sum(axis=1)  # noqa: E731
        moves = [{"model": m, "plain_rank": int(p), "controlled_rank": int(c), "plain_elo": round(float(pe), 1),
                  "controlled_elo": round(float(ce), 1)}
                 for m, p, c, pe, ce in zip(models, rank(plain.elo), rank(fit.elo), plain.elo, fit.elo) if p != c]
        entry = {"votes": len(y), "models": len(models), "votes_without_answers_dropped": dropped,
                 "coefficients": [{"feature": f, "beta": float(b_), "se": float(s), "odds_ratio": float(np.exp(b_)),
                                   "d_mean": float(m_), "d_sd": float(sd)} for f, b_, s, m_, sd in
                                  zip(fit.features, fit.beta, fit.beta_se, fit.feature_mean, fit.feature_sd)],
                 "dropped": list(fit.dropped), "moves": sorted(moves, key=lambda r: r["controlled_rank"]),
                 "n_moved": len(moves)}
        print(f"\n== {name}: {len(y)} votes, {len(models)} models ==")
        for c in entry["coefficients"]:
            print(f"  {c['feature']:8s} beta {c['beta']:+.4f} (SE {c['se']:.4f})  odds x{c['odds_ratio']:.3f} per sd")
        print(f"  {len(moves)} models change rank (plain -> controlled)")
        for mv in entry["moves"][:60]:
            print(f"    {mv['model'][:32]:32s} {mv['plain_rank']:3d} -> {mv['controlled_rank']:3d}  "
                  f"({mv['plain_elo']:.1f} -> {mv['controlled_elo']:.1f})")
        if peers:
            peer = run_peer(left, right, y, raw_d(sides), name, 1)
            if peer:
                diff = np.abs(np.array(peer["elo"]) - fit.elo)
                entry["arena_rank"] = {"max_abs_elo_diff": float(diff.max()), "coeffs": peer["coeffs"],
                                       "max_abs_coeff_diff": float(np.abs(np.array(peer["coeffs"]) - fit.beta).max())}
                print(f"  arena-rank: max |Elo diff| {diff.max():.4f}, max |beta diff| "
                      f"{entry['arena_rank']['max_abs_coeff_diff']:.2e}")
        report[name] = entry
    return report


def synthetic_votes(n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    left = rng.integers(0, k, n)
    right = (left + rng.integers(1, k, n)) % k
    sides = {"length": (rng.lognormal(7, 0.6, n).round(), rng.lognormal(7, 0.6, n).round()),
             "headers": (rng.poisson(2, n).astype(float), rng.poisson(2, n).astype(float)),
             "lists": (rng.poisson(6, n).astype(float), rng.poisson(6, n).astype(float)),
             "bold": (rng.poisson(3, n).astype(float), rng.poisson(3, n).astype(float))}
    d = raw_d(sides)
    z = (d - d.mean(axis=0)) / d.std(axis=0)
    theta = rng.normal(0, 0.7, k)
    eta = theta[left] - theta[right] + z @ np.array([0.4, 0.05, 0.2, 0.1])
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    y[rng.random(n) < 0.1] = 0.5
    return left, right, y, sides, d


def speed(n: int, k: int, repeats: int, replicates: int, boot_repeats: int, peers: bool) -> dict:
    left, right, y, sides, d = synthetic_votes(n, k)
    models = [f"m{i:04d}" for i in range(k)]
    waits: list[float] = []
    runs = [timed(lambda: fit_style(left, right, y, sides, models), waits) for _ in range(repeats)]
    fit = runs[-1][0]
    report = {"votes": n, "models": k, "fit_sandwich_s": statistics.median(r[1] for r in runs),
              "fit_sandwich_cpu_s": statistics.median(r[2] for r in runs), "fit_times_s": [r[1] for r in runs],
              "fit_cpu_wait_s": statistics.median(waits), "load_average_before": os.getloadavg()}
    print(f"\n== speed: {n:,} votes, {k} models, 4 features ==")
    print(f"  fit + sandwich: median {report['fit_sandwich_s']:.2f} s (cpu {report['fit_sandwich_cpu_s']:.2f} s; "
          f"waiting for a core {report['fit_cpu_wait_s']:.2f} s; load average {os.getloadavg()[0]:.1f})")
    boots = [timed(lambda: fit_style(left, right, y, sides, models, interval="bootstrap", replicates=replicates))
             for _ in range(boot_repeats)]
    wall, cpu = statistics.median(r[1] for r in boots), statistics.median(r[2] for r in boots)
    report.update(bootstrap_replicates=replicates, bootstrap_s=wall, bootstrap_cpu_s=cpu,
                  bootstrap_per_1000_s=wall * 1000 / replicates, bootstrap_times_s=[r[1] for r in boots],
                  bootstrap_cpu_times_s=[r[2] for r in boots], load_average=os.getloadavg())
    print(f"  bootstrap, {replicates} replicates (median of {boot_repeats}; cpu includes the worker processes): "
          f"{wall:.1f} s (cpu {cpu:.1f} s) -> {wall * 1000 / replicates:.1f} s per 1,000")
    if peers:
        peer = run_peer(left, right, y, d, f"speed_{n}", repeats)
        if peer:
            report["arena_rank"] = {"fit_sandwich_s": peer["fit_sandwich_s"], "cold_s": peer["cold_s"],
                                    "fit_sandwich_cpu_s": peer.get("fit_sandwich_cpu_s"),
                                    "times_s": peer["times_s"], "prepare_s": peer["prepare_s"],
                                    "max_abs_elo_diff": float(np.abs(np.array(peer["elo"]) - fit.elo).max())}
            report["speedup"] = peer["fit_sandwich_s"] / report["fit_sandwich_s"]
            print(f"  arena-rank fit + sandwich: median {peer['fit_sandwich_s']:.2f} s (cpu "
                  f"{peer.get('fit_sandwich_cpu_s', float('nan')):.2f} s; cold {peer['cold_s']:.1f} s); "
                  f"ours is {report['speedup']:.1f}x faster; "
                  f"max |Elo diff| {report['arena_rank']['max_abs_elo_diff']:.4f}")
    return report


def answer_pool(size: int, rng) -> list[bytes]:
    """Distinct ~2 kB markdown-ish answers: prose, headers, list items, bold, numbered steps, code blocks."""
    lines = []
    for i in range(600):
        kind = i % 10
        lines.append([f"## Section {i}", f"- point {i} about **things** here", f"{i % 9 + 1}. step {i} of the plan",
                      "```python\nfor x in range(3):\n    print(x)  # not a header\n```", f"**Note {i}:** see __this__",
                      ][kind] if kind < 5 else f"Plain prose sentence {i} explaining a detail, e.g. 1.5 million users.")
    pool = []
    for _ in range(size):
        parts, total = [], 0
        while total < 2048:
            line = lines[rng.integers(0, len(lines))] + "\n"
            parts.append(line)
            total += len(line)
        pool.append("".join(parts).encode())
    return pool


def texts_column(pool: list[bytes], n: int, rng) -> pa.Array:
    pick = rng.integers(0, len(pool), n)
    lengths = np.array([len(p) for p in pool], dtype=np.int64)[pick]
    offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    data = b"".join(pool[i] for i in pick)
    return pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))


def features(n: int, repeats: int) -> dict:
    rng = np.random.default_rng(0)
    pool = answer_pool(20_000, rng)
    a, b = texts_column(pool, n, rng), texts_column(pool, n, rng)
    runs = [timed(lambda: pair_features(a, b)) for _ in range(repeats)]
    gb = (a.nbytes + b.nbytes) / 1e9
    report = {"pairs": n, "text_gb": gb, "median_s": statistics.median(r[1] for r in runs),
              "median_cpu_s": statistics.median(r[2] for r in runs), "times_s": [r[1] for r in runs]}
    print(f"\n== features: {n:,} pairs ({gb:.2f} GB of text) ==")
    print(f"  median {report['median_s']:.1f} s (cpu {report['median_cpu_s']:.1f} s)")
    return report


def simulation(seeds: int) -> dict:
    covered, tau_c, tau_p = np.zeros(2), [], []
    for seed in range(seeds):
        votes = style_votes(seed)
        names = [f"m{i}" for i in range(len(votes.theta))]
        fit = fit_style(votes.left, votes.right, votes.y, votes.sides, names, features=PLANTED_FEATURES)
        plain = fit_style(votes.left, votes.right, votes.y, votes.sides, names, features=())
        covered += (fit.beta_low <= votes.beta) & (votes.beta <= fit.beta_high)
        tau_c.append(kendalltau(fit.theta, votes.theta).statistic)
        tau_p.append(kendalltau(plain.theta, votes.theta).statistic)
    report = {"seeds": seeds, "coverage_length": covered[0] / seeds, "coverage_lists": covered[1] / seeds,
              "kendall_tau_controlled": float(np.mean(tau_c)), "kendall_tau_plain": float(np.mean(tau_p))}
    print(f"\n== simulation: {seeds} seeds ==\n  95% CI coverage: length {report['coverage_length']:.3f}, lists "
          f"{report['coverage_lists']:.3f}; Kendall tau with the true order: controlled "
          f"{report['kendall_tau_controlled']:.3f}, plain {report['kendall_tau_plain']:.3f}")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default="real,speed,features,simulation")
    parser.add_argument("--votes", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--boot-repeats", type=int, default=1, help="bootstrap runs (median)")
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--no-peers", action="store_true")
    args = parser.parse_args()
    sections = args.sections.split(",")
    report = {}
    if "real" in sections:
        report["real"] = real(not args.no_peers)
    if "simulation" in sections:
        report["simulation"] = simulation(args.seeds)
    if "speed" in sections:
        report["speed"] = speed(args.votes, args.models, args.repeats, args.replicates, args.boot_repeats,
                                not args.no_peers)
    if "features" in sections:
        report["features"] = features(args.pairs, args.repeats)
    OUT.mkdir(exist_ok=True)
    (OUT / "style.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
