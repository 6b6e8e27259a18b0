"""AlpacaEval's win rates (core.judge): worked values, the baseline's own row, the paired prompt bootstrap,
per-category rates, the settings' checks, and properties (Hypothesis) against a transcription of AlpacaEval's
``describe_head2head`` (src/alpaca_eval/metrics/helpers.py in tatsu-lab/alpaca_eval)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.io import load
from core.judge.analysis import JudgeError, JudgeSettings, judge


def prefs(rows, baseline="base", **extra) -> pd.DataFrame:
    """[(model, query_id, preference), ...] as the normalised frame of core.io.preferences."""
    frame = pd.DataFrame(rows, columns=["model", "query_id", "preference"]).assign(baseline=baseline, **extra)
    frame["preference"] = frame["preference"].astype(np.float64)
    return frame[["model", "baseline", "query_id", "preference", *extra]]


def alpaca_head2head(raw: list[float]) -> dict[str, float]:
    """AlpacaEval's describe_head2head (absolute rule) and the zero-one rule's win_rate, on raw 0/1-2/NaN values."""
    s = pd.Series(raw, dtype=float).replace({0.0: 1.5})
    n_draws = int((s == 1.5).sum())
    kept = s[(s >= 1) & (s <= 2)] - 1
    discrete = pd.Series(raw, dtype=float).replace({1.5: 0.0}).round()
    discrete_draws = int((discrete == 0).sum())
    discrete = discrete.replace({0.0: 1.5})
    discrete = discrete[(discrete >= 1) & (discrete <= 2)] - 1
    return {"win_rate": kept.mean() * 100, "standard_error": kept.sem() * 100, "n_wins": int((kept > 0.5).sum()),
            "n_wins_base": int((kept < 0.5).sum()), "n_draws": n_draws, "n_total": len(kept),
            "discrete_win_rate": discrete.mean() * 100, "discrete_draws": discrete_draws}


def test_worked_example():
    result = judge(prefs([("m", "q1", 1.0), ("m", "q2", 0.0), ("m", "q3", 0.5), ("m", "q4", 0.75)]),
                   JudgeSettings(bootstrap=0))
    row = result.rates.loc["m"]
    p = np.array([1.0, 0.0, 0.5, 0.75])
    assert row["win_rate"] == pytest.approx(56.25)
    assert row["standard_error"] == pytest.approx(100 * p.std(ddof=1) / 2)
    assert (row["n_wins"], row["n_wins_base"], row["n_draws"], row["n_total"]) == (2, 1, 1, 4)
    assert row["discrete_win_rate"] == pytest.approx(62.5)  # (2 wins + 1 draw / 2) / 4


def test_the_baseline_shows_fifty_fifty_with_or_without_its_own_rows():
    frame = prefs([("m", "q1", 1.0), ("m", "q2", 0.0), ("m", "q3", 1.0)], len_model=[10.0, 20.0, 30.0],
                  len_baseline=[4.0, 5.0, 7.0])
    result = judge(frame, JudgeSettings(bootstrap=50))
    base = result.as_dict()["models"][[m["model"] for m in result.as_dict()["models"]].index("base")]
    assert base["is_baseline"] and base["win_rate"] == 50.0 and base["length_controlled_winrate"] == 50.0
    assert (base["n_draws"], base["n_total"], base["standard_error"]) == (3, 3, 0.0)
    assert (base["win_rate_ci_low"], base["win_rate_ci_high"]) == (50.0, 50.0)
    assert base["avg_length"] == 5  # int(mean(4, 5, 7) = 5.33)
    assert "shown at 50 / 50 by definition" in " ".join(result.notes)
    own = pd.concat([frame, prefs([("base", q, 0.5) for q in ("q1", "q2", "q3")])], ignore_index=True)
    assert judge(own, JudgeSettings(bootstrap=0)).rates.loc["base", "win_rate"] == 50.0


def test_avg_length_is_alpaca_evals_integer_mean():
    frame = prefs([("m", "q1", 1.0), ("m", "q2", 0.0)], len_model=[10.0, 13.0], len_baseline=[1.0, 1.0])
    assert judge(frame, JudgeSettings(bootstrap=0)).as_dict()["models"][0]["avg_length"] == 11


def test_bootstrap_is_seeded_paired_and_holds_the_estimate():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=200)
    rows = [("a", f"q{i}", v) for i, v in enumerate(p)] + [("b", f"q{i}", v) for i, v in enumerate(p)]
    settings = JudgeSettings(bootstrap=300, seed=7)
    first, again = judge(prefs(rows), settings).rates, judge(prefs(rows), settings).rates
    pd.testing.assert_frame_equal(first, again)
    # the same answers on the same prompts: the same draws give the same interval (paired), around the estimate
    assert first.loc["a", "win_rate_ci_low"] == first.loc["b", "win_rate_ci_low"]
    assert first.loc["a", "win_rate_ci_low"] < first.loc["a", "win_rate"] < first.loc["a", "win_rate_ci_high"]
    other = judge(prefs(rows), JudgeSettings(bootstrap=300, seed=8)).rates
    assert other.loc["a", "win_rate_ci_low"] != first.loc["a", "win_rate_ci_low"]
    width = first.loc["a", "win_rate_ci_high"] - first.loc["a", "win_rate_ci_low"]
    assert width == pytest.approx(2 * 1.96 * first.loc["a", "standard_error"], rel=0.25)  # ~ the normal interval


def test_no_bootstrap_gives_no_interval_and_says_so():
    result = judge(prefs([("m", "q1", 1.0), ("m", "q2", 0.0)]), JudgeSettings(bootstrap=0))
    model = result.as_dict()["models"][0]
    assert model["win_rate_ci_low"] is None and model["win_rate_ci_high"] is None
    assert "no win-rate interval: bootstrap 0" in result.notes


def test_one_prompt_has_no_standard_error_and_no_nan_reaches_the_dict():
    data = judge(prefs([("m", "q1", 1.0)]), JudgeSettings(bootstrap=10)).as_dict()
    assert data["models"][0]["standard_error"] is None
    assert "nan" not in repr(data).lower()


def test_per_category_win_rates():
    frame = prefs([("m", "q1", 1.0), ("m", "q2", 0.0), ("m", "q3", 0.5)], category=["x", "x", "y"])
    data = judge(frame, JudgeSettings(bootstrap=0)).as_dict()
    assert data["categories"] == ["x", "y"]
    model = next(m for m in data["models"] if m["model"] == "m")
    # sd of (1, 0) is 1/√2, over √2 prompts: 50 points
    assert model["categories"]["x"] == {"win_rate": 50.0, "standard_error": pytest.approx(50.0), "n_total": 2}
    assert model["categories"]["y"]["win_rate"] == 50.0
    base = next(m for m in data["models"] if m["is_baseline"])
    assert base["categories"] == {"x": {"win_rate": 50.0, "standard_error": 0.0, "n_total": 2},
                                  "y": {"win_rate": 50.0, "standard_error": 0.0, "n_total": 1}}


def test_baseline_choice():
    two = pd.concat([prefs([("m", "q1", 1.0)], baseline="b1"), prefs([("m", "q1", 0.0)], baseline="b2")])
    with pytest.raises(JudgeError, match=r"2 baselines \(b1, b2\): choose one with --baseline NAME"):
        judge(two)
    with pytest.raises(JudgeError, match="no rows against baseline 'b3'; the baselines are: b1, b2"):
        judge(two, JudgeSettings(baseline="b3", bootstrap=0))
    result = judge(two, JudgeSettings(baseline="b2", bootstrap=0))
    assert result.rates.loc["m", "win_rate"] == 0.0
    assert "1 rows against other baselines (b1) left out" in result.notes


@pytest.mark.parametrize("values, message", [
    ({"bootstrap": -1}, "`bootstrap` must be a non-negative integer"), ({"alpha": 1.5}, "`alpha` must lie"),
    ({"seed": -2}, "`seed` must be a non-negative integer"), ({"baseline": " "}, "`baseline` must be a model name"),
])
def test_settings_are_checked(values, message):
    with pytest.raises(JudgeError, match=message):
        JudgeSettings(**values)


def test_sorted_by_win_rate_without_length_control():
    result = judge(prefs([("low", "q1", 0.1), ("high", "q1", 0.9)]), JudgeSettings(bootstrap=0))
    assert list(result.rates.index) == ["high", "base", "low"]
    assert result.params["sorted_by"] == "win_rate"


RAW = st.one_of(st.sampled_from([0.0, 1.0, 1.5, 2.0, math.nan]), st.floats(1.0, 2.0))


@settings(max_examples=60, deadline=None)
@given(raw=st.lists(RAW, min_size=1, max_size=40))
def test_alpaca_evals_counts_from_the_raw_file(tmp_path_factory, raw):
    """Read from a raw-scale file (0 = draw, empty = failure) and judged: AlpacaEval's numbers exactly."""
    if all(math.isnan(v) for v in raw):
        return  # no judgement at all: the model is not shown (tests/test_judge_io.py)
    cells = ["" if math.isnan(v) else repr(v) for v in raw]
    if not any(v not in ("", "0.0", "1.0") for v in cells):
        cells.append("2.0")  # one value above 1, so that the column is read on the raw scale
        raw = [*raw, 2.0]
    path = tmp_path_factory.mktemp("raw") / "raw.csv"
    path.write_text("model,baseline,query_id,preference\n" + "".join(f"m,b,q{i},{c}\n" for i, c in enumerate(cells)))
    got = judge(load(path).frame, JudgeSettings(bootstrap=0)).as_dict()["models"]
    row = next(m for m in got if m["model"] == "m")
    want = alpaca_head2head(raw)
    for field in ("n_wins", "n_wins_base", "n_draws", "n_total"):
        assert row[field] == want[field], field
    assert row["win_rate"] == pytest.approx(want["win_rate"], abs=1e-9)
    assert row["discrete_win_rate"] == pytest.approx(want["discrete_win_rate"], abs=1e-9)
    if want["n_total"] > 1:
        assert row["standard_error"] == pytest.approx(want["standard_error"], abs=1e-9)
    assert 0.0 <= row["win_rate"] <= 100.0 and 0.0 <= row["discrete_win_rate"] <= 100.0


