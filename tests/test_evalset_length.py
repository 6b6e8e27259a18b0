"""Length-neutral selection: the representativeness score grows with a query's length, the selection must
not. On a pool where length carries no information the chosen lengths follow the pool's; ranked by the
raw score they do not (the same test fails when the length-neutral ranking is switched off)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.evalset.pipeline import build
from core.evalset.pool import read_pool
from core.evalset.results import eval_set, length_distribution
from core.evalset.scoring import heuristic_scores, length_neutral_scores, length_strata, length_summary
from core.evalset.settings import BuildSettings
from tests.conftest import shared_file

MEDIAN_TOLERANCE = 0.15  # chosen median length within 15 % of the eligible pool's
TOPICS = ("garden", "travel", "budget", "python", "cooking", "fitness")
QUESTIONS = ("How do I start with {t}?", "What should I know about {t} this year?", "Why is {t} so hard for me?",
             "Explain the basics of {t}.", "Which {t} mistakes do beginners make?")


def uninformative_pool(n: int = 1200, seed: int = 0) -> pd.DataFrame:
    """Queries whose length is a random padding of made-up words: length says nothing about the query."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    rows = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        words = ["".join(rng.choice(letters, rng.integers(4, 9))) for _ in range(int(rng.integers(0, 40)))]
        text = QUESTIONS[int(rng.integers(len(QUESTIONS)))].format(t=topic) + (" Context: " + " ".join(words)
                                                                               if words else "")
        rows.append({"query_id": f"q{i:05d}", "query": text, "category": topic})
    return pd.DataFrame(rows)


def median_ratio(state) -> float:
    dist = length_distribution(state)
    return dist["chosen"]["p50"] / dist["eligible"]["p50"]


def test_the_heuristic_score_grows_with_length_on_this_pool():
    pool = uninformative_pool(300)
    lengths = pool["query"].str.len()
    scores = [heuristic_scores(t)["completeness"] for t in pool["query"]]
    assert np.corrcoef(lengths, scores)[0, 1] > 0.5  # the bias the selection must undo


@pytest.mark.parametrize("size", [60, 150])
def test_chosen_median_length_follows_the_pool_when_length_carries_no_information(size):
    pool = uninformative_pool()
    neutral = build(pool, BuildSettings(size=size, seed=1))
    assert abs(median_ratio(neutral) - 1) <= MEDIAN_TOLERANCE, length_distribution(neutral)
    raw = build(pool, BuildSettings(size=size, seed=1, length_neutral=False))
    assert median_ratio(raw) > 1 + 3 * MEDIAN_TOLERANCE  # the raw score picks long queries
    assert len(eval_set(neutral)) == size


def test_length_neutral_scores_are_percentiles_inside_length_strata():
    lengths = np.repeat([10, 20, 30, 40], 25)
    scores = np.tile(np.arange(25, dtype=float), 4) + lengths  # longer: higher raw score
    neutral = length_neutral_scores(scores, lengths)
    assert set(np.unique(length_strata(lengths))) == {0, 1, 2, 3}  # five strata; equal lengths share one
    for value in (10, 20, 30, 40):  # the same percentiles in every stratum: length no longer ranks
        assert np.allclose(np.sort(neutral[lengths == value]), 100 * (np.arange(25) + 0.5) / 25, atol=0.01)
    assert np.all((neutral >= 0) & (neutral <= 100))
    assert length_neutral_scores(np.array([3.0]), np.array([5])).tolist() == [50.0]
    assert length_strata(np.array([])).size == 0


def test_length_summary_quantiles():
    assert length_summary([]) == {"n": 0}
    summary = length_summary(range(1, 102))
    assert summary == {"n": 101, "min": 1, "p10": 11, "p25": 26, "p50": 51, "p75": 76, "p90": 91, "max": 101}


def test_cli_prints_the_length_distribution_and_the_audit_keeps_it(tmp_path, db_path, capsys):
    path = tmp_path / "pool.csv"
    uninformative_pool(400).to_csv(path, index=False)
    out = tmp_path / "set.csv"
    assert main(["evalset", "build", str(path), "--size", "30", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "prompt length (characters)" in printed and "eligible" in printed and "chosen" in printed
    markdown = (tmp_path / "set.audit.md").read_text()
    assert "## Prompt length (characters)" in markdown and "| chosen | 30 |" in markdown
    assert "score_length_neutral" in pd.read_csv(out).columns


def test_alpaca_eval_chosen_lengths_follow_the_pool():
    """The case that was reported: 40 AlpacaEval instructions had a median of 379 characters (pool: 100)."""
    pool = read_pool(shared_file("alpaca_eval_annotations/instructions.csv"),
                     columns={"prompt": "instruction", "category": "dataset", "query_id": "instruction_id"})
    state = build(pool, BuildSettings(size=40))
    dist = length_distribution(state)
    assert dist["eligible"]["p50"] == 100
    assert abs(median_ratio(state) - 1) <= 0.25, dist  # 40 queries: a sample median moves ~±20 % by chance
    assert median_ratio(build(pool, BuildSettings(size=40, length_neutral=False))) > 3


def test_length_figure_draws_one_curve_per_non_empty_group_ending_at_one():
    from core.charts.evalset import length_figure, log_ticks

    fig = length_figure({"eligible": [40, 100, 100, 320], "chosen": [100, 38], "reserves": []})
    assert [t.name for t in fig.data] == ["eligible (n = 4)", "chosen (n = 2)"]
    assert all(t.y[-1] == 1.0 and list(t.x) == sorted(t.x) for t in fig.data)
    assert fig.layout.xaxis.type == "log" and list(fig.layout.xaxis.tickvals) == [20, 50, 100, 200, 500]
    assert log_ticks(14, 1917) == [10, 20, 50, 100, 200, 500, 1000, 2000]
