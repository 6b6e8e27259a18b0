"""Peer Bradley-Terry recipes (evalica, choix, arena-rank) on the synthetic votes of bench/synthetic.py.

Runs inside the peer venv (bench/setup_peers.sh creates it; arena-rank pins numpy 2.3.3 / jax 0.8.1):

    bench/.venv-peers/bin/python bench/peers.py --votes 1000000 --models 50 --json bench/out/peers_1m.json
    bench/.venv-peers/bin/python bench/peers.py --votes 10000000 --models 200 --repeats 3 --timeout 300 \\
        --arena-rounds 10,50 --json bench/out/peers_10m.json

Timings: median of repeats for single fits; bootstraps are timed once; a recipe that would take too long is
measured on fewer replicates and linearly extrapolated to 1,000 (JSON: "extrapolated": true, with the
measured replicate count and a note). Before each recipe the driver waits (--wait-idle) for the 2 CPUs to
be idle, and reports "other_cpu_share_during" (CPU used by other processes while the recipe ran).
Memory: "peak_mb" = ru_maxrss of the recipe process (includes the generated data, see "baseline_mb");
"peak_tree_mb" = sampled peak of the summed RSS of the process and all its descendants (arena-rank's
forkserver pool workers), which is the number to compare for the multi-process recipe.

Every recipe runs in its own subprocess (`--worker NAME`): the data are regenerated there with the same
seed (make_votes is deterministic), so peak memory is per recipe and a recipe that hangs can be killed on
--timeout without losing the others. Data generation is never timed; the aggregation a recipe needs
(cells, K×K matrix, DataFrame -> PairDataset) IS timed as part of the recipe and also reported apart.

Estimates are put on the docs/methods.md §2 scale: Elo = 400·log10(π) + 1500 with π normalised to mean 1.
Ties: half a win for each side everywhere (evalica Winner.Draw with tie_weight=0.5, choix W += 0.5 per tie,
arena-rank winner="tie" -> outcome 0.5).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import synthetic  # noqa: E402

B_FULL = 1000  # replicates the comparison is about (docs/methods.md §0)

RECIPES = [
    "evalica_bt_rows",
    "evalica_bt_cells",
    "evalica_boot_multinomial",
    "evalica_boot_rows",
    "choix_ilsr_dense",
    "arena_sandwich",
    "arena_bootstrap",
]

DESCRIPTIONS = {
    "evalica_bt_rows": "evalica.bradley_terry, one fit on all rows (Winner.Draw, tie_weight=0.5)",
    "evalica_bt_cells": "to_cells + evalica.bradley_terry(weights=cell counts)",
    "evalica_boot_multinomial": "to_cells + rng.multinomial(N, n_c/N, size=B) + B weighted bradley_terry fits",
    "evalica_boot_rows": "B x (rng.integers(0, n, n) row resample + bradley_terry on rows)",
    "choix_ilsr_dense": "K x K win matrix (half ties) + choix.ilsr_pairwise_dense",
    "arena_sandwich": "PairDataset.from_pandas + BradleyTerry.compute_ratings_and_cis(ci_method='sandwich')",
    "arena_bootstrap": "PairDataset.from_pandas + fit + compute_ratings_and_cis(ci_method='bootstrap', n_jobs=-1)",
}


# ----------------------------------------------------------------------------------------------- utils
def elo_from_log_pi(theta: np.ndarray) -> np.ndarray:
    """log-strengths (natural log, any offset) -> docs/methods.md §2 Elo (mean π = 1)."""
    theta = np.asarray(theta, dtype=np.float64)
    return synthetic.elo_from_pi(np.exp(theta - theta.max()))


def median_time(fn, repeats: int, cheap_s: float):
    """Run fn once; repeat up to `repeats` times total while a run is cheaper than `cheap_s` seconds.
    Returns (median seconds, list of all seconds, last result)."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        if times[0] > cheap_s:
            break
    return float(np.median(times)), times, out


