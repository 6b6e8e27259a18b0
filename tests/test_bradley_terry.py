"""Bradley–Terry fits (core.ranking.bradley_terry): the MM reference, the Newton fast path, the identifiability
policy, Elo conversion and the win-rate route, against docs/methods.md §2 and live peer libraries
(evalica, choix)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from core.io import load
from core.ranking import bradley_terry as bt
from core.ranking.cells import compress_votes, win_matrix
from tests.conftest import shared_file
from tests.reference_values import (
    D1,
    D1_ELO,
    D1_ELO_ANCHORED_D,
    D1_ELO_GEOMETRIC,
    D1_MLE_PI,
    D1_MM_ITERATIONS,
    D1_MM_PI,
    D1_P_A_BEATS_B,
    D1_PRIOR_PI,
    D1_W,
    D1_WEIGHTED_PI,
    D1_WEIGHTED_W,
    D1E_MAP_ELO,
    D1E_MAP_PI,
    D1E_PURE_PI,
    DISCONNECTED_MM_PI,
    DISCONNECTED_W,
)

# Tolerances (docs/methods.md §0): point estimates rtol 1e-6; an MM fit stopped at tol 1e-6 is held to
# rtol 1e-5 on π and abs 1e-3 on Elo. Newton stops at |Δθ| < 1e-10, so it meets the exact MLE.
RTOL_REF = 1e-6
RTOL_MM = 1e-5
ATOL_ELO_MM = 1e-3
ATOL_ELO_EXACT = 1e-4  # the docs/methods.md Elo values are printed to 4 decimals
RTOL_NEWTON_VS_MM = 1e-6  # docs/methods.md §2: "max relative difference in π ≤ 1e-6"
ATOL_MAP_MM = 1.15e-6  # docs/methods.md §2: MM reaches the c = 0.5 MAP "within 1.1e-6" (2 digits: 1.107e-6 here)
ATOL_PEER_ELO = 0.01  # live peer cross-check, Elo points
ATOL_CHOIX = 1e-6  # choix's test cases print 9 digits

MODELS = ("A", "B", "C", "D")
# docs/methods.md §2, Reference D1 and its worked values: tests/reference_values.py.


def d1_win_matrix() -> np.ndarray:
    w = np.zeros((4, 4))
    for i, j, wins_i, wins_j, ties in D1:
        w[i, j] += wins_i + ties / 2
        w[j, i] += wins_j + ties / 2
    return w


def d1e_win_matrix() -> np.ndarray:
    w = np.zeros((5, 5))
    w[:4, :4] = D1_W
    w[0, 4] = 4.0
    return w


def newton_pi(w: np.ndarray, prior: float = 0.0) -> np.ndarray:
    theta, converged, _ = bt.newton(w, prior=prior)
    assert converged
    pi = np.exp(theta)
    return pi / pi.mean()


# --- docs/methods.md §2, Reference D1 ---------------------------------------------------------------------


def test_d1_win_matrix_rows_are_exactly_as_methods_gives():
    # docs/methods.md §2, D1: ties count half a win to each side.
    assert_array_equal(d1_win_matrix(), D1_W)


def test_mm_reference_d1_iterations_and_strengths():
    # docs/methods.md §2, D1: "MM as specified: 25 iterations".
    fit = bt.fit(D1_W, MODELS)
    assert fit.identifiable and fit.prior == 0.0 and fit.n_components == 1
    assert fit.converged and fit.iterations == D1_MM_ITERATIONS
    assert_allclose(fit.pi, D1_MM_PI, rtol=RTOL_REF)
    assert fit.pi.mean() == pytest.approx(1.0, rel=1e-12)


def test_newton_reaches_the_exact_mle_and_agrees_with_mm():
    # docs/methods.md §2: exact MLE (scipy BFGS and statsmodels GLM agree); Newton vs MM ≤ 1e-6 relative.
    pi = newton_pi(D1_W)
    assert_allclose(pi, D1_MLE_PI, rtol=RTOL_REF)
    assert np.max(np.abs(pi / bt.fit(D1_W, MODELS).pi - 1)) <= RTOL_NEWTON_VS_MM


def test_elo_conversion_d1():
    # docs/methods.md §2, D1: Elo = 400·log10(π) + 1500 with mean(π) = 1.
    fit = bt.fit(D1_W, MODELS)
    assert_allclose(fit.elo, D1_ELO, atol=ATOL_ELO_MM)
    theta, _, _ = bt.newton(D1_W)
    assert_allclose(bt.elo_from_theta(theta), D1_ELO, atol=ATOL_ELO_EXACT)
    assert_allclose(bt.elo_from_pi(newton_pi(D1_W)), D1_ELO, atol=ATOL_ELO_EXACT)
    assert fit.elo.mean() < 1500  # Jensen: mean Elo ≤ 1500 under mean(π) = 1


def test_geometric_normalisation_is_a_shift_of_the_elo():
    # docs/methods.md §2, D1: geometric normalisation (mean Elo = 1500 exactly) is the same ratings shifted.
    elo = bt.elo_from_pi(newton_pi(D1_W))
    assert_allclose(elo - elo.mean() + 1500, D1_ELO_GEOMETRIC, atol=ATOL_ELO_EXACT)


def test_anchored_elo_d1():
    # docs/methods.md §2, D1: anchored D = 1000.
    fit = bt.fit(D1_W, MODELS)
    elo = bt.elo_from_pi(fit.pi, anchor=(3, 1000.0))
    assert_allclose(elo, D1_ELO_ANCHORED_D, atol=ATOL_ELO_MM)
    assert elo[3] == 1000.0


def test_predicted_win_probability_d1():
    # docs/methods.md §2, D1: P(A ≻ B) = 0.6724499 from the Elo ratings.
    p = bt.predicted_win_rates(bt.elo_from_pi(newton_pi(D1_W)))
    assert p[0, 1] == pytest.approx(D1_P_A_BEATS_B, rel=RTOL_REF)
    assert_allclose(p + p.T, np.where(np.eye(4, dtype=bool), np.nan, 1.0), rtol=1e-12)
    assert np.isnan(np.diag(p)).all()


def test_win_rate_route_reproduces_w():
    # docs/methods.md §2, D1 "Win-rate route": r_ij·n_ij with r including half ties. 5/6 is not exact in
    # binary, so W_DA = (1 − 5/6)·6 is 1 up to one rounding (atol 1e-12), everything else exact.
    r = np.full((4, 4), np.nan)
    n = np.zeros((4, 4))
    for i, j, rate, count in [(0, 1, 0.65, 10), (0, 2, 0.75, 10), (0, 3, 5 / 6, 6), (1, 2, 0.5, 10),
                              (1, 3, 0.75, 8), (2, 3, 0.5, 8)]:
        r[i, j], r[j, i] = rate, 1 - rate
        n[i, j] = n[j, i] = count
    w, notes = bt.win_matrix_from_rates(r, n)
    assert_allclose(w, D1_W, rtol=0, atol=1e-12)
    assert notes == []
    assert_allclose(bt.fit(w, MODELS).pi, D1_MM_PI, rtol=RTOL_MM)


def test_win_rate_route_one_sided_and_asymmetric_rates():
    # docs/methods.md §2: a pair given from one side takes the complement; r_ij + r_ji ≠ 1 is symmetrised
    # r̃_ij = (r_ij + 1 − r_ji)/2; without counts every observed pair counts once (and says so).
    r = np.array([[np.nan, 0.7, np.nan], [np.nan, np.nan, 0.6], [0.2, 0.5, np.nan]])
    w, notes = bt.win_matrix_from_rates(r)
    assert_allclose(w, [[0, 0.7, 0.8], [0.3, 0, 0.55], [0.2, 0.45, 0]], atol=1e-12)
    assert any("symmetrised" in note for note in notes)
    assert any("no counts" in note for note in notes)


def test_weighted_win_matrix_d1():
    # docs/methods.md §2, D1 "Weighted": exact MLE of the weighted likelihood; MM to its tolerance.
    assert_allclose(newton_pi(D1_WEIGHTED_W), D1_WEIGHTED_PI, rtol=RTOL_REF)
    assert_allclose(bt.fit(D1_WEIGHTED_W, MODELS).pi, D1_WEIGHTED_PI, rtol=RTOL_MM)


def test_pure_mle_is_invariant_to_rescaling_the_weights():
    # docs/methods.md §2: "The pure MLE is invariant to rescaling w" (the MM update is homogeneous of degree 0).
    base = bt.fit(D1_WEIGHTED_W, MODELS)
    for scale in (0.01, 3.0, 1e4):
        assert_allclose(bt.fit(D1_WEIGHTED_W * scale, MODELS).pi, base.pi, rtol=1e-9)
        assert_allclose(bt.fit(D1_WEIGHTED_W, MODELS, weight_scale=scale).pi, base.pi, rtol=1e-9)


# --- Identifiability (docs/methods.md §2, "Existence" and "Remedy") ------------------------------------------


def test_pure_mm_gives_zero_strength_to_a_model_that_never_wins():
    # docs/methods.md §2 failure (a): W_E = 0 ⇒ π_E = 0 ⇒ Elo = −∞; the rest keep the D1 ratios.
    w = d1e_win_matrix()
    pi, _, converged = bt.mm(w)
    assert converged
    assert pi[4] == 0.0
    assert_allclose(pi, D1E_PURE_PI, rtol=RTOL_MM)
    forced = bt.fit(w, "ABCDE", prior=0.0)
    assert forced.elo[4] == -np.inf and not forced.identifiable


def test_policy_refits_a_non_identifiable_graph_with_one_virtual_tie():
    # docs/methods.md §2 "Remedy": not strongly connected ⇒ c = 0.5 and identifiable = False; MM reaches the
    # MAP within 1.1e-6 after 577 iterations.
    fit = bt.fit(d1e_win_matrix(), "ABCDE")
    assert not fit.identifiable and fit.prior == 0.5 and fit.n_components == 2
    assert fit.converged and fit.iterations == 577
    # "within 1.1e-6" of the exact MAP (Newton below; the printed reference is rounded to 7 digits)
    assert np.max(np.abs(fit.pi - newton_pi(d1e_win_matrix(), prior=0.5))) <= ATOL_MAP_MM
    assert_allclose(fit.pi, D1E_MAP_PI, rtol=RTOL_MM)
    assert_allclose(fit.elo, D1E_MAP_ELO, atol=0.01)
    assert np.isfinite(fit.elo).all()


def test_newton_with_the_prior_gives_the_map():
    # docs/methods.md §2: the MAP of log L + c·Σ[ln σ(θ) + ln σ(−θ)] (scipy reference).
    assert_allclose(newton_pi(d1e_win_matrix(), prior=0.5), D1E_MAP_PI, rtol=RTOL_REF)


def test_disconnected_graph_pure_mm_output_is_arbitrary_but_the_policy_flags_it():
    # docs/methods.md §2 failure (c): W = [[0,3,0,0],[1,0,0,0],[0,0,0,2],[0,0,2,0]] ⇒ pure MM π = (1.5, 0.5, 1, 1).
    pi, _, converged = bt.mm(DISCONNECTED_W)
    assert converged
    assert_allclose(pi, DISCONNECTED_MM_PI, rtol=1e-12)
    assert bt.strong_components(DISCONNECTED_W) == 2
    fit = bt.fit(DISCONNECTED_W, MODELS)
    assert not fit.identifiable and fit.prior == 0.5 and fit.n_components == 2
    assert np.isfinite(fit.elo).all()


def test_a_model_that_never_loses_is_not_identifiable():
    # docs/methods.md §2 failure (b): π_i → ∞ without the prior; the policy keeps it finite.
    w = D1_W.copy()
    w[1:, 0] = 0.0
    assert bt.strong_components(w) > 1
    fit = bt.fit(w, MODELS)
    assert not fit.identifiable and np.isfinite(fit.elo).all()
    assert np.argmax(fit.pi) == 0


def test_prior_forced_on_identifiable_d1_shrinks_it():
    # docs/methods.md §2: "c = 0.5 on D1 alone would give (1.8947731, …) — hence c = 0 when identifiable".
    fit = bt.fit(D1_W, MODELS, prior=0.5)
    assert fit.identifiable and fit.prior == 0.5
    assert_allclose(fit.pi, D1_PRIOR_PI, rtol=RTOL_MM)
    assert_allclose(newton_pi(D1_W, prior=0.5), D1_PRIOR_PI, rtol=RTOL_REF)
    assert np.ptp(fit.pi) < np.ptp(D1_MLE_PI)


def test_strong_components_of_small_graphs():
    assert bt.strong_components(np.zeros((0, 0))) == 0
    assert bt.strong_components(np.zeros((3, 3))) == 3
    cycle = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float)
    assert bt.strong_components(cycle) == 1  # a cycle is strongly connected although nobody beat everyone
    assert not bt.is_strongly_connected(np.zeros((0, 0))) and bt.is_strongly_connected(np.zeros((1, 1)))


def test_strong_components_equal_scipy_on_random_graphs():
    # Cross-check against scipy.sparse.csgraph (which the ranking path no longer imports): counts, and
    # the strongly-connected test the bootstrap uses, on sparse to dense random graphs.
    from scipy.sparse.csgraph import connected_components

    rng = np.random.default_rng(3)
    for _ in range(500):
        k = int(rng.integers(1, 30))
        w = (rng.random((k, k)) < rng.uniform(0.0, 0.5)) * rng.uniform(0.5, 3.0, (k, k))
        np.fill_diagonal(w, 0.0)
        expected, _ = connected_components(w > 0, directed=True, connection="strong")
        assert bt.strong_components(w) == expected
        assert bt.is_strongly_connected(w) == (expected == 1)


def test_newton_sums_over_pairs_equal_a_sparse_incidence_product_bit_for_bit():
    # The per-model sums of newton_pairs add each model's pairs in ascending pair order, as the sparse
    # incidence product they replace does: the same floating-point result, so the same ratings.
    from scipy.sparse import csr_matrix

    rng = np.random.default_rng(4)
    for _ in range(50):
        k = int(rng.integers(2, 40))
        i, j = np.triu_indices(k, 1)
        keep = rng.random(len(i)) < rng.uniform(0.2, 1.0)
        i, j = i[keep], j[keep]
        values = rng.normal(size=(len(i), int(rng.integers(1, 50)))) * 10.0 ** rng.uniform(-8, 8, (len(i), 1))
        rows = np.concatenate([np.arange(len(i)), np.arange(len(i))])
        incidence = csr_matrix((np.r_[np.ones(len(i)), -np.ones(len(i))], (np.r_[i, j], rows)), shape=(k, len(i)))
        plain = np.abs(values[:, ::-1])
        signed_sums, plain_sums = bt._sums_over_pairs(bt._model_pair_rounds(i, j, k), values, plain, k)
        assert_array_equal(signed_sums, incidence @ values)
        assert_array_equal(plain_sums, abs(incidence) @ plain)


# --- Convergence and input checks -----------------------------------------------------------------


def test_iteration_limit_reports_not_converged():
    # docs/methods.md §2: "max_iter … then return with converged = False" (forced with max_iter = 2).
    pi, iterations, converged = bt.mm(D1_W, max_iter=2)
    assert not converged and iterations == 2 and pi.mean() == pytest.approx(1.0)
    fit = bt.fit(D1_W, MODELS, max_iter=2)
    assert not fit.converged and fit.iterations == 2
    prior_fit = bt.fit(d1e_win_matrix(), "ABCDE", max_iter=2)
    assert not prior_fit.converged and prior_fit.iterations == 2
    _, newton_converged, newton_iterations = bt.newton(D1_W, max_iter=2, tol=1e-300)
    assert not newton_converged and newton_iterations == 2


def test_convergence_error_carries_the_iteration_count():
    error = bt.ConvergenceError("MM did not converge", 2)
    assert error.iterations == 2 and "after 2 iterations" in str(error)


@pytest.mark.parametrize("w, match", [
    (np.zeros((2, 3)), "square"),
    (np.array([[0, -1.0], [1, 0]]), "non-negative"),
    (np.array([[0, np.nan], [1, 0]]), "finite"),
    (np.array([[1.0, 1], [1, 0]]), "zero diagonal"),
])
def test_bad_win_matrices_are_rejected(w, match):
    with pytest.raises(ValueError, match=match):
        bt.fit(w, ["x", "y"])


def test_model_names_must_match_the_matrix():
    with pytest.raises(ValueError, match="3 model names for a 4×4"):
        bt.fit(D1_W, "ABC")
    with pytest.raises(ValueError, match="prior must be >= 0"):
        bt.fit(D1_W, MODELS, prior=-1)


# --- Newton vs MM on random identifiable data (docs/methods.md §2, "A faster solver …") -----------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(k=st.integers(2, 6), data=st.data())
def test_newton_equals_mm_on_random_identifiable_data(k, data):
    counts = data.draw(st.lists(st.integers(0, 25), min_size=k * k, max_size=k * k))
    halves = data.draw(st.lists(st.integers(0, 3), min_size=k * k, max_size=k * k))  # ties (half wins)
    w = np.array(counts, dtype=float).reshape(k, k) + 0.5 * np.array(halves, dtype=float).reshape(k, k)
    np.fill_diagonal(w, 0.0)
    assume(bt.strong_components(w) == 1)
    pi_mm, _, converged = bt.mm(w, tol=1e-10, max_iter=200_000)  # tight MM for this comparison only
    assert converged
    pi_newton = newton_pi(w)
    assert np.max(np.abs(pi_newton / pi_mm - 1)) <= RTOL_NEWTON_VS_MM


def test_batched_newton_equals_single_fits():
    rng = np.random.default_rng(7)
    batch = rng.integers(1, 20, size=(25, 5, 5)).astype(float)
    for w in batch:
        np.fill_diagonal(w, 0.0)
    theta, converged, _ = bt.newton(batch)
    assert converged.all()
    for b, w in enumerate(batch):
        single, _, _ = bt.newton(w)
        assert_allclose(theta[b], single, atol=1e-9)


# --- Live peer cross-checks ----------------------------------------------------------------------


def evalica_elo(left, right, winners, models) -> np.ndarray:
    """evalica's BT (ties as Winner.Draw, counted half) put on our mean(π) = 1 Elo scale."""
    evalica = pytest.importorskip("evalica")
    code = {"left": evalica.Winner.X, "right": evalica.Winner.Y, "tie": evalica.Winner.Draw}
    result = evalica.bradley_terry(list(left), list(right), [code[w] for w in winners], tie_weight=0.5,
                                   tolerance=1e-12, limit=100_000)
    pi = result.scores[list(models)].to_numpy(dtype=float)
    return bt.elo_from_pi(pi / pi.mean())


