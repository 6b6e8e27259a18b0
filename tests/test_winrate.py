"""Win rates vs the field and head to head (core.ranking.winrate): hand examples, docs/methods.md data, properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from statsmodels.stats.proportion import proportion_confint

from core.ranking.winrate import WinRateInputError, WinRates, pairwise_win_rates, win_rates
from core.stats.intervals import wilson, wilson_array
from tests.reference_values import D1, D1_PAIR_COUNTS, D1_PAIR_WIN_RATES, D1_W, D2_A_FIELD_RAW, D2_A_VS_B, D2_A_VS_C

# Hand-computed fractions below are exact; only float rounding separates them from the code.
RTOL_EXACT = 1e-12
ATOL_EXACT = 1e-12
# docs/methods.md quotes 7 significant digits for derived rates.
ATOL_METHODS = 1e-7
# A generous wall-clock budget: the real cost is ~0.1 s, the bound only catches a Python loop.

# Tiny example, models A=0, B=1, C=2, D=3 (D never plays). Columns: left, right, score, count, weight.
#   A–B: A won 3 votes (weight 1)        A–B: B won 1 vote (weight 1)
#   B–A: 1 tie (weight 1)                A–C: A won 1 vote of weight 2
TINY = dict(left=[0, 0, 1, 0], right=[1, 1, 0, 2], score=[1.0, 0.0, 0.5, 1.0], count=[3, 1, 1, 1])
TINY_WEIGHT = [1.0, 1.0, 1.0, 2.0]


def _expand(left, right, score, count):
    """Cells with integer counts -> one row per vote (count 1)."""
    reps = np.asarray(count, dtype=int)
    return (np.repeat(left, reps), np.repeat(right, reps), np.repeat(score, reps), np.ones(reps.sum()))


def _slow_win_rates(left, right, score, count, weight, k):
    """Obvious per-cell loop, for the fast-vs-simple cross-check (STYLE 9)."""
    wins, n, sw2, votes = np.zeros(k), np.zeros(k), np.zeros(k), np.zeros(k)
    for i, j, s, c, w in zip(left, right, score, count, weight):
        for model, own in ((i, s), (j, 1.0 - s)):
            wins[model] += c * w * own
            n[model] += c * w
            sw2[model] += c * w * w
            votes[model] += c
    return wins, n, sw2, votes


# --- hand-computed example ---------------------------------------------------------------------

def test_tiny_example_unweighted_by_hand():
    res = win_rates(**TINY, n_models=4)
    # A: 3 + 0 + 0.5 (tie as right) + 1 = 4.5 of 6; B: 0 + 1 + 0.5 = 1.5 of 5; C: 0 of 1; D: none.
    assert_allclose(res.wins, [4.5, 1.5, 0.0, 0.0], rtol=RTOL_EXACT)
    assert_array_equal(res.n, [6, 5, 1, 0])
    assert_array_equal(res.n_votes, [6, 5, 1, 0])
    assert_array_equal(res.n_eff, [6, 5, 1, 0])
    assert_allclose(res.win_rate[:3], [0.75, 0.3, 0.0], rtol=RTOL_EXACT)
    # docs/methods.md §1 plain Wilson on the fractional counts 4.5/6 and 1.5/5 (statsmodels accepts them).
    for model, (x, n) in enumerate([(4.5, 6), (1.5, 5), (0, 1)]):
        expected = proportion_confint(x, n, alpha=0.05, method="wilson")
        assert_allclose((res.low[model], res.high[model]), expected, rtol=0, atol=ATOL_EXACT)
    assert not res.weighted and res.alpha == 0.05 and not res.continuity


def test_tiny_example_weighted_by_hand():
    res = win_rates(**TINY, n_models=4, weight=TINY_WEIGHT)
    # A: wins 3 + 0.5 + 2 = 5.5 of Σcw = 7; Σcw² = 3 + 1 + 1 + 4 = 9 ⇒ n_eff = 49/9 (docs/methods.md §6).
    assert_allclose(res.wins[:3], [5.5, 1.5, 0.0], rtol=RTOL_EXACT)
    assert_allclose(res.n[:3], [7, 5, 2], rtol=RTOL_EXACT)
    assert_allclose(res.n_eff[:3], [49 / 9, 5, 1], rtol=RTOL_EXACT)
    assert_array_equal(res.n_votes, [6, 5, 1, 0])
    assert_allclose(res.win_rate[:3], [11 / 14, 0.3, 0.0], rtol=RTOL_EXACT)
    # docs/methods.md §1 weighted: Wilson with n := n_eff and x := p̂_w·n_eff.
    assert_allclose((res.low[0], res.high[0]), wilson(11 / 14 * 49 / 9, 49 / 9), rtol=RTOL_EXACT)
    assert res.weighted


def test_model_without_votes_is_nan_with_zero_counts():
    res = win_rates(**TINY, n_models=4, weight=TINY_WEIGHT)
    assert np.isnan(res.win_rate[3]) and np.isnan(res.low[3]) and np.isnan(res.high[3])
    assert res.wins[3] == res.n[3] == res.n_eff[3] == res.n_votes[3] == 0


def test_model_that_never_wins_has_lower_bound_exactly_zero():
    # docs/methods.md §1 edge: x = 0 ⇒ lower = 0 exactly; x = n ⇒ upper = 1 exactly (C never wins).
    res = win_rates(left=[0, 0], right=[1, 2], score=[1.0, 1.0], count=[4, 2], n_models=3)
    assert res.low[1] == 0.0 and res.low[2] == 0.0
    assert res.high[0] == 1.0 and res.win_rate[0] == 1.0


def test_all_ties_give_one_half_for_everyone():
    res = win_rates(left=[0, 1, 2], right=[1, 2, 0], score=[0.5] * 3, count=[2, 2, 2], n_models=3)
    assert_allclose(res.win_rate, 0.5, rtol=RTOL_EXACT)


def test_zero_count_cells_change_nothing():
    base = win_rates(**TINY, n_models=4)
    padded = win_rates(left=[*TINY["left"], 3], right=[*TINY["right"], 0], score=[*TINY["score"], 1.0],
                       count=[*TINY["count"], 0], n_models=4)
    assert_array_equal(padded.win_rate, base.win_rate)
    assert np.isnan(padded.win_rate[3]) and padded.n_votes[3] == 0


def test_empty_input_gives_nan_for_every_model():
    res = win_rates(left=[], right=[], score=[], count=[], n_models=2)
    assert np.isnan(res.win_rate).all() and (res.n_votes == 0).all()
    rate, n = pairwise_win_rates([], [], [], [], 2)
    assert np.isnan(rate).all() and (n == 0).all()


def test_result_is_frozen_and_read_only():
    res = win_rates(**TINY, n_models=4)
    assert isinstance(res, WinRates)
    with pytest.raises(AttributeError):
        res.alpha = 0.1
    with pytest.raises(ValueError, match="read-only"):
        res.win_rate[0] = 0.0


def test_continuity_and_alpha_are_passed_through():
    res = win_rates(**TINY, n_models=4, alpha=0.1, continuity=True)
    assert_allclose((res.low[1], res.high[1]), wilson(1.5, 5, alpha=0.1, continuity=True), rtol=RTOL_EXACT)
    assert res.alpha == 0.1 and res.continuity


# --- pairwise matrix ---------------------------------------------------------------------------

def test_tiny_pairwise_by_hand():
    rate, n = pairwise_win_rates(**TINY, n_models=4)
    # A vs B: A won 3 + 0.5 of 5 (either side); A vs C: 1 of 1 (pairwise ignores weights).
    assert_allclose(rate[0, 1], 0.7, rtol=RTOL_EXACT)
    assert_allclose(rate[1, 0], 0.3, rtol=RTOL_EXACT)
    assert rate[0, 2] == 1.0 and rate[2, 0] == 0.0
    assert_array_equal(n, [[0, 5, 1, 0], [5, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]])
    assert np.isnan(rate[1, 2]) and np.isnan(np.diag(rate)).all() and np.isnan(rate[3]).all()


# docs/methods.md §2 reference D1 (tests/reference_values.py): per pair (i-wins, j-wins, ties), i always on the left.
D1_PAIRS = {(i, j): (wins_i, wins_j, ties) for i, j, wins_i, wins_j, ties in D1}


def _d1_cells():
    rows = [(i, j, s, c) for (i, j), (w, lost, t) in D1_PAIRS.items() for s, c in ((1.0, w), (0.0, lost), (0.5, t))]
    left, right, score, count = map(np.array, zip(*rows))
    return left, right, score, count


def test_d1_pairwise_rates_and_win_matrix_match_methods_2():
    # docs/methods.md §2 "Win-rate route": r_AB = 0.65, r_AC = 0.75, r_AD = 5/6, r_BC = 0.5, r_BD = 0.75,
    # r_CD = 0.5 with n = 10, 10, 6, 10, 8, 8; W = r·n reproduces the D1 win matrix exactly.
    rate, n = pairwise_win_rates(*_d1_cells(), n_models=4)
    upper = np.triu_indices(4, 1)
    assert_allclose(rate[upper], D1_PAIR_WIN_RATES, rtol=RTOL_EXACT)
    assert_array_equal(n[upper], D1_PAIR_COUNTS)
    assert_allclose(np.nan_to_num(rate) * n, D1_W, rtol=RTOL_EXACT, atol=ATOL_EXACT)


def test_d1_vs_field_is_the_row_sums_of_the_win_matrix():
    res = win_rates(*_d1_cells(), n_models=4)
    assert_allclose(res.wins, np.sum(D1_W, axis=1), rtol=RTOL_EXACT)
    assert_array_equal(res.n_votes, [26, 28, 28, 22])


def test_d2_raw_rate_of_a_vs_field_matches_methods_5():
    # docs/methods.md §5 reference D2 (periods pooled): A vs field raw 25.5/40 = 0.6375.
    # Cells "left–right: left wins/right wins/ties" summed over periods.
    d2 = {(0, 1): (21, 8, 3), (1, 0): (2, 1, 0), (0, 2): (2, 1, 0), (2, 0): (2, 0, 0),
          (1, 2): (1, 1, 0), (2, 1): (0, 0, 1)}
    rows = [(i, j, s, c) for (i, j), (w, lost, t) in d2.items() for s, c in ((1.0, w), (0.0, lost), (0.5, t))]
    left, right, score, count = map(np.array, zip(*rows))
    res = win_rates(left, right, score, count, n_models=3)
    assert res.wins[0] == 25.5 and res.n[0] == 40
    assert res.win_rate[0] == pytest.approx(D2_A_FIELD_RAW, abs=ATOL_METHODS)
    rate, _ = pairwise_win_rates(left, right, score, count, n_models=3)
    # docs/methods.md §5: A vs B raw 0.6714286, A vs C raw 0.4.
    assert_allclose([rate[0, 1], rate[0, 2]], [D2_A_VS_B[0], D2_A_VS_C[0]], atol=ATOL_METHODS)


# --- input validation: one check per bad argument -------------------------------------------

def _tiny_with(**changes):
    args = {**TINY, "n_models": 4, **changes}
    return args


@pytest.mark.parametrize(("changes", "pattern"), [
    (dict(left=[0, 0, 1, 4]), r"`left` must lie in 0\.\.3 .*3 \(4\)"),
    (dict(right=[1, 1, -1, 2]), r"`right` must lie in 0\.\.3 .*2 \(-1\)"),
    (dict(left=[0.0, 0.0, 1.0, 0.0]), r"`left` must hold integer model indices"),
    (dict(right=[0, 1, 0, 2]), r"`left` must differ from `right`.*0 \(0\)"),
    (dict(score=[1.0, 1.5, 0.5, 1.0]), r"`score` must lie in \[0, 1\].*1 \(1\.5\)"),
    (dict(score=[1.0, np.nan, 0.5, 1.0]), r"`score` must lie in \[0, 1\]"),
    (dict(score=["a", "b", "c", "d"]), r"`score` must be numeric"),
    (dict(count=[3, -1, 1, 1]), r"`count` must be finite and >= 0.*1 \(-1\.0\)"),
    (dict(count=[3, np.inf, 1, 1]), r"`count` must be finite and >= 0"),
    (dict(weight=[1.0, -2.0, 1.0, 1.0]), r"`weight` must be finite and >= 0.*1 \(-2\.0\)"),
    (dict(score=[1.0, 0.0, 0.5]), r"cell arrays must have one length"),
    (dict(count=[[3, 1, 1, 1]]), r"`count` must be one-dimensional"),
    (dict(n_models=-1), r"`n_models` must be a non-negative integer"),
    (dict(n_models=4.0), r"`n_models` must be a non-negative integer"),
    (dict(n_models=True), r"`n_models` must be a non-negative integer"),
    (dict(alpha=1.0), r"`alpha` must be a number strictly between 0 and 1"),
])
def test_bad_arguments_are_rejected_with_their_name(changes, pattern):
    with pytest.raises(ValueError, match=pattern):
        win_rates(**_tiny_with(**changes))


def test_pairwise_validates_like_win_rates():
    with pytest.raises(WinRateInputError, match="`left` must lie in 0..1"):
        pairwise_win_rates([0, 2], [1, 0], [1.0, 0.0], [1, 1], 2)


def test_errors_are_value_errors():
    assert issubclass(WinRateInputError, ValueError)


# --- properties (Hypothesis) ---------------------------------------------------------------

@st.composite
def cells(draw, weighted=False):
    """Random cells: K models, distinct left/right, half-win scores, integer counts, optional weights."""
    k = draw(st.integers(2, 6))
    m = draw(st.integers(0, 25))
    left = np.array(draw(st.lists(st.integers(0, k - 1), min_size=m, max_size=m)), dtype=np.int64)
    offset = np.array(draw(st.lists(st.integers(1, k - 1), min_size=m, max_size=m)), dtype=np.int64)
    right = (left + offset) % k
    score = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=m, max_size=m)))
    count = np.array(draw(st.lists(st.integers(0, 6), min_size=m, max_size=m)), dtype=float)
    # Weights kept >= 1e-3 so the plain formulas in the slow reference cannot underflow;
    # extreme scales have their own test.
    some_weight = st.one_of(st.just(0.0), st.floats(1e-3, 10.0))
    weight = np.array(draw(st.lists(some_weight, min_size=m, max_size=m))) if weighted else None
    return k, left, right, score, count, weight


def _fields(res):
    return np.column_stack([res.win_rate, res.low, res.high, res.wins, res.n, res.n_eff, res.n_votes])


@settings(max_examples=150, deadline=None)
@given(cells(weighted=True))
def test_fast_path_equals_a_simple_loop(data):
    k, left, right, score, count, weight = data
    res = win_rates(left, right, score, count, k, weight=weight)
    wins, n, sw2, votes = _slow_win_rates(left, right, score, count, weight, k)
    assert_allclose(res.wins, wins, rtol=RTOL_EXACT, atol=ATOL_EXACT)
    assert_allclose(res.n, n, rtol=RTOL_EXACT, atol=ATOL_EXACT)
    assert_array_equal(res.n_votes, votes)
    has = n > 0
    assert_allclose(res.n_eff[has], n[has] ** 2 / sw2[has], rtol=1e-10)
    assert_allclose(res.win_rate[has], wins[has] / n[has], rtol=RTOL_EXACT, atol=ATOL_EXACT)
    assert np.isnan(res.win_rate[~has]).all()
    low, high = wilson_array(np.where(has, res.win_rate * res.n_eff, 0), np.where(has, res.n_eff, 0))
    assert_array_equal(res.low, low)
    assert_array_equal(res.high, high)


@settings(max_examples=150, deadline=None)
@given(cells(weighted=True))
def test_intervals_are_valid_and_contain_the_rate(data):
    k, left, right, score, count, weight = data
    res = win_rates(left, right, score, count, k, weight=weight)
    has = res.n > 0
    assert (res.low[has] >= 0).all() and (res.high[has] <= 1).all()
    assert (res.low[has] <= res.win_rate[has]).all() and (res.win_rate[has] <= res.high[has]).all()
    # Every cell's weighted votes are split between its two models.
    assert res.wins.sum() == pytest.approx(np.sum(count * weight), rel=RTOL_EXACT, abs=ATOL_EXACT)


@settings(max_examples=100, deadline=None)
@given(cells(), st.randoms(use_true_random=False))
def test_relabelling_models_permutes_the_output(data, rnd):
    k, left, right, score, count, _ = data
    perm = np.array(rnd.sample(range(k), k))  # old index -> new index
    base = win_rates(left, right, score, count, k)
    moved = win_rates(perm[left], perm[right], score, count, k)
    assert_allclose(_fields(moved)[perm], _fields(base), rtol=RTOL_EXACT, equal_nan=True)
    rate, n = pairwise_win_rates(left, right, score, count, k)
    rate_m, n_m = pairwise_win_rates(perm[left], perm[right], score, count, k)
    assert_allclose(rate_m[np.ix_(perm, perm)], rate, rtol=RTOL_EXACT, equal_nan=True)
    assert_array_equal(n_m[np.ix_(perm, perm)], n)


@settings(max_examples=100, deadline=None)
@given(cells(weighted=True), st.randoms(use_true_random=False))
def test_row_order_and_side_do_not_matter(data, rnd):
    k, left, right, score, count, weight = data
    base = win_rates(left, right, score, count, k, weight=weight)
    order = np.array(rnd.sample(range(left.size), left.size), dtype=np.int64)
    shuffled = win_rates(left[order], right[order], score[order], count[order], k, weight=weight[order])
    # Showing the same comparison mirrored (right on the left, score 1 − s) is the same evidence.
    mirrored = win_rates(right, left, 1.0 - score, count, k, weight=weight)
    for other in (shuffled, mirrored):
        assert_allclose(_fields(other), _fields(base), rtol=RTOL_EXACT, atol=ATOL_EXACT, equal_nan=True)


@settings(max_examples=100, deadline=None)
@given(cells(weighted=True), st.floats(1e-6, 1e6))
def test_rescaling_weights_changes_rates_and_intervals_not_at_all(data, scale):
    # docs/methods.md §6: ratio estimators and Kish n_eff are scale invariant.
    k, left, right, score, count, weight = data
    base = win_rates(left, right, score, count, k, weight=weight)
    scaled = win_rates(left, right, score, count, k, weight=weight * scale)
    for name in ("win_rate", "n_eff", "low", "high"):
        assert_allclose(getattr(scaled, name), getattr(base, name), rtol=1e-9, atol=1e-12, equal_nan=True)
    assert_array_equal(scaled.n_votes, base.n_votes)


@settings(max_examples=100, deadline=None)
@given(cells())
def test_unit_weights_equal_no_weights(data):
    k, left, right, score, count, _ = data
    plain = win_rates(left, right, score, count, k)
    unit = win_rates(left, right, score, count, k, weight=np.ones_like(count))
    assert_allclose(_fields(unit), _fields(plain), rtol=RTOL_EXACT, atol=ATOL_EXACT, equal_nan=True)


@settings(max_examples=100, deadline=None)
@given(cells())
def test_counts_equal_one_row_per_vote(data):
    k, left, right, score, count, _ = data
    cell_res = win_rates(left, right, score, count, k)
    vote_res = win_rates(*_expand(left, right, score, count), k)
    assert_allclose(_fields(vote_res), _fields(cell_res), rtol=RTOL_EXACT, atol=ATOL_EXACT, equal_nan=True)


@settings(max_examples=150, deadline=None)
@given(cells())
def test_pairwise_matrix_is_complementary_and_consistent(data):
    k, left, right, score, count, _ = data
    rate, n = pairwise_win_rates(left, right, score, count, k)
    compared = n > 0
    assert_array_equal(n, n.T)
    assert_array_equal(np.diag(n), 0)
    # r_ij + r_ji = 1 wherever i and j met (docs/methods.md §2 requires |err| ≤ 1e-9 for the win-rate route).
    assert_allclose((rate + rate.T)[compared], 1.0, rtol=0, atol=ATOL_EXACT)
    assert np.isnan(rate[~compared]).all()
    # Head-to-head results add up to the vs-field totals.
    field = win_rates(left, right, score, count, k)
    assert_allclose(np.nansum(rate * n, axis=1), field.wins, rtol=RTOL_EXACT, atol=ATOL_EXACT)
    assert_allclose(n.sum(axis=1), field.n_votes, rtol=RTOL_EXACT)


@pytest.mark.parametrize("scale", [1e-300, 1e-160, 1.0, 1e160, 1e300])
def test_extreme_weight_scales_keep_n_eff(scale):
    # w² underflows below ~1e-162 and overflows above ~1e154; Kish n_eff must not notice.
    args = _tiny_with(weight=np.array(TINY_WEIGHT) * scale)
    res = win_rates(**args)
    assert_allclose(res.n_eff[:3], [49 / 9, 5, 1], rtol=RTOL_EXACT)
    assert_allclose(res.win_rate[:3], [11 / 14, 0.3, 0.0], rtol=RTOL_EXACT)


def test_models_on_different_weight_scales_each_get_their_n_eff():
    # A–B votes weigh 1e-200, C–D votes 1e200: one global rescaling would lose A and B.
    res = win_rates(left=[0, 0, 2, 2], right=[1, 1, 3, 3], score=[1.0, 0.0, 1.0, 0.0], count=[1, 1, 1, 1],
                    n_models=4, weight=[1e-200, 3e-200, 1e200, 1e200])
    assert_allclose(res.n_eff, [16 / 10, 16 / 10, 2, 2], rtol=RTOL_EXACT)
    assert np.isfinite(res.low).all() and np.isfinite(res.high).all()


# --- scale ---------------------------------------------------------------------------------------

def test_a_million_cells_are_handled_exactly():  # speed is measured in bench/, not timed here
    rng = np.random.default_rng(0)
    m, k = 1_000_000, 150
    left = rng.integers(0, k, m)
    right = (left + rng.integers(1, k, m)) % k
    score = rng.choice([0.0, 0.5, 1.0], m)
    count = rng.integers(1, 20, m).astype(float)
    weight = rng.uniform(0.2, 5.0, m)
    res = win_rates(left, right, score, count, k, weight=weight)
    rate, n = pairwise_win_rates(left, right, score, count, k)
    assert res.n_votes.sum() == 2 * count.sum()
    assert res.wins.sum() == pytest.approx(np.sum(count * weight), rel=1e-10)
    assert n.sum() == 2 * count.sum()
    assert np.isfinite(res.win_rate).all() and np.isfinite(rate[n > 0]).all()