def maxrss_mb(who=resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024.0  # Linux: KiB


class TreeRSSSampler:
    """Samples the summed RSS of this process and all its descendants (arena-rank's bootstrap runs in
    forkserver workers, which RUSAGE_CHILDREN does not see). Peak is reported in MB."""

    def __init__(self, interval: float = 0.25):
        self.interval = interval
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._page = os.sysconf("SC_PAGE_SIZE")
        self._cpu = {}  # pid -> (utime+stime at first sight, last seen) in clock ticks
        self.other_cpu_share = float("nan")

    @staticmethod
    def _system_busy_ticks() -> int:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v) - v[3] - (v[4] if len(v) > 4 else 0)

    def _tree_rss(self) -> float:
        me = os.getpid()
        parent = {}
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    stat = f.read()
                parent[int(d)] = int(stat[stat.rindex(b")") + 2:].split()[1])
            except (OSError, ValueError, IndexError):
                continue
        tree, frontier = {me}, [me]
        children = {}
        for pid, ppid in parent.items():
            children.setdefault(ppid, []).append(pid)
        while frontier:
            p = frontier.pop()
            for c in children.get(p, []):
                if c not in tree:
                    tree.add(c)
                    frontier.append(c)
        total = 0
        for pid in tree:
            try:
                with open(f"/proc/{pid}/statm") as f:
                    total += int(f.read().split()[1]) * self._page
                with open(f"/proc/{pid}/stat", "rb") as f:
                    st = f.read()
                fields = st[st.rindex(b")") + 2:].split()
                ticks = int(fields[11]) + int(fields[12])  # utime + stime
                first = self._cpu.get(pid, (ticks, ticks))[0]
                self._cpu[pid] = (first, ticks)
            except (OSError, ValueError, IndexError):
                pass
        return total / 2**20

    def _run(self):
        while not self._stop.is_set():
            self.peak_mb = max(self.peak_mb, self._tree_rss())
            self._stop.wait(self.interval)

    def __enter__(self):
        self._tree_rss()  # CPU baseline of the processes alive now
        self._busy0, self._t0 = self._system_busy_ticks(), time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak_mb = max(self.peak_mb, self._tree_rss())
        # share of the machine's CPU capacity used by processes OUTSIDE this recipe while it ran
        # (contamination indicator: 0 = clean; our own pool workers are counted as ours)
        busy = self._system_busy_ticks() - self._busy0
        ours = sum(last - first for first, last in self._cpu.values())
        elapsed = time.monotonic() - self._t0
        cap = elapsed * os.sysconf("SC_CLK_TCK") * os.cpu_count()
        # below ~1 s the 10 ms tick granularity makes the share meaningless -> NaN
        self.other_cpu_share = max(busy - ours, 0) / cap if elapsed >= 1.0 else float("nan")


