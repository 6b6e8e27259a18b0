"""arena-rank's ContextualBradleyTerry on rows prepared by bench/bench_style.py (runs in bench/.venv-peers).

    bench/.venv-peers/bin/python bench/peers_style.py IN.npz OUT.json [--repeats 3]

IN.npz holds ``left, right`` (indices into the sorted model names), ``y`` (left score 1 / 0 / ½) and ``d``
(n × p, the raw d = (a − b)/(a + b + 1) per feature). Options are set to EvalBoard's objective
Σ wᵢℓᵢ − ½‖β‖² with unit weights:

* features: the same d columns, standardised by arena-rank itself (``normalize_features=True``:
  population sd, as ours);
* ``reweighted=False``: arena-rank's default weights rows by 1/max(n_pair, 50) normalised to mean 1;
* ``reg = 1/n``: arena-rank minimises mean loss + ½·reg·‖β‖², i.e. n times our penalty at its default
  reg = 1;
* ``init_rating=1500`` (default 1000); scale 400, base 10: Elo = 1500 + (400/ln 10)·θ;
* ties: outcome ½ (its ``default_outcome_map``), as ours.
Ratings are centred (Σθ = 0) before they are written; L-BFGS from θ = 0 keeps Σθ = 0 up to rounding.
Timing: ``compute_ratings_and_cis(ci_method="sandwich")`` on a fresh model (fit + sandwich), median of
``--repeats`` after one untimed call that pays JAX's tracing and compilation (reported as ``cold_s``);
wall-clock and the process's CPU time (all of JAX's threads).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
import pandas as pd
from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
from arena_rank.utils.data_utils import ContextualPairDataset


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("out")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    data = np.load(args.data)
    left, right, y, d = data["left"], data["right"], data["y"], data["d"]
    k = int(max(left.max(), right.max())) + 1
    names = [f"m{i:04d}" for i in range(k)]  # sorted like the indices
    columns = [f"d{j}" for j in range(d.shape[1])]
    frame = pd.DataFrame(d, columns=columns)
    frame["model_a"] = np.array(names)[left]
    frame["model_b"] = np.array(names)[right]
    frame["winner"] = np.where(y == 1.0, "model_a", np.where(y == 0.0, "model_b", "tie"))
    t0 = time.perf_counter()
    dataset = ContextualPairDataset.from_pandas(frame, columns, reweighted=False, normalize_features=True)
    prepare_s = time.perf_counter() - t0
    reg = 1.0 / len(y)

    def run():
        model = ContextualBradleyTerry(k, d.shape[1], init_rating=1500.0, reg=reg)
        start, cpu = time.perf_counter(), time.process_time()
        result = model.compute_ratings_and_cis(dataset, ci_method="sandwich")
        np.asarray(result["ratings"]).sum()  # JAX is asynchronous: wait for the values
        return result, time.perf_counter() - start, time.process_time() - cpu

    result, cold, _ = run()
    times, cpu_times = [], []
    for _ in range(args.repeats):
        result, seconds, cpu_seconds = run()
        times.append(seconds)
        cpu_times.append(cpu_seconds)
    ratings = np.asarray(result["ratings"], dtype=float)
    half_width = (np.asarray(result["rating_upper"]) - np.asarray(result["rating_lower"])) / 2
    json.dump({"competitors": list(result["competitors"]), "elo": (ratings - ratings.mean() + 1500.0).tolist(),
               "elo_half_width": half_width.tolist(), "coeffs": np.asarray(result["coeffs"], float).tolist(),
               "fit_sandwich_s": statistics.median(times), "times_s": times, "cold_s": cold,
               "fit_sandwich_cpu_s": statistics.median(cpu_times), "cpu_times_s": cpu_times,
               "prepare_s": prepare_s, "reg": reg, "n": int(len(y))}, open(args.out, "w"))


if __name__ == "__main__":
    main()
