"""Wilson score intervals (core.stats.intervals) against docs/methods.md §1, scipy and statsmodels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from core.stats.intervals import (
    IntervalInputError,
    WeightedProportion,
    kish_n_eff,
    weighted_wilson,
    wilson,
    wilson_array,
    z_value,
)
from tests.reference_values import (
    WEIGHTED_N_EFF,
    WEIGHTED_P,
    WEIGHTED_W,
    WEIGHTED_WILSON,
    WEIGHTED_WILSON_CC,
    WEIGHTED_Y,
    WILSON_TABLE,
    Z_975,
)

# docs/methods.md §1 quotes 10 decimals, so 1e-9 is the tightest fair comparison with its table.
ATOL_REFERENCE = 1e-9
# scipy/statsmodels use centre ± half-width, we use a product-of-roots form: equal up to rounding.
ATOL_PEER = 1e-12
# Identities that hold exactly on paper but go through different float operations.
RTOL_IDENTITY = 1e-12
ATOL_IDENTITY = 1e-12

# docs/methods.md §1 table: (x, n, Wilson, Wilson-cc), alpha = 0.05 (tests/reference_values.py).
METHODS_1_TABLE = WILSON_TABLE
TABLE_IDS = [f"{x}/{n}" for x, n, _, _ in METHODS_1_TABLE]

# docs/methods.md §1 weighted example: WEIGHTED_Y, WEIGHTED_W and its values in tests/reference_values.py.


# --- reference values (docs/methods.md §1) -----------------------------------------------------------

def test_z_value_matches_methods_0():
    # docs/methods.md §0: z = Φ⁻¹(1 − α/2) = 1.959963984540054 at α = 0.05.
    assert z_value(0.05) == pytest.approx(Z_975, abs=1e-15)


def test_z_value_equals_scipy_normal_quantile():
    # z_value uses the standard library's quantile (no scipy.stats import); it must give scipy's numbers
    # over the whole range of alpha, tails included.
    from scipy.stats import norm

    alphas = np.concatenate([[1e-12, 1e-9, 1e-6, 0.001, 0.01, 0.05, 0.1, 0.2, 0.5, 0.9, 0.999999],
                             np.random.default_rng(0).uniform(0.0, 1.0, 2000)])
    alphas = alphas[(alphas > 0) & (alphas < 1)]
    ours = np.array([z_value(a) for a in alphas])
    assert_allclose(ours, norm.ppf(1.0 - alphas / 2.0), rtol=0, atol=ATOL_PEER)
    assert isinstance(z_value(np.float64(0.05)), float)


@pytest.mark.parametrize(("x", "n", "plain", "corrected"), METHODS_1_TABLE, ids=TABLE_IDS)
def test_wilson_matches_methods_1_table(x, n, plain, corrected):
    # docs/methods.md §1 table, Wilson column.
    assert_allclose(wilson(x, n), plain, rtol=0, atol=ATOL_REFERENCE)


@pytest.mark.parametrize(("x", "n", "plain", "corrected"), METHODS_1_TABLE, ids=TABLE_IDS)
def test_wilson_cc_matches_methods_1_table(x, n, plain, corrected):
    # docs/methods.md §1 table, Wilson-cc column (Newcombe 1998 method 4).
    assert_allclose(wilson(x, n, continuity=True), corrected, rtol=0, atol=ATOL_REFERENCE)


def test_weighted_example_matches_methods_1():
    # docs/methods.md §1 weighted example: p̂_w, Kish n_eff, Wilson and Wilson-cc with n := n_eff.
    plain = weighted_wilson(WEIGHTED_Y, WEIGHTED_W)
    corrected = weighted_wilson(WEIGHTED_Y, WEIGHTED_W, continuity=True)
    assert isinstance(plain, WeightedProportion)
    assert plain.p == pytest.approx(WEIGHTED_P, abs=ATOL_REFERENCE)
    assert plain.n_eff == pytest.approx(WEIGHTED_N_EFF, abs=ATOL_REFERENCE)
    assert_allclose((plain.low, plain.high), WEIGHTED_WILSON, atol=ATOL_REFERENCE)
    assert_allclose((corrected.low, corrected.high), WEIGHTED_WILSON_CC, atol=ATOL_REFERENCE)
    assert (plain.alpha, plain.continuity, corrected.continuity) == (0.05, False, True)


def test_weighted_example_agrees_with_statsmodels_at_n_eff():
    # docs/methods.md §1: "statsmodels proportion_confint with nobs = n_eff agrees".
    res = weighted_wilson(WEIGHTED_Y, WEIGHTED_W)
    expected = proportion_confint(res.p * res.n_eff, res.n_eff, alpha=0.05, method="wilson")
    assert_allclose((res.low, res.high), expected, rtol=0, atol=ATOL_PEER)


def test_kish_n_eff_of_methods_1_weights():
    # docs/methods.md §1: (Σw)²/Σw² = 10.25² / 18.5625.
    assert kish_n_eff(WEIGHTED_W) == pytest.approx(10.25**2 / 18.5625, rel=RTOL_IDENTITY)


# --- edge cases (docs/methods.md §1 "MUST") -----------------------------------------------------------

@pytest.mark.parametrize("continuity", [False, True])
@pytest.mark.parametrize("n", [1, 2, 10, 1000, 2.5])
def test_zero_successes_give_lower_bound_exactly_zero(n, continuity):
    assert wilson(0, n, continuity=continuity)[0] == 0.0


@pytest.mark.parametrize("continuity", [False, True])
@pytest.mark.parametrize("n", [1, 2, 10, 1000, 2.5])
def test_all_successes_give_upper_bound_exactly_one(n, continuity):
    # The textbook centre + half-width gives 0.9999999999999999 here (docs/methods.md §1).
    assert wilson(n, n, continuity=continuity)[1] == 1.0


@pytest.mark.parametrize("continuity", [False, True])
def test_no_trials_give_nan_not_an_error(continuity):
    low, high = wilson(0, 0, continuity=continuity)
    assert math.isnan(low) and math.isnan(high)


def test_array_with_some_empty_cells_is_nan_only_there():
    low, high = wilson_array([0, 3, 0], [0, 10, 5])
    assert np.isnan(low[0]) and np.isnan(high[0])
    assert np.isfinite(low[1:]).all() and np.isfinite(high[1:]).all()
    assert low[2] == 0.0


def test_array_broadcasts_x_against_scalar_n():
    low, high = wilson_array(np.arange(11), 10)
    assert low.shape == high.shape == (11,)
    assert low[0] == 0.0 and high[-1] == 1.0


def test_weighted_all_successes_reach_exactly_one():
    res = weighted_wilson([1, 1, 1], [0.3, 2.0, 1.1])
    assert res.p == 1.0 and res.high == 1.0


def test_weighted_zero_total_weight_gives_nan():
    # docs/methods.md §1: Σw = 0 ⇒ NaN; no effective observation, so n_eff = 0.
    res = weighted_wilson([1, 0], [0.0, 0.0])
    assert math.isnan(res.p) and math.isnan(res.low) and math.isnan(res.high)
    assert res.n_eff == 0.0
    assert kish_n_eff([]) == 0.0


def test_zero_weight_rows_drop_out():
    # docs/methods.md §1: zero-weight rows drop out (their y is irrelevant).
    base = weighted_wilson(WEIGHTED_Y, WEIGHTED_W)
    padded = weighted_wilson([*WEIGHTED_Y, 0, 1, 0], [*WEIGHTED_W, 0, 0, 0])
    assert_allclose([padded.p, padded.n_eff, padded.low, padded.high],
                    [base.p, base.n_eff, base.low, base.high], rtol=RTOL_IDENTITY)


def test_equal_weights_reduce_to_the_unweighted_interval():
    y = [1, 0, 1, 1, 0, 1, 1]
    res = weighted_wilson(y, [2.5] * len(y))
    assert res.n_eff == pytest.approx(len(y), rel=RTOL_IDENTITY)
    assert_allclose((res.low, res.high), wilson(sum(y), len(y)), rtol=RTOL_IDENTITY)


@pytest.mark.parametrize("x", [0.1, 0.3, 0.49])
def test_fractional_x_below_half_has_corrected_lower_bound_zero(x):
    # Continuity correction subtracts half a success: with x < 1/2 every π in [0, x/n] is
    # accepted, so the lower bound is 0 (Newcombe's squared formula would exclude π = 0 here).
    assert wilson(x, 3.0, continuity=True)[0] == 0.0
    assert wilson(3.0 - x, 3.0, continuity=True)[1] == 1.0


# --- input validation: one check per bad argument -------------------------------------------

@pytest.mark.parametrize(("x", "n"), [(11, 10), (10.5, 10), (-1, 10), (-0.01, 0), (1, 0)])
def test_x_outside_zero_to_n_is_rejected(x, n):
    with pytest.raises(IntervalInputError, match=r"`x` must satisfy 0 <= x <= n.* n = "):
        wilson(x, n)


def test_bad_x_in_array_reports_its_position():
    with pytest.raises(IntervalInputError, match=r"positions \[2\]"):
        wilson_array([1, 2, 30], [10, 10, 10])


@pytest.mark.parametrize("n", [-1, float("nan"), float("inf")])
def test_bad_n_is_rejected(n):
    with pytest.raises(IntervalInputError, match="`n` must be finite and >= 0"):
        wilson(0, n)


def test_non_finite_x_is_rejected():
    with pytest.raises(IntervalInputError, match="`x` must be finite"):
        wilson(float("nan"), 10)


def test_unbroadcastable_shapes_are_rejected():
    with pytest.raises(IntervalInputError, match="broadcastable"):
        wilson_array([1, 2, 3], [4, 5])


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, float("nan"), "0.05x", None, True])
def test_bad_alpha_is_rejected(alpha):
    with pytest.raises(IntervalInputError, match="`alpha` must be a number strictly between 0 and 1"):
        wilson(3, 10, alpha=alpha)


def test_negative_weight_is_rejected():
    with pytest.raises(IntervalInputError, match=r"`w` must be finite and non-negative.*\[1\]"):
        weighted_wilson([1, 0], [1.0, -0.5])


def test_two_dimensional_weights_are_rejected():
    with pytest.raises(IntervalInputError, match="`w` must be one-dimensional"):
        kish_n_eff([[1.0, 2.0]])


def test_outcomes_and_weights_must_have_one_length():
    with pytest.raises(IntervalInputError, match="`y` and `w` must have the same length"):
        weighted_wilson([1, 0, 1], [1.0, 1.0])


@pytest.mark.parametrize("bad", [1.5, -1, float("nan")])
def test_outcome_outside_unit_interval_is_rejected(bad):
    with pytest.raises(IntervalInputError, match=r"`y` must lie in \[0, 1\].*\[1\]"):
        weighted_wilson([1, bad], [1.0, 1.0])


def test_errors_are_value_errors():
    assert issubclass(IntervalInputError, ValueError)


# --- cross-checks against peer libraries -------------------------------------------------------

def _random_cases(seed: int, size: int):
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 600, size=size)
    x = rng.integers(0, n + 1)
    alpha = rng.choice([0.001, 0.01, 0.05, 0.1, 0.2, 0.5, 0.9], size=size)
    return x, n, alpha


@pytest.mark.parametrize(("method", "continuity"), [("wilson", False), ("wilsoncc", True)])
def test_agrees_with_scipy_binomtest_on_random_cases(method, continuity):
    x, n, alpha = _random_cases(seed=1, size=300)
    for xi, ni, ai in zip(x, n, alpha):
        ci = binomtest(int(xi), int(ni)).proportion_ci(confidence_level=1 - ai, method=method)
        got = wilson(xi, ni, alpha=ai, continuity=continuity)
        assert_allclose(got, (ci.low, ci.high), rtol=0, atol=ATOL_PEER, err_msg=f"x={xi}, n={ni}, alpha={ai}")


def test_agrees_with_statsmodels_on_random_cases_including_fractional_x():
    x, n, alpha = _random_cases(seed=2, size=300)
    frac = np.random.default_rng(3).uniform(0, 1, size=x.size)
    x = np.minimum(x + frac, n)  # fractional successes, as in weighted or half-win counts
    low, high = wilson_array(x, n, alpha=0.05)
    exp_low, exp_high = proportion_confint(x, n, alpha=0.05, method="wilson")
    assert_allclose(low, exp_low, rtol=0, atol=ATOL_PEER)
    assert_allclose(high, exp_high, rtol=0, atol=ATOL_PEER)
    for xi, ni, ai in zip(x[:50], n[:50], alpha[:50]):
        assert_allclose(wilson(xi, ni, alpha=ai), proportion_confint(xi, ni, alpha=ai, method="wilson"),
                        rtol=0, atol=ATOL_PEER)


# --- properties (Hypothesis) ---------------------------------------------------------------

alphas = st.floats(min_value=1e-6, max_value=0.999)


@st.composite
def counts(draw):
    """(x, n) with 0 <= x <= n, n > 0, fractional values allowed."""
    n = draw(st.one_of(st.integers(1, 10_000).map(float), st.floats(min_value=1e-3, max_value=1e6)))
    share = draw(st.one_of(st.sampled_from([0.0, 1.0]), st.floats(min_value=0, max_value=1)))
    return min(share * n, n), n


@settings(max_examples=300, deadline=None)
@given(counts(), alphas, st.booleans())
def test_bounds_stay_in_unit_interval_and_contain_the_estimate(xn, alpha, continuity):
    # STYLE 8 / docs/methods.md §1: Wilson bounds in [0, 1] and the CI contains p̂ (exactly, in floats).
    x, n = xn
    low, high = wilson(x, n, alpha=alpha, continuity=continuity)
    assert 0.0 <= low <= x / n <= high <= 1.0


@settings(max_examples=200, deadline=None)
@given(counts(), alphas)
def test_continuity_correction_only_widens(xn, alpha):
    # The corrected statistic max(|x − nπ| − 1/2, 0) never exceeds the plain one.
    x, n = xn
    low, high = wilson(x, n, alpha=alpha)
    low_cc, high_cc = wilson(x, n, alpha=alpha, continuity=True)
    assert low_cc <= low + ATOL_IDENTITY and high_cc >= high - ATOL_IDENTITY


@settings(max_examples=200, deadline=None)
@given(counts(), alphas, st.booleans())
def test_swapping_successes_and_failures_mirrors_the_interval(xn, alpha, continuity):
    x, n = xn
    low, high = wilson(x, n, alpha=alpha, continuity=continuity)
    low_m, high_m = wilson(n - x, n, alpha=alpha, continuity=continuity)
    assert_allclose((low_m, high_m), (1 - high, 1 - low), rtol=0, atol=ATOL_IDENTITY)


@settings(max_examples=100, deadline=None)
@given(st.lists(counts(), min_size=1, max_size=20), alphas, st.booleans())
def test_vectorised_equals_scalar(cases, alpha, continuity):
    x = np.array([c[0] for c in cases])
    n = np.array([c[1] for c in cases])
    low, high = wilson_array(x, n, alpha=alpha, continuity=continuity)
    expected = np.array([wilson(xi, ni, alpha=alpha, continuity=continuity) for xi, ni in cases])
    assert_array_equal(np.column_stack([low, high]), expected)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 50), st.integers(1, 50), st.floats(0.01, 0.5), st.floats(0.01, 0.5))
def test_smaller_alpha_gives_a_wider_interval(x, n, a1, a2):
    x = min(x, n)
    small, large = sorted((a1, a2))
    low_s, high_s = wilson(x, n, alpha=small)
    low_l, high_l = wilson(x, n, alpha=large)
    assert low_s <= low_l + ATOL_IDENTITY and high_s >= high_l - ATOL_IDENTITY


# Zero or comfortably normal, so that rescaling by 1e-6 cannot flush a weight to zero.
weights = st.lists(st.one_of(st.just(0.0), st.floats(min_value=1e-100, max_value=1e3)), min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(weights.filter(lambda w: sum(w) > 0), st.data(),
       st.floats(min_value=1e-6, max_value=1e6), st.booleans())
def test_rescaling_weights_changes_nothing(w, data, scale, continuity):
    # docs/methods.md §6: ratio estimators and Kish n_eff are scale invariant.
    y = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=len(w), max_size=len(w)))
    base = weighted_wilson(y, w, continuity=continuity)
    scaled = weighted_wilson(y, [scale * wi for wi in w], continuity=continuity)
    assert_allclose([scaled.p, scaled.n_eff], [base.p, base.n_eff], rtol=RTOL_IDENTITY, atol=ATOL_IDENTITY)
    assert_allclose([scaled.low, scaled.high], [base.low, base.high], rtol=0, atol=1e-9)
    assert 0.0 <= base.low <= base.p <= base.high <= 1.0


@settings(max_examples=200, deadline=None)
@given(weights)
def test_kish_n_eff_lies_between_one_and_the_number_of_positive_weights(w):
    n_eff = kish_n_eff(w)
    positive = sum(wi > 0 for wi in w)
    if positive == 0:
        assert n_eff == 0.0
    else:
        assert 1.0 - RTOL_IDENTITY <= n_eff <= positive * (1 + RTOL_IDENTITY)


def test_kish_n_eff_survives_extreme_scales():
    # Squaring 1e-200 underflows and 1e200 overflows; the result must not depend on the scale.
    for scale in (1e-200, 1.0, 1e200):
        assert kish_n_eff(np.array([1.0, 2.0, 3.0]) * scale) == pytest.approx(36 / 14, rel=RTOL_IDENTITY)
