"""The search for the fewest votes whose removal flips an order of a Bradley–Terry fit (docs/methods.md §13).

Arrays only. Votes that share an unordered pair, an outcome and a weight are interchangeable for the fit, so
the search works on such groups ("pair cells") and counts how many votes it drops from each: its cost does
not grow with the number of votes.

- :func:`refit` fits BT exactly as ``evalboard rank`` does (ties half, weights; the pure MLE when the comparison
  graph is strongly connected, else one virtual tie per model, docs/methods.md §2), by Newton to ~1e-14.
- :func:`margin_effects` is the first-order influence of dropping one vote of each cell on θ_top − θ_rival.
- :func:`greedy_search` drops the most influential votes in batches of half the predicted need, fitting again
  and re-linearising after each batch (a recursive greedy search), then bisects the last batch with exact
  refits: the set it returns flips on an exact refit, and one vote fewer along its order does not.
- :func:`exhaustive_search` tries every combination of per-cell counts by increasing size when there are
  few: the exact minimum on small inputs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import core.ranking.bradley_terry as bt

# An order is flipped when the other model's θ exceeds the leader's by more than this (≈ 4e-7 Elo): two
# ratings equal up to rounding are a tie, and a tie does not flip an order (docs/methods.md §13).
FLIP_MARGIN = 1e-9
# Up to this many combinations of per-cell counts, every combination is tried (docs/methods.md §13).
EXHAUSTIVE_LIMIT = 4096
# A challenger whose first-order estimate of the votes it needs exceeds this many times the best count found
# so far is not searched: a heuristic that bounds the cost with many models (docs/methods.md §13, step 1).
PLAUSIBLE_FACTOR = 3.0
MAX_STAGES = 200  # re-linearisations of one greedy search; each takes at least half of what is left to flip


@dataclass(frozen=True)
class PairCells:
    """Votes grouped by (first model i < second model j, score of i, weight), with their counts."""

    k: int
    i: np.ndarray = field(repr=False)
    j: np.ndarray = field(repr=False)
    s: np.ndarray = field(repr=False)  # score of model i: 1, 0.5 or 0
    weight: np.ndarray = field(repr=False)
    count: np.ndarray = field(repr=False)  # votes per cell (int64)

    def __len__(self) -> int:
        return len(self.count)


@dataclass(frozen=True)
class Fit:
    theta: np.ndarray  # (K,), NaN for a model left without (weighted) votes
    prior: float
    scale: float  # weights rescaled to mean 1 (docs/methods.md §2)


def pair_cells(left: np.ndarray, right: np.ndarray, s_left: np.ndarray, weight: np.ndarray, k: int
               ) -> tuple[PairCells, np.ndarray]:
    """The cells of votes (left, right model codes; score of the left model; weight) and each vote's cell."""
    left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    flip = left > right
    i, j = np.where(flip, right, left), np.where(flip, left, right)
    s_code = np.rint(np.where(flip, 1.0 - s_left, s_left) * 2).astype(np.int64)
    w_values, w_code = np.unique(np.asarray(weight, dtype=np.float64), return_inverse=True)
    key = ((i * k + j) * 3 + s_code) * len(w_values) + w_code
    keys, vote_cell, counts = np.unique(key, return_inverse=True, return_counts=True)
    rest, wc = np.divmod(keys, len(w_values))
    pair, sc = np.divmod(rest, 3)
    ci, cj = np.divmod(pair, k)
    return PairCells(k, ci, cj, sc / 2.0, w_values[wc], counts.astype(np.int64)), vote_cell.ravel()


