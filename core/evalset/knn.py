"""K nearest neighbours above a similarity floor, without comparing all pairs.

Only neighbours at or above ``floor`` (the lowest similarity any later stage acts on) matter, so the
search returns, for every row, its at most ``k`` most similar other rows with similarity ≥ floor.
Rows are unit vectors (a dot product is a cosine).

Up to ``EXACT_UP_TO`` rows the search is exact (blocked products, memory O(block × n)). Above, it is an
inverted-file index as in FAISS's IVF: spherical k-means on a sample gives ~sqrt(n) centroids, every row
is filed under its nearest centroid and searched in the lists of its ``n_probe`` nearest centroids. The
work is about n × n_probe × (average list size) products instead of n², and near-duplicates (cosine
≥ 0.75) sit in the same or a neighbouring list; a pair found from either side counts, which raises
recall further. ``tests/test_evalset_knn.py`` measures recall against the exact search.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

K_NEIGHBOURS = 10
EXACT_UP_TO = 6000
N_PROBE = 3
KMEANS_ITERATIONS = 8
KMEANS_SAMPLE = 20_000
ROW_BLOCK = 2048


@dataclass(frozen=True)
class Neighbours:
    """Directed edges row -> neighbour with their cosine similarity (each row's top k above the floor)."""

    rows: np.ndarray
    cols: np.ndarray
    sims: np.ndarray
    k: int
    floor: float
    method: str  # "exact" or "ivf(lists, probes)"

    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Undirected pairs (i < j), each once, with their similarity."""
        lo, hi = np.minimum(self.rows, self.cols), np.maximum(self.rows, self.cols)
        _, first = np.unique(lo.astype(np.int64) * (int(hi.max(initial=0)) + 1) + hi, return_index=True)
        return lo[first], hi[first], self.sims[first]


def nearest_neighbours(x: np.ndarray, k: int = K_NEIGHBOURS, floor: float = 0.75, *, seed: int = 0,
                       exact_up_to: int = EXACT_UP_TO, n_probe: int = N_PROBE) -> Neighbours:
    """Each row's ≤ k most similar other rows with cosine ≥ floor."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    n = x.shape[0]
    if n <= exact_up_to:
        rows, cols, sims = _exact(x, floor)
        method = "exact"
    else:
        n_lists = max(2, int(np.sqrt(n)))
        rows, cols, sims = _ivf(x, floor, n_lists, min(n_probe, n_lists), np.random.default_rng(seed))
        method = f"ivf({n_lists} lists, {min(n_probe, n_lists)} probes)"
    # a pair found from one side is a neighbour of both
    rows, cols, sims = np.concatenate([rows, cols]), np.concatenate([cols, rows]), np.concatenate([sims, sims])
    rows, cols, sims = _top_k(rows, cols, sims, k)
    return Neighbours(rows, cols, sims, k, floor, method)


def _top_k(rows, cols, sims, k):
    """Each row's k best, once each (similarity descending, then lower column first: deterministic)."""
    order = np.lexsort((cols, -sims, rows))
    rows, cols, sims = rows[order], cols[order], sims[order]
    fresh = np.ones(rows.size, dtype=bool)
    fresh[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    rows, cols, sims = rows[fresh], cols[fresh], sims[fresh]
    starts = np.searchsorted(rows, rows, side="left")
    keep = (np.arange(rows.size) - starts) < k
    return rows[keep], cols[keep], sims[keep]


def _above(sims: np.ndarray, query_ids: np.ndarray, cand_ids: np.ndarray, floor: float):
    """(query, candidate, similarity) of the entries ≥ floor, excluding a row with itself."""
    qi, ci = np.nonzero(sims >= floor)
    r, c = query_ids[qi], cand_ids[ci]
    keep = r != c
    return r[keep], c[keep], sims[qi[keep], ci[keep]]


def _exact(x: np.ndarray, floor: float):
    ids = np.arange(x.shape[0])
    parts = [_above(x[s:s + ROW_BLOCK] @ x.T, ids[s:s + ROW_BLOCK], ids, floor)
             for s in range(0, x.shape[0], ROW_BLOCK)]
    return _concat(parts)


def _kmeans(x: np.ndarray, n_lists: int, rng: np.random.Generator) -> np.ndarray:
    """Spherical k-means (cosine) on a sample: unit centroids."""
    sample = x[rng.choice(x.shape[0], size=min(KMEANS_SAMPLE, x.shape[0]), replace=False)]
    centroids = sample[rng.choice(sample.shape[0], size=n_lists, replace=False)].copy()
    for _ in range(KMEANS_ITERATIONS):
        nearest = np.argmax(sample @ centroids.T, axis=1)
        # cluster sums as (one-hot membership) @ sample: a sparse product, far faster than np.add.at
        membership = sp.csr_matrix((np.ones(nearest.size, np.float32), (nearest, np.arange(nearest.size))),
                                   shape=(n_lists, sample.shape[0]))
        sums = np.asarray(membership @ sample, dtype=np.float32)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        empty = norms[:, 0] == 0
        sums[empty] = sample[rng.choice(sample.shape[0], size=int(empty.sum()))]  # restart empty lists
        centroids = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return centroids.astype(np.float32)


def _ivf(x: np.ndarray, floor: float, n_lists: int, n_probe: int, rng: np.random.Generator):
    centroids = _kmeans(x, n_lists, rng)
    probes = np.empty((x.shape[0], n_probe), dtype=np.int64)
    for s in range(0, x.shape[0], ROW_BLOCK * 4):
        scores = x[s:s + ROW_BLOCK * 4] @ centroids.T
        top = np.argpartition(-scores, n_probe - 1, axis=1)[:, :n_probe]
        order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1)
        probes[s:s + ROW_BLOCK * 4] = np.take_along_axis(top, order, axis=1)
    home = probes[:, 0]
    members = _group(home, n_lists)
    searchers = _group(probes.ravel(), n_lists, ids=np.repeat(np.arange(x.shape[0]), n_probe))
    parts = []
    for lst in range(n_lists):
        cand, queries = members[lst], searchers[lst]
        if cand.size == 0 or queries.size == 0:
            continue
        block_x = x[cand].T
        for s in range(0, queries.size, ROW_BLOCK):
            q = queries[s:s + ROW_BLOCK]
            parts.append(_above(x[q] @ block_x, q, cand, floor))
    return _concat(parts)


def _group(labels: np.ndarray, n_groups: int, ids: np.ndarray | None = None) -> list[np.ndarray]:
    ids = np.arange(labels.size) if ids is None else ids
    order = np.argsort(labels, kind="stable")
    bounds = np.searchsorted(labels[order], np.arange(n_groups + 1))
    return [ids[order[bounds[g]:bounds[g + 1]]] for g in range(n_groups)]


def _concat(parts):
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
    return tuple(np.concatenate([p[i] for p in parts]).astype(t) for i, t in
                 enumerate((np.int64, np.int64, np.float32)))
