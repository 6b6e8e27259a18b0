"""Offline query embeddings: hashed character n-gram TF-IDF.

Needs no download and works for every script (Chinese has no spaces, character n-grams do not care).
Each normalised text, padded with one space at each end, yields its 2-, 3- and 4-grams of code points;
a gram is hashed (a polynomial over the code points, computed for all texts at once with numpy) into
one of ``N_FEATURES`` gram ids. Weights are sublinear tf (1 + log tf) times smooth idf
(log((1 + n) / (1 + df)) + 1). The sparse TF-IDF row is then folded into ``DIMENSIONS`` dense
columns by signed feature hashing (Weinberger et al., "Feature hashing for large scale multitask
learning", ICML 2009): every gram id adds its weight with a fixed pseudo-random sign to one column,
which keeps dot products unbiased (the error of a cosine is about 1/sqrt(DIMENSIONS), ~0.04 here)
while giving dense rows that the neighbour search multiplies fast. Rows are scaled to unit length,
so a dot product is a cosine.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

N_FEATURES = 1 << 20
DIMENSIONS = 512
NGRAM_SIZES = (2, 3, 4)
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # odd 64-bit constant (golden ratio): mixes code points well
_SEPARATOR = 0  # code point placed between texts; no gram may span it


def gram_keys(texts: list[str], n_features: int = N_FEATURES) -> np.ndarray:
    """``text number × n_features + gram id`` of every n-gram occurrence, for all texts at once (one
    int64 per occurrence: half the memory of separate row and column arrays)."""
    joined = "\x00".join(f" {t} " for t in texts) + "\x00"
    codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    is_sep = codes == _SEPARATOR
    row_of_pos = (np.cumsum(is_sep) - is_sep).astype(np.int64) * n_features  # text number of every position
    keys = []
    # the polynomial of an (n+1)-gram extends the n-gram's: one pass per extra code point, not per size
    h = np.zeros(codes.size, dtype=np.uint64)
    spans_separator = np.zeros(codes.size, dtype=bool)
    for size in range(1, max(NGRAM_SIZES) + 1):
        m = codes.size - size + 1
        if m <= 0:
            break
        with np.errstate(over="ignore"):
            h = (h[:m] * _MULTIPLIER) ^ codes[size - 1:size - 1 + m]
        spans_separator = spans_separator[:m] | is_sep[size - 1:size - 1 + m]
        if size not in NGRAM_SIZES:
            continue
        keep = np.flatnonzero(~spans_separator)
        with np.errstate(over="ignore"):
            g = h[keep] ^ (np.uint64(size) * _MULTIPLIER)  # grams of different lengths land in different ids
            g ^= g >> np.uint64(29)
            g *= _MULTIPLIER
            g ^= g >> np.uint64(32)
        keys.append(row_of_pos[keep] + (g % np.uint64(n_features)).astype(np.int64))
    return np.concatenate(keys) if keys else np.zeros(0, np.int64)


def tfidf_weights(texts: list[str], n_features: int = N_FEATURES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(text number, gram id, TF-IDF weight) of every distinct gram of every text (not normalised)."""
    key = gram_keys(texts, n_features)
    key.sort()  # one sort gives tf (run lengths) and the distinct grams per text
    fresh = np.ones(key.size, dtype=bool)
    fresh[1:] = key[1:] != key[:-1]
    starts = np.flatnonzero(fresh)
    del fresh
    tf = np.diff(np.append(starts, key.size))
    distinct = key[starts]
    del key
    row, col = distinct // n_features, (distinct % n_features).astype(np.int32)
    del distinct
    df = np.bincount(col, minlength=n_features)
    idf = (np.log((1.0 + len(texts)) / (1.0 + df)) + 1.0).astype(np.float32)
    return row, col, (1.0 + np.log(tf.astype(np.float32))) * idf[col]


@lru_cache(maxsize=4)
def _folding(dimensions: int, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """Column (0 … dimensions-1) and sign (±1) of every gram id: a fixed pseudo-random table."""
    with np.errstate(over="ignore"):
        mixed = (np.arange(n_features, dtype=np.uint64) + np.uint64(1)) * _MULTIPLIER
        mixed ^= mixed >> np.uint64(31)
        mixed *= _MULTIPLIER
    column = (mixed % np.uint64(dimensions)).astype(np.int32)
    sign = np.where((mixed >> np.uint64(63)) == 1, -1.0, 1.0).astype(np.float32)
    return column, sign


def tfidf_embed(texts: list[str], dimensions: int = DIMENSIONS, n_features: int = N_FEATURES) -> np.ndarray:
    """Unit-length dense rows (n × dimensions, float32) for normalised texts."""
    n = len(texts)
    row, gram, weight = tfidf_weights(texts, n_features)
    column_of, sign_of = _folding(dimensions, n_features)
    dense = np.empty((n, dimensions), dtype=np.float32)
    block_rows = 20_000  # bounded float64 scratch for bincount
    bounds = np.searchsorted(row, np.arange(0, n + block_rows, block_rows))
    for b, start in enumerate(range(0, n, block_rows)):
        lo, hi = bounds[b], bounds[b + 1]
        stop = min(start + block_rows, n)
        g = gram[lo:hi]
        cells = (row[lo:hi] - start) * dimensions + column_of[g]
        block = np.bincount(cells, weights=sign_of[g] * weight[lo:hi], minlength=(stop - start) * dimensions)
        dense[start:stop] = block.reshape(stop - start, dimensions)
    return unit_rows(dense)


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (all-zero rows stay zero)."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (x / norms).astype(np.float32, copy=False)