def refit(cells: PairCells, count: np.ndarray, theta0: np.ndarray | None = None) -> Fit:
    """BT of the votes ``count`` (per cell) as ``evalboard rank`` fits them; models without votes get NaN."""
    k = cells.k
    wc = count * cells.weight
    rated = (np.bincount(cells.i, wc, k) + np.bincount(cells.j, wc, k)) > 0
    theta = np.full(k, np.nan)
    total_weight = float(wc.sum())
    scale = float(count.sum()) / total_weight if total_weight > 0 else 1.0
    if rated.sum() < 2:
        return Fit(theta, 0.0, scale)
    w = np.bincount(cells.i * k + cells.j, wc * cells.s, k * k) + np.bincount(cells.j * k + cells.i,
                                                                              wc * (1.0 - cells.s), k * k)
    sub = w.reshape(k, k)[np.ix_(rated, rated)] * scale
    prior = 0.0 if bt.strong_components(sub) == 1 else bt.NONIDENTIFIABLE_PRIOR
    start = None if theta0 is None else np.nan_to_num(theta0[rated])
    fitted = _newton(sub, prior, start)
    if fitted is None:  # Newton did not settle: MM, slower but sure (docs/methods.md §2)
        fitted = np.log(bt.mm(sub, prior)[0])
    theta[rated] = fitted
    return Fit(theta, prior, scale)


def _newton(w: np.ndarray, prior: float, theta0: np.ndarray | None, tol: float = 1e-10, max_iter: int = 100
            ) -> np.ndarray | None:
    """The BT MLE (prior 0: θ_0 held at 0) or MAP of one win matrix by dense Newton; None if it does not settle.

    One fit of at most a few hundred models: dense K×K steps cost less here than the batched pair solver
    of core.ranking.bradley_terry, which is built for thousands of bootstrap replicates at once."""
    k = len(w)
    games, wins = w + w.T, w.sum(axis=1)
    theta = np.zeros(k) if theta0 is None else np.array(theta0, dtype=np.float64)
    free = slice(0, k) if prior > 0 else slice(1, k)
    if prior == 0:
        theta -= theta[0]
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # P(i beats j)
        grad = wins - (games * p).sum(axis=1)
        curv = games * p * (1.0 - p)
        hess = np.diag(curv.sum(axis=1)) - curv
        if prior > 0:
            sig = 1.0 / (1.0 + np.exp(-theta))
            grad += prior * (1.0 - 2.0 * sig)
            hess[np.diag_indices(k)] += 2.0 * prior * sig * (1.0 - sig)
        try:
            step = np.linalg.solve(hess[free, free], grad[free])
        except np.linalg.LinAlgError:
            return None
        step *= min(1.0, bt.MAX_NEWTON_STEP / max(float(np.abs(step).max()), 1e-300))
        theta[free] += step
        if np.abs(step).max() < tol:
            return theta
    return None


def overtaker(theta: np.ndarray, leader: int, rival: int | None = None) -> int | None:
    """The model whose θ exceeds the leader's by more than FLIP_MARGIN (``rival``: only that one), or None.

    A leader left without votes has no rating: nothing overtakes it (the order is undefined, not flipped)."""
    if np.isnan(theta[leader]):
        return None
    if rival is not None:
        return rival if theta[rival] - theta[leader] > FLIP_MARGIN else None
    others = np.where(np.isnan(theta), -np.inf, theta)
    others[leader] = -np.inf
    best = int(np.argmax(others))
    return best if others[best] - theta[leader] > FLIP_MARGIN else None


def margin_effects(cells: PairCells, count: np.ndarray, fit: Fit, leader: int, rival: int) -> np.ndarray:
    """First-order change of θ_leader − θ_rival when one vote of each cell is dropped (docs/methods.md §13)."""
    return contrast_effects(cells, count, fit, leader, np.array([rival]))[:, 0]


