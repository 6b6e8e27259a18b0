"""Leaderboard benchmark: 100 models × 10,000 tasks × 5 categories, B = 1,000 (docs/methods.md §3, §8).

Scores are drawn per model from a Beta distribution (model ability shifts its mean), per-(model, task)
rows go through ``pivot`` and then each stage of ``aggregate`` is timed on its own; ``total`` is one
full ``aggregate`` call. A standalone stage draws its own indices, so in ``aggregate`` the stages
share draws and the total is less than the sum. Medians over repeats; peak RSS of this process (input
frame included) and the peak of memory allocated during one more ``aggregate`` call (tracemalloc).

    .venv/bin/python bench/bench_leaderboard.py
    .venv/bin/python bench/bench_leaderboard.py --models 30 --tasks 2000 --missing 0.02 --repeats 1

Then, when ../shared/data holds it, the same on MMLU-Pro (29 models × 12,032 questions, 314,518 scored
cells, gaps scattered over 25 models: 284 distinct task-set sizes), and the whole processes
``evalboard leaderboard FILE --bootstrap B`` and ``evalboard report FILE --bootstrap B --no-png`` on it
(interpreter start and imports included). ``--no-real`` skips that part. CPU time (all threads, this
process or the child) is printed next to wall time: on a shared machine it is the steadier figure.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.io import load  # noqa: E402
from core.leaderboard.aggregate import (  # noqa: E402
    LeaderboardSettings,
    aggregate,
    bootstrap_intervals,
    point_estimates,
    ranking_order,
)
from core.leaderboard.scores import pivot, score_matrix  # noqa: E402
from core.stats.friedman import friedman  # noqa: E402


def synthetic_runs(n_models: int, n_tasks: int, n_categories: int, missing: float, seed: int = 0) -> pd.DataFrame:
    """Long EvalRuns: score ~ Beta(a_m, b) per (model, task); a share ``missing`` of cells left out."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(2.0, 6.0, size=(n_models, 1))
    scores = rng.beta(a, 3.0, size=(n_models, n_tasks))
    keep = rng.random((n_models, n_tasks)) >= missing
    models = np.array([f"model-{i:03d}" for i in range(n_models)], dtype=object)
    tasks = np.array([f"task-{j:05d}" for j in range(n_tasks)], dtype=object)
    categories = np.array([f"cat-{j % n_categories}" for j in range(n_tasks)], dtype=object)
    m, t = np.nonzero(keep)
    return pd.DataFrame({"model_id": models[m], "task_id": tasks[t], "metric_name": "acc",
                         "score": scores[m, t], "category": categories[t]})


def timed(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--categories", type=int, default=5)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--missing", type=float, default=0.0, help="share of (model, task) cells left out")
    parser.add_argument("--stratified", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-real", action="store_true", help="skip the MMLU-Pro part")
    args = parser.parse_args()
    synthetic(args)
    if not args.no_real:
        real(args)


MMLU_PRO = Path(__file__).resolve().parents[2] / "shared" / "data" / "mmlu_pro_per_question" / "correct_matrix_wide.csv"


def real(args) -> None:
    """aggregate() and the CLI's whole process on MMLU-Pro; skipped when the file is absent."""
    if not MMLU_PRO.exists():
        print(f"MMLU-Pro: skipped ({MMLU_PRO} not found)")
        return
    runs = load(MMLU_PRO).frame
    settings = LeaderboardSettings(replicates=args.replicates)
    print(f"MMLU-Pro: {runs['model_id'].nunique()} models × {runs['task_id'].nunique():,} tasks, {len(runs):,} "
          f"scored cells, B = {args.replicates}, median of {args.repeats}")
    cpu = []
    def one():
        start = time.process_time()
        out = aggregate(runs, settings)
        cpu.append(time.process_time() - start)
        return out
    seconds, board = timed(one, args.repeats)
    print(f"  {'aggregate()':<36} {seconds:8.3f} s wall, {statistics.median(cpu):.3f} s CPU  "
          f"({board.significant_pairs} of {len(board.pairwise)} pairs differ)")
    cli = str(Path(sys.executable).with_name("evalboard"))
    with tempfile.TemporaryDirectory() as out:
        commands = {"evalboard leaderboard (process)": [cli, "leaderboard", str(MMLU_PRO), "--bootstrap",
                                                        str(args.replicates)],
                    "evalboard report --no-png (process)": [cli, "report", str(MMLU_PRO), "--out", out,
                                                            "--bootstrap", str(args.replicates), "--no-png"]}
        for name, command in commands.items():
            cpu = []
            def one():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run(command, check=True, capture_output=True)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            seconds, _ = timed(one, args.repeats)
            print(f"  {name:<36} {seconds:8.3f} s wall, {statistics.median(cpu):.3f} s CPU")


def synthetic(args) -> None:

    runs = synthetic_runs(args.models, args.tasks, args.categories, args.missing)
    settings = LeaderboardSettings(replicates=args.replicates, stratified=args.stratified)
    print(f"{args.models} models × {args.tasks} tasks × {args.categories} categories, {len(runs):,} rows, "
          f"B = {args.replicates}, missing = {args.missing}, stratified = {args.stratified}, "
          f"median of {args.repeats}")
    figures = {}
    figures["pivot"], (scores, category, weight) = timed(lambda: pivot(runs), args.repeats)
    matrix = score_matrix(scores, category, weight)
    figures["means + win rates + categories"], points = timed(lambda: point_estimates(matrix), args.repeats)
    order = ranking_order(points.means)
    stages = {"mean CIs": dict(pairs=False, ranks=False), "all paired + unpaired CIs": dict(means=False, ranks=False),
              "rank CIs": dict(means=False, pairs=False)}
    for name, flags in stages.items():
        figures[name], _ = timed(lambda: bootstrap_intervals(matrix, settings, order, **flags), args.repeats)
    figures["Friedman + Nemenyi"], _ = timed(lambda: friedman(scores, settings.alpha), args.repeats)
    figures["total aggregate()"], board = timed(lambda: aggregate(runs, settings), args.repeats)
    for name, seconds in figures.items():
        print(f"  {name:<30} {seconds:8.3f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB
    tracemalloc.start()
    aggregate(runs, settings)
    allocated = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    print(f"  {'peak memory (process RSS)':<30} {peak:8.0f} MB")
    print(f"  {'peak allocated in aggregate()':<30} {allocated:8.0f} MB")
    friedman_p = f"; Friedman p = {board.friedman.p_value:.3g}" if board.friedman else ""
    print(f"  pairs: {len(board.pairwise):,}, significant: {board.significant_pairs:,}{friedman_p}")


if __name__ == "__main__":
    main()
