"""Decisions from a ranking: speed of the robustness search (docs/methods.md §13).

    .venv/bin/python bench/bench_decisions.py                          # every section
    .venv/bin/python bench/bench_decisions.py --sections robustness --repeats 3

* robustness: 1,000,000 synthetic Bradley–Terry votes of 50 models (core.samples.bt, 10 % ties), and the
  arena demo (core.samples.arena: 1,000,000 rows over several dimensions, golden questions, annotators,
  timestamps; one dimension analysed, as `evalboard robustness` does by default). Timed: the core call
  behind the command, ``robustness(prepare_votes(frame, policy))``, on votes already loaded (median of
  --repeats, wall-clock with the CPU time beside it: the machine is shared, CPU time is the steadier figure).
  Target (issue: decisions, part 2): ≤ 10 s.
* drift: the same 1,000,000 synthetic votes spread evenly over 12 ISO weeks; timed: ``drift(prepared, "week")``
  on votes already prepared (median of --repeats). Target (issue: decisions, part 3): ≤ 5 s.
* screen: the sequential annotator screen (docs/methods.md §17), ``screen_votes`` on 1,000,000 votes of 500
  annotators (core.annotators.screen_sample: 50 models, 30 % reversed, 10 % random annotators, parsed as
  core.io does), and the request with the qualification rule, ``prepare_votes(frame, qualify=
  "golden,fast,screen")``, beside the same request without it.
* crowd: scheme crowd (docs/methods.md §16) on 1,000,000 votes of 50 models by 500 annotators (30 % reversed,
  10 % random); the `rank --scheme crowd` core call and the joint fit alone, medians. Target: ≤ 10 s.
* plan: the same 1,000,000 synthetic votes; timed: ``plan(prepare_votes(frame, "keep"))`` without simulation
  (every adjacent pair: direct and scheduled extra votes, minimum detectable gap). Target: ≤ 2 s.
Figures are printed and written to bench/out/decisions.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from core.annotators.screen import screen_votes  # noqa: E402
from core.annotators.screen_sample import population  # noqa: E402
from core.decisions.drift import drift  # noqa: E402
from core.decisions.plan import plan  # noqa: E402
from core.decisions.robustness import robustness  # noqa: E402
from core.io.votes import votes_from_frame  # noqa: E402
from core.ranking import RankSettings, rank_votes  # noqa: E402
from core.ranking.crowd_fit import crowd_cells, fit_crowd  # noqa: E402
from core.ranking.request import prepare_votes  # noqa: E402
from core.ranking.schemes.crowd import LEFT_SCORE  # noqa: E402
from core.samples.arena import arena_demo  # noqa: E402
from core.samples.bt import OUTCOME_LEFT, OUTCOME_TIE, bt_votes  # noqa: E402
from core.samples.crowd import crowd_votes  # noqa: E402

OUT = HERE / "out"
TARGET_S = 10.0


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def synthetic_frame(n_votes: int, n_models: int, seed: int = 0) -> pd.DataFrame:
    votes = bt_votes(n_votes, n_models, tie_share=0.10, seed=seed)
    names = pd.Index(votes["models"])
    winner = pd.Series("model_b", index=range(n_votes))
    winner[votes["outcome"] == OUTCOME_LEFT] = "model_a"
    winner[votes["outcome"] == OUTCOME_TIE] = "tie"
    raw = pd.DataFrame({"model_a": names[votes["left"]], "model_b": names[votes["right"]], "winner": winner})
    return votes_from_frame(raw, "synthetic votes")[0]


def bench_robustness(repeats: int) -> dict:
    cases = {"synthetic 1M votes, 50 models": (synthetic_frame(1_000_000, 50), "keep"),
             "arena demo 1M rows, 50 models": (votes_from_frame(arena_demo(1_000_000, 50), "arena demo")[0],
                                               "exclude")}
    figures = {}
    for name, (frame, policy) in cases.items():
        runs = [timed(lambda: robustness(prepare_votes(frame, policy))) for _ in range(repeats)]
        result = runs[0][0]
        wall = statistics.median(r[1] for r in runs)
        cpu = statistics.median(r[2] for r in runs)
        figures[name] = {"rows": len(frame), "n_votes_analysed": result.n_votes, "policy": policy,
                         "top_model": result.top_model, "flip_votes": result.flip_votes,
                         "flip_share": result.flip_share, "flipped_to": result.flipped_to,
                         "verified": result.verified, "refits": result.params["refits"],
                         "challengers_searched": len(result.params["challengers_searched"]),
                         "wall_s_median": round(wall, 3), "cpu_s_median": round(cpu, 3),
                         "wall_s_runs": [round(r[1], 3) for r in runs], "target_s": TARGET_S,
                         "within_target": wall <= TARGET_S}
        print(f"robustness, {name}: {result.flip_votes} of {result.n_votes:,} votes flip {result.top_model} -> "
              f"{result.flipped_to}; median wall {wall:.2f} s, CPU {cpu:.2f} s ({repeats} runs; target "
              f"≤ {TARGET_S:g} s)")
    return figures


DRIFT_TARGET_S = 5.0


def bench_drift(repeats: int) -> dict:
    """drift: 1M synthetic BT votes of 50 models spread evenly over 12 ISO weeks (docs/methods.md §15)."""
    frame = synthetic_frame(1_000_000, 50)
    seconds = np.sort(np.random.default_rng(0).random(len(frame))) * 84 * 86400  # 12 weeks from a Monday
    frame["timestamp"] = pd.Timestamp("2026-01-05T00:00:00Z") + pd.to_timedelta(seconds, unit="s")
    prepared = prepare_votes(frame, "keep")
    runs = [timed(lambda: drift(prepared, "week")) for _ in range(repeats)]
    result = runs[0][0]
    wall, cpu = statistics.median(r[1] for r in runs), statistics.median(r[2] for r in runs)
    print(f"drift, 1M votes, 50 models, {len(result.periods)} weeks: {len(result.changed)} changed; median wall "
          f"{wall:.2f} s, CPU {cpu:.2f} s ({repeats} runs; target ≤ {DRIFT_TARGET_S:g} s)")
    return {"rows": len(frame), "n_votes_analysed": result.n_votes, "periods": len(result.periods),
            "changed": list(result.changed), "anchor_rounds": result.params["anchor_rounds"],
            "wall_s_median": round(wall, 3), "cpu_s_median": round(cpu, 3),
            "wall_s_runs": [round(r[1], 3) for r in runs], "target_s": DRIFT_TARGET_S,
            "within_target": wall <= DRIFT_TARGET_S}


def bench_screen(repeats: int) -> dict:
    raw, kinds = population(seed=0, n_models=50, n_annotators=500, votes_each=2_000)
    frame = votes_from_frame(raw, "screen population")[0]
    calls = {"screen_votes": lambda: screen_votes(frame),
             "prepare_votes with --qualify golden,fast,screen":
                 lambda: prepare_votes(frame, qualify="golden,fast,screen"),
             "prepare_votes (default rules)": lambda: prepare_votes(frame)}
    figures = {"rows": len(frame), "annotators": len(kinds)}
    for name, call in calls.items():
        runs = [timed(call) for _ in range(repeats)]
        wall, cpu = statistics.median(r[1] for r in runs), statistics.median(r[2] for r in runs)
        figures[name] = {"wall_s_median": round(wall, 3), "cpu_s_median": round(cpu, 3),
                         "wall_s_runs": [round(r[1], 3) for r in runs]}
        print(f"screen, {name}: 1M votes, 500 annotators; median wall {wall:.2f} s, CPU {cpu:.2f} s ({repeats} runs)")
    flagged = set(screen_votes(frame).flagged)
    for kind in ("reversed", "random", "honest"):
        mine = [a for a, k in kinds.items() if k == kind]
        figures[f"flagged_{kind}"] = f"{sum(a in flagged for a in mine)} of {len(mine)}"
    print(f"screen flags: {figures['flagged_reversed']} reversed, {figures['flagged_random']} random, "
          f"{figures['flagged_honest']} honest")
    return figures


def bench_crowd(repeats: int) -> dict:
    """Scheme crowd (docs/methods.md §16) on 1M votes of 50 models by 500 annotators (30 % reversed, 10 %
    random; core.samples.crowd): the whole `evalboard rank --scheme crowd` core call on loaded votes (prepare,
    plain BT and the joint fit, observed-information intervals) and the joint fit alone. Target ≤ 10 s."""
    sample = crowd_votes(50, 500, 2_000, seed=0)
    frame = votes_from_frame(sample.votes, "crowd votes")[0]
    settings = RankSettings("crowd", ci="sandwich")
    prepared = prepare_votes(frame, "keep")
    used = prepared.votes
    cells = crowd_cells(used["annotator_id"].cat.codes.to_numpy(), used["model_a"].cat.codes.to_numpy(),
                        used["model_b"].cat.codes.to_numpy(), LEFT_SCORE[used["winner"].cat.codes.to_numpy()], None,
                        50, len(used["annotator_id"].cat.categories))
    rank_runs = [timed(lambda: rank_votes(prepare_votes(frame, "keep").votes, settings)) for _ in range(repeats)]
    fit_runs = [timed(lambda: fit_crowd(cells)) for _ in range(repeats)]
    ranking, fit = rank_runs[0][0], fit_runs[0][0]
    truth = dict(zip(sample.models, sample.theta))
    tau = {name: float(kendalltau([r.rating for r in r_.rows], [truth[r.model] for r in r_.rows]).statistic)
           for name, r_ in (("crowd", ranking), ("plain_bt", ranking.plain))}
    wall = statistics.median(r[1] for r in rank_runs)
    fit_wall = statistics.median(r[1] for r in fit_runs)
    figures = {"votes": len(frame), "models": 50, "annotators": 500, "cells": len(cells),
               "iterations": fit.iterations, "converged": fit.converged, "kendall_tau": tau,
               "rank_wall_s_median": round(wall, 3),
               "rank_cpu_s_median": round(statistics.median(r[2] for r in rank_runs), 3),
               "fit_wall_s_median": round(fit_wall, 3), "fit_cpu_s_median": round(statistics.median(
                   r[2] for r in fit_runs), 3), "wall_s_runs": [round(r[1], 3) for r in rank_runs],
               "target_s": TARGET_S, "within_target": wall <= TARGET_S}
    print(f"crowd, 1M votes, 50 models, 500 annotators ({len(cells):,} cells): rank median wall {wall:.2f} s "
          f"(joint fit alone {fit_wall:.2f} s, {fit.iterations} Newton steps); Kendall τ crowd "
          f"{tau['crowd']:.3f}, plain BT {tau['plain_bt']:.3f} ({repeats} runs; target ≤ {TARGET_S:g} s)")
    return figures


PLAN_TARGET_S = 2.0


def bench_plan(repeats: int) -> dict:
    """plan: the core call behind `evalboard plan` (no simulation) on 1M synthetic votes of 50 models; target ≤ 2 s."""
    frame = synthetic_frame(1_000_000, 50)
    runs = [timed(lambda: plan(prepare_votes(frame, "keep"))) for _ in range(repeats)]
    result = runs[0][0]
    wall = statistics.median(r[1] for r in runs)
    cpu = statistics.median(r[2] for r in runs)
    top = result.pairs[0]
    print(f"plan, synthetic 1M votes, 50 models: {len(result.pairs)} pairs; top pair {top.model_a} – {top.model_b} "
          f"needs {top.extra_votes_direct} direct / {top.extra_votes_scheduled} scheduled; median wall {wall:.2f} s, "
          f"CPU {cpu:.2f} s ({repeats} runs; target ≤ {PLAN_TARGET_S:g} s)")
    return {"synthetic 1M votes, 50 models": {
        "rows": len(frame), "n_votes_analysed": result.n_votes, "pairs": len(result.pairs),
        "wall_s_median": round(wall, 3), "cpu_s_median": round(cpu, 3), "wall_s_runs": [round(r[1], 3) for r in runs],
        "target_s": PLAN_TARGET_S, "within_target": wall <= PLAN_TARGET_S}}


SECTIONS = {"robustness": bench_robustness, "plan": bench_plan, "drift": bench_drift, "screen": bench_screen,
            "crowd": bench_crowd}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated among {', '.join(SECTIONS)}")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    chosen = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown sections {', '.join(unknown)}; choose among {', '.join(SECTIONS)}")
    OUT.mkdir(exist_ok=True)
    path = OUT / "decisions.json"
    figures = json.loads(path.read_text()) if path.exists() else {}
    for section in chosen:
        figures[section] = SECTIONS[section](args.repeats)
    path.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"written {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
