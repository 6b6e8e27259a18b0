"""Bootstrap of the style-controlled fit: votes resampled with replacement, every replicate refitted.

Votes that agree in pair, outcome, weight and features are collapsed into one row with a count first;
resampling n votes is then a multinomial draw of counts over the distinct rows (docs/methods.md §3 does the same
over BT cells), so each replicate is a set of replicate weights on the same rows. Counts must be whole
numbers of votes.

Each replicate is refitted to the same tolerance as the full fit, warm-started at the full estimate, by
the chord method: Newton steps with the full data's Hessian H₀, which a replicate's Hessian matches to
O(1/√n), so each step shrinks the error by that factor while costing one gradient pass instead of a
Hessian. A replicate whose steps do not settle, or whose win graph loses strong connectivity (then
fitted with the docs/methods.md §2 prior and counted), is refitted by full Newton.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.ranking.bradley_terry import NONIDENTIFIABLE_PRIOR, strong_components
from core.ranking.style_model import StyleRows, fit_rows, gradient, objective, win_graph

# A chord step shrinks the error by a factor of O(1/√(votes per pair)) (≈ 0.04 at a million votes over 50
# models), so after a step below this the error left is ~1e-9 in θ (~1e-7 Elo): far below what a
# percentile interval can resolve.
CHORD_TOL = 1e-7
CHORD_MAX_ITER = 50


@dataclass(frozen=True)
class StyleReplicates:
    """Replicate estimates b = (θ with Σθ = 0, β), one row per replicate, and what happened."""

    b: np.ndarray = field(repr=False)
    replicates: int
    seed: int
    nonidentifiable: int  # replicates whose win graph was not strongly connected (fitted with the prior)
    newton_fallbacks: int  # replicates the chord steps did not settle, refitted by full Newton


def collapse(rows: StyleRows) -> StyleRows:
    """Distinct (left, right, y, weight, z) rows with their vote counts summed (order of first appearance)."""
    matrix = np.column_stack([rows.left, rows.right, rows.y, rows.weight, rows.z])
    codes = pd.DataFrame(matrix).groupby(list(range(matrix.shape[1])), sort=False).ngroup().to_numpy()
    count = np.bincount(codes, weights=rows.count)
    first = np.empty(len(count), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    return StyleRows(rows.left[first], rows.right[first], rows.y[first], count * rows.weight[first], count,
                     rows.weight[first], np.asfortranarray(rows.z[first]), rows.n_models)


def bootstrap(rows: StyleRows, estimate: np.ndarray, penalty: float, prior: float, replicates: int,
              seed: int) -> StyleReplicates:
    """``replicates`` refits on multinomial resamples of the votes (a fresh ``default_rng(seed)``)."""
    distinct = collapse(rows)
    # Resampling n votes = n uniform draws over the votes, each mapped to its distinct row: exactly a
    # multinomial(n, count/n) over the rows, and ~10× cheaper than rng.multinomial over a million rows.
    row_of_vote = np.repeat(np.arange(len(distinct.count)), np.round(distinct.count).astype(np.int64))
    n_votes = len(row_of_vote)
    k, size = rows.n_models, len(estimate)
    free = np.arange(size) if prior > 0 else np.arange(1, size)
    h0 = -objective(distinct, estimate, penalty, prior)[2][np.ix_(free, free)]
    h0_inv = np.linalg.inv(h0)
    rng = np.random.default_rng(seed)
    out = np.empty((replicates, size))
    nonidentifiable = fallbacks = 0
    for r in range(replicates):
        drawn = np.bincount(row_of_vote[rng.integers(0, n_votes, n_votes)], minlength=len(distinct.count))
        cw = drawn * distinct.weight
        replicate_prior = prior
        if prior == 0 and strong_components(win_graph(distinct, cw)) != 1:
            replicate_prior, nonidentifiable = NONIDENTIFIABLE_PRIOR, nonidentifiable + 1
        b = None if replicate_prior != prior else _chord(distinct, estimate, free, h0_inv, penalty, prior, cw)
        if b is None:
            fallbacks += replicate_prior == prior
            b = fit_rows(distinct, penalty, replicate_prior, cw=cw, start=estimate)[0]
        b[:k] -= b[:k].mean()
        out[r] = b
    return StyleReplicates(out, replicates, seed, nonidentifiable, fallbacks)


def _chord(rows: StyleRows, start: np.ndarray, free: np.ndarray, h0_inv: np.ndarray, penalty: float, prior: float,
           cw: np.ndarray) -> np.ndarray | None:
    b = start.copy()
    for _ in range(CHORD_MAX_ITER):
        step = h0_inv @ gradient(rows, b, penalty, prior, cw)[free]
        b[free] += step
        if not np.all(np.isfinite(b)):
            return None
        if np.abs(step).max() < CHORD_TOL:
            return b
    return None
