"""Friedman, Iman–Davenport and Nemenyi (core.stats.friedman) on Reference D3 of docs/methods.md §8, against scipy,
and at the edges (too few models or tasks, complete ties, perfect agreement)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats

from core.stats.friedman import FriedmanError, friedman, iman_davenport, nemenyi_q, within_task_ranks
from tests.reference_values import (
    D3_FRIEDMAN,
    D3_FRIEDMAN_CHI2_UNCORRECTED,
    D3_FRIEDMAN_P_UNCORRECTED,
    D3_IMAN_DAVENPORT,
    D3_IMAN_DAVENPORT_UNCORRECTED,
    D3_MEAN_RANKS,
    D3_NEMENYI,
    D3_TIE_FACTOR,
    D3_X,
    D3_Y,
    D3_Z,
    NEMENYI_Q_05,
)

RTOL_REF = 1e-6  # docs/methods.md §0: point estimates; the §8 figures carry 6–8 significant digits
RTOL_SCIPY = 1e-10
ATOL_TABLE = 5e-5  # docs/methods.md §8 prints q_α to 4 decimals

# docs/methods.md §8, Reference D3 (tests/reference_values.py).
D3 = pd.DataFrame([D3_X, D3_Y, D3_Z], index=["X", "Y", "Z"], columns=[f"t{i:02d}" for i in range(1, 11)])
# docs/methods.md §8: Nemenyi q_α for k = 2..10 at α = .05.
NEMENYI_05 = NEMENYI_Q_05


def test_d3_reference():
    # docs/methods.md §8: R = 1.35/1.90/2.75; χ²_F 9.95 (p 0.0069085), C 0.925, corrected 10.7567568 (p 0.0046153);
    # F_F 10.4736842 (p 0.00096194); q 2.3437006, CD 1.0481348; only X vs Z (1.40) differs.
    r = friedman(D3)
    assert (r.n_tasks, r.k, r.df1, r.df2, r.alpha) == (10, 3, 2, 18, 0.05)
    assert_allclose([r.mean_ranks[m] for m in "XYZ"], D3_MEAN_RANKS, rtol=RTOL_REF)
    assert_allclose(r.chi2_uncorrected, D3_FRIEDMAN_CHI2_UNCORRECTED, rtol=RTOL_REF)
    assert_allclose(stats.chi2.sf(r.chi2_uncorrected, 2), D3_FRIEDMAN_P_UNCORRECTED, rtol=RTOL_REF * 10)
    assert_allclose(r.tie_factor, D3_TIE_FACTOR, rtol=RTOL_REF)
    assert_allclose((r.chi2, r.p_value), D3_FRIEDMAN, rtol=RTOL_REF * 10)
    assert_allclose((r.ff, r.ff_p_value), D3_IMAN_DAVENPORT, rtol=RTOL_REF * 10)
    assert_allclose((r.q_alpha, r.cd), D3_NEMENYI, rtol=RTOL_REF)
    assert r.reject and r.different_pairs == (("X", "Z"),)


def test_d3_iman_davenport_from_uncorrected():
    # docs/methods.md §8: F_F from the uncorrected χ²_F would be 8.9104478 (p 0.0020428); we report the corrected one.
    assert_allclose(iman_davenport(D3_FRIEDMAN_CHI2_UNCORRECTED, 10, 3), D3_IMAN_DAVENPORT_UNCORRECTED,
                    rtol=RTOL_REF * 10)


def test_matches_scipy_friedmanchisquare():
    stat = stats.friedmanchisquare(*D3.to_numpy())
    r = friedman(D3)
    assert_allclose((r.chi2, r.p_value), (stat.statistic, stat.pvalue), rtol=RTOL_SCIPY)


@settings(max_examples=30, deadline=None)
@given(st.integers(3, 6), st.integers(2, 15), st.integers(0, 10_000))
def test_matches_scipy_with_ties(k, n, seed):
    values = np.random.default_rng(seed).integers(0, 4, size=(k, n)) / 4  # coarse scores: many ties
    r = friedman(pd.DataFrame(values, index=[f"m{i}" for i in range(k)]))
    stat = stats.friedmanchisquare(*values)
    if np.isnan(stat.statistic):  # every task a complete tie
        assert np.isnan(r.chi2) and not r.reject
    else:
        assert_allclose((r.chi2, r.p_value), (stat.statistic, stat.pvalue), rtol=RTOL_SCIPY, atol=1e-12)


@pytest.mark.parametrize("k, q", list(zip(range(2, 11), NEMENYI_05)))
def test_nemenyi_table(k, q):
    assert_allclose(nemenyi_q(k, 0.05), q, atol=ATOL_TABLE)


def test_nemenyi_bad_arguments():
    with pytest.raises(FriedmanError, match="`k`"):
        nemenyi_q(1)
    with pytest.raises(FriedmanError, match="`alpha`"):
        nemenyi_q(3, 1.0)


def test_only_tasks_scored_by_all_models():
    with_missing = D3.copy()
    with_missing["t11"] = [0.9, np.nan, 0.1]
    r = friedman(with_missing)
    assert r.n_tasks == 10
    assert_allclose(r.chi2, friedman(D3).chi2, rtol=RTOL_SCIPY)


def test_too_few_models_or_tasks():
    assert friedman(D3.loc[["X"]]) is None
    assert friedman(D3[["t01"]]) is None
    assert friedman(pd.DataFrame()) is None
    two = friedman(D3.loc[["X", "Z"]])  # k = 2: scipy refuses, the formula does not
    assert two.k == 2 and two.df1 == 1 and np.isfinite(two.chi2)


def test_higher_score_ranks_first():
    r = friedman(pd.DataFrame([[0.9, 0.8, 0.7], [0.1, 0.2, 0.3]], index=["good", "bad"]))
    assert r.mean_ranks == {"good": 1.0, "bad": 2.0}


def test_all_ties_and_perfect_agreement():
    ties = friedman(pd.DataFrame(np.full((3, 5), 0.5), index=list("abc")))
    assert ties.tie_factor == 0 and np.isnan(ties.chi2) and np.isnan(ties.p_value) and np.isnan(ties.ff)
    assert not ties.reject and ties.different_pairs == ()
    agree = friedman(pd.DataFrame(np.tile([[0.9], [0.5], [0.1]], 6), index=list("abc")))
    assert agree.chi2 == pytest.approx(agree.n_tasks * (agree.k - 1))
    # F_F would be x/0 (no within-task disagreement): undefined with a note, not "F = inf, p = 0".
    assert np.isnan(agree.ff) and np.isnan(agree.ff_p_value) and "identically" in agree.note
    assert ties.note and "no test" in ties.note


def test_no_post_hoc_without_rejection():
    # Demšar 2006: Nemenyi only after the Friedman test rejects.
    r = friedman(D3, alpha=0.001)
    assert not r.reject and r.different_pairs == ()
    assert abs(r.mean_ranks["X"] - r.mean_ranks["Z"]) > friedman(D3).cd  # would differ at α = .05


def test_bad_input():
    with pytest.raises(FriedmanError, match="`scores`"):
        friedman(D3.to_numpy())
    with pytest.raises(FriedmanError, match="`alpha`"):
        friedman(D3, alpha=0)
    with pytest.raises(FriedmanError, match="`scores`"):
        friedman(pd.DataFrame([["a", "b"], ["c", "d"]]))


@pytest.mark.parametrize("k", [2, 3, 5, 10, 29, 60, 150])
@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
def test_nemenyi_q_equals_scipys_studentized_range(k, alpha):
    # q_α of Demšar (2006) is the studentized range quantile at infinite df over √2; computed without
    # importing scipy.stats (a second of every command's start), it must equal scipy's value.
    from scipy import stats

    reference = stats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2)
    assert nemenyi_q(k, alpha) == pytest.approx(reference, rel=1e-9)


def test_within_task_ranks_equal_scipys_average_ranks():
    from scipy import stats

    values = np.random.default_rng(0).integers(0, 4, (6, 40)).astype(float)  # many ties
    np.testing.assert_array_equal(within_task_ranks(values), stats.rankdata(-values, method="average", axis=0))
