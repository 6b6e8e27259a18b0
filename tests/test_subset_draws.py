"""The derived draws of core.leaderboard.subset_draws: the fast engine against its slow, obvious form, and the
draw against the docs/methods.md §3 row protocol in distribution (each replicate is m i.i.d. uniform tasks)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from core.leaderboard.subset_draws import DERIVE_SHARE, SubsetDraws, derived_reference

ATOL_FAST = 1e-12  # same draws, two summation orders
N_TASKS = 60


def run_all(draws: SubsetDraws) -> dict:
    out = {}
    for _, batch in draws.run():
        out.update(batch)
    return out


def gappy_values(seed: int, shares=(0.0, 0.1, 0.25, 0.4)) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = rng.random((len(shares), N_TASKS))
    for row, share in enumerate(shares):
        values[row, rng.random(N_TASKS) < share] = np.nan
    return values


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("with_parts", [False, True])
def test_engine_equals_the_row_by_row_derivation(weighted, with_parts):
    # Every subset of ≥ half the tasks: the first m draws of each full-set row that land in it, topped
    # up from extra_generator; batched corrections (parts) and gathered ones must both give it.
    values = gappy_values(3)
    w = np.random.default_rng(4).uniform(0.2, 2.0, N_TASKS) if weighted else None
    present = ~np.isnan(values)
    draws = SubsetDraws(values, w, None, 250, 9)
    requests = []
    for a in range(len(values)):
        parts = (a,) if not present[a].all() else None
        requests.append(draws.need(draws.subset(present[a], rows=parts if with_parts else None), a))
        for b in range(a + 1, len(values)):
            parts = tuple(r for r in (a, b) if not present[r].all()) or None
            sid = draws.subset(present[a] & present[b], rows=parts if with_parts else None)
            requests += [draws.need(sid, a), draws.need(sid, b), draws.need(sid, b, 1)]
    out = run_all(draws)
    checked = 0
    for sid, row, draw in requests:
        mask = draws.mask(sid)
        if mask.all() or not draws.derived(sid):  # the literal draws (tests/test_task_bootstrap.py)
            continue
        expected = derived_reference(np.nan_to_num(values[row]), mask, 250, 9, draw, w)
        assert_allclose(out[(sid, row, draw)], expected, atol=ATOL_FAST, rtol=0)
        checked += 1
    assert checked >= 10


def test_both_corrections_happen():
    # With 60 tasks some rows land more than m draws in the subset, some fewer: both paths run.
    mask = np.ones(N_TASKS, bool)
    mask[:20] = False
    index = np.random.default_rng(0).integers(0, N_TASKS, size=(200, N_TASKS))
    landed = mask[index].sum(axis=1)
    assert (landed > mask.sum()).any() and (landed < mask.sum()).any()


def test_complete_tasks_are_the_literal_draw():
    values = np.random.default_rng(1).random((2, 30))
    draws = SubsetDraws(values, None, None, 200, 5)
    sid = draws.subset(np.ones(30, bool))
    first, second = draws.need(sid, 0), draws.need(sid, 1, 1)
    out = run_all(draws)
    generator = np.random.default_rng(5)
    index0, index1 = generator.integers(0, 30, (200, 30)), generator.integers(0, 30, (200, 30))
    assert_allclose(out[first], values[0][index0].mean(axis=1), atol=ATOL_FAST)
    assert_allclose(out[second], values[1][index1].mean(axis=1), atol=ATOL_FAST)


def test_small_subsets_and_strata_keep_their_own_draw():
    values = np.random.default_rng(2).random((1, 40))
    small = np.zeros(40, bool)
    small[:int(DERIVE_SHARE * 40) - 1] = True
    draws = SubsetDraws(values, None, None, 100, 3)
    sid = draws.subset(small)
    assert not draws.derived(sid)
    request = draws.need(sid, 0)
    index = np.random.default_rng(3).integers(0, small.sum(), (100, small.sum()))
    assert_allclose(run_all(draws)[request], values[0, small][index].mean(axis=1), atol=ATOL_FAST)
    stratified = SubsetDraws(values, None, np.arange(40) % 2, 100, 3)
    assert not stratified.derived(stratified.subset(np.arange(40) < 30))


def test_each_replicate_is_m_uniform_draws():
    # Task j's count in a replicate ~ Binomial(m, 1/m): mean 1, variance 1 − 1/m; the counts sum to m.
    mask = np.ones(N_TASKS, bool)
    mask[::3] = False
    m = int(mask.sum())
    picked = np.flatnonzero(mask)[[0, 7, 20, m - 1]]
    values = np.zeros((len(picked) + 1, N_TASKS))
    values[np.arange(len(picked)), picked] = 1.0
    values[-1] = 1.0
    values[:, ~mask] = np.nan
    draws = SubsetDraws(values, None, None, 20_000, 11)
    sid = draws.subset(mask)
    requests = [draws.need(sid, row) for row in range(len(values))]
    out = run_all(draws)
    assert_allclose(out[requests[-1]], 1.0, atol=ATOL_FAST)  # every replicate holds exactly m draws
    for request in requests[:-1]:
        counts = out[request] * m
        assert_allclose(counts, np.rint(counts), atol=1e-9)
        se = np.sqrt((1 - 1 / m) / len(counts))
        assert abs(counts.mean() - 1.0) < 4.5 * se
        assert abs(counts.var() - (1 - 1 / m)) < 0.06


def test_replicate_distribution_matches_the_literal_protocol():
    # Same scores on the same 40-of-60 tasks: derived and literal replicate means are one distribution
    # (two-sample KS), and both have the analytic bootstrap SE sd(x)/√m.
    rng = np.random.default_rng(6)
    x = rng.beta(2, 3, N_TASKS)
    mask = np.ones(N_TASKS, bool)
    mask[rng.choice(N_TASKS, 20, replace=False)] = False
    values = np.where(mask, x, np.nan)[None, :]
    draws = SubsetDraws(values, None, None, 4000, 21)
    request = draws.need(draws.subset(mask, rows=(0,)), 0)
    derived = run_all(draws)[request]
    literal = x[mask][np.random.default_rng(22).integers(0, 40, (4000, 40))].mean(axis=1)
    assert stats.ks_2samp(derived, literal).pvalue > 0.001
    analytic = x[mask].std() / np.sqrt(40)
    assert abs(derived.std() / analytic - 1) < 0.06


def test_a_replicate_of_weightless_tasks_is_undefined():
    # Weights 0 on all but one task of the subset: replicates that miss it have no mean (NaN), even
    # though the engine reaches their weight as a difference of sums.
    values = np.random.default_rng(8).random((1, 40))
    values[0, :6] = np.nan
    w = np.zeros(40)
    w[10] = 1.0
    draws = SubsetDraws(values, w, None, 300, 2)
    request = draws.need(draws.subset(~np.isnan(values[0]), rows=(0,)), 0)
    out = run_all(draws)[request]
    expected = derived_reference(np.nan_to_num(values[0]), ~np.isnan(values[0]), 300, 2, 0, w)
    assert np.isnan(out).any() and (~np.isnan(out)).any()
    assert_allclose(out, expected, atol=ATOL_FAST, rtol=0, equal_nan=True)
