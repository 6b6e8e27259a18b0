"""Prompt difficulty γ for the length-controlled win rate (docs/methods.md §12).

AlpacaEval's length-controlled GLM needs one number per prompt, its difficulty γₓ. AlpacaEval downloads a
table estimated once from all of its models; EvalBoard estimates it the same way from the file at hand (one
joint logistic fit over every model against the baseline) or reads a published table (:func:`read_difficulty`).

The preferences frame (``model``, ``baseline``, ``query_id``, ``preference`` in [0, 1], optional
``len_model``/``len_baseline``) is turned once into a :class:`PreferenceGrid`: models × prompts arrays that
every fit here and in :mod:`core.judge.length_control` reads. Prompt weights (all ones, or the multiplicities of
a bootstrap replicate) enter each fit as row weights, so a resampled fit never copies the data.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from core.errors import EvalBoardError
from core.judge.degenerate import RUNAWAY_COEFFICIENT, SATURATION_SHARE, saturated_share
from core.ranking.bradley_terry import ConvergenceError

# A weak ridge (λ/2)·Σγ² on the joint fit: it keeps γ finite for a prompt every model wins (or loses)
# outright and, with θ unpenalised, makes Σγ = 0 hold exactly at the optimum (docs/methods.md §12).
DIFFICULTY_RIDGE = 0.1
MIN_ROWS = 10  # fewer prompts than this cannot support a three-coefficient GLM per model
TOLERANCE = 1e-9  # Newton stops when no coefficient moves by more than this
MAX_ITER = 100
CG_TOLERANCE = 1e-12  # relative residual of the Newton system: far below what Newton's own convergence needs
MAX_HALVINGS = 60  # 2⁻⁶⁰: beyond this a step cannot change a double-precision coefficient
ID_COLUMNS = ("query_id", "instruction_id", "index")
DIFFICULTY_COLUMNS = ("difficulty", "instruction_difficulty", "gamma")


class LengthControlError(EvalBoardError, ValueError):
    """Preferences or a difficulty table that the length-controlled win rate cannot use; the message says why."""


@dataclass(frozen=True)
class PreferenceGrid:
    """The preferences of the models that can be length-controlled, as models × prompts arrays."""

    baseline: str
    models: tuple[str, ...]  # fitted models, sorted; the baseline and skipped models are not among them
    prompts: pd.Index  # query ids (str), sorted
    preference: np.ndarray = field(repr=False)  # (M, X) P(model beats baseline); 0 where absent
    length_gap: np.ndarray = field(repr=False)  # (M, X) len_baseline − len_model; 0 where absent
    present: np.ndarray = field(repr=False)  # (M, X) 1.0 where the model has a usable row for the prompt
    skipped: dict[str, str]  # model -> why it gets no length-controlled rate
    notes: tuple[str, ...]
    # (M, X) each cell's row number in the frame (-1 where absent): AlpacaEval's cross-validation folds follow
    # the order of a model's rows.
    position: np.ndarray | None = field(default=None, repr=False)


@dataclass(frozen=True)
class JointFit:
    """logit P = θ_m + φ_m·tanh(Δ) + γₓ over every fitted model; γ has mean 0."""

    gamma: np.ndarray
    theta: np.ndarray
    phi: np.ndarray
    iterations: int
    # Models whose θ or φ ran past RUNAWAY_COEFFICIENT (a separation: no finite optimum); the fit stopped there
    # and :func:`joint_difficulty` refits without them.
    runaway: np.ndarray | None = None


def preference_grid(prefs: pd.DataFrame) -> PreferenceGrid:
    """Check the frame and lay it out as arrays; models without lengths or with too few rows are skipped."""
    missing = [c for c in ("model", "baseline", "query_id", "preference") if c not in prefs.columns]
    if missing:
        raise LengthControlError(f"preferences: missing column(s) {', '.join(missing)}")
    baselines = sorted(prefs["baseline"].astype(str).unique())
    if len(baselines) != 1:
        raise LengthControlError(f"preferences: the length-controlled win rate needs one baseline, "
                                 f"the rows name {len(baselines)}: {', '.join(baselines[:5])}")
    # Positions, not the caller's labels: a frame built by concatenation may repeat index labels.
    frame = prefs.reset_index(drop=True)
    frame = frame.assign(model=frame["model"].astype(str), query_id=frame["query_id"].astype(str))
    pref = pd.to_numeric(frame["preference"], errors="coerce")
    # An empty preference is a judge failure: the row is left out (AlpacaEval fits on preference.notna()).
    bad = frame.index[frame["preference"].notna() & ~pref.between(0.0, 1.0)]
    if len(bad):
        raise LengthControlError(f"preferences: column preference must be a number in [0, 1]; "
                                 f"rows {', '.join(map(str, bad[:5].tolist()))} are not")
    failures = int(pref.isna().sum())
    frame, pref = frame[pref.notna()], pref[pref.notna()]
    dup = frame.duplicated(["model", "query_id"], keep=False)
    if dup.any():
        first = frame.loc[dup, ["model", "query_id"]].head(3).itertuples(index=False)
        raise LengthControlError("preferences: more than one row for (model, query_id): "
                                 + "; ".join(f"({m}, {q})" for m, q in first))
    baseline = baselines[0]
    others = frame[frame["model"] != baseline]
    skipped: dict[str, str] = {}
    notes = [f"{failures} row(s) without a preference (judge failures) are left out of the length control"
             ] if failures else []
    has_lengths = {"len_model", "len_baseline"} <= set(frame.columns)
    if has_lengths:
        gap = (pd.to_numeric(others["len_baseline"], errors="coerce")
               - pd.to_numeric(others["len_model"], errors="coerce"))
        usable = others[np.isfinite(gap.to_numpy(dtype=float))].assign(length_gap=gap)
    else:
        usable = others.iloc[:0].assign(length_gap=pd.Series(dtype=float))
    rows_per_model = usable.groupby("model").size()
    all_rows = others.groupby("model").size()
    for model, n_all in all_rows.items():
        n_used = int(rows_per_model.get(model, 0))
        if n_used == 0:
            skipped[model] = "no answer lengths"
        elif n_used < MIN_ROWS:
            skipped[model] = f"only {n_used} prompts with answer lengths (the GLM needs {MIN_ROWS})"
        elif n_used < n_all:
            notes.append(f"{model}: {n_all - n_used} of {n_all} prompts have no answer lengths and are left out "
                         f"of its length-controlled rate")
    notes.extend(f"{model}: no length-controlled win rate ({why})" for model, why in sorted(skipped.items()))
    usable = usable[~usable["model"].isin(list(skipped))]
    models = tuple(sorted(usable["model"].unique()))
    prompts = pd.Index(sorted(usable["query_id"].unique()), dtype=object)
    m_idx = pd.Index(models).get_indexer(usable["model"])
    x_idx = prompts.get_indexer(usable["query_id"])
    shape = (len(models), len(prompts))
    preference, length_gap, present = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    preference[m_idx, x_idx] = pref.loc[usable.index].to_numpy(dtype=float)
    length_gap[m_idx, x_idx] = usable["length_gap"].to_numpy(dtype=float)
    present[m_idx, x_idx] = 1.0
    position = np.full(shape, -1, dtype=np.int64)
    position[m_idx, x_idx] = usable.index.to_numpy()
    return PreferenceGrid(baseline, models, prompts, preference, length_gap, present, skipped, tuple(notes),
                          position)


def row_weights(grid: PreferenceGrid, prompt_weights: np.ndarray | None) -> np.ndarray:
    """(M, X) weight of each (model, prompt) cell: presence times the prompt's multiplicity."""
    return grid.present if prompt_weights is None else grid.present * prompt_weights[None, :]


