"""Offline query embeddings: hashed character n-gram TF-IDF.

Needs no download and works for every script (Chinese has no spaces, character n-grams do not care).
Each normalised text, padded with one space at each end, yields its 2-, 3- and 4-grams of code points;
a gram is hashed (a polynomial over the code points, computed for all texts at once with numpy) into
one of ``N_FEATURES`` gram ids. Weights are sublinear tf (1 + log tf) times smooth idf
(log((1 + n) / (1 + df)) + 1). The sparse TF-IDF row is then folded into ``DIMENSIONS`` dense
columns by signed feature hashing (Weinberger et al., "Feature hashing for large scale multitask
learning", ICML 2009): every gram id adds its weight with a fixed pseudo-random sign to one column,
which keeps dot products unbiased (the error of a cosine is about 1/sqrt(DIMENSIONS), ~0.03 here)
while giving dense rows that the neighbour search multiplies fast. Rows are scaled to unit length,
so a dot product is a cosine.
"""

from __future__ import annotations

import numpy as np

N_FEATURES = 1 << 20
DIMENSIONS = 768
NGRAM_SIZES = (2, 3, 4)
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # odd 64-bit constant (golden ratio): mixes code points well
_SEPARATOR = 0  # code point placed between texts; no gram may span it


def gram_ids(texts: list[str], n_features: int = N_FEATURES) -> tuple[np.ndarray, np.ndarray]:
    """(text number, gram id) of every n-gram occurrence, for all texts at once."""
    joined = "\x00".join(f" {t} " for t in texts) + "\x00"
    codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    is_sep = codes == _SEPARATOR
    row_of_pos = np.cumsum(is_sep) - is_sep  # text number of every position
    rows, cols = [], []
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
        rows.append(row_of_pos[keep])
        cols.append((g % np.uint64(n_features)).astype(np.int64))
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(rows).astype(np.int64), np.concatenate(cols)


def tfidf_weights(texts: list[str], n_features: int = N_FEATURES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(text number, gram id, TF-IDF weight) of every distinct gram of every text (not normalised)."""
    rows, cols = gram_ids(texts, n_features)
    key = np.sort(rows * n_features + cols)  # one sort gives tf (run lengths) and the distinct grams per text
    starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]])) if key.size else np.zeros(0, np.int64)
    tf = np.diff(np.append(starts, key.size)).astype(np.float64)
    distinct = key[starts]
    row, col = distinct // n_features, distinct % n_features
    df = np.bincount(col, minlength=n_features)
    idf = np.log((1.0 + len(texts)) / (1.0 + df)) + 1.0
    return row, col, (1.0 + np.log(tf)) * idf[col]


def tfidf_embed(texts: list[str], dimensions: int = DIMENSIONS, n_features: int = N_FEATURES) -> np.ndarray:
    """Unit-length dense rows (n × dimensions, float32) for normalised texts."""
    n = len(texts)
    row, gram, weight = tfidf_weights(texts, n_features)
    with np.errstate(over="ignore"):
        mixed = (gram.astype(np.uint64) + np.uint64(1)) * _MULTIPLIER
        mixed ^= mixed >> np.uint64(31)
        mixed *= _MULTIPLIER
    column = (mixed % np.uint64(dimensions)).astype(np.int64)
    signed = np.where((mixed >> np.uint64(63)) == 1, -weight, weight)
    dense = np.empty((n, dimensions), dtype=np.float32)
    bounds = np.searchsorted(row, np.arange(0, n + 20_000, 20_000))  # row blocks: bounded float64 scratch
    for b, start in enumerate(range(0, n, 20_000)):
        lo, hi = bounds[b], bounds[b + 1]
        stop = min(start + 20_000, n)
        block = np.bincount((row[lo:hi] - start) * dimensions + column[lo:hi], weights=signed[lo:hi],
                            minlength=(stop - start) * dimensions)
        dense[start:stop] = block.reshape(stop - start, dimensions)
    return unit_rows(dense)


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (all-zero rows stay zero)."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (x / norms).astype(np.float32, copy=False)
