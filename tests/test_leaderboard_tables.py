"""The leaderboard's tables and chart frames come from core (core.leaderboard.tables), so the dashboard
and the report draw the same numbers; one rule decides whether several metrics can be ranked together."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from core.leaderboard.aggregate import LeaderboardSettings, aggregate
from core.leaderboard.scores import LeaderboardError, metric_names, one_metric_per_task, pivot
from core.leaderboard.tables import (
    DASH,
    bar_rows,
    board_table,
    category_means,
    interval,
    pair_frame,
    pair_table,
    per_task_table,
    rank_range,
    two,
)


def runs() -> pd.DataFrame:
    rows = [("a", "t1", 0.9, "x"), ("a", "t2", 0.8, "y"), ("a", "t3", 0.7, "y"),
            ("b", "t1", 0.5, "x"), ("b", "t2", 0.4, "y"), ("b", "t3", 0.6, "y"),
            ("c", "t1", 0.2, "x"), ("c", "t2", 0.3, "y")]
    return pd.DataFrame(rows, columns=["model_id", "task_id", "score", "category"])


@pytest.fixture(scope="module")
def board():
    return aggregate(runs(), LeaderboardSettings(replicates=200, alpha=0.1, seed=1))


def test_board_table_as_shown(board):
    table = board_table(board)
    assert list(table.columns) == ["Rank", "Model", "Mean", "90% CI", "Win rate", "Rank range", "Tasks completed",
                                   "Tasks missing", "Tie group", "No interval because"]
    assert list(table["Model"]) == ["a", "b", "c"] and table["Mean"].iloc[0] == "0.80"
    assert list(table["Tasks missing"]) == [0, 0, 1]


def test_pair_table_gives_a_verdict_only_with_an_interval(board):
    table = pair_table(board)
    assert len(table) == 3 and set(table["Verdict"]) <= {"differs", "tie", "no evidence"}
    for p, verdict in zip(board.pairwise, table["Verdict"]):
        assert verdict == ("no evidence" if p.note else "differs" if p.significant else "tie")


def test_chart_frames(board):
    assert list(bar_rows(board).columns) == ["model_id", "mean_score", "mean_ci_lo", "mean_ci_hi"]
    means = category_means(board)
    assert list(means.columns) == ["x", "y"] and list(means.index) == ["a", "b", "c"]
    assert means.loc["c", "y"] == pytest.approx(0.3)
    assert list(pair_frame(board)["model_a"]) == [p.model_a for p in board.pairwise]


def test_per_task_table_has_tasks_as_rows():
    scores, _, _ = pivot(runs())
    table = per_task_table(scores)
    assert list(table.columns) == ["Task", "a", "b", "c"] and list(table["Task"]) == ["t1", "t2", "t3"]
    assert math.isnan(table.loc[2, "c"])


def test_formatters():
    assert two(float("nan")) == DASH and two(None) == DASH and two(0.125) == "0.12"
    assert interval(0.1, float("nan")) == DASH and interval(0.1, 0.25, " to ") == "0.10 to 0.25"
    assert rank_range(None, 2) == DASH and rank_range(2, 2) == "2" and rank_range(1, 3) == "1-3"


def test_one_rule_for_several_metrics():
    two_metrics = pd.concat([runs().assign(metric_name="acc"), runs().assign(metric_name="f1")])
    assert metric_names(two_metrics) == ["acc", "f1"] and not one_metric_per_task(two_metrics)
    with pytest.raises(LeaderboardError, match="several metrics"):
        pivot(two_metrics)
    split = pd.concat([runs().iloc[:4].assign(metric_name="acc"), runs().iloc[4:].assign(metric_name="f1")])
    assert one_metric_per_task(split) and pivot(split)[0].shape == (3, 3)
    assert metric_names(runs()) == [] and one_metric_per_task(runs())
