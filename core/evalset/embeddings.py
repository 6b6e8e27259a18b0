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
import scipy.sparse as sp

N_FEATURES = 1 << 20
DIMENSIONS = 768
NGRAM_SIZES = (2, 3, 4)
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # odd 64-bit constant (golden ratio): mixes code points well
_SEPARATOR = 0  # code point placed between texts; no gram may span it


def hashed_counts(texts: list[str], n_features: int = N_FEATURES) -> sp.csr_matrix:
    """Raw n-gram counts, one row per text (rows of empty texts hold only their padding grams)."""
    joined = "\x00".join(f" {t} " for t in texts) + "\x00"
    codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    is_sep = codes == _SEPARATOR
    row_of_pos = np.cumsum(is_sep) - is_sep  # text number of every position
    rows, cols = [], []
    for size in NGRAM_SIZES:
        m = codes.size - size + 1
        if m <= 0:
            continue
        h = np.zeros(m, dtype=np.uint64)
        spans_separator = np.zeros(m, dtype=bool)
        with np.errstate(over="ignore"):
            for offset in range(size):
                h = (h * _MULTIPLIER) ^ codes[offset:offset + m]
                spans_separator |= is_sep[offset:offset + m]
            h ^= np.uint64(size) * _MULTIPLIER  # grams of different lengths land in different columns
            h ^= h >> np.uint64(29)
            h *= _MULTIPLIER
            h ^= h >> np.uint64(32)
        keep = ~spans_separator
        rows.append(row_of_pos[:m][keep])
        cols.append((h[keep] % np.uint64(n_features)).astype(np.int64))
    r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    c = np.concatenate(cols) if cols else np.zeros(0, np.int64)
    counts = sp.csr_matrix((np.ones(r.size, dtype=np.float32), (r, c)), shape=(len(texts), n_features))
    counts.sum_duplicates()
    return counts


def tfidf_sparse(texts: list[str], n_features: int = N_FEATURES) -> sp.csr_matrix:
    """TF-IDF weights (not normalised), one sparse row per normalised text."""
    x = hashed_counts(texts, n_features)
    n = x.shape[0]
    df = np.bincount(x.indices, minlength=n_features)
    idf = (np.log((1.0 + n) / (1.0 + df)) + 1.0).astype(np.float32)
    x.data = (1.0 + np.log(x.data)) * idf[x.indices]
    return x


def tfidf_embed(texts: list[str], dimensions: int = DIMENSIONS, n_features: int = N_FEATURES) -> np.ndarray:
    """Unit-length dense rows (n × dimensions, float32) for normalised texts."""
    x = tfidf_sparse(texts, n_features)
    n = x.shape[0]
    gram = x.indices.astype(np.uint64)
    with np.errstate(over="ignore"):
        mixed = (gram + np.uint64(1)) * _MULTIPLIER
        mixed ^= mixed >> np.uint64(31)
        mixed *= _MULTIPLIER
    column = (mixed % np.uint64(dimensions)).astype(np.int64)
    sign = np.where((mixed >> np.uint64(63)) == 1, -1.0, 1.0)
    row = np.repeat(np.arange(n, dtype=np.int64), np.diff(x.indptr))
    dense = np.bincount(row * dimensions + column, weights=sign * x.data, minlength=n * dimensions)
    dense = dense.reshape(n, dimensions).astype(np.float32)
    return unit_rows(dense)


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (all-zero rows stay zero)."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (x / norms).astype(np.float32, copy=False)