def cpu_busy_fraction(window: float = 2.0) -> float:
    """Share of all CPUs busy over `window` seconds (from /proc/stat); call it while we are idle to see
    whether other work (e.g. a test suite) is competing for the 2 cores."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        idle = v[3] + (v[4] if len(v) > 4 else 0)
        return sum(v), idle
    t0, i0 = snap()
    time.sleep(window)
    t1, i1 = snap()
    return 1.0 - (i1 - i0) / max(t1 - t0, 1)


def wait_for_idle(max_wait: float, threshold: float = 0.15) -> tuple[float, float]:
    """Wait (at most max_wait s) until the machine is idle; returns (busy share seen last, seconds waited)."""
    t0 = time.perf_counter()
    busy = cpu_busy_fraction()
    while busy > threshold and time.perf_counter() - t0 < max_wait:
        time.sleep(3.0)
        busy = cpu_busy_fraction()
    return busy, time.perf_counter() - t0


def ci_from_samples(elo_samples: np.ndarray, models: list[str]) -> dict:
    lo = np.quantile(elo_samples, 0.025, axis=0, method="linear")
    hi = np.quantile(elo_samples, 0.975, axis=0, method="linear")
    return {m: [float(a), float(b)] for m, a, b in zip(models, lo, hi)}


# -------------------------------------------------------------------------------------------- evalica
def _evalica_inputs(votes):
    import evalica
    import pandas as pd

    names = np.array(votes["models"], dtype=object)
    # our outcome code 0/1/2 (left/right/tie) -> evalica Winner X/Y/Draw (IntEnum 1/2/0)
    wmap = np.array([int(evalica.Winner.X), int(evalica.Winner.Y), int(evalica.Winner.Draw)], dtype=np.int64)
    index = pd.Index(votes["models"])
    return evalica, names, wmap, index


def _evalica_elo(result, models):
    s = result.scores.reindex(models).to_numpy(dtype=np.float64)
    return synthetic.elo_from_pi(s)


def recipe_evalica_bt_rows(votes, args):
    evalica, names, wmap, index = _evalica_inputs(votes)
    t0 = time.perf_counter()
    xs = names[votes["left"]]
    ys = names[votes["right"]]
    winners = wmap[votes["outcome"]].tolist()  # pyo3 rejects ndarray winners; ints == Winner values
    prep = time.perf_counter() - t0

    def fit():
        return evalica.bradley_terry(xs, ys, winners, index=index)  # defaults: tie_weight=0.5, tol 1e-6, limit 100

    sec, times, res = median_time(fit, args.repeats, args.cheap)
    return {
        "seconds": sec, "times": times, "replicates": 0, "extrapolated": False,
        "elo": _evalica_elo(res, votes["models"]),
        "extra": {"prep_seconds_untimed": prep, "iterations": int(res.iterations), "limit": int(res.limit),
                  "tolerance": res.tolerance, "input": "object arrays of model names + index=pd.Index(names)"},
    }


def recipe_evalica_bt_cells(votes, args):
    evalica, names, wmap, index = _evalica_inputs(votes)
    parts = {}

    def run():
        t0 = time.perf_counter()
        left, right, o, c = synthetic.to_cells(votes)
        t1 = time.perf_counter()
        res = evalica.bradley_terry(names[left], names[right], wmap[o].tolist(), index=index,
                                    weights=c.astype(np.float64))
        t2 = time.perf_counter()
        parts.setdefault("cells", []).append(t1 - t0)
        parts.setdefault("fit", []).append(t2 - t1)
        parts["n_cells"] = int(len(c))
        return res

    sec, times, res = median_time(run, args.repeats, args.cheap)
    return {
        "seconds": sec, "times": times, "replicates": 0, "extrapolated": False,
        "elo": _evalica_elo(res, votes["models"]),
        "extra": {"cells_seconds": float(np.median(parts["cells"])), "fit_seconds": float(np.median(parts["fit"])),
                  "n_cells": parts["n_cells"], "iterations": int(res.iterations)},
    }


def recipe_evalica_boot_multinomial(votes, args):
    evalica, names, wmap, index = _evalica_inputs(votes)
    models = votes["models"]
    B = B_FULL
    t0 = time.perf_counter()
    left, right, o, c = synthetic.to_cells(votes)
    xs, ys, win = names[left], names[right], wmap[o].tolist()
    n = int(c.sum())
    full = evalica.bradley_terry(xs, ys, win, index=index, weights=c.astype(np.float64))
    t_setup = time.perf_counter() - t0

    # probe 5 replicates to decide whether the full B fits in the budget
    rng = np.random.default_rng(args.seed)
    t1 = time.perf_counter()
    probe = rng.multinomial(n, c / n, size=5)
    for m in probe:
        evalica.bradley_terry(xs, ys, win, index=index, weights=m.astype(np.float64))
    per_rep = (time.perf_counter() - t1) / 5
    do_b = B if per_rep * B <= args.loop_budget else args.boot_fallback

    rng = np.random.default_rng(args.seed)
    elos, iters = [], []
    t2 = time.perf_counter()
    counts = rng.multinomial(n, c / n, size=do_b)
    for m in counts:
        res = evalica.bradley_terry(xs, ys, win, index=index, weights=m.astype(np.float64))
        elos.append(_evalica_elo(res, models))
        iters.append(res.iterations)
    t_loop = time.perf_counter() - t2
    extrap = do_b < B
    seconds = t_setup + t_loop * (B / do_b)
    elos = np.array(elos)
    return {
        "seconds": seconds, "times": [t_setup + t_loop], "replicates": do_b, "extrapolated": extrap,
        "elo": _evalica_elo(full, models), "ci": ci_from_samples(elos, models),
        "extra": {"setup_seconds(cells+full fit)": t_setup, "loop_seconds_measured": t_loop,
                  "per_replicate_seconds": t_loop / do_b, "replicates_measured": do_b,
                  "target_replicates": B, "max_iterations": int(max(iters)), "n_cells": int(len(c)),
                  "note": f"seconds = setup + loop * 1000/{do_b:d} (linear extrapolation)" if extrap else ""},
    }


def recipe_evalica_boot_rows(votes, args):
    evalica, names, wmap, index = _evalica_inputs(votes)
    models = votes["models"]
    B, rounds = B_FULL, args.row_rounds
    n = int(votes["n_votes"])
    left, right = votes["left"], votes["right"]
    win_codes = wmap[votes["outcome"]]
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    full = evalica.bradley_terry(names[left], names[right], win_codes.tolist(), index=index)
    t_full = time.perf_counter() - t0
    elos = []
    t1 = time.perf_counter()
    for _ in range(rounds):
        idx = rng.integers(0, n, size=n)
        res = evalica.bradley_terry(names[left[idx]], names[right[idx]], win_codes[idx].tolist(), index=index)
        elos.append(_evalica_elo(res, models))
    t_loop = time.perf_counter() - t1
    return {
        "seconds": t_full + t_loop * (B / rounds), "times": [t_full + t_loop], "replicates": rounds,
        "extrapolated": True,
        "elo": _evalica_elo(full, models),
        "extra": {"full_fit_seconds": t_full, "loop_seconds_measured": t_loop,
                  "per_replicate_seconds": t_loop / rounds, "replicates_measured": rounds,
                  "target_replicates": B,
                  "note": f"seconds = full fit + loop * 1000/{rounds:d} (linear extrapolation); CI not reported "
                          "(too few replicates)"},
    }


# ---------------------------------------------------------------------------------------------- choix
def recipe_choix_ilsr_dense(votes, args):
    import choix

    k = int(votes["n_models"])
    parts = {}

    def run():
        t0 = time.perf_counter()
        cells = synthetic.to_cells(votes)
        W = synthetic.win_matrix(*cells, k)  # W[i, j] = wins of i over j, + 0.5 per tie each way
        t1 = time.perf_counter()
        theta = choix.ilsr_pairwise_dense(W)  # alpha=0 (no regularisation), tol=1e-8 (L1), max_iter=100
        t2 = time.perf_counter()
        parts.setdefault("agg", []).append(t1 - t0)
        parts.setdefault("fit", []).append(t2 - t1)
        return theta

    sec, times, theta = median_time(run, args.repeats, args.cheap)
    return {
        "seconds": sec, "times": times, "replicates": 0, "extrapolated": False,
        "elo": elo_from_log_pi(theta),
        "extra": {"aggregate_seconds(cells+W)": float(np.median(parts["agg"])),
                  "fit_seconds": float(np.median(parts["fit"]))},
    }


# ----------------------------------------------------------------------------------------- arena-rank
def _arena_frame(votes):
    import pandas as pd

    names = np.array(votes["models"], dtype=object)
    labels = np.array(["model_a", "model_b", "tie"], dtype=object)  # arena-rank default_outcome_map
    t0 = time.perf_counter()
    df = pd.DataFrame({"model_a": names[votes["left"]], "model_b": names[votes["right"]],
                       "winner": labels[votes["outcome"]]})
    return df, time.perf_counter() - t0


def _arena_elo(ratings, model, competitors, models):
    """arena-rank ratings = θ·(400/ln 10) + init_rating (1000), θ unnormalised -> docs/methods.md Elo."""
    theta = (np.asarray(ratings, dtype=np.float64) - model.init_rating) / model.alpha
    elo = elo_from_log_pi(theta)
    pos = {m: i for i, m in enumerate(competitors)}
    return np.array([elo[pos[m]] for m in models])


def _arena_scaled_to_elo_ci(res, model, models):
    """Map arena-rank lower/upper to docs/methods.md Elo: both scales are 400·θ/ln10 + constant, so shift by the
    (model-independent) offset between our Elo and arena-rank's rating at the point estimate."""
    ratings = np.asarray(res["ratings"], dtype=np.float64)
    ours = elo_from_log_pi((ratings - model.init_rating) / model.alpha)
    off = float(np.mean(ours - ratings))
    pos = {m: i for i, m in enumerate(res["competitors"])}
    lo, hi = np.asarray(res["rating_lower"]), np.asarray(res["rating_upper"])
    return {m: [float(lo[pos[m]] + off), float(hi[pos[m]] + off)] for m in models}


