"""Command-line benchmark: `evalboard --help`, and the whole-process `evalboard rank` of a 1M-vote CSV
with 1,000 bootstrap replicates against evalica's fastest recipe on the same file, in the same run.

The votes are the exact Bradley–Terry votes of bench/synthetic.py (10 % ties, known ratings), written
as a CSV ``model_a, model_b, winner`` (generation and writing are not timed). Every timing is a whole
process as a user runs it, from the interpreter's start to the output printed:

- ``evalboard --help`` and ``evalboard rank --help`` (the console script), and ``python -c pass`` as
  the floor any command pays;
- ``evalboard rank votes.csv`` (defaults: BT, 1,000 multinomial bootstrap replicates, rank intervals);
- evalica's recipe (peers.py ``evalica_boot_multinomial`` on the file): read the CSV with pyarrow,
  compress the votes to cells, one weighted ``evalica.bradley_terry`` fit, then 1,000 fits weighted by
  ``rng.multinomial(N, n_c/N)`` draws and percentile intervals. Besides its whole-process time the
  recipe reports its own work from the CSV read on (no interpreter start, no imports): the stricter
  comparison.

Runs alternate (ours, evalica, ours, …) so that other load on the machine hits both alike; medians
over repeats; ratio = evalica / ours. CPU seconds (user + system, all threads) are printed beside the
wall times: on a busy machine they show what each command costs when the wall clock mostly shows the
wait for a core.

    .venv/bin/python bench/bench_cli.py                          # 1,000,000 votes, 50 models
    .venv/bin/python bench/bench_cli.py --votes 200000 --repeats 3 --help-repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import synthetic  # noqa: E402

LABELS = np.array(["model_a", "model_b", "tie"], dtype=object)  # synthetic outcome codes 0 / 1 / 2

# evalica's fastest recipe, as a script of its own; prints its timings and estimates as JSON.
EVALICA_RECIPE = r"""
import time
started = time.perf_counter()
import json, sys
import numpy as np
import pandas as pd
import pyarrow.csv as pacsv
import evalica
imported = time.perf_counter()
path, replicates, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
table = pacsv.read_csv(path)
read = time.perf_counter()
# compress: dictionary codes of both model columns over one sorted name list, one bincount
names = sorted(set(table["model_a"].unique().to_pylist()) | set(table["model_b"].unique().to_pylist()))
index = {name: i for i, name in enumerate(names)}
def codes(column, lookup):
    encoded = column.dictionary_encode().combine_chunks()
    remap = np.array([lookup[v] for v in encoded.dictionary.to_pylist()], dtype=np.int64)
    return remap[encoded.indices.to_numpy(zero_copy_only=False)]
left = codes(table["model_a"], index)
right = codes(table["model_b"], index)
outcome = codes(table["winner"], {"model_a": 0, "model_b": 1, "tie": 2})
k = len(names)
counts = np.bincount((left * k + right) * 3 + outcome, minlength=k * k * 3)
cells = np.flatnonzero(counts)
c = counts[cells]
pair, o = np.divmod(cells, 3)
l, r = np.divmod(pair, k)
label = np.array(names, dtype=object)
xs, ys = label[l], label[r]
winners = np.array([int(evalica.Winner.X), int(evalica.Winner.Y), int(evalica.Winner.Draw)])[o].tolist()
pd_index = pd.Index(names)
compressed = time.perf_counter()
full = evalica.bradley_terry(xs, ys, winners, index=pd_index, weights=c.astype(np.float64))
n = int(c.sum())
draws = np.random.default_rng(seed).multinomial(n, c / n, size=replicates)
def elo(scores):
    pi = scores.reindex(names).to_numpy(dtype=np.float64)
    return 400.0 * np.log10(pi / pi.mean()) + 1500.0
samples = np.array([elo(evalica.bradley_terry(xs, ys, winners, index=pd_index, weights=m.astype(np.float64)).scores)
                    for m in draws])
low, high = np.quantile(samples, [0.025, 0.975], axis=0)
done = time.perf_counter()
print(json.dumps({"imports": imported - started, "read": read - imported, "compress": compressed - read,
                  "fits": done - compressed, "work": done - imported, "n_votes": n, "cells": int(len(c)),
                  "elo": dict(zip(names, elo(full.scores).tolist())),
                  "ci": {m: [float(a), float(b)] for m, a, b in zip(names, low, high)}}))
