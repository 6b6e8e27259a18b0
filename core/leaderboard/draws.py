"""The draws of the task bootstrap (docs/methods.md §3): which task positions each replicate resamples.

The literal protocols (``rng.integers(0, n, size=(B, n))``, and the stratified loop over sorted strata)
and their chunked form: :func:`draw_counts` turns one draw into per-position counts, so that a
replicate's sum over many score vectors is one ``counts @ columns`` product. Both the helpers of
:mod:`core.leaderboard.task_bootstrap` and the shared-draw engine of :mod:`core.leaderboard.subset_draws`
draw through here, so a seed means the same numbers everywhere.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

COLUMN_CHUNK = 256  # columns multiplied by one draw's counts at once
CHUNK_CELLS = 1 << 20  # indices drawn per chunk: ~8 MB, small enough for bincount to stay in cache (5x faster)


def bootstrap_indices(n: int, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """docs/methods.md §3 row protocol: ``rng.integers(0, n, size=(replicates, n))``."""
    return rng.integers(0, n, size=(replicates, n))


def strata_codes(labels) -> np.ndarray:
    """Integer stratum per task in ``sorted(labels)`` order (as text if the labels do not compare);
    missing labels (None/NaN) form one more stratum, sorted last."""
    labels = np.asarray(labels, dtype=object)
    missing = np.asarray(pd.isna(labels), dtype=bool)
    present = set(labels[~missing].tolist())
    try:
        names = sorted(present)
    except TypeError:
        names = sorted(present, key=str)
    lookup = {name: code for code, name in enumerate(names)}
    return np.array([len(names) if m else lookup[v] for v, m in zip(labels.tolist(), missing)], dtype=np.int64)


def block_layout(codes: np.ndarray | None, n: int) -> tuple[np.ndarray | None, tuple[int, ...]]:
    """(order, sizes): positions grouped by stratum in sorted stratum order, original order within
    (docs/methods.md §3 ``pos_s``), and the stratum sizes. ``order`` is None when no reordering is needed."""
    if codes is None or n == 0:
        return None, (n,)
    codes = np.asarray(codes)
    sizes = np.bincount(codes)
    sizes = tuple(int(s) for s in sizes[sizes > 0])
    if len(sizes) == 1:
        return None, sizes
    return np.argsort(codes, kind="stable"), sizes


def index_chunks(sizes: tuple[int, ...], replicates: int, rng: np.random.Generator):
    """Yield (first row, (rows, n) positions in block order) for ``replicates`` replicates.

    Successive draws continue one generator, so the chunks are exactly the rows of one
    ``(replicates, n)`` draw. With strata, one ``integers`` call with a per-column upper bound gives
    the numbers of the docs/methods.md §3 loop ``for b: for s in sorted(strata): rng.integers(0, n_s, n_s)``
    (tested), block s then indexes into positions ``offset_s .. offset_s + n_s − 1``.
    """
    n = sum(sizes)
    rows = max(1, CHUNK_CELLS // max(n, 1))
    if len(sizes) > 1:
        size_arr = np.asarray(sizes)
        highs = np.repeat(size_arr, size_arr)
        offsets = np.repeat(np.cumsum(size_arr) - size_arr, size_arr)
    for lo in range(0, replicates, rows):
        k = min(rows, replicates - lo)
        if len(sizes) == 1:
            yield lo, rng.integers(0, n, size=(k, n))
        else:
            yield lo, rng.integers(0, np.broadcast_to(highs, (k, n))) + offsets


def stratified_indices(strata, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """docs/methods.md §3 stratified protocol: (replicates, n) row positions, strata in sorted order, each
    block ``pos_s[rng.integers(0, n_s, size=n_s)]`` (pos_s in original order), concatenated."""
    codes = strata_codes(strata)
    order, sizes = block_layout(codes, len(codes))
    if len(codes) == 0:
        return np.empty((replicates, 0), dtype=np.int64)
    drawn = np.concatenate([idx for _, idx in index_chunks(sizes, replicates, rng)])
    return drawn if order is None else order[drawn]


def draw_counts(sizes: tuple[int, ...], replicates: int, rng: np.random.Generator,
                out: np.ndarray | None = None) -> np.ndarray:
    """(replicates, n) float counts: how often each block-order position is drawn per replicate.

    ``out`` is an optional buffer of at least ``replicates * n`` floats, reused to spare the page
    faults of a fresh 50–100 MB array per task-set shape.
    """
    n = sum(sizes)
    counts = np.empty((replicates, n)) if out is None else out.ravel()[:replicates * n].reshape(replicates, n)
    if n == 0:
        return counts
    for lo, idx in index_chunks(sizes, replicates, rng):
        k = len(idx)
        idx += (n * np.arange(k))[:, None]  # row b counts into bins b·n … b·n + n − 1
        counts[lo:lo + k] = np.bincount(idx.ravel(), minlength=k * n).reshape(k, n)
    return counts