def recipe_arena_sandwich(votes, args):
    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.utils.data_utils import PairDataset

    df, t_df = _arena_frame(votes)
    parts, keep = {}, {}

    def run():
        t0 = time.perf_counter()
        ds = PairDataset.from_pandas(df)  # model_a/model_b/winner; tie -> 0.5; not reweighted
        t1 = time.perf_counter()
        model = BradleyTerry(n_competitors=len(ds.competitors))
        res = model.compute_ratings_and_cis(ds, significance_level=0.05)  # ci_method="sandwich"
        res["ratings"].block_until_ready()
        t2 = time.perf_counter()
        parts.setdefault("ds", []).append(t1 - t0)
        parts.setdefault("fit", []).append(t2 - t1)
        keep.update(model=model, res=res, n_cells=int(ds.pairs.shape[0]))
        return res

    times = []
    for _ in range(max(2, args.repeats_arena)):  # first call pays JAX tracing/compilation
        t0 = time.perf_counter()
        res = run()
        times.append(time.perf_counter() - t0)
    sec = float(np.median(times[1:]))
    model, models = keep["model"], votes["models"]
    return {
        "seconds": sec, "times": times, "replicates": 0, "extrapolated": False,
        "elo": _arena_elo(res["ratings"], model, res["competitors"], models),
        "ci": _arena_scaled_to_elo_ci(res, model, models),
        "extra": {"dataframe_seconds_untimed": t_df, "from_pandas_seconds": float(np.median(parts["ds"][1:])),
                  "fit_and_sandwich_seconds": float(np.median(parts["fit"][1:])),
                  "first_call_seconds(incl. JIT)": times[0], "n_cells": keep["n_cells"],
                  "note": "seconds = median of the calls after the first (first = cold, incl. JIT of "
                          "jnp.unique etc.); every call still re-traces its L-BFGS loop "
                          "(lbfgs_minimize jits a fresh closure per fit)"},
    }