"""


def write_votes_csv(path: Path, n_votes: int, n_models: int, seed: int) -> dict:
    votes = synthetic.make_votes(n_votes, n_models, tie_share=0.10, seed=seed)
    names = np.array(votes["models"], dtype=object)
    table = pa.table({"model_a": names[votes["left"]], "model_b": names[votes["right"]],
                      "winner": LABELS[votes["outcome"]]})
    pacsv.write_csv(table, path, pacsv.WriteOptions(quoting_style="none"))
    return votes


def evalboard_command() -> list[str]:
    """The installed console script beside this interpreter (what users run), else ``python -m core.cli``."""
    script = Path(sys.executable).with_name("evalboard")
    return [str(script)] if script.exists() else [sys.executable, "-m", "core.cli"]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(cmd: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the process and its threads, standard output) of one command."""
    cpu, start = children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    seconds, cpu = time.perf_counter() - start, children_cpu() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} … failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return seconds, cpu, proc.stdout


def medians(cmd: list[str], repeats: int) -> tuple[float, float]:
    """Median wall and median CPU seconds over ``repeats`` runs."""
    runs = [run(cmd)[:2] for _ in range(repeats)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--votes", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5, help="whole-process rank runs of each (default 5)")
    parser.add_argument("--help-repeats", type=int, default=9, help="runs of each --help (default 9)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    evalboard = evalboard_command()

    print(f"== --help, whole process; medians of {args.help_repeats} runs ==")
    print(f"{'':<44}{'wall':>8}  {'CPU':>8}")
    for label, cmd in (("python -c pass (interpreter floor)", [sys.executable, "-c", "pass"]),
                       ("evalboard --help", [*evalboard, "--help"]),
                       ("evalboard rank --help", [*evalboard, "rank", "--help"])):
        seconds, cpu = medians(cmd, args.help_repeats)
        print(f"{label:<44}{seconds:>8.3f}  {cpu:>8.3f} s")

    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "votes.csv"
        votes = write_votes_csv(csv, args.votes, args.models, args.seed)
        size_mb = csv.stat().st_size / 2**20
        ours_cmd = [*evalboard, "rank", str(csv), "--bootstrap", str(args.bootstrap), "--seed", str(args.seed)]
        peer_cmd = [sys.executable, "-c", EVALICA_RECIPE, str(csv), str(args.bootstrap), str(args.seed)]
        ours, peer, ours_cpu, peer_cpu, peer_work, ours_out, peer_out = [], [], [], [], [], "", {}
        for _ in range(args.repeats):
            seconds, cpu, ours_out = run(ours_cmd)
            ours.append(seconds)
            ours_cpu.append(cpu)
            seconds, cpu, text = run(peer_cmd)
            peer.append(seconds)
            peer_cpu.append(cpu)
            peer_out = json.loads(text)
            peer_work.append(peer_out["work"])

    result = json.loads(ours_out)
    rating = {m["model"]: m for m in result["models"]}
    d_elo = max(abs(rating[m]["rating"] - e) for m, e in peer_out["elo"].items())
    d_ci = max(max(abs(rating[m]["ci_low"] - lo), abs(rating[m]["ci_high"] - hi))
               for m, (lo, hi) in peer_out["ci"].items())
    d_true = max(abs(rating[m]["rating"] - t) for m, t in zip(votes["models"], votes["true_elo"]))
    med_ours, med_peer, med_work, cpu_ours, cpu_peer = (statistics.median(x) for x in
                                                        (ours, peer, peer_work, ours_cpu, peer_cpu))
    print(f"\n== rank: {args.votes:,} votes, {args.models} models ({size_mb:.0f} MB CSV, {peer_out['cells']:,} cells), "
          f"B = {args.bootstrap:,}; medians of {args.repeats} runs ==")
    print(f"{'evalboard rank (whole process)':<52}{med_ours:>8.3f} s")
    print(f"{'evalica recipe (whole process)':<52}{med_peer:>8.3f} s   {med_peer / med_ours:>5.1f}x ours")
    print(f"{'evalica recipe (its work: CSV read → intervals)':<52}{med_work:>8.3f} s   "
          f"{med_work / med_ours:>5.1f}x ours")
    print(f"{'CPU seconds (all threads): ours / evalica recipe':<52}{cpu_ours:>8.3f} / {cpu_peer:.3f} s   "
          f"{cpu_peer / cpu_ours:>5.1f}x ours")
    print(f"{'  of which read / compress / 1 + B fits':<52}{peer_out['read']:>8.3f} / {peer_out['compress']:.3f} / "
          f"{peer_out['fits']:.3f} s (last run)")
    print(f"\nmax |ΔElo| ours vs evalica {d_elo:.2e}; max |ΔCI bound| {d_ci:.2f} (independent draws); "
          f"max |Elo − true Elo| {d_true:.1f}")
    print(f"runs (s): ours {', '.join(f'{t:.2f}' for t in ours)}; evalica {', '.join(f'{t:.2f}' for t in peer)}")
    load = os.getloadavg()[0]
    print(f"1-minute load average at the end: {load:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