@pytest.mark.parametrize("name", ["simple.csv", "food.csv"])
def test_evalica_bradley_terry_agrees_on_its_own_test_files(name):
    path = shared_file(f"peers/{name}")
    raw = pd.read_csv(path, dtype=str)
    cells = compress_votes(load(path).frame)
    fit = bt.fit(win_matrix(cells), cells.models)
    assert fit.identifiable
    ours = fit.elo
    theirs = evalica_elo(raw["left"], raw["right"], raw["winner"], cells.models)
    assert np.max(np.abs(ours - theirs)) <= ATOL_PEER_ELO


def test_evalica_bradley_terry_agrees_on_llmfao():
    path = shared_file("llmfao/crowd-comparisons.csv")
    raw = pd.read_csv(path)
    cells = compress_votes(load(path).frame)
    assert cells.n_models == 59 and cells.n_votes == len(raw) == 8931
    fit = bt.fit(win_matrix(cells), cells.models)
    assert fit.identifiable and fit.converged
    theirs = evalica_elo(raw["left"], raw["right"], raw["winner"], cells.models)
    assert np.max(np.abs(fit.elo - theirs)) <= ATOL_PEER_ELO


@pytest.mark.parametrize("case", ["testcase-pairwise-1.json", "testcase-pairwise-2.json"])
def test_choix_pairwise_test_cases(case):
    choix = pytest.importorskip("choix")
    spec = json.loads(shared_file(f"peers/{case}").read_text())
    n, data = spec["n_items"], spec["data"]
    w = np.zeros((n, n))
    for winner, loser in data:
        w[winner, loser] += 1
    fit = bt.fit(w, [str(i) for i in range(n)], tol=1e-10)
    assert fit.identifiable
    ours = np.log(fit.pi) - np.log(fit.pi).mean()  # centred log-strengths, choix's convention
    newton_theta, _, _ = bt.newton(w)
    assert_allclose(newton_theta - newton_theta.mean(), ours, atol=ATOL_CHOIX)
    assert_allclose(ours, spec["ml_est"], atol=ATOL_CHOIX)
    assert_allclose(choix.mm_pairwise(n, data, tol=1e-12), ours, atol=ATOL_CHOIX)
    assert_allclose(choix.ilsr_pairwise(n, data, tol=1e-12), ours, atol=ATOL_CHOIX)