def recipe_arena_bootstrap(votes, args):
    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.utils.data_utils import PairDataset

    df, t_df = _arena_frame(votes)
    models = votes["models"]
    t0 = time.perf_counter()
    ds = PairDataset.from_pandas(df)
    t1 = time.perf_counter()
    model = BradleyTerry(n_competitors=len(ds.competitors))
    model.fit(ds)
    model.params["ratings"].block_until_ready()
    t2 = time.perf_counter()
    measured = {}
    res = None
    for b in args.arena_rounds:
        tb = time.perf_counter()
        res = model.compute_ratings_and_cis(ds, significance_level=0.05, ci_method="bootstrap",
                                            num_bootstrap=b, seed=42, n_jobs=-1)  # fitted -> no refit
        measured[b] = time.perf_counter() - tb
    t_ds, t_fit = t1 - t0, t2 - t1
    bs = sorted(measured)
    if len(bs) >= 2 and bs[-1] > bs[0]:
        per_rep = (measured[bs[-1]] - measured[bs[0]]) / (bs[-1] - bs[0])
        fixed = max(measured[bs[-1]] - per_rep * bs[-1], 0.0)
        how = f"linear fit through B={bs!s}: fixed {fixed:.2f}s + {per_rep:.3f}s/replicate"
    else:
        per_rep, fixed = measured[bs[-1]] / bs[-1], 0.0
        how = f"proportional: B={bs[-1]:d} time x 1000/{bs[-1]:d}"
    boot_1000 = fixed + per_rep * B_FULL
    extrap = bs[-1] < B_FULL
    return {
        "seconds": t_ds + t_fit + (boot_1000 if extrap else measured[bs[-1]]),
        "times": [t_ds + t_fit + measured[bs[-1]]], "replicates": bs[-1], "extrapolated": extrap,
        "elo": _arena_elo(res["ratings"], model, res["competitors"], models),
        "ci": _arena_scaled_to_elo_ci(res, model, models),
        "extra": {"dataframe_seconds_untimed": t_df, "from_pandas_seconds": t_ds, "fit_seconds": t_fit,
                  "bootstrap_call_seconds": {str(b): s for b, s in measured.items()},
                  "seconds_at_measured_B": t_ds + t_fit + measured[bs[-1]],
                  "per_replicate_seconds": per_rep, "n_jobs": os.cpu_count(),
                  "note": ("seconds = from_pandas + fit + bootstrap(1000) extrapolated by " + how) if extrap else how},
    }


RECIPE_FUNCS = {name: globals()["recipe_" + name] for name in RECIPES}


