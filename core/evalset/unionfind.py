"""Union–find (disjoint sets) with path compression and union by size: connected components of the
duplicate graph in near-linear time."""

from __future__ import annotations

import numpy as np


class UnionFind:
    def __init__(self, n: int):
        self.parent = list(range(n))
        self.size = [1] * n

    def find(self, a: int) -> int:
        root = a
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[a] != root:  # path compression: point every visited node at the root
            self.parent[a], a = root, self.parent[a]
        return root

    def union(self, a: int, b: int) -> int:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return ra
        if self.size[ra] < self.size[rb]:  # union by size keeps trees shallow
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        return ra


def components(n: int, edges_a, edges_b) -> np.ndarray:
    """Component label of every node (the smallest node index in its component)."""
    uf = UnionFind(n)
    for a, b in zip(np.asarray(edges_a).tolist(), np.asarray(edges_b).tolist()):
        uf.union(a, b)
    roots = np.fromiter((uf.find(i) for i in range(n)), dtype=np.int64, count=n)
    smallest = np.full(n, n, dtype=np.int64)
    np.minimum.at(smallest, roots, np.arange(n))
    return smallest[roots]
