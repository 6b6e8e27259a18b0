"""Votes -> compressed cells, win matrices and battle counts (docs/methods.md §2, §3).

Every pairwise estimator works on cells: one row per distinct (left model, right model, score of the
left model, weight [, stratum]) with the number of votes in it. After this step no cost depends on
the number of votes, and the bootstrap can draw cell counts from a multinomial instead of
resampling rows (docs/methods.md §3, "Multinomial equivalence").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.errors import EvalBoardError
from core.schema import OUTCOME_CODE, OUTCOMES

# Score of the left model per s-code; s-codes sort like s (right won < tie < left won), which is
# the cell order docs/methods.md §3 fixes for the bootstrap.
S_VALUES = np.array([0.0, 0.5, 1.0])
_S_CODE = {"model_a": 2, "model_b": 0, "tie": 1, "tie (bothbad)": 1}  # both kinds of tie score 0.5
_S_CODE_OF_OUTCOME = np.array([_S_CODE[o] for o in OUTCOMES], dtype=np.int64)  # indexed by outcome code
_DENSE_KEY_LIMIT = 50_000_000  # above this many possible keys, sort (np.unique) instead of counting bins


class PairwiseInputError(EvalBoardError, ValueError):
    """Votes that cannot be compressed (no models, unknown outcome codes …)."""


@dataclass(frozen=True)
class Cells:
    """Distinct (left, right, s, weight) combinations and how many votes fall in each.

    ``left``/``right`` index ``models`` (sorted names). Cells are sorted lexicographically by
    (left, right, s, weight), docs/methods.md §3.
    """

    models: tuple[str, ...]
    left: np.ndarray = field(repr=False)
    right: np.ndarray = field(repr=False)
    s: np.ndarray = field(repr=False)  # score of the left model: 1, 0.5 or 0
    weight: np.ndarray = field(repr=False)  # per-vote weight of the votes in the cell
    count: np.ndarray = field(repr=False)  # number of votes (float: counts tables may be weighted sums)

    @property
    def n_models(self) -> int:
        return len(self.models)

    @property
    def n_votes(self) -> float:
        return float(self.count.sum())

    def __len__(self) -> int:
        return len(self.count)


def compress(left: np.ndarray, right: np.ndarray, outcome: np.ndarray, models, weight: np.ndarray | None = None
             ) -> Cells:
    """Count votes per (left, right, s, weight).

    Parameters
    ----------
    left, right : integer model indices into ``models`` (e.g. categorical codes of model_a/model_b)
    outcome : codes of core.schema.OUTCOMES (model_a, model_b, tie, tie (bothbad)); both ties score 0.5
    models : model names, sorted
    weight : optional per-vote weights (>= 0); votes of different weight stay in different cells
    """
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    outcome = np.asarray(outcome, dtype=np.int64)
    k = len(models)
    if not (len(left) == len(right) == len(outcome)):
        raise PairwiseInputError("left, right and outcome must have the same length")
    if len(left) and (left.min() < 0 or right.min() < 0 or max(left.max(), right.max()) >= k):
        raise PairwiseInputError("model indices must lie in [0, len(models)); missing models are not allowed")
    if len(outcome) and (outcome.min() < 0 or outcome.max() > 3):
        raise PairwiseInputError("outcome codes must be 0..3 (model_a, model_b, tie, tie (bothbad))")
    s_code = _S_CODE_OF_OUTCOME[outcome]
    if weight is None:
        w_code, w_values = np.zeros(len(left), dtype=np.int64), np.array([1.0])
    else:
        weight = np.asarray(weight, dtype=np.float64)
        if np.any(~np.isfinite(weight)) or np.any(weight < 0):
            raise PairwiseInputError("weights must be finite and >= 0")
        w_values, w_code = np.unique(weight, return_inverse=True)
    n_w = len(w_values)
    key = ((left * k + right) * 3 + s_code) * n_w + w_code
    size = k * k * 3 * n_w
    if size <= _DENSE_KEY_LIMIT:
        counts = np.bincount(key, minlength=size)
        keys = np.flatnonzero(counts)
        counts = counts[keys]
    else:
        keys, counts = np.unique(key, return_counts=True)
    rest, wc = np.divmod(keys, n_w)
    pair, sc = np.divmod(rest, 3)
    li, ri = np.divmod(pair, k)
    return Cells(tuple(models), li, ri, S_VALUES[sc], w_values[wc], counts.astype(np.float64))


def compress_votes(votes: pd.DataFrame, weight: str | None = "weight") -> Cells:
    """Cells from a canonical votes frame (categorical model_a/model_b sharing categories, winner)."""
    a, b = votes["model_a"], votes["model_b"]
    if list(a.cat.categories) != list(b.cat.categories):
        raise PairwiseInputError("model_a and model_b must share one category list (core.io gives them that)")
    w = votes[weight].to_numpy(dtype=np.float64) if weight and weight in votes else None
    return compress(a.cat.codes.to_numpy(), b.cat.codes.to_numpy(), votes["winner"].cat.codes.to_numpy(),
                    [str(m) for m in a.cat.categories], w)


def merge_sides(cells: Cells) -> Cells:
    """Cells of unordered pairs: (i < j, score of i, weight), summing both seatings of a pair.

    Plain BT and win rates do not see who sat on the left, and summing multinomial cells gives a
    multinomial over the sums (the aggregation property), so a bootstrap drawn over these coarser
    cells has exactly the distribution of one drawn over the sided cells, with half the draws. When
    every vote of a pair has the same seating (as in docs/methods.md D1) the cells and their order are
    unchanged, and so is the random stream.
    """
    flip = cells.left > cells.right
    i = np.where(flip, cells.right, cells.left)
    j = np.where(flip, cells.left, cells.right)
    s = np.where(flip, 1.0 - cells.s, cells.s)
    s_code = np.rint(s * 2).astype(np.int64)
    w_values, w_code = np.unique(cells.weight, return_inverse=True)
    k = cells.n_models
    key = ((i * k + j) * 3 + s_code) * len(w_values) + w_code
    keys, inverse = np.unique(key, return_inverse=True)
    total = np.bincount(inverse, weights=cells.count, minlength=len(keys))
    rest, wc = np.divmod(keys, len(w_values))
    pair, sc = np.divmod(rest, 3)
    li, ri = np.divmod(pair, k)
    return Cells(cells.models, li, ri, S_VALUES[sc], w_values[wc], total)


def cells_from_counts(counts: pd.DataFrame) -> Cells:
    """Cells from a counts table (model_a, model_b, winner, count), the GROUP BY form of votes.

    Rows with a zero count are dropped, and so is a model left with no votes: it has nothing to rate.
    """
    counts = counts[counts["count"].to_numpy(dtype=np.float64) > 0]
    models = sorted(set(counts["model_a"]) | set(counts["model_b"]))
    index = {m: i for i, m in enumerate(models)}
    left = counts["model_a"].map(index).to_numpy(dtype=np.int64)
    right = counts["model_b"].map(index).to_numpy(dtype=np.int64)
    outcome = counts["winner"].map(OUTCOME_CODE).to_numpy(dtype=np.int64)
    n = counts["count"].to_numpy(dtype=np.float64)
    s_code = _S_CODE_OF_OUTCOME[outcome]
    key = (left * len(models) + right) * 3 + s_code
    keys, inverse = np.unique(key, return_inverse=True)
    total = np.bincount(inverse, weights=n, minlength=len(keys))
    pair, sc = np.divmod(keys, 3)
    li, ri = np.divmod(pair, len(models))
    return Cells(tuple(models), li, ri, S_VALUES[sc], np.ones(len(keys)), total)


def win_matrix(cells: Cells, counts: np.ndarray | None = None) -> np.ndarray:
    """W[i, j] = weighted wins of i over j, ties counting half to each side (docs/methods.md §2).

    ``counts`` replaces the cell counts (shape (C,) or (B, C) for B bootstrap replicates; the result
    is then (B, K, K)).
    """
    k = cells.n_models
    counts = cells.count if counts is None else np.asarray(counts, dtype=np.float64)
    to_left = cells.weight * cells.s
    to_right = cells.weight * (1.0 - cells.s)
    flat_lr = cells.left * k + cells.right
    flat_rl = cells.right * k + cells.left
    if counts.ndim == 1:
        w = np.bincount(flat_lr, weights=counts * to_left, minlength=k * k)
        w += np.bincount(flat_rl, weights=counts * to_right, minlength=k * k)
        return w.reshape(k, k)
    scatter = _scatter_matrix(flat_lr, flat_rl, to_left, to_right, k * k)
    return np.asarray(scatter.T @ counts.T).T.reshape(len(counts), k, k)


def _scatter_matrix(flat_lr, flat_rl, to_left, to_right, size):
    # scipy loads lazily: `evalboard rank` of plain BT never needs it (its import: ~2 s on a busy 2-core machine)
    from scipy.sparse import csr_matrix

    n = len(flat_lr)
    rows = np.concatenate([np.arange(n), np.arange(n)])
    cols = np.concatenate([flat_lr, flat_rl])
    vals = np.concatenate([to_left, to_right])
    return csr_matrix((vals, (rows, cols)), shape=(n, size))


def pair_counts(cells: Cells, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Batched win counts on the compared pairs i < j: (i, j, wins of i over j, n_ij), the last two (B, P).

    ``counts`` is (B, C): the cell counts of B bootstrap replicates. Weighted, ties half. Only pairs
    with at least one cell appear (a pair never compared adds nothing to a BT likelihood).
    """
    k = cells.n_models
    lo = np.minimum(cells.left, cells.right)
    hi = np.maximum(cells.left, cells.right)
    key = lo * k + hi
    order = np.argsort(key, kind="stable")
    counts = np.asarray(counts)
    if np.any(order != np.arange(len(order))):  # group each pair's cells together (merge_sides already has)
        counts, key, cells_order = counts[:, order], key[order], order
    else:
        cells_order = order
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    first_is_left = cells.left[cells_order] < cells.right[cells_order]
    s = cells.s[cells_order]
    weight = cells.weight[cells_order]
    to_first = weight * np.where(first_is_left, s, 1.0 - s)
    # Each pair's cells are contiguous columns: one reduceat per statistic, no scatter.
    wins = np.add.reduceat(counts * to_first, starts, axis=1)
    n = np.add.reduceat(counts * weight if np.any(weight != 1.0) else counts.astype(np.float64), starts, axis=1)
    pair_keys = key[starts]
    return pair_keys // k, pair_keys % k, wins, n