# ------------------------------------------------------------------------------------------- driver
def run_worker(args):
    if args.worker.startswith("arena"):
        import multiprocessing as mp

        mp.set_start_method("forkserver", force=True)  # arena-rank on Linux (JAX + fork deadlocks)
    t0 = time.perf_counter()
    votes = synthetic.make_votes(args.votes, args.models, tie_share=args.tie_share, seed=args.data_seed)
    t_gen = time.perf_counter() - t0
    base_mb = maxrss_mb()
    with TreeRSSSampler() as sampler:
        out = RECIPE_FUNCS[args.worker](votes, args)
    out["elo"] = {m: float(e) for m, e in zip(votes["models"], out["elo"])}
    out["peak_mb"] = max(maxrss_mb(), maxrss_mb(resource.RUSAGE_CHILDREN))
    out["peak_tree_mb"] = sampler.peak_mb
    out["other_cpu_share_during"] = sampler.other_cpu_share
    out["baseline_mb"] = base_mb
    out["datagen_seconds_untimed"] = t_gen
    out["description"] = DESCRIPTIONS[args.worker]
    out["true_elo"] = {m: float(e) for m, e in zip(votes["models"], votes["true_elo"])}
    with open(args.worker_out, "w") as f:
        json.dump(_json_safe(out), f)


def spawn(name, args):
    fd, path = tempfile.mkstemp(suffix=".json", prefix=f"peer_{name}_")
    os.close(fd)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, "--worker-out", path] + args.passthrough
    busy, waited = wait_for_idle(args.wait_idle) if args.wait_idle > 0 else (float("nan"), 0.0)
    if busy > 0.15:
        print(f"[peers] WARNING: CPUs {busy:.0%} busy with other work before {name}; timings may be inflated",
              flush=True)
    env = {"cpu_busy_before": busy, "idle_wait_seconds": waited}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, start_new_session=True)
    try:
        rc = proc.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # our own child's process group (incl. its pool workers)
        proc.wait()
        os.unlink(path)
        return {"skipped": True, "reason": f"timeout after {args.timeout:.0f}s",
                "wall_seconds": time.perf_counter() - t0, **env}
    wall = time.perf_counter() - t0
    if rc != 0:
        os.unlink(path)
        return {"skipped": True, "reason": f"worker exited with code {rc}", "wall_seconds": wall, **env}
    with open(path) as f:
        out = json.load(f)
    os.unlink(path)
    out["wall_seconds"] = wall
    out.update(env)
    out["loadavg_after"] = os.getloadavg()[0]
    return out


def _json_safe(obj):
    """NaN/inf -> None so the output is strict JSON."""
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


def _pct(x) -> str:
    return "  n/a" if x is None or not np.isfinite(x) else f"{x:5.0%}"


def fmt_table(results, models):
    rows = []
    hdr = (f"{'recipe':26s} {'seconds':>10s} {'B meas.':>7s} {'extrap':>6s} {'peak MB':>8s} {'tree MB':>8s}  "
           f"{'max|ΔElo| vs true':>17s} {'other':>5s}")
    rows.append(hdr)
    rows.append("-" * len(hdr))
    # other = share of the machine's CPU used by OTHER processes while the recipe ran (0% = clean timing)
    for name, r in results.items():
        if r.get("skipped"):
            rows.append(f"{name:26s} {'SKIPPED':>10s}  ({r['reason']})")
            continue
        e = np.array([r["elo"][m] for m in models])
        t = np.array([r["true_elo"][m] for m in models])
        rows.append(f"{name:26s} {r['seconds']:10.3f} {r['replicates']:7d} {str(r['extrapolated']):>6s} "
                    f"{r['peak_mb']:8.0f} {r['peak_tree_mb']:8.0f}  {np.abs(e - t).max():17.2f} "
                    f"{_pct(r.get('other_cpu_share_during'))}")
    return "\n".join(rows)


