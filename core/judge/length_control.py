"""AlpacaEval's length-controlled win rate (docs/methods.md §12).

Per model, a logistic GLM on the soft preferences p (P(model beats baseline)):

    logit p = a·tanh(Δ) + b·γₓ + c,   Δ = (len_baseline − len_model) / sd of that gap over the model's rows,

and the length-controlled win rate is what the GLM predicts with the length term set to zero,
LC = 100 × meanₓ σ(b·γₓ + c). γ comes from :func:`core.judge.difficulty.fit_difficulty` (a joint fit over every
model in the file) or from a published table. The baseline's LC is 50 by definition.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.judge.degenerate import RUNAWAY_COEFFICIENT, degenerate_fits
from core.judge.difficulty import (
    DIFFICULTY_RIDGE,
    MAX_HALVINGS,
    MAX_ITER,
    TOLERANCE,
    LengthControlError,
    PreferenceGrid,
    joint_difficulty,
    log_likelihood,
    logistic_parts,
    preference_grid,
    row_weights,
    tanh_length_gap,
)
from core.judge.l1_fit import choose_penalty, fold_of_rows, refit_l1
from core.judge.types import DEFAULT_LC_FIT, LC_FITS
from core.ranking.bradley_terry import ConvergenceError
from core.validation import check_alpha, check_replicates, check_seed

RATE_COLUMNS = ("length_controlled_winrate", "lc_standard_error", "lc_warning")
# AlpacaEval's get_is_extreme_changes(abs_diff=10, rel_diff=4): warn when LC leaves the raw rate by more than
# 10 points *and* by more than a quarter of the distance from the raw rate to 0 (downwards) or 100 (upwards).
WARN_POINTS = 10.0
WARN_SHARE = 0.25
# A replicate's fits stop once no coefficient moves by more than this: its LC is then exact to ~1e-6 points,
# far below any interval's width, and each replicate saves a Newton step.
REPLICATE_TOLERANCE = 1e-7


@dataclass(frozen=True)
class LengthControl:
    """Length-controlled win rates of every model in the frame (percent), and how they were obtained."""

    rates: pd.DataFrame  # index model; length_controlled_winrate, lc_standard_error, lc_warning
    difficulty: pd.Series  # index query_id: the γ used
    difficulty_source: str
    notes: tuple[str, ...]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return logistic_parts(x)[1]


def fit_glms(grid: PreferenceGrid, tanh_gap: np.ndarray, no_spread: np.ndarray, gamma: np.ndarray,
             weights: np.ndarray, start: np.ndarray | None = None, tolerance: float = TOLERANCE) -> np.ndarray:
    """Every model's (a, b, c) maximising Σₓ w [p η − log(1 + e^η)], η = a·tanh Δ + b·γ + c; one batched Newton.

    Unpenalised, as the MLE of AlpacaEval's objective (docs/methods.md §12 states what its L1 and CV add).
    A model without a length term keeps a = 0; one whose prompts share one γ keeps b = 0 (c absorbs it).
    """
    n_models = grid.preference.shape[0]
    fixed = held_at_zero(no_spread, gamma, weights)
    coef = np.zeros((n_models, 3)) if start is None else np.where(fixed, 0.0, start)
    gamma_row = gamma[None, :]

    def values(c, rows=slice(None)):
        eta = c[:, 0:1] * tanh_gap[rows] + c[:, 1:2] * gamma_row + c[:, 2:3]
        return log_likelihood(eta, grid.preference[rows], weights[rows])

    value, mu = values(coef)
    for _ in range(MAX_ITER):
        # Sums written out (not einsum over a stacked design): the six distinct Hessian entries per model.
        resid = weights * (grid.preference - mu)
        curv = weights * mu * (1.0 - mu)
        curv_t, curv_g = curv * tanh_gap, curv * gamma_row
        grad = np.stack([(resid * tanh_gap).sum(1), (resid * gamma_row).sum(1), resid.sum(1)], axis=1)
        h_tt, h_tg, h_t1 = (curv_t * tanh_gap).sum(1), (curv_t * gamma_row).sum(1), curv_t.sum(1)
        h_gg, h_g1, h_11 = (curv_g * gamma_row).sum(1), curv_g.sum(1), curv.sum(1)
        hess = np.stack([np.stack([h_tt, h_tg, h_t1], 1), np.stack([h_tg, h_gg, h_g1], 1),
                         np.stack([h_t1, h_g1, h_11], 1)], axis=1)
        grad = np.where(fixed, 0.0, grad)
        hess = np.where(fixed[:, :, None] | fixed[:, None, :], 0.0, hess) + np.eye(3) * fixed[:, :, None]
        try:
            step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:
            # A singular Hessian (a resample that left a model too few distinct prompts): the minimum-norm
            # step still ascends.
            step = (np.linalg.pinv(hess) @ grad[:, :, None])[:, :, 0]
        # A model whose coefficients ran past the bound follows a separation (no finite optimum): it stops there
        # and core.judge.degenerate reports it instead of a rate.
        step = np.where(np.abs(coef).max(axis=1, keepdims=True) > RUNAWAY_COEFFICIENT, 0.0, step)
        if np.max(np.abs(step), initial=0.0) < tolerance:
            return coef + step
        t = np.ones(n_models)
        pending = np.ones(n_models, dtype=bool)
        new_coef, new_value, new_mu = coef.copy(), value.copy(), mu.copy()
        for _ in range(MAX_HALVINGS):
            rows = np.flatnonzero(pending)
            cand = coef[rows] + t[rows, None] * step[rows]
            cand_value, cand_mu = values(cand, rows)
            ok = cand_value >= value[rows] - 1e-13 * np.maximum(1.0, np.abs(value[rows]))
            done = rows[ok]
            new_coef[done], new_value[done], new_mu[done] = cand[ok], cand_value[ok], cand_mu[ok]
            pending[done] = False
            if not pending.any():
                break
            t[pending] *= 0.5
        coef, value, mu = new_coef, new_value, new_mu  # a model no step improves sits at its maximum
    raise ConvergenceError("length-controlled GLM: Newton's method did not converge", MAX_ITER)


def held_at_zero(no_spread: np.ndarray, gamma: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(M, 3) coefficients (a, b, c) that stay 0: a without a length spread, b when the prompts share one γ."""
    n = weights.sum(axis=1)
    g_mean = (weights * gamma).sum(axis=1) / n
    flat_gamma = (weights * (gamma - g_mean[:, None]) ** 2).sum(axis=1) <= 1e-12 * n
    return np.stack([no_spread, flat_gamma, np.zeros(len(n), dtype=bool)], axis=1)


