"""Task bootstrap helpers and the shared-draw engine (core.leaderboard.task_bootstrap), docs/methods.md §3
on data D3 of §8.

The helpers are the literal protocols; the engine (SubsetDraws) is checked against them and against
hand-written loops here, and through the leaderboard in test_leaderboard.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from core.leaderboard import draws
from core.leaderboard import task_bootstrap as tb
from core.leaderboard.draws import block_layout, bootstrap_indices, draw_counts, strata_codes, stratified_indices
from core.leaderboard.subset_draws import SubsetDraws
from core.leaderboard.task_bootstrap import (
    TaskBootstrapError,
    bootstrap_mean_ci,
    paired_ci,
    poisson_mean_ci,
    rank_bootstrap,
    rank_summary,
    task_wins,
    tied_ranks,
    unpaired_ci,
)
from core.stats.resampling import rank_interval, ranks_of
from tests.reference_values import (
    D3_CATEGORIES,
    D3_FIRST_INDEX_ROW,
    D3_MEAN_X,
    D3_MEAN_X_CI,
    D3_P_RANK1_EXACT_TIES,
    D3_P_RANK1_FLOAT_SUMS,
    D3_PAIRED_X_Y,
    D3_PAIRED_X_Y_ZERO_REPLICATES,
    D3_PAIRED_Y_Z,
    D3_POISSON_X_CI,
    D3_STRATIFIED_X_CI,
    D3_X,
    D3_Y,
    D3_Z,
)

ATOL_REF = 1e-9  # docs/methods.md §0: bootstrap references, absolute tolerance (all D3 figures are exact decimals)
ATOL_FAST = 1e-12  # counts @ x versus mean(x[I]): the same draw, only the summation order differs
RTOL_POINT = 1e-6  # docs/methods.md §0: point estimates

# docs/methods.md §8, Reference D3: tasks 1–5 "math", 6–10 "code" (tests/reference_values.py).
X, Y, Z = np.array(D3_X), np.array(D3_Y), np.array(D3_Z)
CATEGORY = np.array(D3_CATEGORIES)


def test_first_row_of_indices():
    # docs/methods.md §3 references: first row of I with seed 0.
    index = bootstrap_indices(10, 1000, np.random.default_rng(0))
    assert index.shape == (1000, 10)
    assert_array_equal(index[0], D3_FIRST_INDEX_ROW)


def test_mean_ci_d3():
    # docs/methods.md §3: mean X = 0.73, CI (0.61975, 0.83).
    result = bootstrap_mean_ci(X, replicates=1000, seed=0)
    mean, lo, hi = result
    assert_allclose(mean, D3_MEAN_X, rtol=RTOL_POINT)
    assert_allclose((lo, hi), D3_MEAN_X_CI, atol=ATOL_REF)
    assert (result.n, result.n_valid, result.dropped, result.protocol) == (10, 1000, 0, "rows")


def test_stratified_mean_ci_d3():
    # docs/methods.md §3: stratified by category (0.62, 0.83).
    _, lo, hi = bootstrap_mean_ci(X, seed=0, strata=CATEGORY)
    assert_allclose((lo, hi), D3_STRATIFIED_X_CI, atol=ATOL_REF)


def test_paired_d3_x_minus_y_touches_zero():
    # docs/methods.md §3: X − Y = 0.07, CI (0.0, 0.14), not significant; 16 of 1000 replicate means exactly 0.
    result = paired_ci(X, Y, seed=0)
    diff, lo, hi, significant = result
    assert_allclose(diff, D3_PAIRED_X_Y[0], rtol=RTOL_POINT)
    assert_allclose((lo, hi), D3_PAIRED_X_Y[1], atol=ATOL_REF)
    assert not significant
    assert int((result.samples == 0).sum()) == D3_PAIRED_X_Y_ZERO_REPLICATES


def test_paired_d3_y_minus_z_significant():
    # docs/methods.md §3: Y − Z = 0.17, CI (0.07, 0.25), significant.
    diff, lo, hi, significant = paired_ci(Y, Z, seed=0)
    assert_allclose(diff, D3_PAIRED_Y_Z[0], rtol=RTOL_POINT)
    assert_allclose((lo, hi), D3_PAIRED_Y_Z[1], atol=ATOL_REF)
    assert significant


def test_poisson_d3():
    # docs/methods.md §3: Poisson mean X (0.60, 0.84), 1 replicate dropped.
    result = poisson_mean_ci(X, seed=0)
    assert_allclose((result.lo, result.hi), D3_POISSON_X_CI, atol=ATOL_REF)
    assert (result.dropped, result.n_valid, result.protocol) == (1, 999, "poisson")


def test_rank_cis_d3_with_float_ties():
    # docs/methods.md §3 rank references for D3: X [1,2], Y [1,2], Z [3,3], P(rank 1) = 0.975/0.034/0. Scores are
    # multiples of 0.1, so replicate means tie exactly in exact arithmetic (integer sums below): then
    # X [1,1], P(rank 1) = 0.984/0.034/0. The references come from left-to-right float sums, in which
    # rounding breaks 9 of X's ties with Y against X; the order of summation decides. tied_ranks treats
    # differences ≤ 1e-12 as ties and so gives the exact-arithmetic answer whatever the summation order.
    index = bootstrap_indices(10, 1000, np.random.default_rng(0))
    scores = np.stack([X, Y, Z])
    sequential = np.stack([np.cumsum(s[index], axis=1)[:, -1] / 10 for s in scores], axis=1)
    assert_allclose((ranks_of(sequential) == 1).mean(axis=0), D3_P_RANK1_FLOAT_SUMS, atol=ATOL_REF)
    assert_array_equal(rank_interval(sequential, 0.05)[1], [2, 2, 3])
    exact = np.stack([np.round(s * 10).astype(int)[index].sum(axis=1) for s in scores], axis=1)
    assert_allclose((ranks_of(exact) == 1).mean(axis=0), D3_P_RANK1_EXACT_TIES, atol=ATOL_REF)
    for samples in (sequential, np.stack([s[index].mean(axis=1) for s in scores], axis=1)):
        assert_array_equal(tied_ranks(samples), ranks_of(exact))
    result = rank_bootstrap(scores, replicates=1000, seed=0)
    assert_array_equal(result.rank_lo, [1, 1, 3])
    assert_array_equal(result.rank_hi, [1, 2, 3])
    assert_allclose(result.p_first, D3_P_RANK1_EXACT_TIES, atol=ATOL_REF)


def test_stratified_indices_follow_the_loop():
    # docs/methods.md §3 "Stratified": for b: for s in sorted(strata): pos_s[rng.integers(0, n_s, size=n_s)].
    strata = np.array(["b", "a", "c", "a", "b", "b", "c", "a", "a", None, "b"], dtype=object)
    codes = strata_codes(strata)
    rng = np.random.default_rng(3)
    expected = []
    for _ in range(200):
        expected.append(np.concatenate([np.flatnonzero(codes == s)[rng.integers(0, (codes == s).sum(),
                                                                                 size=(codes == s).sum())]
                                        for s in sorted(set(codes))]))
    assert_array_equal(stratified_indices(strata, 200, np.random.default_rng(3)), np.array(expected))
    assert codes[9] == 3  # the missing label is a stratum of its own, sorted last


def test_chunked_draws_equal_one_draw(monkeypatch):
    monkeypatch.setattr(draws, "CHUNK_CELLS", 35)  # 3 rows of 12 per chunk
    counts = draw_counts((12,), 50, np.random.default_rng(5))
    index = np.random.default_rng(5).integers(0, 12, size=(50, 12))
    assert_array_equal(counts, np.stack([np.bincount(r, minlength=12) for r in index]))
    strata = np.repeat(["x", "y"], [5, 7])
    monkeypatch.setattr(draws, "CHUNK_CELLS", 1 << 20)
    whole = stratified_indices(strata, 50, np.random.default_rng(5))
    monkeypatch.setattr(draws, "CHUNK_CELLS", 30)
    assert_array_equal(stratified_indices(strata, 50, np.random.default_rng(5)), whole)


def test_engine_equals_per_subset_protocol():
    # Two subsets of the same shape share one draw; each gets the row protocol on its own tasks.
    rng = np.random.default_rng(11)
    values = rng.random((3, 20))
    weights = rng.uniform(0.5, 2.0, 20)
    first, second = np.zeros(20, bool), np.zeros(20, bool)
    first[[0, 2, 4, 6, 8, 10, 12]] = True
    second[[1, 3, 5, 7, 9, 11, 19]] = True
    for w in (None, weights):
        draws = SubsetDraws(values, w, None, 300, 4)
        requests = [draws.need(draws.subset(mask), row, draw) for mask in (first, second) for row in (0, 2)
                    for draw in (0, 1)]
        [(shape, out)] = list(draws.run())
        assert shape == (7,)
        for sid, row, draw in requests:
            tasks = np.flatnonzero((first, second)[sid])
            generator = np.random.default_rng(4)
            index = [generator.integers(0, 7, size=(300, 7)) for _ in range(draw + 1)][-1]
            x = values[row, tasks]
            expected = x[index].mean(axis=1) if w is None else \
                (w[tasks] * x)[index].sum(axis=1) / w[tasks][index].sum(axis=1)
            assert_allclose(out[(sid, row, draw)], expected, atol=ATOL_FAST, rtol=0)


def test_unpaired_continues_the_generator():
    # The first model's indices come from default_rng(seed), the second's from the same generator.
    result = unpaired_ci(X, Y, replicates=400, seed=2)
    generator = np.random.default_rng(2)
    first, second = generator.integers(0, 10, (400, 10)), generator.integers(0, 10, (400, 10))
    assert_allclose(result.samples, X[first].mean(axis=1) - Y[second].mean(axis=1), atol=ATOL_FAST)
    assert not result.paired and result.n == 10


def test_missing_scores_are_left_out_and_counted():
    x = np.array([0.2, np.nan, 0.6, 0.8])
    y = np.array([0.1, 0.5, np.nan, 0.4])
    assert bootstrap_mean_ci(x).n == 3
    assert_allclose(bootstrap_mean_ci(x).mean, np.nanmean(x), rtol=RTOL_POINT)
    assert paired_ci(x, y).n == 2
    empty = bootstrap_mean_ci([np.nan, np.nan])
    assert empty.n == 0 and np.isnan(empty.mean) and np.isnan(empty.lo) and np.isnan(empty.hi)
    diff, lo, hi, significant = paired_ci([np.nan, 1.0], [0.5, np.nan])
    assert np.isnan(diff) and np.isnan(lo) and np.isnan(hi) and not significant


def test_weights():
    w = np.array([1.0, 3.0, 0.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0, 4.0])
    result = bootstrap_mean_ci(X, weights=w, replicates=300)
    assert_allclose(result.mean, (w * X).sum() / w.sum(), rtol=RTOL_POINT)
    assert result.weighted
    scaled = bootstrap_mean_ci(X, weights=7 * w, replicates=300)
    assert_allclose((scaled.lo, scaled.hi), (result.lo, result.hi), atol=ATOL_FAST)
    ones = bootstrap_mean_ci(X, weights=np.ones(10), replicates=300)
    assert_allclose(tuple(ones), tuple(bootstrap_mean_ci(X, replicates=300)), atol=ATOL_FAST)
    zero = bootstrap_mean_ci([0.3, 0.4], weights=[0.0, 0.0])
    assert np.isnan(zero.mean) and zero.dropped == zero.replicates


def test_constant_data_and_one_task():
    assert tuple(bootstrap_mean_ci([0.5] * 6)) == (0.5, 0.5, 0.5)
    assert tuple(bootstrap_mean_ci([0.25])) == (0.25, 0.25, 0.25)
    assert tuple(paired_ci([0.5] * 4, [0.5] * 4)) == (0.0, 0.0, 0.0, False)


def test_significance_needs_more_than_float_noise():
    # docs/methods.md §3: significant iff lower > 1e-12 or upper < −1e-12.
    assert not tb.significant(1e-13, 0.2) and not tb.significant(-0.2, -1e-13)
    assert tb.significant(2e-12, 0.2) and tb.significant(-0.2, -2e-12)


def test_task_wins():
    # docs/methods.md §8: every model within 1e-12 of the best wins; missing cells never win.
    scores = np.array([[0.5, np.nan, 0.3], [0.5 - 1e-13, 0.2, np.nan], [0.4, 0.1, np.nan]])
    assert_array_equal(task_wins(scores), [[True, False, True], [True, True, False], [False, False, False]])


def test_rank_bootstrap_edges():
    assert rank_bootstrap(np.array([[0.1, np.nan], [np.nan, 0.2]])).n_valid == 0
    one = rank_bootstrap(np.array([[0.3, 0.5]]))
    assert (one.rank_lo[0], one.rank_hi[0], one.p_first[0]) == (1, 1, 1.0)
    tie = rank_summary(np.zeros((50, 3)), 0.05)
    assert_array_equal(tie.p_first, [1, 1, 1])
    win = rank_bootstrap(np.stack([X, Y, Z]), rank_by="win_rate", replicates=200)
    assert win.rank_hi[2] == 3 and win.rank_lo[0] == 1


def test_block_layout():
    order, sizes = block_layout(np.array([2, 0, 2, 1, 0]), 5)
    assert_array_equal(order, [1, 4, 3, 0, 2])
    assert sizes == (2, 1, 2)
    assert block_layout(None, 4) == (None, (4,))
    assert block_layout(np.array([3, 3]), 2) == (None, (2,))


@pytest.mark.parametrize("kwargs, match", [
    ({"replicates": 0}, "`replicates`"), ({"replicates": 2.5}, "`replicates`"), ({"replicates": True}, "`replicates`"),
    ({"alpha": 0.0}, "`alpha`"), ({"alpha": 1.5}, "`alpha`"), ({"seed": -1}, "`seed`"), ({"seed": 1.5}, "`seed`"),
    ({"weights": [1.0, -1.0]}, "`weights`"), ({"weights": [1.0]}, "`weights`"), ({"strata": ["a"]}, "`strata`"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(TaskBootstrapError, match=match):
        bootstrap_mean_ci([0.1, 0.2], **kwargs)


def test_bad_shapes():
    with pytest.raises(TaskBootstrapError, match="`x`"):
        bootstrap_mean_ci(np.zeros((2, 2)))
    with pytest.raises(TaskBootstrapError, match="`y`"):
        paired_ci([0.1, 0.2], [0.1])
    with pytest.raises(TaskBootstrapError, match="`rank_by`"):
        rank_bootstrap(np.zeros((2, 2)), rank_by="elo")


def test_paired_no_wider_than_unpaired_on_correlated_scores():
    # Task difficulty shared by both models makes the paired CI narrower on average (several seeds).
    rng = np.random.default_rng(0)
    widths = []
    for seed in range(8):
        difficulty = rng.uniform(0.1, 0.9, 60)
        x = np.clip(difficulty + rng.normal(0.03, 0.05, 60), 0, 1)
        y = np.clip(difficulty + rng.normal(0.0, 0.05, 60), 0, 1)
        paired, unpaired = paired_ci(x, y, replicates=400, seed=seed), unpaired_ci(x, y, replicates=400, seed=seed)
        widths.append((paired.hi - paired.lo, unpaired.hi - unpaired.lo))
    paired_width, unpaired_width = np.mean(widths, axis=0)
    assert paired_width <= unpaired_width


scores_strategy = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=25)


@settings(max_examples=40, deadline=None)
@given(scores_strategy, st.integers(0, 2**32 - 1), st.booleans())
def test_ci_contains_the_mean(x, seed, stratify):
    strata = [i % 3 for i in range(len(x))] if stratify else None
    mean, lo, hi = bootstrap_mean_ci(x, replicates=200, seed=seed, strata=strata)
    assert lo - ATOL_FAST <= mean <= hi + ATOL_FAST
    mean, lo, hi = poisson_mean_ci(x, replicates=200, seed=seed)
    assert lo - ATOL_FAST <= mean <= hi + ATOL_FAST


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=25), st.integers(0, 1000))
def test_paired_ci_contains_the_difference(pairs, seed):
    x, y = np.array(pairs).T
    diff, lo, hi, _ = paired_ci(x, y, replicates=200, seed=seed)
    assert lo - ATOL_FAST <= diff <= hi + ATOL_FAST
