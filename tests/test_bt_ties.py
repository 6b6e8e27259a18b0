"""The Davidson (1970) tie model (core.ranking.ties), docs/methods.md §2 "Tie models"."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy.optimize import minimize

from core.ranking.covariates import fit_adjusted
from core.ranking.ties import ConvergenceError, NotIdentifiableError, TieInputError, fit_davidson
from tests.reference_values import D1, D1_DAVIDSON_NU, D1_DAVIDSON_PI

RTOL_REF = 1e-6  # docs/methods.md §0: point estimates with rtol 1e-6
RTOL_SCIPY = 1e-5  # BFGS stops at gtol 1e-9 on the NLL; its π agrees with Newton to ~1e-7
RTOL_EXACT = 1e-9  # two exact solvers of the same likelihood (or a closed form)

# docs/methods.md §2, Reference D1 and its tie-model fits: tests/reference_values.py.


def matrices(pairs, k):
    wins, ties = np.zeros((k, k)), np.zeros((k, k))
    for i, j, wij, wji, t in pairs:
        wins[i, j] += wij
        wins[j, i] += wji
        ties[i, j] += t
        ties[j, i] += t
    return wins, ties


@pytest.fixture
def d1():
    return matrices(D1, 4)


def davidson_nll(x, wins, ties):
    """The Davidson likelihood written out naively (θ₀ = 0, x = (θ₁.., ln ν)), for scipy to minimise."""
    k = wins.shape[0]
    pi = np.exp(np.r_[0.0, x[: k - 1]])
    nu = np.exp(x[-1])
    nll = 0.0
    for i, j in itertools.combinations(range(k), 2):
        d = pi[i] + pi[j] + nu * np.sqrt(pi[i] * pi[j])
        nll -= wins[i, j] * np.log(pi[i] / d) + wins[j, i] * np.log(pi[j] / d)
        nll -= ties[i, j] * np.log(nu * np.sqrt(pi[i] * pi[j]) / d)
    return nll


def scipy_davidson(wins, ties):
    k = wins.shape[0]
    res = minimize(davidson_nll, np.zeros(k), args=(wins, ties), method="BFGS", options={"gtol": 1e-9})
    pi = np.exp(np.r_[0.0, res.x[: k - 1]])
    return pi / pi.mean(), np.exp(res.x[-1])


# --- docs/methods.md §2 reference values ------------------------------------------------------------------


def test_davidson_matches_reference_d1(d1):
    # docs/methods.md §2, Reference D1 (Davidson MLE).
    res = fit_davidson(*d1)
    assert res.converged
    assert_allclose(res.pi, D1_DAVIDSON_PI, rtol=RTOL_REF)
    assert_allclose(res.nu, D1_DAVIDSON_NU, rtol=RTOL_REF)
    assert_allclose(res.elo, 400 * np.log10(res.pi) + 1500)


def test_davidson_agrees_with_direct_scipy_minimisation(d1):
    pi, nu = scipy_davidson(*d1)
    res = fit_davidson(*d1)
    assert_allclose(res.pi, pi, rtol=RTOL_SCIPY)
    assert_allclose(res.nu, nu, rtol=RTOL_SCIPY)
    assert_allclose(res.log_likelihood, -davidson_nll(np.r_[np.log(res.pi[1:] / res.pi[0]), np.log(res.nu)], *d1))


def test_single_pair_has_closed_form():
    # With one pair the model is saturated: π₀/π₁ = w₀₁/w₁₀, ν = t/√(w₀₁w₁₀) (Davidson 1970, §3).
    wins, ties = [[0, 7], [3, 0]], [[0, 2], [2, 0]]
    dav = fit_davidson(wins, ties)
    assert_allclose(dav.pi[0] / dav.pi[1], 7 / 3, rtol=RTOL_EXACT)
    assert_allclose(dav.nu, 2 / np.sqrt(21), rtol=RTOL_EXACT)


# --- invariants -------------------------------------------------------------------------------------


@pytest.mark.parametrize("perm", [(1, 0, 2, 3), (3, 2, 1, 0), (2, 0, 3, 1), (1, 3, 0, 2)])
def test_relabelling_models_permutes_the_result(d1, perm):
    wins, ties = d1
    p = np.array(perm)
    base, moved = fit_davidson(wins, ties), fit_davidson(wins[np.ix_(p, p)], ties[np.ix_(p, p)])
    assert_allclose(moved.pi, base.pi[p], rtol=RTOL_EXACT)
    assert_allclose(moved.nu, base.nu, rtol=RTOL_EXACT)


@pytest.mark.parametrize("scale", [0.1, 3.7, 1000.0])
def test_scaling_all_counts_leaves_the_mle_unchanged(d1, scale):
    wins, ties = d1
    base, scaled = fit_davidson(wins, ties), fit_davidson(wins * scale, ties * scale)
    assert_allclose(scaled.pi, base.pi, rtol=RTOL_EXACT)
    assert_allclose(scaled.nu, base.nu, rtol=RTOL_EXACT)


count_matrices = st.integers(3, 5).flatmap(lambda k: st.tuples(
    st.lists(st.integers(1, 9), min_size=k * k, max_size=k * k),
    st.lists(st.integers(0, 4), min_size=k * (k - 1) // 2, max_size=k * (k - 1) // 2),
    st.permutations(range(k))))


@settings(max_examples=25, deadline=None)
@given(count_matrices)
def test_random_data_give_valid_estimates_and_permute(data):
    flat, tie_counts, perm = data
    k = len(perm)
    wins = np.array(flat, dtype=float).reshape(k, k)
    np.fill_diagonal(wins, 0)
    ties = np.zeros((k, k))
    ties[np.triu_indices(k, 1)] = tie_counts
    ties = ties + ties.T
    res = fit_davidson(wins, ties)
    assert res.nu >= 0 and np.isfinite(res.nu)
    assert np.all(np.isfinite(res.pi)) and np.all(res.pi > 0)
    assert_allclose(res.pi.mean(), 1.0)
    p = np.array(perm)
    moved = fit_davidson(wins[np.ix_(p, p)], ties[np.ix_(p, p)])
    assert_allclose(moved.pi, res.pi[p], rtol=1e-8)


# --- edge cases -------------------------------------------------------------------------------------


def test_no_ties_gives_boundary_tie_parameter_and_plain_bt(d1):
    # docs/methods.md §2: without ties ν̂ = 0 and the model reduces to plain BT on the decisive votes.
    wins, _ = d1
    dav = fit_davidson(wins, np.zeros((4, 4)))
    assert dav.nu == 0.0
    assert np.isfinite(dav.log_likelihood)
    i, j = np.nonzero(wins)
    bt = fit_adjusted(i, j, np.ones(i.size), 4, count=wins[i, j], position=False)
    assert_allclose(dav.pi, bt.pi, rtol=RTOL_EXACT)


def test_only_ties_has_no_mle_but_a_finite_map():
    wins, ties = np.zeros((2, 2)), [[0, 2], [2, 0]]
    with pytest.raises(NotIdentifiableError, match="prior"):
        fit_davidson(wins, ties)
    # Prior c = 0.5: each model has 0.5 wins and 0.5 losses against R; with equal strengths half of all
    # (real + virtual) comparisons are ties, so ν/(2 + ν) = 1/2.
    dav = fit_davidson(wins, ties, prior=0.5)
    assert_allclose(dav.pi, [1, 1], rtol=RTOL_EXACT)
    assert_allclose(dav.nu, 2.0, rtol=RTOL_EXACT)


def test_all_ties_between_two_models_inside_a_connected_set():
    # A–B only ever tie; C ties and trades wins with both, so every strength is pinned.
    wins, ties = matrices([(0, 1, 0, 0, 3), (0, 2, 4, 2, 1), (1, 2, 3, 3, 1)], 3)
    res = fit_davidson(wins, ties)
    pi, nu = scipy_davidson(wins, ties)
    assert_allclose(res.pi, pi, rtol=RTOL_SCIPY)
    assert_allclose(res.nu, nu, rtol=RTOL_SCIPY)


def test_a_tie_rescues_a_model_that_never_loses():
    # Model 0 beats 1 three times and ties once; decisive votes between 1 and 2 pin ν, and a tie has
    # vanishing probability as π₀/π₁ → ∞ at fixed ν, so the MLE is finite (the LP check must agree).
    wins, ties = matrices([(0, 1, 3, 0, 1), (1, 2, 3, 2, 1)], 3)
    res = fit_davidson(wins, ties)
    pi, nu = scipy_davidson(wins, ties)
    assert_allclose(res.pi, pi, rtol=RTOL_SCIPY)
    assert_allclose(res.nu, nu, rtol=RTOL_SCIPY)


def test_a_model_without_wins_needs_the_prior(d1):
    # docs/methods.md §2 non-identifiable example: D1 + model E losing 4–0 to A.
    wins, ties = (np.pad(m, ((0, 1), (0, 1))) for m in d1)
    wins[0, 4] = 4
    with pytest.raises(NotIdentifiableError, match=r"model\(s\) \[4\] never win"):
        fit_davidson(wins, ties)
    res = fit_davidson(wins, ties, prior=0.5)
    assert res.converged and np.all(np.isfinite(res.pi)) and np.argmin(res.pi) == 4


def test_disconnected_graph_is_rejected():
    wins, ties = matrices([(0, 1, 3, 1, 1), (2, 3, 2, 2, 1)], 4)
    with pytest.raises(NotIdentifiableError, match="not strongly connected"):
        fit_davidson(wins, ties)


def test_prior_shrinks_towards_equal_strengths(d1):
    mle, shrunk = fit_davidson(*d1), fit_davidson(*d1, prior=0.5)
    assert shrunk.prior == 0.5
    assert shrunk.pi.max() / shrunk.pi.min() < mle.pi.max() / mle.pi.min()


def test_non_convergence_raises_with_the_iteration_count(d1):
    with pytest.raises(ConvergenceError, match="1 iterations") as info:
        fit_davidson(*d1, max_iter=1)
    assert info.value.iterations == 1
    res = fit_davidson(*d1, max_iter=1, strict=False)
    assert not res.converged and res.iterations == 1


@pytest.mark.parametrize("wins, ties, kwargs, match", [
    (np.zeros((2, 3)), np.zeros((2, 3)), {}, "`wins` must be a square"),
    ([[0, -1], [1, 0]], np.zeros((2, 2)), {}, "`wins` must hold finite, non-negative"),
    ([[0, 1], [1, 0]], [[0, np.nan], [np.nan, 0]], {}, "`ties` must hold finite"),
    ([[0, 1], [1, 0]], [[0, 1], [2, 0]], {}, "`ties` must be symmetric"),
    ([[0, 1], [1, 0]], np.zeros((3, 3)), {}, "same shape"),
    ([[0]], [[0]], {}, "at least 2 models"),
    ([[0, 1], [1, 0]], np.zeros((2, 2)), {"prior": -1}, "`prior`"),
    ([[0, 1], [1, 0]], np.zeros((2, 2)), {"tol": 0}, "`tol`"),
    ([[0, 1], [1, 0]], np.zeros((2, 2)), {"max_iter": 0}, "`max_iter`"),
])
def test_bad_arguments_are_named(wins, ties, kwargs, match):
    with pytest.raises(TieInputError, match=match):
        fit_davidson(wins, ties, **kwargs)


def test_a_model_that_never_loses_without_a_tie_to_hold_it_is_rejected():
    # Two models, model 0 wins 3 and ties 1: the tie cannot pin π₀/π₁ because ν may grow with it
    # (P(tie) stays fixed along d → ∞, ln ν = d/2 + c), so the supremum lies at infinity.
    with pytest.raises(NotIdentifiableError, match="prior"):
        fit_davidson([[0, 3], [0, 0]], [[0, 1], [1, 0]])
