"""Length-controlled win rate benchmark: 250 models × 805 prompts (docs/methods.md §12).

Synthetic preferences against one baseline with planted model quality, prompt difficulty and a per-model
length effect (logit p = θ_m + γₓ − φ_m·tanh Δ). Timed, as medians over repeats, wall and CPU time:

- ``frame``: laying the frame out as arrays (``preference_grid``) and tanh Δ;
- ``joint γ``: the joint difficulty fit over every model;
- ``GLMs``: every model's length-controlled GLM, unpenalised (``--lc-fit glm``) and as AlpacaEval fits it
  (``alpaca``, the default: L1 with C chosen by 5-fold cross-validation, 50 fits per model and a refit);
- ``length_controlled``: the whole public call (frame, γ, GLMs, rates, warnings), with either fit — the target
  is ≤ 5 s with the default;
- ``bootstrap / replicate``: ``length_controlled_bootstrap`` with a few replicates, per replicate (γ and
  every GLM refitted on the resampled prompts).

    .venv/bin/python bench/bench_judge.py
    .venv/bin/python bench/bench_judge.py --models 57 --replicates 20 --repeats 1
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.judge.difficulty import (  # noqa: E402
    fit_difficulty,
    preference_grid,
    row_weights,
    tanh_length_gap,
)
from core.judge.length_control import (  # noqa: E402
    fit_glms,
    fit_models,
    length_controlled,
    length_controlled_bootstrap,
)

TARGET_SECONDS = 5.0


def synthetic_preferences(n_models: int, n_prompts: int, seed: int = 0) -> pd.DataFrame:
    """One row per (model, prompt) plus the baseline's own rows at 0.5, as the judge frame has them."""
    rng = np.random.default_rng(seed)
    gamma = rng.normal(0.0, 1.5, n_prompts)
    len_base = rng.integers(300, 4000, n_prompts).astype(float)
    theta = rng.normal(-1.0, 1.0, n_models)
    phi = rng.uniform(0.0, 2.0, n_models)  # planted length effects: longer answers win, by how much varies
    verbosity = rng.normal(0.0, 0.5, n_models)
    len_model = np.maximum(5.0, len_base[None, :] * rng.lognormal(verbosity[:, None], 0.5, (n_models, n_prompts)))
    gap = len_base[None, :] - len_model
    tanh_gap = np.tanh(gap / gap.std(axis=1, ddof=1, keepdims=True))
    pref = 1.0 / (1.0 + np.exp(-(theta[:, None] + gamma[None, :] - phi[:, None] * tanh_gap)))
    models = np.array([f"model-{i:03d}" for i in range(n_models)], dtype=object)
    prompts = np.array([str(x) for x in range(n_prompts)], dtype=object)
    frame = pd.DataFrame({"model": np.repeat(models, n_prompts), "baseline": "baseline",
                          "query_id": np.tile(prompts, n_models), "preference": pref.ravel(),
                          "len_model": len_model.ravel(), "len_baseline": np.tile(len_base, n_models)})
    own = pd.DataFrame({"model": "baseline", "baseline": "baseline", "query_id": prompts, "preference": 0.5,
                        "len_model": len_base, "len_baseline": len_base})
    return pd.concat([frame, own], ignore_index=True)


def timed(fn, repeats: int) -> tuple[float, float, object]:
    """Median wall and CPU seconds of ``fn()`` over ``repeats`` calls, and its last result."""
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=250)
    parser.add_argument("--prompts", type=int, default=805)
    parser.add_argument("--replicates", type=int, default=10, help="bootstrap replicates timed")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    prefs = synthetic_preferences(args.models, args.prompts)
    print(f"{args.models} models × {args.prompts} prompts ({len(prefs):,} rows); medians of {args.repeats}")

    def prepare():
        grid = preference_grid(prefs)
        weights = row_weights(grid, None)
        return grid, weights, *tanh_length_gap(grid, weights)

    rows = []
    wall, cpu, (grid, weights, tanh_gap, flat) = timed(prepare, args.repeats)
    rows.append(("frame", wall, cpu))
    wall, cpu, joint = timed(lambda: fit_difficulty(grid, tanh_gap, flat, weights), args.repeats)
    rows.append((f"joint γ ({joint.iterations} Newton steps)", wall, cpu))
    wall, cpu, _ = timed(lambda: fit_glms(grid, tanh_gap, flat, joint.gamma, weights), args.repeats)
    rows.append(("GLMs (glm)", wall, cpu))
    wall, cpu, _ = timed(lambda: fit_models(grid, tanh_gap, flat, joint.gamma, weights, "alpaca"), args.repeats)
    rows.append(("GLMs (alpaca: L1, C by 5-fold CV)", wall, cpu))
    wall, cpu, _ = timed(lambda: length_controlled(prefs, lc_fit="glm"), args.repeats)
    rows.append(("length_controlled (glm)", wall, cpu))
    wall, cpu, result = timed(lambda: length_controlled(prefs), args.repeats)
    rows.append(("length_controlled (alpaca, the default)", wall, cpu))
    total = wall
    wall, cpu, _ = timed(lambda: length_controlled_bootstrap(prefs, difficulty=None, replicates=args.replicates,
                                                             seed=0, alpha=0.05), 1)
    rows.append((f"bootstrap / replicate ({args.replicates} replicates)", wall / args.replicates,
                 cpu / args.replicates))
    for name, wall, cpu in rows:
        print(f"  {name:<40} wall {wall:8.3f} s   cpu {cpu:8.3f} s")
    lc = result.rates["length_controlled_winrate"]
    print(f"LC range {lc.min():.1f}–{lc.max():.1f} %; target length_controlled ≤ {TARGET_SECONDS:g} s: "
          f"{'met' if total <= TARGET_SECONDS else 'MISSED'}")


if __name__ == "__main__":
    main()
