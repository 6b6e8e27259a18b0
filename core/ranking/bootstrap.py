"""Bootstrap uncertainty for pairwise rankings (docs/methods.md §3).

The Bradley–Terry bootstrap draws cell counts M ~ Multinomial(N, n_c/N) over the sorted cells,
which has exactly the distribution of resampling the N votes with replacement (docs/methods.md §3,
"Multinomial equivalence"), and refits every replicate with its own identifiability check. All
replicates are fitted together by a batched Newton solver warm-started at the full-data fit.
Quantiles are taken on the Elo scale; rank intervals share each replicate's counts.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from core.errors import EvalBoardError
from core.ranking.bradley_terry import NONIDENTIFIABLE_PRIOR, elo_from_theta, is_strongly_connected, newton_pairs
from core.ranking.cells import Cells, merge_sides, pair_counts, win_matrix
from core.stats.resampling import percentile_interval, rank_interval
from core.validation import check_alpha, check_replicates

DEFAULT_REPLICATES = 1000
PIPELINE_BATCHES = 4
REPLICATES_PER_BATCH_CELLS = 10_000_000  # bound on B_batch × K² floats held at once (~80 MB per array)


class BootstrapError(EvalBoardError, ValueError):
    """Settings a bootstrap cannot run with."""


@dataclass(frozen=True)
class BTBootstrap:
    """Replicate Elo ratings and the intervals derived from them."""

    elo: np.ndarray = field(repr=False)  # (B, K) replicate ratings, mean(π) = 1 per replicate (or anchored)
    ci_low: np.ndarray = field(repr=False)
    ci_high: np.ndarray = field(repr=False)
    rank_low: np.ndarray = field(repr=False)
    rank_high: np.ndarray = field(repr=False)
    replicates: int
    nonidentifiable: int  # replicates refitted with the virtual-tie prior (docs/methods.md §2 policy)
    not_converged: int
    seed: int
    alpha: float
    protocol: str = "multinomial"


def check_settings(replicates: int, alpha: float) -> None:
    check_replicates(replicates, error=BootstrapError)
    check_alpha(alpha, error=BootstrapError)


def multinomial_counts(cells: Cells, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """(B, C) cell counts of B resamples of the N votes (docs/methods.md §3 protocol: sorted cells, n_c/N)."""
    n, p = _multinomial_parameters(cells)
    return rng.multinomial(n, p, size=replicates)


def _multinomial_parameters(cells: Cells) -> tuple[int, np.ndarray]:
    total = cells.count.sum()
    n = int(round(total))
    if abs(total - n) > 1e-9:
        raise BootstrapError("the multinomial bootstrap needs whole vote counts per cell; this input has "
                             "fractional counts (use --ci sandwich)")
    return n, cells.count / total


def count_batches(cells: Cells, replicates: int, rng: np.random.Generator, batch: int):
    """Yield (first replicate, (b, C) counts) batch by batch, drawing the next batch in a background
    thread while the caller fits this one (numpy's array work releases the GIL, the draws hold it).

    Successive draws from one generator give exactly the numbers of one draw of all replicates, so
    batching changes neither the results nor their reproducibility.
    """
    n, p = _multinomial_parameters(cells)
    sizes = [min(batch, replicates - lo) for lo in range(0, replicates, batch)]
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(rng.multinomial, n, p, sizes[0])
        first = 0
        for index, size in enumerate(sizes):
            counts = future.result()
            if index + 1 < len(sizes):
                future = pool.submit(rng.multinomial, n, p, sizes[index + 1])
            yield first, counts
            first += size


def bootstrap_bt(cells: Cells, theta: np.ndarray, replicates: int = DEFAULT_REPLICATES, seed: int = 0,
                 alpha: float = 0.05, weight_scale: float = 1.0, anchor: tuple[int, float] | None = None
                 ) -> BTBootstrap:
    """Multinomial cell bootstrap of BT ratings; ``theta`` is the full-data fit (warm start).

    The multinomial is drawn over the cells of unordered pairs (:func:`core.ranking.cells.merge_sides`),
    which is the docs/methods.md §3 protocol whenever each pair is always seated the same way (as in D1) and
    equal to it in distribution otherwise.
    """
    check_settings(replicates, alpha)
    rng = np.random.default_rng(seed)
    cells = merge_sides(cells)  # BT does not see seating: same distribution, half the draws
    k = cells.n_models
    full_pattern = win_matrix(cells) > 0
    full_identifiable = is_strongly_connected(full_pattern)
    start = np.where(np.isfinite(theta), theta, 0.0)
    # Several batches even when memory would allow one, so drawing and fitting overlap.
    batch = max(1, min(REPLICATES_PER_BATCH_CELLS // max(1, k * k), -(-replicates // PIPELINE_BATCHES)))
    elo = np.empty((replicates, k))
    nonidentifiable = not_converged = 0
    for lo, counts in count_batches(cells, replicates, rng, batch):
        i, j, wins, n = pair_counts(cells, counts)
        wins, n = wins * weight_scale, n * weight_scale
        ok = _identifiable(i, j, wins, n, k, full_pattern, full_identifiable)
        theta_b = np.empty((len(wins), k))
        for mask, prior in ((ok, 0.0), (~ok, NONIDENTIFIABLE_PRIOR)):
            if mask.any():
                theta_b[mask], conv, _ = newton_pairs(i, j, wins[mask], n[mask], k, start, prior)
                not_converged += int((~conv).sum())
        nonidentifiable += int((~ok).sum())
        elo[lo:lo + len(wins)] = elo_from_theta(theta_b)
    if anchor is not None:
        index, rating = anchor
        elo = elo - elo[:, [index]] + rating
    low, high = percentile_interval(elo, alpha)
    rank_low, rank_high = rank_interval(elo, alpha)
    return BTBootstrap(elo, low, high, rank_low, rank_high, replicates, nonidentifiable, not_converged, seed,
                       alpha)


def _identifiable(i, j, wins, n, k, full_pattern: np.ndarray, full_identifiable: bool) -> np.ndarray:
    """Per replicate: is its "i beat j" graph strongly connected? Replicates whose edge pattern equals
    the full data's share its answer; only the others need a graph search."""
    beats = wins > 0  # i beat j at least half a time
    beaten = (n - wins) > 0  # j beat i
    same = ((beats == full_pattern[i, j]) & (beaten == full_pattern[j, i])).all(axis=1)
    out = np.full(len(wins), full_identifiable)
    for b in np.flatnonzero(~same):
        graph = np.zeros((k, k))
        graph[i, j] = beats[b]
        graph[j, i] = beaten[b]
        out[b] = is_strongly_connected(graph)
    return out


def arena_rank(ci_low: np.ndarray, ci_high: np.ndarray) -> np.ndarray:
    """Chatbot Arena's rank: 1 + number of models whose lower bound exceeds this one's upper bound."""
    return 1 + (np.asarray(ci_low)[None, :] > np.asarray(ci_high)[:, None]).sum(axis=1)
