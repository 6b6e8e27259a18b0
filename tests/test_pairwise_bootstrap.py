"""Cells, win matrices and the Bradley–Terry bootstrap (core.ranking.cells, core.ranking.bootstrap),
docs/methods.md §2–§3: the cell protocol, the D1 references, multinomial-vs-row equivalence in
distribution, batched Newton against single fits, coverage on simulated BT data, sandwich vs bootstrap
standard errors, and invariants as property tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import binomtest, ks_2samp

from core.io.votes import votes_from_frame
from core.ranking import RankSettings, rank_cells, rank_votes
from core.ranking import bradley_terry as bt
from core.ranking.bootstrap import BootstrapError, arena_rank, bootstrap_bt, multinomial_counts
from core.ranking.cells import (
    PairwiseInputError,
    battle_matrix,
    cells_from_counts,
    compress,
    compress_votes,
    merge_sides,
    pair_counts,
    win_matrix,
)
from core.schema import OUTCOME_CODE, OUTCOMES
from core.stats.intervals import z_value
from core.stats.resampling import rank_interval, ranks_of
from tests.reference_values import D1, D1_ARENA_RANK, D1_BOOTSTRAP_ELO_A_MEAN, D1_ELO_CI, D1_FIRST_DRAW, D1_RANK_CI

ATOL_BOOT_ELO = 0.01  # docs/methods.md §0/§3: bootstrap references with an absolute tolerance (Elo points)
ATOL_ELO_MM = 1e-3  # docs/methods.md §0: MM fits (tol 1e-6), abs 1e-3 on Elo
ATOL_ELO_NEWTON = 1e-6  # batched Newton vs single tight fits of the same replicate
RTOL_SE = 0.15  # sandwich vs bootstrap standard errors on large data
P_MIN_KS = 0.01
P_MIN_COVERAGE = 0.001

MODELS = ("A", "B", "C", "D")
# docs/methods.md §2, Reference D1, and its §3 bootstrap values ("BT on D1, B = 200", seed 0):
# tests/reference_values.py.
A, B, TIE, BOTHBAD = (OUTCOME_CODE[o] for o in OUTCOMES)


def d1_votes() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """D1 as 52 votes (left, right, outcome code), i always on the left."""
    left, right, outcome = [], [], []
    for i, j, wins_i, wins_j, ties in D1:
        for code, n in ((A, wins_i), (B, wins_j), (TIE, ties)):
            left += [i] * n
            right += [j] * n
            outcome += [code] * n
    return np.array(left), np.array(right), np.array(outcome)


@pytest.fixture(scope="module")
def d1_cells():
    return compress(*d1_votes(), MODELS)


def full_fit_theta(cells) -> np.ndarray:
    return np.log(bt.fit(win_matrix(cells), cells.models).pi)


def simulate_bt(rng, true_elo: np.ndarray, n_votes: int, tie_share: float = 0.0):
    """Votes on uniformly drawn ordered pairs with P(left wins | decisive) from the true Elo."""
    k = len(true_elo)
    left = rng.integers(0, k, n_votes)
    right = (left + rng.integers(1, k, n_votes)) % k
    p_left = 1.0 / (1.0 + 10.0 ** ((true_elo[right] - true_elo[left]) / 400.0))
    outcome = np.where(rng.random(n_votes) < p_left, A, B)
    outcome = np.where(rng.random(n_votes) < tie_share, TIE, outcome)
    return compress(left, right, outcome, [f"m{i}" for i in range(k)])


# --- compress (docs/methods.md §3, "Multinomial equivalence") -------------------------------------------------


def test_compress_counts_cells_in_sorted_order_and_merges_both_kinds_of_tie():
    # Cells are (left, right, s, weight) sorted lexicographically; tie and both_bad share s = 0.5.
    left = [1, 0, 0, 0, 0, 1, 0, 2]
    right = [0, 1, 1, 1, 1, 0, 2, 0]
    outcome = [A, B, TIE, BOTHBAD, A, A, TIE, B]
    cells = compress(left, right, outcome, ["x", "y", "z"])
    assert cells.models == ("x", "y", "z")
    assert_array_equal(cells.left, [0, 0, 0, 0, 1, 2])
    assert_array_equal(cells.right, [1, 1, 1, 2, 0, 0])
    assert_array_equal(cells.s, [0.0, 0.5, 1.0, 0.5, 1.0, 0.0])
    assert_array_equal(cells.count, [1, 2, 1, 1, 2, 1])
    assert_array_equal(cells.weight, np.ones(6))
    assert cells.n_votes == 8 and len(cells) == 6


def test_compress_keeps_votes_of_different_weight_in_separate_cells():
    cells = compress([0, 0, 0, 0], [1, 1, 1, 1], [A, A, A, B], ["x", "y"], weight=[2.0, 0.5, 2.0, 1.0])
    assert_array_equal(cells.s, [0.0, 1.0, 1.0])
    assert_array_equal(cells.weight, [1.0, 0.5, 2.0])
    assert_array_equal(cells.count, [1, 1, 2])
    assert_array_equal(win_matrix(cells), [[0, 4.5], [1, 0]])
    assert_array_equal(battle_matrix(cells), [[0, 4], [4, 0]])  # unweighted vote counts


def test_counts_table_route_equals_votes_route():
    left, right, outcome = d1_votes()
    frame = pd.DataFrame({"model_a": np.array(MODELS)[left], "model_b": np.array(MODELS)[right],
                          "winner": np.array(OUTCOMES)[outcome]})
    votes, _ = votes_from_frame(frame, "d1")
    from_votes = compress_votes(votes)
    table = frame.groupby(["model_a", "model_b", "winner"], as_index=False).size().rename(columns={"size": "count"})
    from_counts = cells_from_counts(table.sample(frac=1.0, random_state=3))  # row order must not matter
    assert from_counts.models == from_votes.models == MODELS
    for name in ("left", "right", "s", "weight", "count"):
        assert_array_equal(getattr(from_counts, name), getattr(from_votes, name), err_msg=name)


def test_counts_table_merges_tie_and_both_bad_rows():
    table = pd.DataFrame({"model_a": ["x", "x", "x"], "model_b": ["y", "y", "y"],
                          "winner": ["tie", "tie (bothbad)", "model_a"], "count": [2, 3, 0]})
    cells = cells_from_counts(table)
    assert_array_equal(cells.s, [0.5])
    assert_array_equal(cells.count, [5])


@pytest.mark.parametrize("args, match", [
    (([0, 1], [1], [A, A]), "same length"),
    (([0, 2], [1, 0], [A, A]), "model indices"),
    (([0, 1], [1, 0], [A, 7]), "outcome codes"),
])
def test_compress_rejects_malformed_input(args, match):
    with pytest.raises(PairwiseInputError, match=match):
        compress(*args, ["x", "y"])


def test_compress_rejects_negative_weights():
    with pytest.raises(PairwiseInputError, match="weights must be finite and >= 0"):
        compress([0], [1], [A], ["x", "y"], weight=[-1.0])


# --- win matrices ------------------------------------------------------------------------------------


def test_batched_win_matrix_equals_a_loop_over_replicates(d1_cells):
    counts = np.random.default_rng(1).integers(0, 6, size=(30, len(d1_cells)))
    batched = win_matrix(d1_cells, counts)
    assert batched.shape == (30, 4, 4)
    for b in range(30):
        assert_allclose(batched[b], win_matrix(d1_cells, counts[b]), atol=1e-12)


def test_pair_counts_match_the_win_matrix(d1_cells):
    counts = np.random.default_rng(2).integers(0, 6, size=(10, len(d1_cells)))
    i, j, wins, n = pair_counts(d1_cells, counts)
    w = win_matrix(d1_cells, counts)
    assert_allclose(wins, w[:, i, j], atol=1e-12)
    assert_allclose(n, w[:, i, j] + w[:, j, i], atol=1e-12)


def test_d1_votes_give_the_d1_win_matrix(d1_cells):
    # docs/methods.md §2, D1 rows.
    assert_array_equal(win_matrix(d1_cells), [[0, 6.5, 7.5, 5], [3.5, 0, 5, 6], [2.5, 5, 0, 4], [1, 2, 4, 0]])


# --- docs/methods.md §3, BT on D1 with B = 200 ---------------------------------------------------------------


def test_d1_first_multinomial_draw(d1_cells):
    # docs/methods.md §3: cells sorted by (left, right, s, weight); M = rng.multinomial(N, n_c/N, size=B).
    assert len(d1_cells) == 16
    counts = multinomial_counts(d1_cells, 200, np.random.default_rng(0))
    assert counts.shape == (200, 16)
    assert_array_equal(counts[0], D1_FIRST_DRAW)
    assert (counts.sum(axis=1) == 52).all()


def test_d1_bootstrap_elo_and_rank_intervals(d1_cells):
    # docs/methods.md §3 references, seed 0, B = 200 (abs tolerance: generator streams may change).
    boot = bootstrap_bt(d1_cells, full_fit_theta(d1_cells), replicates=200, seed=0)
    assert_allclose(np.c_[boot.ci_low, boot.ci_high], D1_ELO_CI, atol=ATOL_BOOT_ELO)
    assert_array_equal(np.c_[boot.rank_low, boot.rank_high], D1_RANK_CI)
    assert_array_equal(arena_rank(boot.ci_low, boot.ci_high), D1_ARENA_RANK)
    assert boot.elo.shape == (200, 4) and boot.not_converged == 0
    assert boot.replicates == 200 and boot.seed == 0 and boot.alpha == 0.05


def test_d1_ranking_carries_the_bootstrap_results(d1_cells):
    ranking = rank_cells(d1_cells, RankSettings(replicates=200, seed=0))
    rows = {r.model: r for r in ranking.rows}
    for m, (low, high), (rlo, rhi), arena in zip(MODELS, D1_ELO_CI, D1_RANK_CI, D1_ARENA_RANK):
        assert rows[m].ci_low == pytest.approx(low, abs=ATOL_BOOT_ELO)
        assert rows[m].ci_high == pytest.approx(high, abs=ATOL_BOOT_ELO)
        assert (rows[m].rank_low, rows[m].rank_high, rows[m].arena_rank) == (rlo, rhi, arena)
    assert [r.model for r in ranking.rows] == list(MODELS)
    assert ranking.fit.replicates == 200 and ranking.fit.nonidentifiable_replicates == 0


def test_rank_helpers():
    # docs/methods.md §3: rank = 1 + #{j : T_j > T_i} ("min" ties); Arena rank from CI overlap.
    assert_array_equal(ranks_of([3.0, 1.0, 3.0, 2.0]), [1, 4, 1, 3])
    low, high = rank_interval(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]), 0.05)
    assert_array_equal(low, [1, 1])
    assert_array_equal(high, [2, 2])
    assert_array_equal(arena_rank([10, 5, 0], [12, 11, 4]), [1, 1, 3])


# --- multinomial vs row resampling (docs/methods.md §3, equality in distribution) -----------------------------


def test_multinomial_and_row_bootstrap_agree_in_distribution(d1_cells):
    # docs/methods.md §3 "Simulation check on D1": Elo_A mean/sd ≈ 1611.9/40 under both schemes, KS p large.
    left, right, outcome = d1_votes()
    score = np.array([1.0, 0.0, 0.5, 0.5])[outcome]
    reps = 1000
    rng = np.random.default_rng(11)
    rows = rng.integers(0, len(left), size=(reps, len(left)))  # docs/methods.md §3 row protocol
    elo_rows = np.empty(reps)
    for b in range(reps):
        w = np.zeros((4, 4))
        idx = rows[b]
        np.add.at(w, (left[idx], right[idx]), score[idx])
        np.add.at(w, (right[idx], left[idx]), 1.0 - score[idx])
        elo_rows[b] = bt.fit(w, MODELS).elo[0]
    elo_multi = bootstrap_bt(d1_cells, full_fit_theta(d1_cells), replicates=reps, seed=12).elo[:, 0]
    assert ks_2samp(elo_rows, elo_multi).pvalue > P_MIN_KS
    # Means: sd ≈ 40 ⇒ SE of the difference ≈ 1.8 Elo; 6 Elo is > 3 SE.
    assert abs(elo_rows.mean() - elo_multi.mean()) < 6.0
    assert elo_rows.std() == pytest.approx(elo_multi.std(), rel=0.1)
    assert elo_multi.mean() == pytest.approx(D1_BOOTSTRAP_ELO_A_MEAN, abs=6.0)


# --- batched Newton vs single fits ------------------------------------------------------------------


def test_batched_bootstrap_equals_a_loop_of_single_fits(d1_cells):
    # docs/methods.md §2: the batched Newton fit must land on the MM MLE of each replicate (with its own
    # identifiability check). Same seed ⇒ same multinomial counts.
    reps = 60
    boot = bootstrap_bt(d1_cells, full_fit_theta(d1_cells), replicates=reps, seed=5)
    counts = multinomial_counts(d1_cells, reps, np.random.default_rng(5))
    for b in range(reps):
        fit = bt.fit(win_matrix(d1_cells, counts[b]), MODELS, tol=1e-12, max_iter=200_000)
        assert fit.converged
        assert_allclose(boot.elo[b], fit.elo, atol=ATOL_ELO_NEWTON, err_msg=f"replicate {b}")


def test_non_identifiable_replicates_are_counted_and_refitted():
    # A model E with one win in 12 games against A: some replicates drop its only win, and every
    # such replicate is refitted with the prior (docs/methods.md §2 policy per replicate).
    left, right, outcome = d1_votes()
    left = np.r_[left, [4] * 12]
    right = np.r_[right, [0] * 12]
    outcome = np.r_[outcome, [A] + [B] * 11]
    cells = compress(left, right, outcome, [*MODELS, "E"])
    reps = 150
    boot = bootstrap_bt(cells, full_fit_theta(cells), replicates=reps, seed=3)
    unordered = merge_sides(cells)  # the bootstrap draws over unordered-pair cells
    counts = multinomial_counts(unordered, reps, np.random.default_rng(3))
    expected = 0
    for b in range(reps):
        fit = bt.fit(win_matrix(unordered, counts[b]), cells.models, tol=1e-10, max_iter=200_000)
        expected += not fit.identifiable
        assert_allclose(boot.elo[b], fit.elo, atol=1e-4, err_msg=f"replicate {b}")
    # P(E's single win is not drawn) = (1 − 1/64)^64 ≈ 0.36
    assert 30 < expected < 80, expected
    assert boot.nonidentifiable == expected
    assert np.isfinite(boot.elo).all()


def test_bootstrap_settings_are_validated(d1_cells):
    theta = full_fit_theta(d1_cells)
    with pytest.raises(BootstrapError, match="`replicates` must be a positive integer"):
        bootstrap_bt(d1_cells, theta, replicates=0)
    with pytest.raises(BootstrapError, match="`alpha` must lie strictly between 0 and 1"):
        bootstrap_bt(d1_cells, theta, alpha=1.0)


def test_fractional_counts_cannot_be_bootstrapped():
    table = pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "x"], "winner": ["model_a", "model_a"],
                          "count": [2.5, 1.0]})
    with pytest.raises(BootstrapError, match="whole vote counts"):
        multinomial_counts(cells_from_counts(table), 10, np.random.default_rng(0))


def test_anchored_bootstrap_pins_the_anchor(d1_cells):
    boot = bootstrap_bt(d1_cells, full_fit_theta(d1_cells), replicates=50, anchor=(3, 1000.0))
    assert_allclose(boot.elo[:, 3], 1000.0)
    assert boot.ci_low[3] == boot.ci_high[3] == pytest.approx(1000.0)


# --- coverage and standard errors on simulated BT data ------------------------------------------------


def test_percentile_intervals_cover_the_true_elo_at_the_nominal_rate():
    # STYLE "scipy.stats tests": simulate, count how often the 95% interval covers the truth, binomial
    # test. 8 models × 100 datasets of 3000 votes, B = 200. Intervals of one dataset are correlated,
    # so the test is a little anti-conservative; p > 0.001 still catches a broken protocol.
    true_elo = np.linspace(-150.0, 150.0, 8)
    pi = 10.0 ** (true_elo / 400.0)
    truth = bt.elo_from_pi(pi / pi.mean())  # the estimand: Elo with mean(π) = 1
    rng = np.random.default_rng(2024)
    covered = total = 0
    for dataset in range(100):
        cells = simulate_bt(rng, true_elo, 3000)
        boot = bootstrap_bt(cells, full_fit_theta(cells), replicates=200, seed=dataset)
        covered += int(((boot.ci_low <= truth) & (truth <= boot.ci_high)).sum())
        total += len(truth)
    assert binomtest(covered, total, 0.95).pvalue > P_MIN_COVERAGE, covered / total


def test_sandwich_and_bootstrap_standard_errors_agree_on_large_data():
    # STYLE: bootstrap SE ≈ analytic SE. 40,000 votes on 8 models, with ties (half wins).
    rng = np.random.default_rng(99)
    cells = simulate_bt(rng, np.linspace(-200.0, 100.0, 8), 40_000, tie_share=0.15)
    sandwich = rank_cells(cells, RankSettings(ci="sandwich"))
    rows = {r.model: r for r in sandwich.rows}
    se_sandwich = np.array([(rows[m].ci_high - rows[m].ci_low) / (2 * z_value(0.05)) for m in cells.models])
    boot = bootstrap_bt(cells, full_fit_theta(cells), replicates=1000, seed=1)
    se_boot = boot.elo.std(axis=0, ddof=1)
    assert_allclose(se_sandwich, se_boot, rtol=RTOL_SE)


# --- invariants (STYLE practice 8) -------------------------------------------------------------------


@st.composite
def identifiable_votes(draw, min_models=2, max_models=5):
    """Votes where every pair has at least one left win, right win and tie (so the graph is strongly
    connected): (left, right, outcome, n_models)."""
    k = draw(st.integers(min_models, max_models))
    left, right, outcome = [], [], []
    for i in range(k):
        for j in range(i + 1, k):
            for code in (A, B, TIE):
                n = draw(st.integers(1, 8))
                flip = draw(st.booleans())  # which side the pair is shown on
                left += [j if flip else i] * n
                right += [i if flip else j] * n
                outcome += [code] * n
    return np.array(left), np.array(right), np.array(outcome), k


def names(k: int) -> list[str]:
    return [f"m{i}" for i in range(k)]


def ratings(ranking) -> dict[str, float]:
    return {r.model: r.rating for r in ranking.rows}


@settings(max_examples=25, deadline=None)
@given(data=identifiable_votes(), perm_seed=st.integers(0, 2**16))
def test_relabelling_models_permutes_the_ratings(data, perm_seed):
    left, right, outcome, k = data
    perm = np.random.default_rng(perm_seed).permutation(k)
    plain = rank_cells(compress(left, right, outcome, names(k)), RankSettings(ci="none"))
    relabelled = rank_cells(compress(perm[left], perm[right], outcome, names(k)), RankSettings(ci="none"))
    before, after = ratings(plain), ratings(relabelled)
    for i in range(k):
        assert after[f"m{perm[i]}"] == pytest.approx(before[f"m{i}"], abs=ATOL_ELO_MM)


@settings(max_examples=15, deadline=None)
@given(data=identifiable_votes(max_models=4), shuffle_seed=st.integers(0, 2**16))
def test_row_order_does_not_change_the_ranking(data, shuffle_seed):
    left, right, outcome, k = data
    frame = pd.DataFrame({"model_a": np.array(names(k))[left], "model_b": np.array(names(k))[right],
                          "winner": np.array(OUTCOMES)[outcome]})
    shuffled = frame.sample(frac=1.0, random_state=shuffle_seed).reset_index(drop=True)
    settings_ = RankSettings(replicates=50, seed=4)
    first = rank_votes(votes_from_frame(frame, "votes")[0], settings_)
    second = rank_votes(votes_from_frame(shuffled, "votes")[0], settings_)
    assert first.rows == second.rows  # same cells ⇒ same fit and same bootstrap draw


@settings(max_examples=20, deadline=None)
@given(data=identifiable_votes(), scale=st.floats(0.01, 100.0))
def test_scaling_all_weights_leaves_the_pure_mle_unchanged(data, scale):
    # docs/methods.md §2: the pure MLE is invariant to rescaling w (and the ranking rescales weights to mean 1).
    left, right, outcome, k = data
    plain = compress(left, right, outcome, names(k))
    weighted = compress(left, right, outcome, names(k), weight=np.full(len(left), scale))
    fit_plain = bt.fit(win_matrix(plain), plain.models)
    fit_weighted = bt.fit(win_matrix(weighted), weighted.models)
    assert fit_plain.identifiable and fit_weighted.identifiable
    assert_allclose(fit_weighted.pi, fit_plain.pi, rtol=1e-8)
    a = rank_cells(plain, RankSettings(replicates=30))
    b = rank_cells(weighted, RankSettings(replicates=30))
    for ra, rb in zip(a.rows, b.rows):
        assert ra.model == rb.model
        assert rb.rating == pytest.approx(ra.rating, abs=1e-6)
        assert rb.ci_low == pytest.approx(ra.ci_low, abs=1e-6) and rb.ci_high == pytest.approx(ra.ci_high, abs=1e-6)


@settings(max_examples=20, deadline=None)
@given(data=identifiable_votes(), seed=st.integers(0, 1000))
def test_intervals_contain_the_point_estimate_and_the_rank(data, seed):
    left, right, outcome, k = data
    ranking = rank_cells(compress(left, right, outcome, names(k)), RankSettings(replicates=100, seed=seed))
    assert ranking.identifiable
    for r in ranking.rows:
        assert r.ci_low <= r.rating <= r.ci_high, r
        assert 1 <= r.rank_low <= r.rank <= r.rank_high <= k, r


def test_merging_seatings_keeps_d1_cells_and_the_bootstrap_distribution():
    """docs/methods.md §3: summing multinomial cells gives a multinomial over the sums, so drawing over
    unordered-pair cells is the same bootstrap; D1 (always seated the same way) keeps its cells."""
    left, right, outcome = d1_votes()
    d1 = compress(left, right, outcome, MODELS)
    merged = merge_sides(d1)
    for name in ("left", "right", "s", "weight", "count"):
        np.testing.assert_array_equal(getattr(merged, name), getattr(d1, name))
    # Seat every other vote the other way round: same BT data, twice the sided cells.
    swap = np.arange(len(left)) % 2 == 1
    flipped_outcome = np.where(swap & (outcome == A), B, np.where(swap & (outcome == B), A, outcome))
    mixed = compress(np.where(swap, right, left), np.where(swap, left, right), flipped_outcome, MODELS)
    assert len(mixed) > len(d1)
    np.testing.assert_array_equal(merge_sides(mixed).count, d1.count)
    theta = full_fit_theta(d1)
    sided = np.array([bt.fit(win_matrix(mixed, m), MODELS).elo  # the per-replicate policy, sided cells
                      for m in multinomial_counts(mixed, 600, np.random.default_rng(11))])
    unordered = bootstrap_bt(mixed, theta, replicates=600, seed=12).elo
    assert ks_2samp(sided[:, 0], unordered[:, 0]).pvalue > 0.001