def battle_matrix(cells: Cells) -> np.ndarray:
    """N[i, j] = number of votes between i and j (either side, ties included; unweighted)."""
    k = cells.n_models
    n = np.bincount(cells.left * k + cells.right, weights=cells.count, minlength=k * k).reshape(k, k)
    return n + n.T


def observed_win_rates(cells: Cells) -> np.ndarray:
    """r[i, j] = share of i's comparisons with j that i won (ties half; weighted); NaN where none."""
    w = win_matrix(cells)
    n = w + w.T
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, w / np.where(n > 0, n, 1.0), np.nan)


def outcome_matrices(cells: Cells) -> tuple[np.ndarray, np.ndarray]:
    """(wins, ties): wins[i, j] = weighted decisive wins of i over j; ties symmetric (for tie models)."""
    k = cells.n_models
    wc = cells.weight * cells.count
    wins = np.zeros((k, k))
    ties = np.zeros((k, k))
    np.add.at(wins, (cells.left[cells.s == 1.0], cells.right[cells.s == 1.0]), wc[cells.s == 1.0])
    np.add.at(wins, (cells.right[cells.s == 0.0], cells.left[cells.s == 0.0]), wc[cells.s == 0.0])
    tie = cells.s == 0.5
    np.add.at(ties, (cells.left[tie], cells.right[tie]), wc[tie])
    return wins, ties + ties.T
