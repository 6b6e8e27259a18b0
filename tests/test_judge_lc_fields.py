"""The length-controlled fields in a judge result (core.judge.length_fields over core.judge.length_control):
wired to the model they belong to, absent with a reason where there are no lengths, the baseline at 50, the
interval's replicates and a published difficulty table through the command line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import core.judge.length_fields as fields
from core.cli import main
from core.judge.analysis import JudgeError, JudgeSettings, judge
from core.judge.length_control import length_controlled
from core.ranking.bradley_terry import ConvergenceError


def synthetic(n_prompts=120, seed=0, lengths=True) -> pd.DataFrame:
    """Three models against base; 'long' wins mostly by writing longer, 'good' wins at equal length."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_prompts):
        difficulty = rng.normal()
        base_len = rng.uniform(200, 400)
        for model, skill, extra in (("good", 1.0, 0.0), ("long", -0.5, 150.0), ("plain", 0.0, 0.0)):
            length = max(base_len + extra + rng.normal(0, 150), 1.0)
            gap = np.tanh((base_len - length) / 150)
            p = 1 / (1 + np.exp(-(skill - 1.5 * gap - 0.5 * difficulty + rng.normal(0, 0.3))))
            rows.append((model, "base", f"q{q}", p, length, base_len, "x" if q % 2 else "y"))
    frame = pd.DataFrame(rows, columns=["model", "baseline", "query_id", "preference", "len_model", "len_baseline",
                                        "category"])
    return frame if lengths else frame.drop(columns=["len_model", "len_baseline"])


def test_lc_fields_belong_to_their_model_and_sort_the_table():
    frame = synthetic()
    result = judge(frame, JudgeSettings(bootstrap=200, lc_bootstrap=30, seed=1))
    reference = length_controlled(frame).rates
    for model in ("good", "long", "plain"):
        assert result.rates.loc[model, "length_controlled_winrate"] == \
            pytest.approx(reference.loc[model, "length_controlled_winrate"], abs=1e-12)
        assert result.rates.loc[model, "lc_standard_error"] == pytest.approx(reference.loc[model, "lc_standard_error"])
        low, high = result.rates.loc[model, ["lc_ci_low", "lc_ci_high"]]
        assert 0 <= low <= high <= 100
    assert result.params["sorted_by"] == "length_controlled_winrate"
    lc = result.rates["length_controlled_winrate"]
    assert list(lc) == sorted(lc, reverse=True)
    # the longer model's wins come from length: length control takes it down, below 50 (its skill is negative)
    assert 20 < lc["long"] < 50 < result.rates.loc["long", "win_rate"]
    assert lc["good"] > 55
    assert "joint fit over" in result.params["difficulty_source"]
    assert any(n.startswith("lc_standard_error is AlpacaEval's") and n.endswith("30 replicates") for n in result.notes)
    data = result.as_dict()
    base = next(m for m in data["models"] if m["is_baseline"])
    assert (base["length_controlled_winrate"], base["lc_ci_low"], base["lc_ci_high"]) == (50.0, 50.0, 50.0)


def test_without_lengths_the_lc_fields_are_null_and_the_notes_say_why():
    result = judge(synthetic(lengths=False), JudgeSettings(bootstrap=20, lc_bootstrap=20))
    data = result.as_dict()
    for model in (m for m in data["models"] if not m["is_baseline"]):
        assert model["length_controlled_winrate"] is None and model["lc_ci_low"] is None
        assert model["win_rate"] is not None
    assert result.params["sorted_by"] == "win_rate"
    assert "length" in " ".join(result.notes)
    assert "nan" not in json.dumps(data).lower()


def test_lc_bootstrap_zero_keeps_the_rate_and_drops_its_interval():
    result = judge(synthetic(), JudgeSettings(bootstrap=0, lc_bootstrap=0))
    assert result.rates.loc["good", "length_controlled_winrate"] > 50
    assert result.rates[["lc_ci_low", "lc_ci_high"]].drop("base").isna().all().all()
    assert result.params["lc_bootstrap"] == 0
    with pytest.raises(JudgeError, match="`lc_bootstrap` must be a non-negative integer"):
        JudgeSettings(lc_bootstrap=-5)


