"""AlpacaEval's own per-prompt judgements (../shared/data/alpaca_eval_annotations, read by detection) give its
published leaderboard numbers (tests/reference_values.py, with the leaderboard files and commits) to 1e-6."""

from __future__ import annotations

import pytest

from core.io import load
from core.judge.analysis import JudgeSettings, judge
from tests.conftest import shared_file
from tests.reference_values import ALPACA1_LEADERBOARD, ALPACA1_REANNOTATED, ALPACA2_LEADERBOARD

ATOL = 1e-6  # percentage points; counts exactly
FIELDS = ("win_rate", "standard_error", "n_wins", "n_wins_base", "n_draws", "n_total", "discrete_win_rate")


@pytest.fixture(scope="module")
def alpaca2():
    loaded = load(shared_file("alpaca_eval_annotations/preferences.csv"))
    assert loaded.kind == "preferences" and loaded.rows == 46680
    return judge(loaded.frame, JudgeSettings(bootstrap=0))


@pytest.fixture(scope="module")
def alpaca1():
    loaded = load(shared_file("alpaca_eval_annotations/preferences_alpaca_eval1_gpt4_vs_text_davinci_003.csv"))
    assert loaded.kind == "preferences" and loaded.rows == 42665 - 61
    assert "61 rows without a judgement (the judge gave none) left out" in " ".join(loaded.notes)
    return judge(loaded.frame, JudgeSettings(bootstrap=0))


def test_alpaca_eval_2_every_published_column(alpaca2):
    assert alpaca2.baseline == "gpt4_1106_preview" and alpaca2.params["n_models"] == 57
    assert set(ALPACA2_LEADERBOARD) <= set(alpaca2.rates.index) and len(ALPACA2_LEADERBOARD) == 51
    for model, published in ALPACA2_LEADERBOARD.items():
        row = alpaca2.rates.loc[model]
        for field, value in zip(FIELDS, published):
            assert row[field] == pytest.approx(value, abs=ATOL), (model, field)
    assert alpaca2.categories == ("helpful_base", "koala", "oasst", "selfinstruct", "vicuna")


def test_alpaca_eval_1_every_published_column(alpaca1):
    assert alpaca1.baseline == "text_davinci_003"
    checked = {m: v for m, v in ALPACA1_LEADERBOARD.items() if m not in ALPACA1_REANNOTATED}
    assert len(checked) == 40
    for model, published in checked.items():
        row = alpaca1.rates.loc[model]
        for field, value in zip(FIELDS, published):
            assert row[field] == pytest.approx(value, abs=ATOL), (model, field)


def test_alpaca_eval_1_rows_named_falcon_7b_are_falcon_40b(alpaca1):
    """Why falcon-7b-instruct is left out above: its rows give falcon-40b-instruct's published numbers."""
    own, other = ALPACA1_LEADERBOARD["falcon-7b-instruct"], ALPACA1_LEADERBOARD["falcon-40b-instruct"]
    row = alpaca1.rates.loc["falcon-7b-instruct"]
    assert row["win_rate"] == pytest.approx(other[0], abs=ATOL) and abs(row["win_rate"] - own[0]) > 20
