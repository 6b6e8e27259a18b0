"""Leaderboard aggregation (core.leaderboard.aggregate), docs/methods.md §8 with the task bootstrap of §3.

Reference D3 end to end, the shared-draw fast path against the literal per-model / per-pair protocol
(core.leaderboard.task_bootstrap helpers), missing cells, metrics, weights, edge cases, invariants and real data.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from core.io import load
from core.leaderboard.aggregate import Leaderboard, LeaderboardSettings, aggregate, rank_one_probability
from core.leaderboard.scores import LeaderboardError, pivot
from core.leaderboard.subset_draws import derived_reference
from core.leaderboard.task_bootstrap import bootstrap_mean_ci, paired_ci, tied_ranks, unpaired_ci
from core.samples.evalruns import evalruns_demo
from core.stats.resampling import percentile_interval
from tests.conftest import shared_file
from tests.reference_values import (
    D3_CATEGORIES,
    D3_CODE_MEANS,
    D3_MATH_MEANS,
    D3_MEAN_X_CI,
    D3_MEANS,
    D3_P_RANK1_EXACT_TIES,
    D3_PAIRED_X_Y,
    D3_PAIRED_Y_Z,
    D3_STRATIFIED_X_CI,
    D3_WIN_RATES,
    D3_X,
    D3_Y,
    D3_Z,
)

ATOL_REF = 1e-9  # docs/methods.md §0: bootstrap references with an absolute tolerance
ATOL_FAST = 1e-12  # one draw, two summation orders (counts @ x versus mean(x[I]))
RTOL_POINT = 1e-6  # docs/methods.md §0: point estimates
RTOL_PANDAS = 1e-12

# docs/methods.md §8, Reference D3: tasks 1–5 "math", 6–10 "code".
D3 = {"X": D3_X, "Y": D3_Y, "Z": D3_Z}  # tests/reference_values.py
B1000 = LeaderboardSettings(replicates=1000)


def runs_from(scores: dict[str, list[float]], categories=None, weights=None, metric="score") -> pd.DataFrame:
    rows = []
    for model, values in scores.items():
        for t, value in enumerate(values):
            row = {"model_id": model, "task_id": f"t{t + 1:02d}", "metric_name": metric, "score": value}
            if categories is not None:
                row["category"] = categories[t]
            if weights is not None:
                row["weight"] = weights[t]
            rows.append(row)
    return pd.DataFrame(rows)


D3_RUNS = runs_from(D3, D3_CATEGORIES)


def by_model(board: Leaderboard) -> dict:
    return {row.model_id: row for row in board.rows}


def pair(board: Leaderboard, a: str, b: str):
    return next(p for p in board.pairwise if {p.model_a, p.model_b} == {a, b})


def test_d3_point_estimates():
    # docs/methods.md §8: means 0.73/0.66/0.49; math 0.80/0.76/0.58; code 0.66/0.56/0.40; win rates 0.8/0.4/0.1.
    board = aggregate(D3_RUNS, B1000)
    rows = by_model(board)
    assert [r.model_id for r in board.rows] == ["X", "Y", "Z"] and [r.rank for r in board.rows] == [1, 2, 3]
    assert_allclose([rows[m].mean_score for m in "XYZ"], D3_MEANS, rtol=RTOL_POINT)
    assert_allclose([rows[m].categories["math"] for m in "XYZ"], D3_MATH_MEANS, rtol=RTOL_POINT)
    assert_allclose([rows[m].categories["code"] for m in "XYZ"], D3_CODE_MEANS, rtol=RTOL_POINT)
    assert_allclose([rows[m].win_rate for m in "XYZ"], D3_WIN_RATES, rtol=RTOL_POINT)  # wins 8/4/1
    assert board.categories == ("code", "math") and list(rows["X"].categories) == ["code", "math"]
    assert (board.n_models, board.n_tasks, board.metric, board.weighted) == (3, 10, "score", False)
    assert all(r.tasks_completed == 10 and r.tasks_missing == 0 for r in board.rows)


def test_d3_bootstrap():
    # docs/methods.md §3 references on D3 (seed 0, B = 1000).
    board = aggregate(D3_RUNS, B1000)
    x = by_model(board)["X"]
    assert_allclose((x.mean_ci_lo, x.mean_ci_hi), D3_MEAN_X_CI, atol=ATOL_REF)
    xy, yz = pair(board, "X", "Y"), pair(board, "Y", "Z")
    assert (xy.model_a, xy.model_b, xy.n_tasks) == ("X", "Y", 10)
    assert_allclose((xy.diff, xy.ci_lo, xy.ci_hi), (D3_PAIRED_X_Y[0], *D3_PAIRED_X_Y[1]), atol=ATOL_REF)
    assert not xy.significant  # the CI touches 0
    assert_allclose((yz.diff, yz.ci_lo, yz.ci_hi), (D3_PAIRED_Y_Z[0], *D3_PAIRED_Y_Z[1]), atol=ATOL_REF)
    assert yz.significant and pair(board, "X", "Z").significant and board.significant_pairs == 2
    assert xy.unpaired_ci_hi - xy.unpaired_ci_lo > xy.ci_hi - xy.ci_lo
    stratified = by_model(aggregate(D3_RUNS, LeaderboardSettings(replicates=1000, stratified=True)))["X"]
    assert_allclose((stratified.mean_ci_lo, stratified.mean_ci_hi), D3_STRATIFIED_X_CI, atol=ATOL_REF)


def test_d3_ranks_and_tie_groups():
    # docs/methods.md §3 prints X [1,2], Y [1,2], Z [3,3], P(rank 1) 0.975/0.034/0 from float sums that break
    # exact ties by rounding; with ties kept (test_task_bootstrap) X is [1,1] and P(rank 1) 0.984/0.034/0.
    board = aggregate(D3_RUNS, B1000)
    rows = by_model(board)
    assert [(rows[m].rank_lo, rows[m].rank_hi) for m in "XYZ"] == [(1, 1), (1, 2), (3, 3)]
    assert_allclose(list(rank_one_probability(D3_RUNS, B1000).values()), D3_P_RANK1_EXACT_TIES, atol=ATOL_REF)
    assert [rows[m].tie_group for m in "XYZ"] == [1, 1, 2]  # X ~ Y (not significant), Y vs Z significant
    assert board.friedman.reject and board.friedman.different_pairs == (("X", "Z"),)


def random_runs(seed: int, n_models: int = 5, n_tasks: int = 40, missing: float = 0.15, weights: bool = False):
    rng = np.random.default_rng(seed)
    ability = rng.uniform(0.3, 0.7, (n_models, 1))
    scores = np.clip(ability + rng.normal(0, 0.15, (n_models, n_tasks)), 0, 1)
    scores[rng.random(scores.shape) < missing] = np.nan
    scores[:2, :] = np.where(np.isnan(scores[:2]), 0.5, scores[:2])  # two complete models: the fast path
    categories = [f"c{j % 3}" for j in range(n_tasks)]
    w = rng.uniform(0.2, 3.0, n_tasks) if weights else None
    runs = runs_from({f"m{i}": list(s) for i, s in enumerate(scores)}, categories, w)
    return runs.dropna(subset=["score"]), scores, np.array(categories), w


def derived_ci(x, y, mask, replicates, seed, w, draw_y=0):
    """Percentile CI of the derived draw (core.leaderboard.subset_draws): mean(x) − mean(y) over ``mask``, y from
    ``draw_y``; y None = the mean of x alone."""
    first = derived_reference(np.nan_to_num(x), mask, replicates, seed, 0, w)
    samples = first if y is None else first - derived_reference(np.nan_to_num(y), mask, replicates, seed, draw_y, w)
    lo, hi = percentile_interval(samples, 0.05)
    return float(lo), float(hi)


@pytest.mark.parametrize("stratified", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_fast_path_equals_its_protocols(stratified, weighted):
    # Stratified, every task set gets the literal per-model / per-pair protocol of core.leaderboard.task_bootstrap
    # (fresh default_rng(seed) each). Unstratified, complete models use the literal draw on all tasks,
    # and the task sets of at least half the tasks the draw derived from it (core.leaderboard.subset_draws), each
    # checked against its slow, obvious form.
    runs, scores, categories, w = random_runs(1, weights=weighted)
    opts = LeaderboardSettings(replicates=300, seed=7, stratified=stratified)
    board = aggregate(runs, opts)
    strata = categories if stratified else None
    present = ~np.isnan(scores)
    derived = 0
    for i, row in enumerate(by_model(board)[f"m{i}"] for i in range(len(scores))):
        mean, lo, hi = bootstrap_mean_ci(scores[i], 300, 0.05, 7, w, strata)
        if not stratified and not present[i].all():
            lo, hi = derived_ci(scores[i], None, present[i], 300, 7, w)
            derived += 1
        assert_allclose((row.mean_score, row.mean_ci_lo, row.mean_ci_hi), (mean, lo, hi), atol=ATOL_FAST, rtol=0)
        assert row.tasks_missing == int(np.isnan(scores[i]).sum())
    for p in board.pairwise:
        a, b = int(p.model_a[1:]), int(p.model_b[1:])
        paired = paired_ci(scores[a], scores[b], 300, 0.05, 7, w, strata)
        unpaired = unpaired_ci(scores[a], scores[b], 300, 0.05, 7, w, strata)
        expected, expected_unpaired = tuple(paired)[:3], (unpaired.lo, unpaired.hi)
        both = present[a] & present[b]
        if not stratified and not both.all():
            expected = (paired.diff, *derived_ci(scores[a], scores[b], both, 300, 7, w))
            expected_unpaired = derived_ci(scores[a], scores[b], both, 300, 7, w, draw_y=1)
        assert_allclose((p.diff, p.ci_lo, p.ci_hi), expected, atol=ATOL_FAST, rtol=0)
        assert_allclose((p.unpaired_ci_lo, p.unpaired_ci_hi), expected_unpaired, atol=ATOL_FAST, rtol=0)
        assert p.significant == (expected[1] > 1e-12 or expected[2] < -1e-12) and p.n_tasks == paired.n
    assert stratified or derived == 3  # the three models with missing cells took the derived draw


def test_rank_intervals_equal_their_protocol():
    # The tasks every model scored are at least half the tasks: their draw is derived (core.leaderboard.subset_draws).
    runs, scores, _, _ = random_runs(2, missing=0.05)
    board = aggregate(runs, LeaderboardSettings(replicates=300, seed=3))
    common = ~np.isnan(scores).any(axis=0)
    assert 0.5 <= common.mean() < 1
    ranks = tied_ranks(np.stack([derived_reference(np.nan_to_num(s), common, 300, 3) for s in scores], axis=1))
    lo = np.quantile(ranks, 0.025, axis=0, method="lower")
    hi = np.quantile(ranks, 0.975, axis=0, method="higher")
    rows = by_model(board)
    assert [(rows[f"m{i}"].rank_lo, rows[f"m{i}"].rank_hi) for i in range(len(scores))] == list(zip(lo, hi))


def test_rank_intervals_on_few_common_tasks_are_the_literal_protocol():
    runs, scores, _, _ = random_runs(2, missing=0.3)
    board = aggregate(runs, LeaderboardSettings(replicates=300, seed=3))
    common = ~np.isnan(scores).any(axis=0)
    assert 0 < common.mean() < 0.5
    index = np.random.default_rng(3).integers(0, common.sum(), size=(300, common.sum()))
    ranks = tied_ranks(np.stack([s[common][index].mean(axis=1) for s in scores], axis=1))
    lo = np.quantile(ranks, 0.025, axis=0, method="lower")
    hi = np.quantile(ranks, 0.975, axis=0, method="higher")
    rows = by_model(board)
    assert [(rows[f"m{i}"].rank_lo, rows[f"m{i}"].rank_hi) for i in range(len(scores))] == list(zip(lo, hi))


def test_missing_cells_are_counted():
    runs = runs_from({"a": [0.9, 0.8, 0.7], "b": [0.5, np.nan, 0.4], "c": [np.nan, np.nan, np.nan]})
    board = aggregate(runs, LeaderboardSettings(replicates=200))
    rows = by_model(board)
    assert (rows["b"].tasks_completed, rows["b"].tasks_missing) == (2, 1)
    assert (rows["c"].tasks_completed, rows["c"].tasks_missing, rows["c"].rank) == (0, 3, 3)
    assert math.isnan(rows["c"].mean_score) and math.isnan(rows["c"].mean_ci_lo) and math.isnan(rows["c"].win_rate)
    assert_allclose(rows["b"].mean_score, 0.45, rtol=RTOL_POINT)
    assert pair(board, "a", "b").n_tasks == 2
    assert_allclose(pair(board, "a", "b").diff, 0.35, rtol=RTOL_POINT)
    ac = pair(board, "a", "c")
    assert ac.n_tasks == 0 and math.isnan(ac.diff) and math.isnan(ac.ci_lo) and not ac.significant
    assert rows["a"].rank_lo is None and board.friedman is None  # no task is scored by all three


def test_pivot():
    runs = runs_from({"b": [0.1, 0.2], "a": [0.3, np.nan]}, ["x", "y"], [1.0, 2.0]).iloc[::-1]
    scores, category, weight = pivot(runs)
    assert list(scores.index) == ["a", "b"] and list(scores.columns) == ["t01", "t02"]
    assert np.isnan(scores.loc["a", "t02"]) and scores.loc["b", "t02"] == 0.2
    assert category.to_dict() == {"t01": "x", "t02": "y"} and weight.to_dict() == {"t01": 1.0, "t02": 2.0}


def test_several_metrics_need_a_choice():
    runs = pd.concat([runs_from(D3, metric="acc"), runs_from({"X": [0.1] * 10}, metric="f1")])
    with pytest.raises(LeaderboardError, match=r"`metric`.*acc, f1"):
        aggregate(runs)
    board = aggregate(runs, LeaderboardSettings(replicates=50, metric="f1"))
    assert board.metric == "f1" and [r.model_id for r in board.rows] == ["X"]
    with pytest.raises(LeaderboardError, match="`metric` 'bleu' is not in the runs.*acc, f1"):
        aggregate(runs, LeaderboardSettings(metric="bleu"))


def test_different_metric_per_task_is_fine():
    board = aggregate(evalruns_demo(0), LeaderboardSettings(replicates=100))
    assert board.metric is None and board.n_tasks == 12 and board.rows[0].model_id == "atlas-70b"
    assert board.categories == ("code", "math", "reasoning", "safety") and not board.weighted


def test_weights_are_honoured():
    w = [1, 3, 0, 2, 2, 1, 1, 1, 1, 4]
    board = aggregate(runs_from(D3, ["math"] * 5 + ["code"] * 5, w), LeaderboardSettings(replicates=200))
    rows = by_model(board)
    wa = np.array(w, dtype=float)
    for m, values in D3.items():
        x = np.array(values)
        assert_allclose(rows[m].mean_score, (wa * x).sum() / wa.sum(), rtol=RTOL_POINT)
        assert_allclose(rows[m].categories["math"], (wa[:5] * x[:5]).sum() / wa[:5].sum(), rtol=RTOL_POINT)
    wins_x = np.array([1, 1, 1, 1, 0, 1, 1, 0, 1, 1])  # docs/methods.md §8 wins of X, task by task
    assert_allclose(rows["X"].win_rate, (wa * wins_x).sum() / wa.sum(), rtol=RTOL_POINT)
    assert board.weighted
    equal = aggregate(runs_from(D3, weights=[2.0] * 10), B1000)
    assert not equal.weighted and equal.rows == aggregate(runs_from(D3), B1000).rows


def test_clashing_task_attributes():
    runs = runs_from(D3, weights=[1.0] * 10)
    runs.loc[0, "weight"] = 5.0
    with pytest.raises(LeaderboardError, match="more than one weight"):
        aggregate(runs)
    runs = runs_from(D3, ["a"] * 10)
    runs.loc[0, "category"] = "b"
    with pytest.raises(LeaderboardError, match="more than one category"):
        aggregate(runs)


def test_empty_input():
    board = aggregate(pd.DataFrame(columns=["model_id", "task_id", "score"]))
    assert (board.rows, board.pairwise, board.friedman, board.n_models, board.n_tasks) == ((), (), None, 0, 0)
    assert aggregate(pd.DataFrame()).n_models == 0


def test_one_model():
    board = aggregate(runs_from({"solo": [0.2, 0.4, 0.9]}), LeaderboardSettings(replicates=100))
    (row,) = board.rows
    assert board.pairwise == () and board.friedman is None and board.significant_pairs == 0
    assert (row.rank, row.rank_lo, row.rank_hi, row.tie_group, row.win_rate) == (1, 1, 1, 1, 1.0)


def test_one_task():
    board = aggregate(runs_from({"a": [0.7], "b": [0.4]}), LeaderboardSettings(replicates=100))
    a = by_model(board)["a"]
    # One task gives a bootstrap nothing to resample: no interval and no verdict, with the reason
    # (core.stats.evidence), and rank ranges over both models; not "0.70–0.70" and "differs".
    assert math.isnan(a.mean_ci_lo) and math.isnan(a.mean_ci_hi) and board.friedman is None
    assert a.interval_note == "1 task: too few for an interval"
    (pair,) = board.pairwise
    assert math.isnan(pair.ci_lo) and not pair.significant and pair.note.startswith("1 shared task")
    assert all((r.rank_lo, r.rank_hi) == (1, 2) for r in board.rows)


def test_all_equal_scores():
    board = aggregate(runs_from({m: [0.5] * 6 for m in "cab"}), LeaderboardSettings(replicates=100))
    assert [r.model_id for r in board.rows] == ["a", "b", "c"]  # ties broken by model id
    assert all(r.win_rate == 1.0 and r.tie_group == 1 and (r.rank_lo, r.rank_hi) == (1, 1) for r in board.rows)
    assert all(p.diff == 0 and not p.significant for p in board.pairwise)
    assert not board.friedman.reject and math.isnan(board.friedman.chi2)


def test_rank_by_win_rate():
    runs = runs_from({"steady": [0.6] * 6, "spiky": [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]})
    by_mean = aggregate(runs, LeaderboardSettings(replicates=100))
    by_wins = aggregate(runs, LeaderboardSettings(replicates=100, rank_by="win_rate"))
    assert [r.model_id for r in by_mean.rows] == ["steady", "spiky"]
    assert [r.model_id for r in by_wins.rows] == ["steady", "spiky"]  # 4 wins of 6 against 2 of 6
    runs = runs_from({"a": [0.9, 0.9, 0.0], "b": [0.5, 0.5, 0.6]})
    assert [r.model_id for r in aggregate(runs, LeaderboardSettings(replicates=50, rank_by="win_rate")).rows] == \
        ["a", "b"]


@pytest.mark.parametrize("field, value", [("rank_by", "elo"), ("replicates", 0), ("replicates", 1.5),
                                          ("alpha", 1.0), ("seed", -1), ("stratified", "yes"), ("metric", 3)])
def test_bad_settings(field, value):
    with pytest.raises(LeaderboardError, match=f"`{field}`"):
        aggregate(D3_RUNS, LeaderboardSettings(**{field: value}))


def test_bad_runs():
    with pytest.raises(LeaderboardError, match="`runs` lacks the column.*score"):
        aggregate(D3_RUNS.drop(columns="score"))
    with pytest.raises(LeaderboardError, match="more than once"):
        aggregate(pd.concat([D3_RUNS, D3_RUNS.iloc[:1]]))
    with pytest.raises(LeaderboardError, match="`runs` must be a pandas DataFrame"):
        aggregate(D3_RUNS.to_numpy())
    bad = D3_RUNS.copy()
    bad["score"] = bad["score"].astype(object)
    bad.loc[0, "score"] = "high"
    with pytest.raises(LeaderboardError, match="score must hold numbers"):
        aggregate(bad)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.booleans())
def test_row_order_does_not_matter_and_cis_contain_means(seed, weighted):
    runs, _, _, _ = random_runs(seed, n_models=4, n_tasks=12, missing=0.2, weights=weighted)
    opts = LeaderboardSettings(replicates=100, seed=seed)
    board = aggregate(runs, opts)
    shuffled = aggregate(runs.sample(frac=1.0, random_state=seed), opts)
    assert repr(shuffled.rows) == repr(board.rows) and repr(shuffled.pairwise) == repr(board.pairwise)  # NaN-safe
    for row in board.rows:
        assert row.mean_ci_lo - ATOL_FAST <= row.mean_score <= row.mean_ci_hi + ATOL_FAST
    for p in board.pairwise:
        assert p.ci_lo - ATOL_FAST <= p.diff <= p.ci_hi + ATOL_FAST


def direct_means(frame: pd.DataFrame) -> pd.Series:
    return frame.groupby("model_id")["score"].mean()


@pytest.mark.parametrize("relative", ["pythia_opt_bloom_lmeval/zero_shot_acc_wide.csv",
                                      "mmlu_pro_per_question/correct_matrix_wide.csv"])
def test_real_data(relative):
    frame = load(shared_file(relative)).frame
    board = aggregate(frame, LeaderboardSettings(replicates=50))
    expected = direct_means(frame)
    assert board.n_models == len(expected) and board.n_tasks == frame["task_id"].nunique()
    means = {r.model_id: r.mean_score for r in board.rows}
    assert_allclose([means[m] for m in expected.index], expected.to_numpy(), rtol=RTOL_PANDAS)
    assert len(board.pairwise) == board.n_models * (board.n_models - 1) // 2
    missing = frame.groupby("model_id").size().rsub(board.n_tasks)
    assert all(r.tasks_missing == missing[r.model_id] for r in board.rows)
    assert all(r.mean_ci_lo <= r.mean_score <= r.mean_ci_hi for r in board.rows)