def cross_validation_folds(grid: PreferenceGrid) -> np.ndarray:
    """(M, X) the fold of each model's row (−1 where absent): the GroupKFold rule on the model's rows in the
    order of the frame (:func:`core.judge.l1_fit.fold_of_rows`)."""
    folds = np.full(grid.preference.shape, -1, dtype=np.int64)
    for m in range(len(grid.models)):
        cells = np.flatnonzero(grid.present[m] > 0)
        in_file_order = cells[np.argsort(grid.position[m, cells], kind="stable")]
        folds[m, in_file_order] = fold_of_rows(len(cells))
    return folds


def fit_models(grid: PreferenceGrid, tanh_gap: np.ndarray, no_spread: np.ndarray, gamma: np.ndarray,
               weights: np.ndarray, lc_fit: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Every model's (a, b, c) and, for AlpacaEval's L1 fit, the C its cross-validation chose (else None)."""
    if lc_fit not in LC_FITS:
        raise LengthControlError(f"lc_fit must be one of {', '.join(LC_FITS)}, not {lc_fit!r}")
    if lc_fit == "glm":
        return fit_glms(grid, tanh_gap, no_spread, gamma, weights), None
    fixed = held_at_zero(no_spread, gamma, weights)
    return choose_penalty(tanh_gap, gamma, grid.preference, weights, cross_validation_folds(grid), fixed)


def lc_predictions(coef: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """(M, X) σ(b·γₓ + c): each prompt's predicted preference at equal length."""
    return _sigmoid(coef[:, 1:2] * gamma[None, :] + coef[:, 2:3])


def extreme_change(win_rate: float, lc: float) -> bool:
    """AlpacaEval's warning rule (``get_is_extreme_changes`` with its defaults), on percentages."""
    too_small = lc < min(win_rate - WARN_SHARE * win_rate, win_rate - WARN_POINTS)
    too_large = lc > max(win_rate + WARN_SHARE * (100.0 - win_rate), win_rate + WARN_POINTS)
    return bool(too_small or too_large)


def _warning(win_rate: float, lc: float) -> str | None:
    if not extreme_change(win_rate, lc):
        return None
    return (f"length-controlled win rate {lc:.1f}% is far from the raw {win_rate:.1f}% (moved by more than "
            f"10 points and a quarter of the way to 0 or 100): the length model may not fit this model")


def _difficulty_for(grid: PreferenceGrid, difficulty: pd.Series) -> np.ndarray:
    table = pd.Series(np.asarray(difficulty, dtype=float), index=difficulty.index.astype(str))
    if not np.isfinite(table.to_numpy()).all():
        raise LengthControlError("difficulty: every γ must be a finite number")
    missing = grid.prompts.difference(table.index)
    if len(missing):
        raise LengthControlError(f"difficulty: no γ for {len(missing)} prompt(s) of the preferences, e.g. "
                                 f"query_id {', '.join(map(str, missing[:5]))}")
    return table.reindex(grid.prompts).to_numpy()


def _rates(prefs: pd.DataFrame, grid: PreferenceGrid, lc: pd.Series, se: pd.Series) -> pd.DataFrame:
    models = sorted(prefs["model"].astype(str).unique())
    raw = 100.0 * pd.to_numeric(prefs["preference"]).groupby(prefs["model"].astype(str).to_numpy()).mean()
    rates = pd.DataFrame(index=pd.Index(models, name="model"))
    rates["length_controlled_winrate"] = lc.reindex(models).astype(float)
    rates["lc_standard_error"] = se.reindex(models).astype(float)
    if grid.baseline in rates.index:
        rates.loc[grid.baseline, ["length_controlled_winrate", "lc_standard_error"]] = [50.0, 0.0]
    rates["lc_warning"] = [
        None if not np.isfinite(value) else _warning(float(raw[m]), float(value))
        for m, value in rates["length_controlled_winrate"].items()]
    return rates


def length_controlled(prefs: pd.DataFrame, *, difficulty: pd.Series | None = None,
                      lc_fit: str = DEFAULT_LC_FIT) -> LengthControl:
    """Length-controlled win rate and AlpacaEval's ``lc_standard_error`` for every model in ``prefs``.

    ``difficulty``: a published γ per query_id (e.g. from :func:`core.judge.difficulty.read_difficulty`);
    without it γ is estimated by one joint fit over every model in the frame. Models without answer lengths
    get NaN and a note.
    """
    grid = preference_grid(prefs)
    notes = list(grid.notes)
    if not grid.models:
        empty = pd.Series(dtype=float, index=pd.Index([], name="query_id"), name="difficulty")
        return LengthControl(_rates(prefs, grid, pd.Series(dtype=float), pd.Series(dtype=float)), empty,
                             "none: no model has answer lengths", tuple(notes))
    weights = row_weights(grid, None)
    tanh_gap, no_spread = tanh_length_gap(grid, weights)
    if difficulty is None:
        used, joint = joint_difficulty(grid, tanh_gap, no_spread, weights)
        gamma = joint.gamma
        source = (f"joint fit over {int(used.sum())} model(s) in this file (ridge {DIFFICULTY_RIDGE:g} on γ, "
                  f"γ mean 0)")
    else:
        gamma = _difficulty_for(grid, difficulty)
        source = f"file {difficulty.attrs.get('source', 'given table')}"
    notes.extend(f"{m}: its length gap to the baseline does not vary, so no length term is fitted"
                 for m, flat in zip(grid.models, no_spread) if flat)
    coef, _ = fit_models(grid, tanh_gap, no_spread, gamma, weights, lc_fit)
    degenerate = degenerate_fits(grid.models, tanh_gap, no_spread, weights, coef)
    notes.extend(f"{m}: no length-controlled win rate: {why}" for m, why in degenerate.items())
    predicted = lc_predictions(coef, gamma)
    n = weights.sum(axis=1)
    mean = (weights * predicted).sum(axis=1) / n
    mean[[m in degenerate for m in grid.models]] = np.nan
    # AlpacaEval: pd.Series(predicted_preferences).sem(), the sd (ddof 1) of the per-prompt predictions over √n.
    sd = np.sqrt((weights * (predicted - mean[:, None]) ** 2).sum(axis=1) / (n - 1.0))
    lc = pd.Series(100.0 * mean, index=list(grid.models))
    se = pd.Series(100.0 * sd / np.sqrt(n), index=list(grid.models))
    gamma_series = pd.Series(gamma, index=pd.Index(grid.prompts, name="query_id"), name="difficulty")
    return LengthControl(_rates(prefs, grid, lc, se), gamma_series, source, tuple(notes))


def length_controlled_bootstrap(prefs: pd.DataFrame, *, difficulty: pd.Series | None, replicates: int, seed: int,
                                alpha: float, lc_fit: str = DEFAULT_LC_FIT) -> pd.DataFrame:
    """Percentile interval of each model's length-controlled win rate (percent) by a bootstrap that refits.

    Prompts are resampled with replacement (one draw per replicate, shared by every model: paired); each
    replicate refits tanh Δ's scale, γ (unless ``difficulty`` is given, which stays fixed) and every model's
    GLM, warm-started at the full-data fit. Returns index model, columns lc_ci_low, lc_ci_high; NaN for the
    baseline (50 by definition) and for the models without a length-controlled rate.
    """
    replicates = check_replicates(replicates, error=LengthControlError)
    seed = check_seed(seed, error=LengthControlError)
    alpha = check_alpha(alpha, error=LengthControlError)
    grid = preference_grid(prefs)
    models = sorted(prefs["model"].astype(str).unique())
    out = pd.DataFrame(np.nan, index=pd.Index(models, name="model"), columns=["lc_ci_low", "lc_ci_high"])
    if not grid.models:
        return out
    draws = bootstrap_lc_draws(grid, difficulty, replicates, seed, lc_fit)
    drawn = np.isfinite(draws).any(axis=0)  # a degenerate model has no draw (and no rate)
    low, high = np.nanquantile(draws[:, drawn], [alpha / 2, 1 - alpha / 2], axis=0, method="linear")
    fitted = np.asarray(grid.models, dtype=object)[drawn].tolist()
    out.loc[fitted, "lc_ci_low"] = low
    out.loc[fitted, "lc_ci_high"] = high
    return out


def bootstrap_lc_draws(grid: PreferenceGrid, difficulty: pd.Series | None, replicates: int,
                       seed: int, lc_fit: str = DEFAULT_LC_FIT) -> np.ndarray:
    """(replicates, M) length-controlled win rates (percent) of the resampled prompt sets.

    With AlpacaEval's L1 fit each replicate refits every model at the C its cross-validation chose on the full
    data (repeating the cross-validation would cost 50 fits per model and replicate).
    """
    rng = np.random.default_rng(seed)
    full_weights = row_weights(grid, None)
    tanh_gap, no_spread = tanh_length_gap(grid, full_weights)
    fixed_gamma = None if difficulty is None else _difficulty_for(grid, difficulty)
    used, start = (None, None) if fixed_gamma is not None else joint_difficulty(grid, tanh_gap, no_spread,
                                                                                full_weights)
    gamma0 = fixed_gamma if start is None else start.gamma
    coef0, penalty = fit_models(grid, tanh_gap, no_spread, gamma0, full_weights, lc_fit)
    degenerate = degenerate_fits(grid.models, tanh_gap, no_spread, full_weights, coef0)
    usable = np.array([m not in degenerate for m in grid.models])
    n_prompts = len(grid.prompts)
    draws = np.full((replicates, len(grid.models)), np.nan)
    for r in range(replicates):
        prompt_weights = rng.multinomial(n_prompts, np.full(n_prompts, 1.0 / n_prompts)).astype(float)
        weights = row_weights(grid, prompt_weights)
        # A model left with fewer than three distinct prompts cannot support its three coefficients: no draw.
        fitted = (weights > 0).sum(axis=1) >= 3
        tanh_r, flat_r = tanh_length_gap(grid, weights)
        gamma = fixed_gamma if start is None else joint_difficulty(
            grid, tanh_r, flat_r, weights, start=start, candidates=used, tolerance=REPLICATE_TOLERANCE)[1].gamma
        fit_weights = np.where(fitted[:, None], weights, full_weights)
        if penalty is None:
            coef = fit_glms(grid, tanh_r, flat_r, gamma, fit_weights, start=coef0, tolerance=REPLICATE_TOLERANCE)
        else:
            coef = refit_l1(tanh_r, gamma, grid.preference, fit_weights, penalty,
                            held_at_zero(flat_r, gamma, fit_weights), start=coef0, tolerance=REPLICATE_TOLERANCE)
        predicted = lc_predictions(coef, gamma)
        rates = 100.0 * (weights * predicted).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-300)
        draws[r] = np.where(fitted & usable, rates, np.nan)
    return draws
