"""Bootstrap of the style-controlled fit: votes resampled with replacement, every replicate refitted.

Votes that agree in pair, outcome, weight and features are collapsed into one row with a count first;
resampling n votes is then a multinomial draw of counts over the distinct rows (docs/methods.md §3 does the same
over BT cells), so each replicate is a set of replicate weights on the same rows. Counts must be whole
numbers of votes.

Each replicate is refitted to convergence on the same penalised objective, warm-started at the full
estimate, by the chord method: Newton steps with the full data's Hessian H₀, which a replicate's Hessian
matches to O(1/√n), so each step shrinks the error by that factor while costing one gradient pass instead
of a Hessian; it stops once the step is below the full fit's tolerance and the distance left to the
replicate's maximiser (estimated from the rate of the last two steps) below :data:`CHORD_TOL`. A replicate
whose steps do not settle, or whose win graph loses strong connectivity (then fitted with the
docs/methods.md §2 prior and counted), is refitted by full Newton.

Speed (docs/methods.md §11): the replicates are drawn one by one from one generator and refitted
:data:`CHUNK` at a time, their gradients computed together over the rows in pair order, block by block so
that each block's (replicates × rows) arrays stay in the processor's cache. The first step needs no
exponential: at the full estimate μ is the full fit's, so a replicate's gradient there is linear in its
counts. Large jobs are shared by :data:`WORKERS` forked processes, chunk by chunk; each replays the
generator's whole stream and keeps its own chunks' draws, so a seed gives the same replicates whatever the
chunking and the number of processes.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.ranking.bradley_terry import NONIDENTIFIABLE_PRIOR, is_strongly_connected
from core.ranking.style_model import NEWTON_TOL, StyleRows, fit_sorted
from core.ranking.style_pairs import PairLayout, evaluate, linear_predictor, probability_and_softplus

# A chord step shrinks the error by a factor ρ of O(1/√(votes per pair)) (≈ 0.03 at a million votes over 50
# models; up to ~0.5 on a few hundred votes). The distance left to the replicate's own maximiser after a step
# s is about ρ·|s|/(1 − ρ), with ρ estimated by the ratio of the last two steps; the refit stops once that
# is below CHORD_TOL and the step itself below the full fit's Newton tolerance. Each replicate is thus its
# maximiser to ~1e-9 in θ and β (~2e-7 Elo), as a Newton refit would be.
CHORD_TOL = 5e-9
CHORD_MAX_ITER = 50
CHUNK = 32  # replicates refitted together
WORKERS = 2
PARALLEL_MIN_CELLS = 50_000_000  # replicates × distinct rows: below this, starting processes costs more than it saves
# replicates × rows per block: ~0.5 MB per float64 array, well inside a core's cache; and the block's small
# matrix products ((R × p)(p × rows), (R × rows)(rows × p)) stay below the size at which OpenBLAS starts
# threads, which on a busy machine cost 10-100× the work they share (measured at 8,192 rows × 32 replicates)
BLOCK_CELLS = 1 << 16


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


@dataclass(frozen=True)
class _Block:
    """Rows start:stop of the pair layout; they cover groups first:last (the first and last maybe in part)."""

    start: int
    stop: int
    first: int
    last: int
    starts: np.ndarray  # the covered groups' first rows, relative to ``start``
    sizes: np.ndarray  # the covered groups' rows inside the block


def _blocks(pairs: PairLayout, rows_per_block: int) -> list[_Block]:
    n = len(pairs.y)
    ends = pairs.starts + pairs.sizes
    blocks = []
    for start in range(0, n, rows_per_block):
        stop = min(start + rows_per_block, n)
        first = int(np.searchsorted(ends, start, side="right"))
        last = int(np.searchsorted(pairs.starts, stop, side="left"))
        lo = np.maximum(pairs.starts[first:last], start)
        hi = np.minimum(ends[first:last], stop)
        blocks.append(_Block(start, stop, first, last, lo - start, hi - lo))
    return blocks


class _Replicates:
    """The full fit's quantities every replicate's refit shares, and the batched chord steps."""

    def __init__(self, pairs: PairLayout, cw: np.ndarray, weight: np.ndarray, estimate: np.ndarray, penalty: float,
                 prior: float):
        self.pairs, self.weight, self.estimate, self.penalty, self.prior = pairs, weight, estimate, penalty, prior
        self.unit_weight = bool(np.all(weight == 1.0))
        k, size = pairs.n_models, len(estimate)
        self.free = np.arange(size) if prior > 0 else np.arange(1, size)
        hess = evaluate(pairs, estimate, cw, penalty, prior)[2]  # H₀: the full data's, at the full estimate
        self.h0_inv = np.linalg.inv(-hess[np.ix_(self.free, self.free)])
        # residual at the full estimate: a replicate's score there is Σ counts · weight (y − μ₀) x, linear in counts
        self.residual0 = weight * (pairs.y - probability_and_softplus(linear_predictor(pairs, estimate[:k],
                                                                                       estimate[k:]))[0])
        self.blocks = _blocks(pairs, max(BLOCK_CELLS // CHUNK, 1))

    def first_pass(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gradients at the full estimate of replicates with these counts (R × rows, layout order), and each
        replicate's win-graph edges W[i, j] > 0."""
        pairs, k = self.pairs, self.pairs.n_models
        r = len(counts)
        score_groups, won, total = (np.zeros((r, len(pairs.starts))) for _ in range(3))
        score_z = np.zeros((r, pairs.zt.shape[0]))
        for block in self.blocks:
            sl, gs = slice(block.start, block.stop), slice(block.first, block.last)
            cw = counts[:, sl] if self.unit_weight else counts[:, sl] * self.weight[sl]
            total[:, gs] += np.add.reduceat(cw, block.starts, axis=1, dtype=np.float64)
            won[:, gs] += np.add.reduceat(cw * pairs.y[sl], block.starts, axis=1)
            g = counts[:, sl] * self.residual0[sl]
            score_groups[:, gs] += np.add.reduceat(g, block.starts, axis=1)
            score_z += g @ pairs.zt[:, sl].T
        pair = pairs.group_left * k + pairs.group_right
        reverse = pairs.group_right * k + pairs.group_left
        edges = np.zeros((r, k * k))
        for i in range(r):
            edges[i] = np.bincount(pair, won[i], k * k) + np.bincount(reverse, total[i] - won[i], k * k)
        grad = self._finish(score_groups, score_z, np.tile(self.estimate, (r, 1)))
        return grad, edges.reshape(r, k, k) > 0

    def gradients(self, counts: np.ndarray, which: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Gradients of the penalised objective of replicates ``counts[which]`` at their current b (R × size)."""
        pairs, k = self.pairs, self.pairs.n_models
        r = len(which)
        if r and np.array_equal(which, np.arange(which[0], which[0] + r)):
            which = slice(which[0], which[0] + r)  # a run of replicates: a view, no copy per block
        minus_delta = b[:, pairs.group_right] - b[:, pairs.group_left]
        beta = b[:, k:]
        score_groups = np.zeros((r, len(pairs.starts)))
        score_z = np.zeros((r, pairs.zt.shape[0]))
        with np.errstate(over="ignore"):  # e^−η = inf for η < −709 gives μ = 0, as it should
            for block in self.blocks:
                sl, gs = slice(block.start, block.stop), slice(block.first, block.last)
                t = np.repeat(minus_delta[:, gs], block.sizes, axis=1)
                t -= beta @ pairs.zt[:, sl]  # −η
                np.exp(t, out=t)
                t += 1.0
                np.reciprocal(t, out=t)  # μ
                np.subtract(pairs.y[sl], t, out=t)
                t *= counts[which, sl]
                if not self.unit_weight:
                    t *= self.weight[sl]  # g = count · weight · (y − μ)
                score_groups[:, gs] += np.add.reduceat(t, block.starts, axis=1)
                score_z += t @ pairs.zt[:, sl].T
        return self._finish(score_groups, score_z, b)

    def _finish(self, score_groups: np.ndarray, score_z: np.ndarray, b: np.ndarray) -> np.ndarray:
        k, r = self.pairs.n_models, len(b)
        offset = (np.arange(r) * k)[:, None]  # one bincount for all replicates: replicate i's models at i·K + model
        by_model = (np.bincount((offset + self.pairs.group_left).ravel(), score_groups.ravel(), r * k)
                    - np.bincount((offset + self.pairs.group_right).ravel(), score_groups.ravel(), r * k))
        grad = np.concatenate([by_model.reshape(r, k), score_z - self.penalty * b[:, k:]], axis=1)
        if self.prior > 0:
            grad[:, :k] += self.prior * (1.0 - 2.0 * 0.5 * (1.0 + np.tanh(0.5 * b[:, :k])))
        return grad

    def chords(self, counts: np.ndarray, which: np.ndarray, first_grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Chord iterations for replicates ``counts[which]`` from the full estimate: (b, settled) per replicate."""
        r = len(which)
        b = np.tile(self.estimate, (r, 1))
        settled = np.zeros(r, dtype=bool)
        active = np.arange(r)
        grad = first_grad
        last = np.full(r, np.inf)  # size of each active replicate's previous step
        for _ in range(CHORD_MAX_ITER):
            step = grad[:, self.free] @ self.h0_inv
            b[np.ix_(active, self.free)] += step
            finite = np.isfinite(b[active]).all(axis=1)
            size = np.abs(step).max(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                rho = np.where(np.isfinite(last), size / last, 0.5)  # 0.5 until two steps show the rate
                left = rho * size / (1.0 - rho)
            done = finite & (size < NEWTON_TOL) & (rho < 0.9) & (left < CHORD_TOL)
            settled[active[done]] = True
            keep = ~done & finite
            active, last = active[keep], size[keep]
            if not active.size:
                break
            grad = self.gradients(counts, which[active], b[active])
        return b, settled


def bootstrap(rows: StyleRows, estimate: np.ndarray, penalty: float, prior: float, replicates: int,
              seed: int, workers: int | None = None) -> StyleReplicates:
    """``replicates`` refits on multinomial resamples of the votes (a fresh ``default_rng(seed)``).

    ``workers`` processes share the chunks of replicates (default: :data:`WORKERS` when the job is large
    and the system can fork, else 1); the replicates are the same whatever the number."""
    distinct = collapse(rows)
    pairs = distinct.pairs
    job = _Job(_Draws.of(distinct), _Replicates(pairs, pairs.sort(distinct.cw), pairs.sort(distinct.weight),
                                                np.asarray(estimate, dtype=np.float64), penalty, prior),
               replicates, seed)
    if workers is None:
        large = replicates * len(distinct.count) >= PARALLEL_MIN_CELLS and replicates > CHUNK
        workers = WORKERS if large and "fork" in mp.get_all_start_methods() and (os.cpu_count() or 1) > 1 else 1
    workers = max(1, min(int(workers), -(-replicates // CHUNK)))
    if mp.current_process().daemon:  # a daemonic process (a pool's worker) may not start processes
        workers = 1
    parts = _shares_in_processes(job, workers) if workers > 1 else [_share(job, 0, 1)]
    out = np.empty((replicates, len(estimate)))
    for which, b, _, _ in parts:
        out[which] = b
    k = rows.n_models
    out[:, :k] -= out[:, :k].mean(axis=1, keepdims=True)
    return StyleReplicates(out, replicates, seed, sum(p[2] for p in parts), sum(p[3] for p in parts))


@dataclass(frozen=True)
class _Draws:
    """Resampling n votes = n uniform draws over the votes, each mapped to its distinct row: exactly a
    multinomial(n, count/n) over the rows, and ~10× cheaper than rng.multinomial over a million rows.
    The votes are numbered row by row (row j's votes are one run), so a row's draw is the sum over its run
    of the votes' draws; then the rows are put in pair order."""

    n_votes: int
    n_rows: int
    voted: np.ndarray = field(repr=False)  # rows holding at least one vote
    first_vote: np.ndarray = field(repr=False)  # of each row in ``voted``
    one_vote_each: bool
    order: np.ndarray = field(repr=False)  # the pair layout's order of the rows

    @classmethod
    def of(cls, distinct: StyleRows) -> _Draws:
        votes_per_row = np.round(distinct.count).astype(np.int64)
        voted = np.flatnonzero(votes_per_row > 0)
        return cls(int(votes_per_row.sum()), len(votes_per_row), voted,
                   (np.cumsum(votes_per_row) - votes_per_row)[voted], bool(np.all(votes_per_row == 1)),
                   distinct.pairs.order)

    def skip(self, rng: np.random.Generator) -> None:
        """Advance the generator past one replicate's draws (another worker fits that replicate)."""
        rng.integers(0, self.n_votes, self.n_votes)

    def draw(self, rng: np.random.Generator, counts: np.ndarray, i: int) -> np.ndarray:
        """One replicate's vote counts per row, in pair order, into ``counts[i]``; returns ``counts`` (widened
        to float64 if a count does not fit its two bytes)."""
        drawn = np.bincount(rng.integers(0, self.n_votes, self.n_votes), minlength=self.n_votes)
        if not self.one_vote_each:
            by_row = np.zeros(self.n_rows, dtype=np.int64)
            by_row[self.voted] = np.add.reduceat(drawn, self.first_vote)
            drawn = by_row
        if counts.dtype == np.uint16 and drawn.max() > np.iinfo(np.uint16).max:
            counts = counts.astype(np.float64)
        # into pair order: random reads, so from the two-byte copy, which stays in cache
        np.take(drawn.astype(counts.dtype), self.order, out=counts[i])
        return counts


@dataclass(frozen=True)
class _Job:
    draws: _Draws
    shared: _Replicates
    replicates: int
    seed: int


def _shares_in_processes(job: _Job, shares: int) -> list[tuple[np.ndarray, np.ndarray, int, int]]:
    """Share 0 here, the others in forked children (which inherit ``job``: nothing large is pickled; only
    their small results come back). A child that fails or dies has its share redone here, so an error is
    raised as in one process."""
    context = mp.get_context("fork")
    children = []
    for share in range(1, shares):
        receive, send = context.Pipe(duplex=False)
        child = context.Process(target=_send_share, args=(send, job, share, shares), daemon=True)
        child.start()
        send.close()
        children.append((share, receive, child))
    parts = [_share(job, 0, shares)]
    for share, receive, child in children:
        try:
            part = receive.recv()
        except EOFError:
            part = None
        child.join()
        parts.append(part if part is not None else _share(job, share, shares))
    return parts


def _send_share(send, job: _Job, share: int, shares: int) -> None:
    try:
        send.send(_share(job, share, shares))
    except Exception:  # the parent redoes this share and raises the error itself
        send.send(None)
    finally:
        send.close()


def _share(job: _Job, share: int, shares: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Chunks ``share``, ``share + shares``, … of the replicates: (their indices, their b, non-identifiable,
    Newton fallbacks). Every worker replays the one generator's stream, drawing only its own chunks."""
    shared, draws, prior = job.shared, job.draws, job.shared.prior
    rng = np.random.default_rng(job.seed)
    which, estimates = [], []
    nonidentifiable = fallbacks = 0
    # counts of votes per row, two bytes each while they fit (a row holding c votes draws ~Poisson(c) of them)
    counts = np.empty((min(CHUNK, job.replicates), draws.n_rows), dtype=np.uint16)
    for chunk, first in enumerate(range(0, job.replicates, CHUNK)):
        r = min(CHUNK, job.replicates - first)
        if chunk % shares != share:
            for _ in range(r):
                draws.skip(rng)
            continue
        for i in range(r):
            counts = draws.draw(rng, counts, i)
        grad, edges = shared.first_pass(counts[:r])
        connected = np.array([prior > 0 or is_strongly_connected(e) for e in edges])
        out = np.empty((r, len(shared.estimate)))
        out[connected], settled = shared.chords(counts, np.flatnonzero(connected), grad[connected])
        newton = ~connected
        newton[np.flatnonzero(connected)[~settled]] = True
        for i in np.flatnonzero(newton):
            replicate_prior = prior if connected[i] else NONIDENTIFIABLE_PRIOR
            nonidentifiable += not connected[i]
            fallbacks += bool(connected[i])
            out[i] = fit_sorted(shared.pairs, counts[i] * shared.weight, shared.penalty, replicate_prior,
                                start=shared.estimate)[0]
        which.append(np.arange(first, first + r))
        estimates.append(out)
    size = len(shared.estimate)
    return (np.concatenate(which) if which else np.zeros(0, dtype=np.int64),
            np.concatenate(estimates) if estimates else np.zeros((0, size)), nonidentifiable, fallbacks)