def contrast_effects(cells: PairCells, count: np.ndarray, fit: Fit, leader: int, rivals: np.ndarray) -> np.ndarray:
    """(cells, rivals): the first-order change of θ_leader − θ_rival when one vote of each cell is dropped.

    Dropping vote v moves θ by ≈ −I⁻¹ ∇ℓ_v, with ∇ℓ_v = w_v (s_v − p_v)(e_i − e_j) and I the observed
    information of the fit (the prior's curvature included); the margin moves by the contrast of that."""
    theta = fit.theta
    effect = np.zeros((len(cells), len(rivals)))
    live = (count > 0) & ~np.isnan(theta[cells.i]) & ~np.isnan(theta[cells.j])
    if np.isnan(theta[leader]) or not live.any():
        return effect
    rated = np.flatnonzero(~np.isnan(theta))
    index = np.full(cells.k, -1)
    index[rated] = np.arange(len(rated))
    sub_theta = theta[rated]
    ci, cj = index[cells.i[live]], index[cells.j[live]]
    weight = cells.weight[live] * fit.scale
    p = 1.0 / (1.0 + np.exp(sub_theta[cj] - sub_theta[ci]))
    k = len(rated)
    curv = np.bincount(ci * k + cj, count[live] * weight * p * (1.0 - p), k * k).reshape(k, k)
    curv += curv.T
    info = np.diag(curv.sum(axis=1)) - curv
    if fit.prior > 0:
        sig = 1.0 / (1.0 + np.exp(-sub_theta))
        info[np.diag_indices(k)] += 2.0 * fit.prior * sig * (1.0 - sig)
    contrast = np.zeros((k, len(rivals)))
    contrast[index[leader]] = 1.0
    known = index[rivals] >= 0
    contrast[index[rivals[known]], np.flatnonzero(known)] -= 1.0
    free = slice(0, k) if fit.prior > 0 else slice(1, k)  # without a prior θ_0 is held at 0
    u = np.zeros((k, len(rivals)))
    u[free] = np.linalg.lstsq(info[free, free], contrast[free], rcond=None)[0]
    effect[live] = -(weight * (cells.s[live] - p))[:, None] * (u[ci] - u[cj])
    effect[:, ~known] = 0.0
    return effect


def predicted_need(effect: np.ndarray, available: np.ndarray, margin: float) -> tuple[np.ndarray, int]:
    """(the cells that lower the margin, most first; the votes the linear prediction needs along them to
    bring it below −FLIP_MARGIN, or all of theirs when it never gets there)."""
    helpful = np.flatnonzero((effect < 0) & (available > 0))
    order = helpful[np.argsort(effect[helpful], kind="stable")]
    cumulative = np.cumsum(effect[order] * available[order])
    reach = int(np.searchsorted(-cumulative, margin + FLIP_MARGIN, side="left"))  # cells wholly dropped
    if reach >= len(order):
        return order, int(available[order].sum())
    before = float(cumulative[reach - 1]) if reach else 0.0
    in_cell = max(1, math.ceil((margin + FLIP_MARGIN + before) / -effect[order[reach]]))
    return order, int(available[order[:reach]].sum()) + min(in_cell, int(available[order[reach]]))


def plausible_rivals(cells: PairCells, full: Fit, leader: int, rivals: list[int]) -> tuple[list[tuple[int, int]], int]:
    """(the rivals with their first-order estimate of the votes they need, fewest first; how many cannot
    overtake at all to first order: no vote lowers their margin)."""
    effects = contrast_effects(cells, cells.count, full, leader, np.asarray(rivals, dtype=np.int64))
    ranked = []
    for column, rival in enumerate(rivals):
        order, need = predicted_need(effects[:, column], cells.count, full.theta[leader] - full.theta[rival])
        if len(order):
            ranked.append((rival, need))
    ranked.sort(key=lambda item: item[1])
    return ranked, len(rivals) - len(ranked)


@dataclass
class SearchOutcome:
    removed: np.ndarray | None  # votes dropped per cell (None: no flip found)
    fit: Fit | None  # the exact refit without them
    refits: int = 0


def _take(order: np.ndarray, available: np.ndarray, votes: int, size: int) -> np.ndarray:
    """Per-cell counts of the first ``votes`` votes along ``order`` (cells, each with ``available`` votes)."""
    taken = np.zeros(size, dtype=np.int64)
    cumulative = np.cumsum(available[order])
    full = int(np.searchsorted(cumulative, votes, side="right"))
    taken[order[:full]] = available[order[:full]]
    if full < len(order):
        taken[order[full]] = votes - (int(cumulative[full - 1]) if full else 0)
    return taken


