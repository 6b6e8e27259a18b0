"""Choosing the eval set from the eligible candidates: exactly ``size`` queries (fewer only when too few
are eligible), plus ``buffer`` reserves beside it.

1. Hamilton allocation of ``size`` places over categories (:mod:`core.evalset.allocation`), then inside a
   refined category over its subcategories; inside each group the best-ranked queries are taken (rank:
   the ``rank_by`` score descending, then query id). Reason: ``allocation``.
2. Slice quotas, checked after the main sampling: a slice with target share s and minimum m needs
   max(m, ceil(s × size)) selected queries carrying its tag. A shortfall is backfilled with the
   best-ranked unselected queries of the slice (reason ``slice backfill: <slice>``), each replacing the
   lowest-ranked selected query that carries no tag of an enabled slice, so the set keeps its size.
3. Post-selection similarity check: for every selected pair with cosine > ``similarity_limit`` (most
   similar pair first), the lower-ranked query is replaced (reason ``replacement: similar to <id>``).
4. Reserves: ``buffer`` more queries, none similar to the set or to each other, taken where a set of
   ``size + buffer`` places would put its extra places (Hamilton over categories), best-ranked first
   (reason ``reserve``). They are not part of the set; they stand ready to replace a query dropped later.
5. Manual review: rejected queries leave the set and are replaced the same way (``replacement:
   rejected <id>``).

A replacement is, in this order: a reserve of the same category, the best-ranked unselected query of
the same category, any reserve, the best-ranked unselected query of any category; never one similar to
the set. A reserve that fills a place leaves the reserves, which are then topped up again.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.errors import SettingError
from core.evalset.allocation import hamilton
from core.evalset.scoring import length_strata


@dataclass(frozen=True)
class SliceQuota:
    name: str
    tag: str
    share: float
    minimum: int

    @property
    def enabled(self) -> bool:
        return self.share > 0 or self.minimum > 0

    def target(self, size: int) -> int:
        return max(self.minimum, math.ceil(self.share * size - 1e-9)) if self.enabled else 0


DEFAULT_SLICES = (SliceQuota("procedural", "is_procedural", 0.32, 4),
                  SliceQuota("structured", "needs_structured_output", 0.25, 3),
                  SliceQuota("constraint_heavy", "has_heavy_constraints", 0.18, 2),
                  SliceQuota("trap_unreleased", "is_trap_unreleased", 0.0, 0))
SIMILARITY_LIMIT = 0.85
BUFFER = 2


@dataclass(frozen=True)
class SelectionSettings:
    size: int
    slices: tuple[SliceQuota, ...] = DEFAULT_SLICES
    buffer: int = BUFFER  # reserves kept beside the set
    similarity_limit: float = SIMILARITY_LIMIT
    rank_by: str = "score"  # the column that orders queries (best first)
    # slice backfills keep the length distribution: take from, and give up places in, the length strata
    # (column length_chars) the set has too few, resp. too many of
    balance_lengths: bool = False

    def __post_init__(self):
        if not isinstance(self.size, int) or self.size < 1:
            raise SettingError("size must be a positive integer")
        if self.buffer < 0:
            raise SettingError("buffer (the number of reserves) must be a non-negative integer")
        for s in self.slices:
            if not 0 <= s.share <= 1 or s.minimum < 0:
                raise SettingError(f"slice {s.name}: share must lie in [0, 1] and minimum be ≥ 0")


@dataclass
class Selection:
    """The selected positions (rows of the candidates frame) with their reasons, plus what happened."""

    chosen: dict[int, str] = field(default_factory=dict)  # row -> reason, in selection order
    reserves: dict[int, str] = field(default_factory=dict)  # row -> "reserve", best first
    allocation: dict[str, int] = field(default_factory=dict)
    slice_report: list[dict] = field(default_factory=list)
    replacements: list[dict] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)


class Selector:
    """Selection over a candidates frame (columns query_id, category, subcategory, score and the tags)
    with unit embeddings aligned to its rows."""

    def __init__(self, candidates: pd.DataFrame, embeddings: np.ndarray, settings: SelectionSettings):
        self.frame = candidates.reset_index(drop=True)
        self.emb = np.asarray(embeddings, dtype=np.float32)
        self.settings = settings
        # rank: 0 is the best query overall (score descending, then id)
        score = self.frame[settings.rank_by].to_numpy(float)
        order = np.lexsort((self.frame["query_id"].astype(str).to_numpy(), -score))
        self.rank = np.empty(len(order), dtype=np.int64)
        self.rank[order] = np.arange(len(order))
        self.blocked: set[int] = set()  # rejected: never selected again
        self.stratum = length_strata(self.frame["length_chars"].to_numpy(float)) \
            if settings.balance_lengths and "length_chars" in self.frame else None
        self.selection = Selection()

    # -- public steps ------------------------------------------------------------------------------
    def run(self) -> Selection:
        self._allocate()
        self._backfill_slices()
        self._resolve_similar()
        self._fill_reserves()
        return self.selection

    def reject(self, query_ids: Iterable[str]) -> list[str]:
        """Take these queries out and replace each; returns the ids that were not selected (unknown)."""
        by_id = {qid: row for row, qid in enumerate(self.frame["query_id"].astype(str))}
        unknown = []
        for qid in query_ids:
            row = by_id.get(str(qid))
            if row is None or row not in self.selection.chosen:
                unknown.append(str(qid))
                continue
            self.blocked.add(row)
            del self.selection.chosen[row]
            self.selection.rejected.append(str(qid))
            self._replace(row, f"replacement: rejected {qid}")
        self._resolve_similar()
        self._fill_reserves()
        return unknown

    # -- steps -------------------------------------------------------------------------------------
    def _allocate(self) -> None:
        f = self.frame
        counts = f["category"].value_counts().to_dict()
        alloc = hamilton(counts, self.settings.size)
        self.selection.allocation = alloc
        for category, places in sorted(alloc.items(), key=lambda kv: str(kv[0])):
            rows = np.flatnonzero((f["category"] == category).to_numpy())
            subs = f["subcategory"].to_numpy()[rows] if "subcategory" in f else np.array([""] * rows.size)
            sub_alloc = hamilton(pd.Series(subs).value_counts().to_dict(), places)
            for sub, n_sub in sub_alloc.items():
                group = rows[subs == sub]
                for row in group[np.argsort(self.rank[group])][:n_sub]:
                    self.selection.chosen[int(row)] = "allocation"

    def _has(self, tag: str) -> np.ndarray:
        return self.frame[tag].fillna(False).astype(bool).to_numpy() if tag in self.frame else \
            np.zeros(len(self.frame), bool)

    def _backfill_slices(self) -> None:
        size = self.settings.size
        enabled = [s for s in self.settings.slices if s.enabled]
        protected = np.zeros(len(self.frame), bool)
        for s in enabled:
            protected |= self._has(s.tag)
        for s in enabled:
            tagged = self._has(s.tag)
            target = s.target(size)
            before = sum(1 for r in self.selection.chosen if tagged[r])
            added = 0
            pool = [int(r) for r in np.flatnonzero(tagged)[np.argsort(self.rank[tagged])]
                    if r not in self.selection.chosen and r not in self.blocked]
            while pool and before + added < target:
                row = self._next_backfill(pool)
                if len(self.selection.chosen) >= size:
                    victims = [r for r in self.selection.chosen if not protected[r]]
                    if not victims:
                        break
                    del self.selection.chosen[self._victim(victims)]
                pool.remove(row)
                self.selection.chosen[row] = f"slice backfill: {s.name}"
                added += 1
            self.selection.slice_report.append({"slice": s.name, "tag": s.tag, "target": target, "before": before,
                                                "backfilled": added, "after": before + added,
                                                "met": before + added >= target})

    def _stratum_gap(self) -> np.ndarray:
        """Per length stratum: selected queries minus the stratum's share of the candidates × set size."""
        k = int(self.stratum.max()) + 1
        share = np.bincount(self.stratum, minlength=k) / self.stratum.size
        held = np.bincount(self.stratum[list(self.selection.chosen)], minlength=k) if self.selection.chosen \
            else np.zeros(k)
        return held - share * max(len(self.selection.chosen), 1)

    def _next_backfill(self, pool: list[int]) -> int:
        """The best-ranked query of ``pool`` (ranked best first); with length balancing, of the stratum the
        set lacks most among those the pool has."""
        if self.stratum is None:
            return pool[0]
        gap = self._stratum_gap()
        return min(pool, key=lambda r: (gap[self.stratum[r]], self.rank[r]))

    def _victim(self, rows: list[int]) -> int:
        """The lowest-ranked of ``rows``; with length balancing, of the stratum the set has most in excess."""
        if self.stratum is None:
            return max(rows, key=lambda r: self.rank[r])
        gap = self._stratum_gap()
        return max(rows, key=lambda r: (gap[self.stratum[r]], self.rank[r]))

    def _resolve_similar(self) -> None:
        limit = self.settings.similarity_limit
        while True:
            rows = np.array(sorted(self.selection.chosen), dtype=np.int64)
            if rows.size < 2:
                return
            sims = self.emb[rows] @ self.emb[rows].T
            np.fill_diagonal(sims, -np.inf)
            i, j = np.unravel_index(int(np.argmax(sims)), sims.shape)
            if sims[i, j] <= limit:
                return
            a, b = int(rows[i]), int(rows[j])
            keep, drop = (a, b) if self.rank[a] < self.rank[b] else (b, a)
            del self.selection.chosen[drop]
            self.blocked.add(drop)  # it would collide again
            kept_id = self.frame["query_id"].iat[keep]
            self.selection.replacements.append({"dropped": self.frame["query_id"].iat[drop], "similar_to": kept_id,
                                                "similarity": round(float(sims[i, j]), 4)})
            self._replace(drop, f"replacement: similar to {kept_id}")

    def _similar_to_chosen(self, cand: int, others=()) -> bool:
        rows = np.fromiter([*self.selection.chosen, *others], dtype=np.int64)
        return bool(rows.size) and float(np.max(self.emb[rows] @ self.emb[cand])) > self.settings.similarity_limit

    def _free(self, cand: int) -> bool:
        return cand not in self.selection.chosen and cand not in self.blocked and cand not in self.selection.reserves

    def _replace(self, row: int, reason: str) -> None:
        """Fill the place of ``row``: a reserve of its category, the best free query of its category, any
        reserve, the best free query of any category; never one similar to the selection."""
        category = self.frame["category"].iat[row]
        same = (self.frame["category"] == category).to_numpy()
        for scope in (same, np.ones(len(self.frame), bool)):
            for cand in list(self.selection.reserves):
                if scope[cand] and cand != row and not self._similar_to_chosen(cand):
                    del self.selection.reserves[cand]
                    self.selection.chosen[cand] = reason
                    return
            for cand in np.flatnonzero(scope)[np.argsort(self.rank[scope])]:
                cand = int(cand)
                if cand == row or not self._free(cand) or self._similar_to_chosen(cand):
                    continue
                self.selection.chosen[cand] = reason
                return

    def _fill_reserves(self) -> None:
        """Top the reserves up to ``buffer``: where a set of size + buffer places would put its extra places
        (Hamilton over categories), then anywhere; best-ranked first, none similar to the set or each other."""
        reserves = self.selection.reserves
        for cand in [r for r in reserves if self._similar_to_chosen(r)]:
            del reserves[cand]  # a query chosen since then is too close to it
        want = self.settings.buffer
        if len(reserves) >= want:
            return
        categories = self.frame["category"].to_numpy()
        target = hamilton(self.frame["category"].value_counts().to_dict(), len(self.selection.chosen) + want)
        held = pd.Series(categories[[*self.selection.chosen, *reserves]]).value_counts().to_dict()
        order = np.argsort(self.rank)
        exhausted: set = set()
        while len(reserves) < want:
            short = sorted((c for c in target if c not in exhausted and target[c] > held.get(c, 0)),
                           key=lambda c: (held.get(c, 0) - target[c], -target[c], str(c)))
            category = short[0] if short else None  # None: every category has its share, take the best anywhere
            pick = next((int(r) for r in order if (category is None or categories[r] == category)
                         and self._free(int(r)) and not self._similar_to_chosen(int(r), reserves)), None)
            if pick is None:
                if category is None:
                    return
                exhausted.add(category)
                continue
            reserves[pick] = "reserve"
            held[categories[pick]] = held.get(categories[pick], 0) + 1