def agreement(results, models):
    ok = {k: v for k, v in results.items() if not v.get("skipped")}
    out = {}
    pairs = [("evalica_bt_rows", "choix_ilsr_dense"), ("evalica_bt_cells", "choix_ilsr_dense"),
             ("evalica_bt_rows", "evalica_bt_cells"), ("arena_sandwich", "choix_ilsr_dense"),
             ("arena_bootstrap", "choix_ilsr_dense"), ("evalica_boot_multinomial", "choix_ilsr_dense")]
    for a, b in pairs:
        if a in ok and b in ok:
            ea = np.array([ok[a]["elo"][m] for m in models])
            eb = np.array([ok[b]["elo"][m] for m in models])
            out[f"{a} vs {b}"] = float(np.abs(ea - eb).max())
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--votes", type=int, default=1_000_000)
    p.add_argument("--models", type=int, default=50)
    p.add_argument("--tie-share", type=float, default=0.10)
    p.add_argument("--data-seed", type=int, default=0, help="seed of make_votes")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap RNGs")
    p.add_argument("--json", default=None, help="write results here")
    p.add_argument("--recipes", default=",".join(RECIPES), help="comma-separated subset of: " + ",".join(RECIPES))
    p.add_argument("--repeats", type=int, default=5, help="repeats for cheap single fits (median reported)")
    p.add_argument("--repeats-arena", type=int, default=3)
    p.add_argument("--cheap", type=float, default=5.0, help="repeat a fit only if one run takes < this (s)")
    p.add_argument("--loop-budget", type=float, default=120.0,
                   help="evalica multinomial: run all 1000 replicates if estimated loop time <= this (s)")
    p.add_argument("--boot-fallback", type=int, default=50, help="replicates measured when over --loop-budget")
    p.add_argument("--row-rounds", type=int, default=20)
    p.add_argument("--arena-rounds", default="20,100",
                   help="arena-rank bootstrap sizes to time (extrapolated to 1000 by a line through them)")
    p.add_argument("--timeout", type=float, default=900.0, help="per-recipe wall-clock limit (s)")
    p.add_argument("--wait-idle", type=float, default=120.0,
                   help="before each recipe wait up to this many seconds for the CPUs to be idle (0 = don't)")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--worker-out", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.arena_rounds = [int(x) for x in str(args.arena_rounds).split(",") if x]

    if args.worker:
        return run_worker(args)

    names = [r.strip() for r in args.recipes.split(",") if r.strip()]
    unknown = [r for r in names if r not in RECIPE_FUNCS]
    if unknown:
        p.error(f"unknown recipes: {unknown}")
    args.passthrough = ["--votes", str(args.votes), "--models", str(args.models), "--tie-share", str(args.tie_share),
                        "--data-seed", str(args.data_seed), "--seed", str(args.seed), "--repeats", str(args.repeats),
                        "--repeats-arena", str(args.repeats_arena), "--cheap", str(args.cheap),
                        "--loop-budget", str(args.loop_budget), "--boot-fallback", str(args.boot_fallback),
                        "--row-rounds", str(args.row_rounds), "--arena-rounds", ",".join(map(str, args.arena_rounds))]
    models = synthetic.model_names(args.models)
    results = {}
    for name in names:
        print(f"[peers] {name}: {DESCRIPTIONS[name]} ...", flush=True)
        results[name] = spawn(name, args)
        r = results[name]
        msg = (r["reason"] if r.get("skipped")
               else f"{r['seconds']:.3f}s{' (extrapolated)' if r['extrapolated'] else ''}")
        print(f"[peers] {name}: {msg} (wall {r['wall_seconds']:.1f}s)", flush=True)

    agree = agreement(results, models)
    try:
        from importlib.metadata import version
        versions = {pkg: version(pkg) for pkg in ("evalica", "choix", "arena-rank", "jax", "numpy", "pandas")}
    except Exception:  # pragma: no cover
        versions = {}
    doc = {
        "config": {"n_votes": args.votes, "n_models": args.models, "tie_share": args.tie_share,
                   "data_seed": args.data_seed, "boot_seed": args.seed, "target_replicates": B_FULL,
                   "cpu_count": os.cpu_count(), "python": sys.version.split()[0], "versions": versions},
        "elo_convention": "400*log10(pi) + 1500, pi normalised to mean 1 (docs/methods.md §2)",
        "recipes": results,
        "agreement_max_abs_delta_elo": agree,
    }
    print()
    print(f"Peer BT recipes: {args.votes:,} votes, {args.models} models, tie share {args.tie_share}")
    print(fmt_table(results, models))
    print()
    for k, v in agree.items():
        print(f"max|ΔElo| {k}: {v:.6f}")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(_json_safe(doc), f, indent=1, allow_nan=False)
        print(f"\nwrote {args.json}")
    return doc


if __name__ == "__main__":
    main()