@settings(max_examples=60, deadline=None)
# Multiples of 1/1024: 1 − p is exact, so a preference just below 0.5 cannot round to a draw when mirrored.
@given(p=st.lists(st.integers(0, 1024).map(lambda k: k / 1024), min_size=2, max_size=40))
def test_swapping_model_and_baseline_mirrors_every_rate(p):
    forward = judge(prefs([("m", f"q{i}", v) for i, v in enumerate(p)], baseline="b"), JudgeSettings(bootstrap=0))
    mirrored = judge(prefs([("b", f"q{i}", 1.0 - v) for i, v in enumerate(p)], baseline="m"),
                     JudgeSettings(bootstrap=0))
    f, m = forward.rates.loc["m"], mirrored.rates.loc["b"]
    assert m["win_rate"] == pytest.approx(100.0 - f["win_rate"], abs=1e-9)
    assert m["discrete_win_rate"] == pytest.approx(100.0 - f["discrete_win_rate"], abs=1e-9)
    assert m["standard_error"] == pytest.approx(f["standard_error"], abs=1e-9)
    assert (m["n_wins"], m["n_wins_base"], m["n_draws"]) == (f["n_wins_base"], f["n_wins"], f["n_draws"])
    assert 0.0 <= f["win_rate"] <= 100.0


def test_categorical_label_columns_give_the_same_result():
    frame = prefs([("m", "q1", 1.0), ("m", "q2", 0.25), ("n", "q1", 0.5)], category=["x", "y", "x"])
    as_categories = frame.astype({c: "category" for c in ("model", "baseline", "query_id", "category")})
    settings = JudgeSettings(bootstrap=50, seed=1)
    assert judge(as_categories, settings).as_dict() == judge(frame, settings).as_dict()