def test_published_difficulty_table_through_the_command_line(tmp_path, capsys):
    frame = synthetic(n_prompts=60)
    prefs = tmp_path / "prefs.csv"
    frame.to_csv(prefs, index=False)
    gamma = tmp_path / "gamma.csv"
    pd.DataFrame({"query_id": [f"q{q}" for q in range(60)], "difficulty": np.linspace(-1, 1, 60)}).to_csv(gamma,
                                                                                                        index=False)
    assert main(["judge", str(prefs), "--difficulty", str(gamma), "--bootstrap", "0", "--lc-bootstrap", "5"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["params"]["difficulty_source"] == "file gamma.csv" and data["params"]["lc_bootstrap"] == 5
    assert all(m["length_controlled_winrate"] is not None for m in data["models"])
    gamma.write_text("query_id,difficulty\nq1,oops\n", encoding="utf-8")
    assert main(["judge", str(prefs), "--difficulty", str(gamma)]) == 2
    assert "gamma.csv" in capsys.readouterr().err


def test_refitting_the_difficulty_in_each_replicate_is_a_choice_the_notes_name():
    frame = synthetic(n_prompts=60)
    held = judge(frame, JudgeSettings(bootstrap=0, lc_bootstrap=8, seed=2, refit_difficulty=False))
    refit = judge(frame, JudgeSettings(bootstrap=0, lc_bootstrap=8, seed=2))  # the default refits γ
    pd.testing.assert_series_equal(held.rates["length_controlled_winrate"], refit.rates["length_controlled_winrate"])
    bounds = ["lc_ci_low", "lc_ci_high"]
    assert not np.allclose(held.rates.loc[["good", "plain"], bounds].astype(float),
                           refit.rates.loc[["good", "plain"], bounds].astype(float))
    assert any("difficulty held at the full fit" in n for n in held.notes)
    assert any("difficulty refitted in each replicate" in n for n in refit.notes)
    assert refit.params["refit_difficulty"] is True
    with pytest.raises(JudgeError, match="`refit_difficulty` must be true or false"):
        JudgeSettings(refit_difficulty="yes")


def test_a_length_model_that_does_not_converge_leaves_the_win_rates_standing(monkeypatch):
    def fails(*args, **kwargs):
        raise ConvergenceError("length-controlled GLM: Newton's method did not converge in 100 iterations", 100)

    frame = synthetic(n_prompts=40)
    expected = judge(frame, JudgeSettings(bootstrap=30, lc_bootstrap=0)).rates["win_rate"]
    monkeypatch.setattr(fields, "length_controlled_bootstrap", fails)
    result = judge(frame, JudgeSettings(bootstrap=30, lc_bootstrap=5))
    assert result.rates[["lc_ci_low", "lc_ci_high"]].drop("base").isna().all().all()
    assert result.rates.loc["good", "length_controlled_winrate"] > 50
    assert any(n.startswith("no length-controlled interval: length-controlled GLM") for n in result.notes)
    monkeypatch.setattr(fields, "length_controlled", fails)
    result = judge(frame, JudgeSettings(bootstrap=30, lc_bootstrap=5))
    pd.testing.assert_series_equal(result.rates["win_rate"].sort_index(), expected.sort_index())
    assert result.rates["length_controlled_winrate"].drop("base").isna().all()
    assert any(n.startswith("no length-controlled win rate: length-controlled GLM") for n in result.notes)
    assert "nan" not in json.dumps(result.as_dict()).lower()


def test_the_command_line_refits_the_difficulty_unless_told_to_hold_it(tmp_path, capsys):
    prefs = tmp_path / "prefs.csv"
    synthetic(n_prompts=60).to_csv(prefs, index=False)
    runs = {}
    for name, extra in (("refit", []), ("held", ["--hold-difficulty"])):
        assert main(["judge", str(prefs), "--bootstrap", "0", "--lc-bootstrap", "6", *extra]) == 0
        runs[name] = json.loads(capsys.readouterr().out)
    assert runs["refit"]["params"]["refit_difficulty"] is True and runs["held"]["params"]["refit_difficulty"] is False
    low = {name: {m["model"]: m["lc_ci_low"] for m in run["models"]} for name, run in runs.items()}
    assert low["refit"]["good"] != low["held"]["good"]
    assert any("refitted in each replicate" in n for n in runs["refit"]["params"]["notes"])
