"""Semantic deduplication: neighbours, similarity tiers, components, one canonical query each.

Pairs come from the K = 10 nearest neighbours of every query (:mod:`core.evalset.knn`), so the work grows
with n·K, not n². Tiers: similarity > ``DUPLICATE_ABOVE`` is a duplicate; from ``REVIEW_FROM`` up to it
a model reviews the pair (batches of 60). Without a model the conservative rule keeps both queries of a
borderline pair unless they have exactly the same set of words (a reordering); a wrong merge loses a
query for good, a missed one is still caught by the post-selection similarity check. Duplicate pairs
are joined by union–find; each component keeps one canonical query (the model's choice, or the most
specific and complete: most distinct words, then longest, :func:`core.evalset.scoring.canonical_rank_key`),
the others become
``duplicate`` with the canonical id.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.evalset.knn import K_NEIGHBOURS, nearest_neighbours
from core.evalset.scoring import canonical_rank_key
from core.evalset.unionfind import components

DUPLICATE_ABOVE = 0.88
REVIEW_FROM = 0.75
CANONICAL_CHOICES = 20


@dataclass(frozen=True)
class DedupResult:
    canonical_of: np.ndarray  # per row: the row of its component's canonical query (itself if canonical)
    n_auto: int  # pairs above DUPLICATE_ABOVE
    n_borderline: int  # pairs in the review band
    n_confirmed: int  # borderline pairs judged duplicates
    n_unreviewed: int  # borderline pairs whose review failed (kept apart)
    method: str  # neighbour search method


def semantic_dedup(texts: list[str], embeddings: np.ndarray, *, seed: int = 0,
                   review: Callable[[list[tuple[str, str]]], list[bool | None]] | None = None,
                   choose: Callable[[list[list[str]]], list[int | None]] | None = None,
                   duplicate_above: float = DUPLICATE_ABOVE, review_from: float = REVIEW_FROM) -> DedupResult:
    n = len(texts)
    neighbours = nearest_neighbours(embeddings, K_NEIGHBOURS, review_from, seed=seed)
    a, b, s = neighbours.pairs()
    auto = s > duplicate_above
    border = ~auto
    ba, bb = a[border], b[border]
    if review is not None and ba.size:
        verdicts = review([(texts[i], texts[j]) for i, j in zip(ba.tolist(), bb.tolist())])
        confirmed = np.array([v is True for v in verdicts], dtype=bool)
        unreviewed = int(sum(v is None for v in verdicts))
    else:
        confirmed = np.array([_same_words(texts[i], texts[j]) for i, j in zip(ba.tolist(), bb.tolist())], dtype=bool)
        unreviewed = 0
    ea = np.concatenate([a[auto], ba[confirmed]])
    eb = np.concatenate([b[auto], bb[confirmed]])
    label = components(n, ea, eb)
    canonical_of = np.arange(n)
    # members best first by the heuristic; a model chooses among the first CANONICAL_CHOICES only (a chain
    # of near-duplicates can make a component of thousands, too long for one prompt)
    groups = [np.array(sorted(g.tolist(), key=lambda i: (*canonical_rank_key(texts[i]), i)), dtype=np.int64)
              for g in _groups(label)]
    shortlists = [g[:CANONICAL_CHOICES] for g in groups]
    choices: list[int | None] = choose([[texts[i] for i in g] for g in shortlists]) if (choose and groups) else \
        [None] * len(groups)
    for g, short, choice in zip(groups, shortlists, choices):
        canonical_of[g] = short[choice] if choice is not None and 0 <= choice < short.size else g[0]
    return DedupResult(canonical_of, int(auto.sum()), int(border.sum()), int(confirmed.sum()), unreviewed,
                       neighbours.method)


def _groups(label: np.ndarray) -> list[np.ndarray]:
    """Rows of every component with more than one member (rows ascending within a group)."""
    rows = np.flatnonzero(np.bincount(label, minlength=label.size)[label] > 1)
    rows = rows[np.argsort(label[rows], kind="stable")]
    cuts = np.flatnonzero(np.diff(label[rows])) + 1
    return [g for g in np.split(rows, cuts) if g.size > 1]


def _same_words(x: str, y: str) -> bool:
    return set(x.split()) == set(y.split())