def greedy_search(cells: PairCells, full: Fit, leader: int, rival: int,
                  flipped: Callable[[Fit], bool]) -> SearchOutcome:
    """Drop the votes that most lower θ_leader − θ_rival, half of the predicted need at a time, re-linearising
    after every exact refit; bisect the batch that flips (docs/methods.md §13)."""
    removed = np.zeros(len(cells), dtype=np.int64)
    fit, outcome = full, SearchOutcome(None, None)
    for _ in range(MAX_STAGES):
        available = cells.count - removed
        effect = margin_effects(cells, available, fit, leader, rival)
        order, need = predicted_need(effect, available, fit.theta[leader] - fit.theta[rival])
        if not len(order):
            return outcome
        total = int(available[order].sum())
        # Half of the predicted need (of everything, when even that is predicted to fall short): the fit is
        # linearised again after each batch, and dropping everything at once can overshoot (a leader left
        # without votes has no rating, so nothing overtakes it).
        batch = max(1, math.ceil(min(need, total) / 2))
        step = _take(order, available, batch, len(cells))
        trial = refit(cells, cells.count - removed - step, fit.theta)
        outcome.refits += 1
        if flipped(trial):
            low, high, best = 0, batch, trial  # bisect the batch: ``low`` votes do not flip, ``high`` do
            while high - low > 1:
                middle = (low + high) // 2
                candidate = refit(cells, cells.count - removed - _take(order, available, middle, len(cells)),
                                  fit.theta)
                outcome.refits += 1
                if flipped(candidate):
                    high, best = middle, candidate
                else:
                    low = middle
            outcome.removed = removed + _take(order, available, high, len(cells))
            outcome.fit = best
            return outcome
        removed, fit = removed + step, trial
    return outcome


def combinations_within(cells: PairCells, limit: int) -> int | None:
    """The number of combinations of per-cell counts (Π (count + 1)) if at most ``limit``, else None."""
    total = 1
    for count in cells.count:
        total *= int(count) + 1
        if total > limit:
            return None
    return total


def exhaustive_search(cells: PairCells, full: Fit, flipped: Callable[[Fit], bool], below: int
                      ) -> SearchOutcome:
    """Every combination of per-cell counts with fewer than ``below`` votes, by increasing size; the first
    that flips is a minimum (votes of one cell are interchangeable). Only for inputs with at most
    EXHAUSTIVE_LIMIT combinations."""
    outcome = SearchOutcome(None, None)
    grid = np.array(list(itertools.product(*(range(int(c) + 1) for c in cells.count))), dtype=np.int64)
    sizes = grid.sum(axis=1)
    for index in np.argsort(sizes, kind="stable"):
        if sizes[index] == 0:
            continue
        if sizes[index] >= below:
            break
        trial = refit(cells, cells.count - grid[index], full.theta)
        outcome.refits += 1
        if flipped(trial):
            outcome.removed, outcome.fit = grid[index], trial
            break
    return outcome


def prune(cells: PairCells, found: SearchOutcome, full: Fit, leader: int, rival: int,
          flipped: Callable[[Fit], bool], limit: int = 400) -> SearchOutcome:
    """Give back the dropped votes the flip does not need: each cell of the set in turn (the least influential
    on the full fit first) returns votes one at a time while an exact refit still flips, in passes until one
    returns nothing. Afterwards no single vote of the set can be returned without undoing the flip (unless
    ``limit`` refits ran out first)."""
    if found.removed is None:
        return found
    removed, fit = found.removed.copy(), found.fit
    effect = margin_effects(cells, cells.count, full, leader, rival)
    tries, returned = 0, True
    while returned and tries < limit:
        returned = False
        dropped = np.flatnonzero(removed > 0)
        for cell in dropped[np.argsort(-effect[dropped], kind="stable")]:  # least negative effect first
            while removed[cell] > 0 and tries < limit:
                removed[cell] -= 1
                trial = refit(cells, cells.count - removed, fit.theta)
                tries += 1
                if not flipped(trial):
                    removed[cell] += 1
                    break
                fit, returned = trial, True
    return SearchOutcome(removed, fit, tries)  # ``refits``: this pruning's own