def tanh_length_gap(grid: PreferenceGrid, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """tanh(Δ) with Δ = (len_baseline − len_model) / sd over the model's rows (not centred; sd with ddof 1).

    This is AlpacaEval's ``np.tanh(std_delta_len)``: the scale is divided out (so multiplying every length by a
    constant changes nothing) but the mean is kept. Returns ``(tanh Δ, no_spread)``; a model whose length gap
    does not vary gets tanh Δ = 0 and no length term (``no_spread`` True).
    """
    n = weights.sum(axis=1)
    mean = (weights * grid.length_gap).sum(axis=1) / np.maximum(n, 1.0)
    var = (weights * (grid.length_gap - mean[:, None]) ** 2).sum(axis=1) / np.maximum(n - 1.0, 1.0)
    sd = np.sqrt(var)
    no_spread = ~(sd > 1e-12 * np.maximum(1.0, np.abs(mean)))
    scaled = grid.length_gap / np.where(no_spread, 1.0, sd)[:, None]
    return np.where(no_spread[:, None], 0.0, np.tanh(scaled)), no_spread


def logistic_parts(eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(log(1 + e^η), σ(η))`` from one exponential, stable for any η (the fits' inner loop: ~4× cheaper
    than ``logaddexp`` plus a separate sigmoid)."""
    small = np.exp(-np.abs(eta))
    softplus = np.maximum(eta, 0.0) + np.log1p(small)
    sigmoid = np.where(eta >= 0.0, 1.0, small) / (1.0 + small)
    return softplus, sigmoid


def log_likelihood(eta: np.ndarray, preference: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-model soft-label Bernoulli log-likelihood Σₓ w (p η − log(1 + e^η)), and σ(η)."""
    softplus, sigmoid = logistic_parts(eta)
    return (weights * (preference * eta - softplus)).sum(axis=1), sigmoid


def fit_difficulty(grid: PreferenceGrid, tanh_gap: np.ndarray, no_spread: np.ndarray, weights: np.ndarray, *,
                   ridge: float = DIFFICULTY_RIDGE, start: JointFit | None = None,
                   tolerance: float = TOLERANCE) -> JointFit:
    """Maximise Σ w [p η − log(1+e^η)] − (ridge/2)·Σγ², η = θ_m + φ_m·tanh Δ + γₓ (docs/methods.md §12).

    Newton's method with step halving. γ's block of the Hessian is diagonal, so each step eliminates γ and
    solves a dense 2M × 2M system (the Schur complement): cost O(M²·X) per step, not O((2M + X)³).
    """
    n_models, n_prompts = grid.preference.shape
    if start is None:
        # θ at each model's logit mean preference: Newton starts near the optimum and needs fewer steps.
        mean_pref = (weights * grid.preference).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-300)
        clipped = np.clip(mean_pref, 1e-3, 1 - 1e-3)
        theta, phi, gamma = np.log(clipped / (1 - clipped)), np.zeros(n_models), np.zeros(n_prompts)
    else:
        theta, phi, gamma = start.theta.copy(), start.phi.copy(), start.gamma.copy()

    def objective(th, ph, ga):
        eta = th[:, None] + ph[:, None] * tanh_gap + ga[None, :]
        per_model, sigmoid = log_likelihood(eta, grid.preference, weights)
        return per_model.sum() - 0.5 * ridge * ga @ ga, sigmoid

    value, mu = objective(theta, phi, gamma)
    for iteration in range(1, MAX_ITER + 1):
        resid = weights * (grid.preference - mu)
        curv = weights * mu * (1.0 - mu)
        g_model = np.concatenate([resid.sum(axis=1), (resid * tanh_gap).sum(axis=1)])
        g_gamma = resid.sum(axis=0) - ridge * gamma
        diag_gamma = curv.sum(axis=0) + ridge
        step_model, step_gamma = _newton_step(curv, tanh_gap, no_spread, g_model, g_gamma, diag_gamma)
        if max(np.max(np.abs(step_model), initial=0.0), np.max(np.abs(step_gamma), initial=0.0)) < tolerance:
            return JointFit(gamma + step_gamma, theta + step_model[:n_models], phi + step_model[n_models:],
                            iteration)
        t = 1.0
        for _ in range(MAX_HALVINGS):
            cand = (theta + t * step_model[:n_models], phi + t * step_model[n_models:], gamma + t * step_gamma)
            new_value, new_mu = objective(*cand)
            # Tiny relative slack: at the optimum rounding can make an exact ascent look like a loss.
            if new_value >= value - 1e-13 * max(1.0, abs(value)):
                break
            t *= 0.5
        else:
            return JointFit(gamma, theta, phi, iteration)  # no step improves: at the maximum up to rounding
        (theta, phi, gamma), value, mu = cand, new_value, new_mu
        runaway = np.maximum(np.abs(theta), np.abs(phi)) > RUNAWAY_COEFFICIENT
        if runaway.any():
            return JointFit(gamma, theta, phi, iteration, runaway)
    raise ConvergenceError("joint difficulty fit: Newton's method did not converge", MAX_ITER)


def joint_difficulty(grid: PreferenceGrid, tanh_gap: np.ndarray, no_spread: np.ndarray, weights: np.ndarray, *,
                     start: JointFit | None = None, candidates: np.ndarray | None = None,
                     tolerance: float = TOLERANCE) -> tuple[np.ndarray, JointFit]:
    """γ from :func:`fit_difficulty` over the models whose fit is not degenerate (core.judge.degenerate).

    A model whose length gap is saturated at one end is left out from the start (its θ and φ are not separately
    identified); one whose θ or φ runs off (its preferences are separated) is left out and the fit repeated.
    Returns ``(models used (M,) bool, fit over them)``; ``candidates`` limits the models tried (a bootstrap
    replicate starts from the full fit's), and ``start`` is used when it covers the same models.
    """
    used = (saturated_share(tanh_gap, weights) < SATURATION_SHARE) | no_spread  # no_spread: no length term
    if candidates is not None:
        used &= candidates
    for _ in range(len(used) + 1):
        rows = np.flatnonzero(used)
        sub = replace(grid, models=tuple(grid.models[i] for i in rows), preference=grid.preference[rows],
                      length_gap=grid.length_gap[rows], present=grid.present[rows])
        begin = start if start is not None and len(start.theta) == len(rows) else None
        fit = fit_difficulty(sub, tanh_gap[rows], no_spread[rows], weights[rows], start=begin, tolerance=tolerance)
        if fit.runaway is None or not fit.runaway.any():
            return used, fit
        used[rows[fit.runaway]] = False
        start = None
    raise ConvergenceError("joint difficulty fit: every model's fit ran off", len(used))


def _newton_step(curv: np.ndarray, tanh_gap: np.ndarray, no_spread: np.ndarray, g_model: np.ndarray,
                 g_gamma: np.ndarray, diag_gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The joint fit's Newton step: γ eliminated, the (θ, φ) system S δ = r solved, then γ's step.

    S = A − B D⁻¹ Bᵀ (A: each model's 2 × 2 block, B: the (θ, φ)–γ cross terms, D: γ's diagonal) is solved by
    conjugate gradients preconditioned with S's own 2 × 2 blocks, using products with B only (no 2M × 2M
    matrix, no LAPACK call: a dense solve's threads stall on a busy machine). It converges in about ten
    iterations here; the dense solve remains the fallback.
    """
    n_models = curv.shape[0]
    curv_t = curv * tanh_gap
    h_tt, h_tp = curv.sum(axis=1), curv_t.sum(axis=1)
    h_pp = np.where(no_spread, 1.0, (curv_t * tanh_gap).sum(axis=1))  # φ without a length term stays 0

    def cross_t(v_theta, v_phi):  # Bᵀ v, a prompt vector
        return (curv * v_theta[:, None] + curv_t * v_phi[:, None]).sum(axis=0)

    def cross(u):  # B u, a (θ, φ) vector
        return np.concatenate([(curv * u).sum(axis=1), (curv_t * u).sum(axis=1)])

    def schur_times(v):
        v_theta, v_phi = v[:n_models], v[n_models:]
        return np.concatenate([h_tt * v_theta + h_tp * v_phi, h_tp * v_theta + h_pp * v_phi]) \
            - cross(cross_t(v_theta, v_phi) / diag_gamma)

    rhs = g_model - cross(g_gamma / diag_gamma)
    s_tt = h_tt - (curv**2 / diag_gamma).sum(axis=1)
    s_tp = h_tp - (curv * curv_t / diag_gamma).sum(axis=1)
    s_pp = h_pp - (curv_t**2 / diag_gamma).sum(axis=1)
    det = s_tt * s_pp - s_tp**2
    step = None
    if np.all(det > 0) and np.all(np.isfinite(det)):
        def precondition(r):
            r_t, r_p = r[:n_models], r[n_models:]
            return np.concatenate([(s_pp * r_t - s_tp * r_p) / det, (s_tt * r_p - s_tp * r_t) / det])

        step = _conjugate_gradients(schur_times, precondition, rhs, max_iter=2 * n_models + 20)
    if step is None:
        step = _dense_step(h_tt, h_tp, h_pp, curv, curv_t, diag_gamma, rhs)
    step_gamma = (g_gamma - cross_t(step[:n_models], step[n_models:])) / diag_gamma
    return step, step_gamma


def _conjugate_gradients(times, precondition, rhs: np.ndarray, max_iter: int) -> np.ndarray | None:
    """Preconditioned CG for a symmetric positive definite system; None if it does not reach the tolerance."""
    x = np.zeros_like(rhs)
    r = rhs.copy()
    target = CG_TOLERANCE * max(np.linalg.norm(rhs), 1e-300)
    if np.linalg.norm(r) <= target:
        return x
    z = precondition(r)
    p, rz = z.copy(), r @ z
    for _ in range(max_iter):
        sp = times(p)
        curvature = p @ sp
        if not curvature > 0:
            return None
        alpha = rz / curvature
        x += alpha * p
        r -= alpha * sp
        if np.linalg.norm(r) <= target:
            return x
        z = precondition(r)
        rz_next = r @ z
        p = z + (rz_next / rz) * p
        rz = rz_next
    return None


def _dense_step(h_tt, h_tp, h_pp, curv, curv_t, diag_gamma, rhs) -> np.ndarray:
    n_models = curv.shape[0]
    cross = np.vstack([curv, curv_t])  # (2M, X): ∂²/∂(θ,φ)∂γ
    schur = np.diag(np.concatenate([h_tt, h_pp])) - (cross / diag_gamma[None, :]) @ cross.T
    idx = np.arange(n_models)
    schur[idx, idx + n_models] += h_tp
    schur[idx + n_models, idx] += h_tp
    try:
        return np.linalg.solve(schur, rhs)
    except np.linalg.LinAlgError:  # singular (e.g. a model with one prompt left): minimum-norm step
        return np.linalg.lstsq(schur, rhs, rcond=None)[0]


def read_difficulty(path: str | Path) -> pd.Series:
    """A published γ table: a CSV with a prompt id column (query_id, instruction_id or index, else the first
    column) and a difficulty column (difficulty, instruction_difficulty or gamma, else the second column)."""
    path = Path(path)
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise LengthControlError(f"{path}: difficulty file not found") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise LengthControlError(f"{path}: cannot read the difficulty table as CSV ({exc})") from None
    columns = list(table.columns)
    id_col = next((c for c in ID_COLUMNS if c in columns), columns[0] if len(columns) >= 2 else None)
    value_col = next((c for c in DIFFICULTY_COLUMNS if c in columns),
                     next((c for c in columns if c != id_col), None))
    if id_col is None or value_col is None or len(table) == 0:
        raise LengthControlError(f"{path}: a difficulty table needs a prompt id column ({', '.join(ID_COLUMNS)}) "
                                 f"and a difficulty column ({', '.join(DIFFICULTY_COLUMNS)}) with at least one row")
    values = pd.to_numeric(table[value_col].str.strip(), errors="coerce")
    bad = np.flatnonzero(~np.isfinite(values.to_numpy(dtype=float)))
    if len(bad):
        rows = ", ".join(str(i + 2) for i in bad[:5])  # +2: the header is line 1
        raise LengthControlError(f"{path}: column {value_col} must hold finite numbers; lines {rows} do not")
    ids = table[id_col].str.strip()
    dup = np.flatnonzero(ids.duplicated(keep=False).to_numpy())
    if len(dup):
        raise LengthControlError(f"{path}: column {id_col} names a prompt twice (lines "
                                 f"{', '.join(str(i + 2) for i in dup[:5])})")
    table = pd.Series(values.to_numpy(dtype=float), index=pd.Index(ids, name="query_id"), name="difficulty")
    table.attrs["source"] = path.name
    return table
