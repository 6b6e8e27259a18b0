"""Degenerate length-controlled fits (docs/methods.md §12): a saturated length gap or a separation gives no LC
and a note naming the model, never a misleading number, and leaves every other model's LC standing."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.judge import difficulty as difficulty_module
from core.judge import l1_fit
from core.judge import length_control as length_control_module
from core.judge.analysis import judge
from core.judge.degenerate import saturated_share
from core.judge.length_control import length_controlled, length_controlled_bootstrap
from core.judge.types import LC_FITS, JudgeError, JudgeSettings
from core.ranking.bradley_terry import ConvergenceError
from tests.test_judge_length_control import synthetic


def with_degenerate_models(seed=3):
    """Four ordinary models, plus ``terse`` (5–10 characters against a baseline of 2,000 ± 20: tanh Δ = 1 on
    every prompt) and ``separated`` (wins exactly the prompts where it answers longer, hard 0/1 labels)."""
    prefs = synthetic(n_models=4, n_prompts=120, seed=seed)
    base = prefs[prefs["model"] == "base"]
    rng = np.random.default_rng(seed)
    terse = base.assign(model="terse", len_baseline=2000 + rng.normal(0, 20, len(base)),
                        len_model=5.0 + rng.integers(0, 6, len(base)), preference=rng.uniform(0, 0.2, len(base)))
    longer = base["len_baseline"].to_numpy() * rng.lognormal(0, 0.5, len(base))
    separated = base.assign(model="separated", len_model=longer,
                            preference=(longer > base["len_baseline"].to_numpy()).astype(float))
    return pd.concat([prefs, terse, separated], ignore_index=True), prefs


@pytest.mark.parametrize("lc_fit", LC_FITS)
def test_degenerate_models_get_no_lc_and_a_note_and_the_others_are_unchanged(lc_fit):
    frame, ordinary = with_degenerate_models()
    result = length_controlled(frame, lc_fit=lc_fit)
    rates = result.rates["length_controlled_winrate"]
    assert rates[["terse", "separated"]].isna().all()
    notes = " ".join(result.notes)
    assert "terse: no length-controlled win rate: its length gap to the baseline is so one-sided" in notes
    assert "separated: no length-controlled win rate: its GLM has no finite optimum" in notes
    # neither enters the joint difficulty fit, so the others' LC is what it is without them
    alone = length_controlled(ordinary, lc_fit=lc_fit).rates["length_controlled_winrate"]
    np.testing.assert_allclose(rates[alone.index], alone, rtol=1e-6)
    assert "joint fit over 4 model(s)" in result.difficulty_source
    interval = length_controlled_bootstrap(frame, difficulty=None, replicates=10, seed=1, alpha=0.1, lc_fit=lc_fit)
    assert interval.loc[["terse", "separated"]].isna().all().all()
    assert interval.drop(["base", "terse", "separated"]).notna().all().all()


def test_saturated_share_counts_one_end_only():
    tanh_gap = np.array([[0.995] * 19 + [0.5], [0.995] * 10 + [-0.995] * 10])
    np.testing.assert_allclose(saturated_share(tanh_gap, np.ones_like(tanh_gap)), [0.95, 0.5])


def test_judge_output_names_the_degenerate_model(capsys, tmp_path):
    frame, _ = with_degenerate_models(seed=5)
    result = judge(frame, JudgeSettings(bootstrap=0, lc_bootstrap=5))
    assert result.rates.loc[["terse", "separated"], "length_controlled_winrate"].isna().all()
    assert result.rates.drop(["terse", "separated"])["length_controlled_winrate"].notna().all()
    path = tmp_path / "prefs.csv"
    frame.to_csv(path, index=False)
    assert main(["judge", str(path), "--bootstrap", "0", "--lc-bootstrap", "0"]) == 0
    data = json.loads(capsys.readouterr().out)
    terse = next(m for m in data["models"] if m["model"] == "terse")
    assert terse["length_controlled_winrate"] is None and terse["lc_standard_error"] is None
    assert any(n.startswith("terse: no length-controlled win rate") for n in data["params"]["notes"])


@pytest.mark.parametrize(("module", "name", "call"), [
    (difficulty_module, "MAX_ITER", lambda prefs: length_controlled(prefs, lc_fit="glm")),
    (l1_fit, "L1_MAX_ITER", lambda prefs: length_controlled(prefs, lc_fit="alpaca")),
])
def test_a_fit_that_runs_out_of_iterations_raises_convergence_error(monkeypatch, module, name, call):
    monkeypatch.setattr(module, name, 1)
    if module is difficulty_module:
        monkeypatch.setattr(length_control_module, "MAX_ITER", 1)
    with pytest.raises(ConvergenceError, match=r"did not converge \(after 1 iterations\)"):
        call(synthetic(n_models=3, n_prompts=60, seed=1))


def test_lc_fit_option(capsys, tmp_path):
    path = tmp_path / "prefs.csv"
    synthetic(n_models=3, n_prompts=80, seed=6).to_csv(path, index=False)
    runs = {}
    for fit in LC_FITS:
        assert main(["judge", str(path), "--bootstrap", "0", "--lc-bootstrap", "0", "--lc-fit", fit]) == 0
        runs[fit] = json.loads(capsys.readouterr().out)
        assert runs[fit]["params"]["lc_fit"] == fit
    notes = " ".join(runs["alpaca"]["params"]["notes"])
    assert "as AlpacaEval fits it: L1 penalty" in notes
    assert "plain maximum likelihood" in " ".join(runs["glm"]["params"]["notes"])
    with pytest.raises(SystemExit) as stop:
        main(["judge", str(path), "--lc-fit", "ridge"])
    assert stop.value.code == 2
    with pytest.raises(JudgeError, match="`lc_fit` must be one of alpaca, glm"):
        JudgeSettings(lc_fit="ridge")
