"""The batched bootstrap of the style-controlled fit (core.ranking.style_bootstrap) against a straightforward
reference kept here: the same generator stream drawn vote by vote and mapped to the distinct rows, then a
full Newton refit of each replicate on its own. Messy data (duplicate rows, counts > 1, weights, ties),
replicates that lose strong connectivity, several chunks, and two worker processes."""

from __future__ import annotations

import os

import numpy as np
import pytest

from core.ranking import style_bootstrap
from core.ranking.bradley_terry import strong_components
from core.ranking.style_bootstrap import CHUNK, bootstrap, collapse
from core.ranking.style_model import fit_rows, style_rows, win_graph


def reference_bootstrap(rows, penalty, replicates, seed):
    """One replicate at a time: n uniform draws over the votes (numbered row by row of the collapsed rows),
    counts per row, a full Newton fit from scratch with the prior policy applied to the replicate."""
    distinct = collapse(rows)
    row_of_vote = np.repeat(np.arange(len(distinct.count)), np.round(distinct.count).astype(int))
    rng = np.random.default_rng(seed)
    out, nonidentifiable = [], 0
    for _ in range(replicates):
        drawn = np.bincount(row_of_vote[rng.integers(0, len(row_of_vote), len(row_of_vote))],
                            minlength=len(distinct.count))
        cw = drawn * distinct.weight
        nonidentifiable += strong_components(win_graph(distinct, cw)) != 1
        b = fit_rows(distinct, penalty, None, cw=cw)[0]
        b[:rows.n_models] -= b[:rows.n_models].mean()
        out.append(b)
    return np.array(out), nonidentifiable


def messy_rows(seed, n=250, k=5, p=3, rare=None):
    rng = np.random.default_rng(seed)
    left = np.r_[np.arange(k), rng.integers(0, k, n)]
    right = np.r_[np.roll(np.arange(k), -1), (left[k:] + rng.integers(1, k, n)) % k]
    z = np.round(rng.normal(size=(n + k, p)), 1)  # coarse features: many repeated rows
    y = rng.choice([0.0, 1.0, 0.5], n + k, p=[0.45, 0.45, 0.1])
    weight = rng.choice([1.0, 2.0, 0.5], n + k)
    if rare is not None:  # model `rare` only in its cycle votes and a handful more
        keep = (left != rare) & (right != rare)
        keep[:k] = True
        keep[np.flatnonzero(~keep)[:3]] = True
        left, right, y, z, weight = left[keep], right[keep], y[keep], z[keep], weight[keep]
    again = rng.integers(0, len(y), 40)
    return style_rows(np.r_[left, left[again]], np.r_[right, right[again]], np.r_[y, y[again]],
                      np.r_[z, z[again]], k, weight=np.r_[weight, weight[again]],
                      count=rng.integers(1, 3, len(y) + 40).astype(float))


@pytest.mark.parametrize("seed, penalty", [(0, 1.0), (1, 0.0)])
def test_batched_chords_equal_one_full_newton_fit_per_replicate(seed, penalty):
    rows = messy_rows(seed)
    estimate, prior, _ = fit_rows(rows, penalty)
    replicates = CHUNK + 9  # two chunks, the second one short
    draws = bootstrap(rows, estimate, penalty, prior, replicates, seed=seed)
    expected, nonidentifiable = reference_bootstrap(rows, penalty, replicates, seed)
    np.testing.assert_allclose(draws.b, expected, atol=1e-8)
    assert draws.nonidentifiable == nonidentifiable == 0 and draws.newton_fallbacks == 0


def test_replicates_that_lose_connectivity_get_the_prior_and_are_counted():
    rows = messy_rows(2, rare=4)
    estimate, prior, _ = fit_rows(rows, 1.0)
    assert prior == 0.0
    draws = bootstrap(rows, estimate, 1.0, prior, 60, seed=5)
    expected, nonidentifiable = reference_bootstrap(rows, 1.0, 60, 5)
    assert 0 < draws.nonidentifiable == nonidentifiable < 60
    np.testing.assert_allclose(draws.b, expected, atol=1e-7)


def test_two_worker_processes_give_the_same_replicates():
    rows = messy_rows(3)
    estimate, prior, _ = fit_rows(rows, 1.0)
    one = bootstrap(rows, estimate, 1.0, prior, 2 * CHUNK + 5, seed=11, workers=1)
    two = bootstrap(rows, estimate, 1.0, prior, 2 * CHUNK + 5, seed=11, workers=2)
    np.testing.assert_array_equal(one.b, two.b)
    assert (one.nonidentifiable, one.newton_fallbacks) == (two.nonidentifiable, two.newton_fallbacks)


def test_a_count_too_large_for_two_bytes_widens_the_store():
    rows = messy_rows(4, n=30)
    heavy = style_rows(rows.left, rows.right, rows.y, rows.z, rows.n_models, weight=rows.weight,
                       count=np.r_[70_000.0, rows.count[1:]])  # one row holds 70,000 votes
    estimate, prior, _ = fit_rows(heavy, 1.0)
    draws = bootstrap(heavy, estimate, 1.0, prior, 3, seed=2)
    expected, _ = reference_bootstrap(heavy, 1.0, 3, 2)
    np.testing.assert_allclose(draws.b, expected, atol=1e-8)


def test_large_jobs_use_the_workers_small_ones_do_not(monkeypatch):
    used = []
    monkeypatch.setattr(style_bootstrap, "_share", lambda job, share, shares: used.append(shares) or
                        (np.zeros(0, dtype=int), np.zeros((0, 8)), 0, 0))
    rows = messy_rows(5, n=60)
    estimate, prior, _ = fit_rows(rows, 1.0)
    bootstrap(rows, estimate, 1.0, prior, 10, seed=0)
    assert used == [1]


def test_a_worker_that_dies_has_its_share_redone_and_an_error_is_raised_as_in_one_process(monkeypatch):
    rows = messy_rows(6)
    estimate, prior, _ = fit_rows(rows, 1.0)
    one = bootstrap(rows, estimate, 1.0, prior, CHUNK + 3, seed=4, workers=1)
    parent, share = os.getpid(), style_bootstrap._share
    monkeypatch.setattr(style_bootstrap, "_share", lambda job, *a: os._exit(3) if os.getpid() != parent
                        else share(job, *a))
    np.testing.assert_array_equal(bootstrap(rows, estimate, 1.0, prior, CHUNK + 3, seed=4, workers=2).b, one.b)

    def failing(job, index, shares):
        if index == 1:
            raise ValueError("replicate chunk 1 failed")
        return share(job, index, shares)

    monkeypatch.setattr(style_bootstrap, "_share", failing)
    with pytest.raises(ValueError, match="chunk 1 failed"):
        bootstrap(rows, estimate, 1.0, prior, CHUNK + 3, seed=4, workers=2)
