"""AlpacaEval's length-controlled win rate (docs/methods.md §12): reproduction, properties, cross-checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.stats import spearmanr

from core.judge.difficulty import (
    LengthControlError,
    fit_difficulty,
    preference_grid,
    read_difficulty,
    row_weights,
    tanh_length_gap,
)
from core.judge.length_control import (
    extreme_change,
    fit_glms,
    fit_models,
    length_controlled,
    length_controlled_bootstrap,
)
from core.judge.types import LC_FITS
from tests.conftest import shared_file
from tests.reference_values import ALPACA2_PUBLISHED_LC, ALPACA2_PUBLISHED_LC_SE

LC_MEDIAN_ABS = 1.0  # the bar: median |ours − published| over the published models, points
LC_SPEARMAN = 0.97  # the bar, over every model on the published leaderboard (docs/methods.md §12)
# AlpacaEval's own fit (L1, C by cross-validation; the default) meets it: 0.9702 (0.9800 without gpt4_gamed). The
# unpenalised GLM falls just short with gpt4_gamed (0.9699; 0.9796 without): recorded, not the bar.
LC_SPEARMAN_GLM = 0.969
LC_SPEARMAN_GLM_WITHOUT_GAMED = 0.979
LC_SE_RTOL = 0.15  # lc_standard_error depends on γ, which here comes from 57 models, not AlpacaEval's set
FIT_ATOL = 1e-5  # Newton vs scipy's BFGS on the same objective


def synthetic(n_models=6, n_prompts=120, seed=0, length_effect=0.8, baseline="base"):
    """Preferences with planted quality θ_m, prompt difficulty γ and a length effect (longer wins)."""
    rng = np.random.default_rng(seed)
    gamma = rng.normal(0, 1, n_prompts)
    len_base = rng.integers(200, 2000, n_prompts).astype(float)
    query_ids = [f"q{x}" for x in range(n_prompts)]
    rows = []
    for m in range(n_models):
        theta = rng.normal(-0.5, 1)
        len_model = np.maximum(10.0, len_base * rng.lognormal(rng.normal(0, 0.4), 0.5, n_prompts))
        gap = len_base - len_model
        eta = theta + gamma - length_effect * np.tanh(gap / gap.std(ddof=1))
        pref = 1 / (1 + np.exp(-eta))
        rows.append(pd.DataFrame({"model": f"m{m}", "baseline": baseline, "query_id": query_ids,
                                  "preference": pref, "len_model": len_model, "len_baseline": len_base}))
    rows.append(pd.DataFrame({"model": baseline, "baseline": baseline, "query_id": query_ids,
                              "preference": 0.5, "len_model": len_base, "len_baseline": len_base}))
    return pd.concat(rows, ignore_index=True)


def alpaca_prefs():
    data = pd.read_csv(shared_file("alpaca_eval_annotations/preferences.csv"))
    return pd.DataFrame({"model": data["model"], "baseline": data["baseline"],
                         "query_id": data["instruction_id"].astype(str), "preference": data["score"],
                         "len_model": data["len_model_chars"].astype(float),
                         "len_baseline": data["len_baseline_chars"].astype(float), "category": data["dataset"]})


# --- reproduction of AlpacaEval 2.0 ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def alpaca_lc():
    return length_controlled(alpaca_prefs())


def test_reproduces_published_length_controlled_win_rates(alpaca_lc):
    published = pd.Series(ALPACA2_PUBLISHED_LC)
    ours = alpaca_lc.rates["length_controlled_winrate"].reindex(published.index)
    assert len(published) == 51 and ours.notna().all()
    assert (ours - published).abs().median() <= LC_MEDIAN_ABS
    assert spearmanr(ours, published).statistic >= LC_SPEARMAN
    for model, se in ALPACA2_PUBLISHED_LC_SE.items():
        assert alpaca_lc.rates.loc[model, "lc_standard_error"] == pytest.approx(se, rel=LC_SE_RTOL)
    assert "joint fit over 57 model(s)" in alpaca_lc.difficulty_source
    assert abs(alpaca_lc.difficulty.mean()) < 1e-8 and len(alpaca_lc.difficulty) == 805


def test_the_unpenalised_glm_reproduces_the_median_but_not_quite_the_ranking():
    published = pd.Series(ALPACA2_PUBLISHED_LC)
    glm = length_controlled(alpaca_prefs(), lc_fit="glm").rates["length_controlled_winrate"].reindex(published.index)
    assert (glm - published).abs().median() <= LC_MEDIAN_ABS
    assert LC_SPEARMAN_GLM <= spearmanr(glm, published).statistic < LC_SPEARMAN
    without = spearmanr(glm.drop("gpt4_gamed"), published.drop("gpt4_gamed")).statistic
    assert without >= LC_SPEARMAN_GLM_WITHOUT_GAMED


def test_alpaca_rates_are_finite_and_flag_the_gamed_model(alpaca_lc):
    rates = alpaca_lc.rates
    assert len(rates) == 58 and np.isfinite(rates[["length_controlled_winrate", "lc_standard_error"]]).all().all()
    assert rates.loc["gpt4_1106_preview", "length_controlled_winrate"] == 50.0
    assert rates.loc["gpt4_1106_preview", "lc_standard_error"] == 0.0
    # gpt4_gamed answers in 68 characters: raw 3.7 %, LC far above it, which AlpacaEval's rule flags
    assert "far from the raw" in rates.loc["gpt4_gamed", "lc_warning"]
    assert rates["lc_warning"].notna().sum() < 5


# --- properties ---------------------------------------------------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_a_model_identical_to_the_baseline_has_lc_50(seed):
    prefs = synthetic(n_models=4, n_prompts=60, seed=seed)
    twin = prefs[prefs["model"] == "base"].assign(model="twin")
    result = length_controlled(pd.concat([prefs, twin], ignore_index=True))
    assert result.rates.loc["twin", "length_controlled_winrate"] == pytest.approx(50.0, abs=1e-9)
    assert any("twin" in note and "does not vary" in note for note in result.notes)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.01, 100.0))
def test_scaling_every_length_leaves_lc_unchanged(seed, scale):
    prefs = synthetic(n_models=4, n_prompts=60, seed=seed)
    scaled = prefs.assign(len_model=prefs["len_model"] * scale, len_baseline=prefs["len_baseline"] * scale)
    before = length_controlled(prefs).rates["length_controlled_winrate"]
    after = length_controlled(scaled).rates["length_controlled_winrate"]
    np.testing.assert_allclose(after, before, rtol=1e-7)


def test_wins_that_come_only_from_longer_answers_move_toward_50():
    prefs = synthetic(n_models=8, n_prompts=400, seed=3, length_effect=0.8)
    rng = np.random.default_rng(1)
    base = prefs[prefs["model"] == "base"]
    len_model = base["len_baseline"].to_numpy() * rng.lognormal(0.8, 0.4, len(base))  # mostly longer
    gap = base["len_baseline"].to_numpy() - len_model
    pref = 1 / (1 + np.exp(2.0 * np.tanh(gap / gap.std(ddof=1))))  # equal quality: length alone wins
    verbose = base.assign(model="verbose", len_model=len_model, preference=pref)
    rates = length_controlled(pd.concat([prefs, verbose], ignore_index=True)).rates
    raw = 100 * pref.mean()
    lc = rates.loc["verbose", "length_controlled_winrate"]
    assert raw > 70
    assert abs(lc - 50) < 0.25 * abs(raw - 50)


def test_models_without_lengths_get_nan_and_a_note():
    prefs = synthetic(n_models=3, n_prompts=50, seed=2)
    prefs.loc[prefs["model"] == "m1", ["len_model"]] = np.nan
    result = length_controlled(prefs)
    assert np.isnan(result.rates.loc["m1", "length_controlled_winrate"])
    assert np.isnan(result.rates.loc["m1", "lc_standard_error"]) and result.rates.loc["m1", "lc_warning"] is None
    assert any(note.startswith("m1: no length-controlled win rate (no answer lengths)") for note in result.notes)
    assert np.isfinite(result.rates.loc["m0", "length_controlled_winrate"])
    bare = length_controlled(prefs.drop(columns=["len_model", "len_baseline"]))
    assert bare.rates["length_controlled_winrate"].drop("base").isna().all()
    assert bare.difficulty_source.startswith("none")


@pytest.mark.parametrize("lc_fit", LC_FITS)
def test_lc_standard_error_is_the_sem_of_the_predicted_preferences(lc_fit):
    prefs = synthetic(n_models=3, n_prompts=80, seed=5)
    result = length_controlled(prefs, lc_fit=lc_fit)
    grid = preference_grid(prefs)
    weights = row_weights(grid, None)
    tanh_gap, flat = tanh_length_gap(grid, weights)
    gamma = result.difficulty.reindex(grid.prompts).to_numpy()
    coef, _ = fit_models(grid, tanh_gap, flat, gamma, weights, lc_fit)
    for i, model in enumerate(grid.models):
        predicted = pd.Series(1 / (1 + np.exp(-(coef[i, 1] * gamma + coef[i, 2]))))
        assert result.rates.loc[model, "length_controlled_winrate"] == pytest.approx(100 * predicted.mean())
        assert result.rates.loc[model, "lc_standard_error"] == pytest.approx(100 * predicted.sem())


# --- the fits equal scipy's maximisers of the same objectives --------------------------------------------------------


def test_glm_equals_scipy_maximiser():
    prefs = synthetic(n_models=5, n_prompts=150, seed=11)
    grid = preference_grid(prefs)
    weights = row_weights(grid, None)
    tanh_gap, flat = tanh_length_gap(grid, weights)
    gamma = np.random.default_rng(0).normal(0, 1, len(grid.prompts))
    coef = fit_glms(grid, tanh_gap, flat, gamma, weights)
    for i in range(len(grid.models)):
        design = np.column_stack([tanh_gap[i], gamma, np.ones_like(gamma)])
        p = grid.preference[i]

        def loss(w, design=design, p=p):
            eta = design @ w
            return np.sum(np.logaddexp(0, eta) - p * eta), design.T @ (1 / (1 + np.exp(-eta)) - p)

        best = minimize(loss, np.zeros(3), jac=True, method="BFGS", options={"gtol": 1e-10})
        np.testing.assert_allclose(coef[i], best.x, atol=FIT_ATOL)


def test_joint_difficulty_fit_equals_scipy_maximiser():
    prefs = synthetic(n_models=4, n_prompts=30, seed=7)
    grid = preference_grid(prefs)
    weights = row_weights(grid, np.random.default_rng(2).integers(0, 3, len(grid.prompts)).astype(float))
    tanh_gap, flat = tanh_length_gap(grid, weights)
    ridge = 0.1
    fit = fit_difficulty(grid, tanh_gap, flat, weights, ridge=ridge)
    n_models, n_prompts = grid.preference.shape

    def loss(z):
        theta, phi, gamma = z[:n_models], z[n_models:2 * n_models], z[2 * n_models:]
        eta = theta[:, None] + phi[:, None] * tanh_gap + gamma[None, :]
        resid = weights * (1 / (1 + np.exp(-eta)) - grid.preference)
        value = np.sum(weights * (np.logaddexp(0, eta) - grid.preference * eta)) + 0.5 * ridge * gamma @ gamma
        return value, np.concatenate([resid.sum(1), (resid * tanh_gap).sum(1), resid.sum(0) + ridge * gamma])

    best = minimize(loss, np.zeros(2 * n_models + n_prompts), jac=True, method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(np.concatenate([fit.theta, fit.phi, fit.gamma]), best.x, atol=FIT_ATOL)
    assert abs(np.sum(fit.gamma)) < 1e-8  # θ unpenalised: the ridge centres γ exactly


# --- AlpacaEval's warning -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "lc", "warn"), [
    (20.0, 9.99, True), (20.0, 10.01, False),  # down: max(10 points, 20/4 = 5) → below 10
    (50.0, 62.49, False), (50.0, 62.51, True),  # up: max(10, 50/4 = 12.5) → above 62.5
    (3.7, 27.8, True), (90.0, 99.0, False), (5.0, 0.0, False),
])
def test_extreme_change_rule(raw, lc, warn):
    assert extreme_change(raw, lc) is warn


# --- a published difficulty table ----------------------------------------------------------------------------------


def test_published_difficulty_is_used_and_named(tmp_path):
    prefs = synthetic(n_models=3, n_prompts=40, seed=4)
    path = tmp_path / "gamma.csv"
    pd.DataFrame({"instruction_id": [f"q{x}" for x in range(40)], "instruction_difficulty": np.linspace(-2, 2, 40)}
                 ).to_csv(path, index=False)
    table = read_difficulty(path)
    result = length_controlled(prefs, difficulty=table)
    assert result.difficulty_source == "file gamma.csv"
    np.testing.assert_allclose(result.difficulty.to_numpy(), table.reindex(result.difficulty.index).to_numpy())
    with pytest.raises(LengthControlError, match="no γ for 1 prompt"):
        length_controlled(prefs, difficulty=table.drop("q7"))


def test_read_difficulty_names_bad_lines(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("index,instruction_difficulty\n0,0.5\n1,abc\n2,\n")
    with pytest.raises(LengthControlError, match=r"g.csv: column instruction_difficulty .* lines 3, 4"):
        read_difficulty(path)
    path.write_text("index,instruction_difficulty\n0,0.5\n0,0.7\n")
    with pytest.raises(LengthControlError, match="names a prompt twice"):
        read_difficulty(path)
    path.write_text("only\n1\n")
    with pytest.raises(LengthControlError, match="needs a prompt id column"):
        read_difficulty(path)
    with pytest.raises(LengthControlError, match="not found"):
        read_difficulty(tmp_path / "missing.csv")


# --- bad input ------------------------------------------------------------------------------------------------------


def test_bad_frames_are_refused_with_reasons():
    prefs = synthetic(n_models=2, n_prompts=20, seed=1)
    with pytest.raises(LengthControlError, match="one baseline"):
        length_controlled(prefs.assign(baseline=np.where(prefs.index % 2, "a", "b")))
    with pytest.raises(LengthControlError, match="more than one row"):
        length_controlled(pd.concat([prefs, prefs.head(1)], ignore_index=True))
    with pytest.raises(LengthControlError, match="rows 3"):
        length_controlled(prefs.assign(preference=prefs["preference"].where(prefs.index != 3, 1.5)))


def test_judge_failures_are_left_out_with_a_note():
    prefs = synthetic(n_models=2, n_prompts=40, seed=1)
    failed = prefs.assign(preference=prefs["preference"].where(~prefs.index.isin([0, 5, 50])))
    result = length_controlled(failed)
    assert "3 row(s) without a preference (judge failures) are left out of the length control" in result.notes
    reference = length_controlled(prefs.drop(index=[0, 5, 50]))
    pd.testing.assert_frame_equal(result.rates, reference.rates)


# --- bootstrap ------------------------------------------------------------------------------------------------------


def test_bootstrap_interval_holds_the_estimate_and_repeats_with_its_seed():
    prefs = synthetic(n_models=4, n_prompts=100, seed=9)
    point = length_controlled(prefs).rates["length_controlled_winrate"]
    ci = length_controlled_bootstrap(prefs, difficulty=None, replicates=60, seed=3, alpha=0.1)
    again = length_controlled_bootstrap(prefs, difficulty=None, replicates=60, seed=3, alpha=0.1)
    pd.testing.assert_frame_equal(ci, again)
    models = [m for m in point.index if m != "base"]
    assert (ci.loc[models, "lc_ci_low"] < point[models]).all() and (point[models] < ci.loc[models, "lc_ci_high"]).all()
    assert ci.loc["base"].isna().all()
    with pytest.raises(LengthControlError, match="replicates"):
        length_controlled_bootstrap(prefs, difficulty=None, replicates=0, seed=0, alpha=0.05)


def test_planted_quality_is_recovered_at_equal_length():
    """Synthetic judge with a length bias: LC tracks the planted equal-length win rate, the raw rate does not."""
    rng = np.random.default_rng(4)
    n_models, n_prompts = 12, 500
    gamma = rng.normal(0, 1.5, n_prompts)
    len_base = rng.integers(300, 3000, n_prompts).astype(float)
    theta = rng.normal(-1, 1, n_models)
    frames, truth, raw = [], {}, {}
    for m in range(n_models):
        len_model = len_base * rng.lognormal(rng.normal(0, 0.6), 0.5, n_prompts)
        gap = len_base - len_model
        pref = 1 / (1 + np.exp(-(theta[m] + gamma - 1.5 * np.tanh(gap / gap.std(ddof=1)))))
        truth[f"m{m}"] = 100 * np.mean(1 / (1 + np.exp(-(theta[m] + gamma))))
        raw[f"m{m}"] = 100 * pref.mean()
        frames.append(pd.DataFrame({"model": f"m{m}", "baseline": "base", "query_id": np.arange(n_prompts),
                                    "preference": pref, "len_model": len_model, "len_baseline": len_base}))
    rates = length_controlled(pd.concat(frames, ignore_index=True)).rates["length_controlled_winrate"]
    truth, raw = pd.Series(truth), pd.Series(raw)
    lc_error = (rates[truth.index] - truth).abs()
    assert lc_error.max() < 1.0
    assert lc_error.mean() < 0.2 * (raw - truth).abs().mean()


def test_edge_cases_one_model_few_rows_and_only_the_baseline():
    prefs = synthetic(n_models=1, n_prompts=40, seed=6)
    one = length_controlled(prefs)
    assert np.isfinite(one.rates.loc["m0", "length_controlled_winrate"])
    assert "joint fit over 1 model(s)" in one.difficulty_source
    # concatenated without a new index on purpose: repeated index labels must not matter
    few = pd.concat([prefs, synthetic(n_models=1, n_prompts=5, seed=1).query("model == 'm0'").assign(model="tiny")])
    result = length_controlled(few)
    assert np.isnan(result.rates.loc["tiny", "length_controlled_winrate"])
    assert any(note.startswith("tiny: no length-controlled win rate (only 5 prompts") for note in result.notes)
    only_base = length_controlled(prefs[prefs["model"] == "base"])
    assert list(only_base.rates.index) == ["base"] and only_base.rates.loc["base", "length_controlled_winrate"] == 50
    assert only_base.difficulty.empty


def test_bootstrap_with_a_published_difficulty_keeps_it_fixed():
    prefs = synthetic(n_models=3, n_prompts=80, seed=8)
    gamma = pd.Series(np.random.default_rng(0).normal(0, 1, 80), index=[f"q{x}" for x in range(80)])
    point = length_controlled(prefs, difficulty=gamma).rates["length_controlled_winrate"]
    ci = length_controlled_bootstrap(prefs, difficulty=gamma, replicates=40, seed=1, alpha=0.1)
    models = ["m0", "m1", "m2"]
    assert (ci.loc[models, "lc_ci_low"] <= point[models]).all()
    assert (point[models] <= ci.loc[models, "lc_ci_high"]).all()
    assert np.isfinite(ci.loc[models].to_numpy()).all()


def test_glm_with_too_few_distinct_prompts_does_not_fail():
    """A resample can leave a model two distinct prompts: three coefficients, a singular Hessian."""
    prefs = synthetic(n_models=2, n_prompts=30, seed=12)
    grid = preference_grid(prefs)
    prompt_weights = np.zeros(len(grid.prompts))
    prompt_weights[[3, 17]] = [5.0, 2.0]
    weights = row_weights(grid, prompt_weights)
    tanh_gap, flat = tanh_length_gap(grid, weights)
    gamma = fit_difficulty(grid, tanh_gap, flat, weights).gamma
    coef = fit_glms(grid, tanh_gap, flat, gamma, weights)
    assert np.isfinite(coef).all()


def test_joint_newton_step_by_conjugate_gradients_equals_the_dense_solve():
    from core.judge import difficulty

    rng = np.random.default_rng(3)
    n_models, n_prompts = 30, 200
    curv = rng.uniform(0.01, 0.25, (n_models, n_prompts)) * (rng.random((n_models, n_prompts)) > 0.1)
    tanh_gap = np.tanh(rng.normal(0, 1, (n_models, n_prompts)))
    no_spread = np.zeros(n_models, dtype=bool)
    no_spread[4] = True
    tanh_gap[4] = 0.0
    g_model, g_gamma = rng.normal(size=2 * n_models), rng.normal(size=n_prompts)
    g_model[n_models + 4] = 0.0  # as in the fit: φ of a model without a length term has no gradient
    diag_gamma = curv.sum(axis=0) + 0.1
    step, step_gamma = difficulty._newton_step(curv, tanh_gap, no_spread, g_model, g_gamma, diag_gamma)
    curv_t = curv * tanh_gap
    h_pp = np.where(no_spread, 1.0, (curv_t * tanh_gap).sum(1))
    rhs = g_model - np.concatenate([(curv * g_gamma / diag_gamma).sum(1), (curv_t * g_gamma / diag_gamma).sum(1)])
    dense = difficulty._dense_step(curv.sum(1), curv_t.sum(1), h_pp, curv, curv_t, diag_gamma, rhs)
    np.testing.assert_allclose(step, dense, rtol=1e-9, atol=1e-12)
    assert step[n_models + 4] == pytest.approx(0.0, abs=1e-12)
