"""Replicate means of many task subsets from few draws: the leaderboard's bootstrap engine (docs/methods.md §3, §8).

A leaderboard asks for the docs/methods.md §3 row bootstrap of many score vectors, each on its own task set: a
model's scored tasks, the tasks two models share, the tasks every model scored. The literal protocol
draws ``default_rng(seed).integers(0, m, (B, m))`` for a task set of size m, so a table with many
distinct set sizes pays one (B, m) draw per size: MMLU-Pro (12,032 tasks, 29 models, answers missing
here and there) has 284 sizes, 284 × 12 million random indices, over a minute.

Two kinds of draw serve every request here:

* **Direct** — the literal protocol on the subset's own shape (stratum sizes), one fresh
  ``default_rng(seed)`` per shape, shared by every subset of that shape. Used for subsets smaller
  than half of the task set (their own draw is cheap) and for stratified resampling.
* **Derived** — the full task set gets the literal draw I (B rows of n i.i.d. uniform tasks) of a
  fresh ``default_rng(seed)``. A subset S of at least half the tasks keeps, in each row of I, the
  first m = |S| draws that land in S: the draws of a row are i.i.d. uniform, so those landing in S
  are i.i.d. uniform on S, in order. A row with fewer than m such draws is completed from a separate
  generator keyed by (seed, draw, m), uniform on S. Each replicate is therefore m i.i.d. uniform
  draws from S, the §3 protocol in distribution though not in the numbers. The sums need no
  (B, m) work per subset: the full set's ``values @ counts``, less the tasks outside S, less each
  row's surplus draws (found at the end of the row), plus the added ones.

With no missing cell every request is on the full set and the numbers are exactly the literal
protocol's. :func:`derived_reference` is the slow, obvious form of the derived draw that the tests
hold the fast one to.
"""

from __future__ import annotations

import numpy as np

from core.leaderboard.draws import COLUMN_CHUNK, block_layout, draw_counts, index_chunks

DERIVE_SHARE = 0.5  # subsets at least this share of the task set are derived from its draw


def extra_generator(seed: int, draw: int, size: int) -> np.random.Generator:
    """The generator of the draws added to a derived subset of ``size`` tasks (``draw`` 0 or 1)."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(draw, size)))


class SubsetDraws:
    """Replicate means of many (task subset, value row) columns (see the module docstring).

    ``values`` is (R, T); a request ``(subset, row, draw)`` asks for the (weighted) mean of
    ``values[row]`` over the tasks of ``subset``, resampled by draw 0 (the generator's first
    (B, n) draw) or draw 1 (its continuation: the second model of an unpaired difference). All
    requests on one subset share its counts; :meth:`group` tells which batch of :meth:`run` answers
    a subset.
    """

    def __init__(self, values: np.ndarray, weights: np.ndarray | None, strata: np.ndarray | None,
                 replicates: int, seed: int):
        self.values, self.w, self.strata, self.replicates, self.seed = values, weights, strata, replicates, seed
        self.n_tasks = values.shape[1]
        self.ids: dict[bytes, int] = {}  # packed task mask -> subset id
        self.masks: list[bytes] = []  # kept packed: positions of 5,000 pair subsets would take 400 MB
        self.shape: list[tuple[int, ...]] = []
        self.parts: list[tuple[int, ...] | None] = []  # the rows whose scored tasks intersect to the subset
        self.wanted: dict[tuple, dict[tuple[int, int, int], None]] = {}
        self._buffer: np.ndarray | None = None

    def subset(self, mask: np.ndarray, rows: tuple[int, ...] | None = None) -> int:
        """Id of the task subset ``mask`` (T,) bool, registered on first use. ``rows`` (one or two value
        rows) says that ``mask`` is where all of them are scored (not NaN): their requests then take
        the batched corrections of :meth:`_derived` instead of gathering the counts outside the subset."""
        key = np.packbits(mask).tobytes()
        sid = self.ids.get(key)
        if sid is None:
            n = int(np.count_nonzero(mask))
            sizes = np.bincount(self.strata[mask]) if self.strata is not None and n else np.array([n])
            sid = self.ids[key] = len(self.masks)
            self.masks.append(key)
            self.shape.append(tuple(int(s) for s in sizes[sizes > 0]) or (0,))
            self.parts.append(tuple(rows) if rows is not None and 1 <= len(rows) <= 2 else None)
        return sid

    def mask(self, sid: int) -> np.ndarray:
        return np.unpackbits(np.frombuffer(self.masks[sid], dtype=np.uint8), count=self.n_tasks).astype(bool)

    def derived(self, sid: int) -> bool:
        """True when subset ``sid`` is served from the full task set's draw (module docstring)."""
        m = sum(self.shape[sid])
        return self.strata is None and m > 0 and m >= DERIVE_SHARE * self.n_tasks

    def group(self, sid: int) -> tuple:
        """Key of the :meth:`run` batch that answers subset ``sid``."""
        return ("derived",) if self.derived(sid) else self.shape[sid]

    def positions(self, sid: int) -> np.ndarray:
        """Task positions of subset ``sid`` in block order."""
        tasks = np.flatnonzero(self.mask(sid))
        order, _ = block_layout(None if self.strata is None else self.strata[tasks], len(tasks))
        return tasks if order is None else tasks[order]

    def need(self, sid: int, row: int, draw: int = 0) -> tuple[int, int, int]:
        self.wanted.setdefault(self.group(sid), {})[(sid, row, draw)] = None
        return sid, row, draw

    def run(self):
        """Yield (group, {request: (B,) replicate means}) batch by batch; direct shapes one at a time
        (only one shape's counts live), then every derived subset at once."""
        largest = max((sum(key) for key in self.wanted if key != ("derived",)), default=0)
        if ("derived",) in self.wanted:
            largest = max(largest, self.n_tasks)
        self._buffer = np.empty(self.replicates * largest)
        for key, requests in self.wanted.items():
            if key != ("derived",):
                yield key, self._direct(key, requests)
        if ("derived",) in self.wanted:
            yield ("derived",), self._derived(self.wanted[("derived",)])
        self._buffer = None

    def _direct(self, shape: tuple[int, ...], requests) -> dict:
        rng = np.random.default_rng(self.seed)
        positions = {sid: self.positions(sid) for sid in {r[0] for r in requests}}
        out = {}
        for draw in (0, 1):
            wanted = [r for r in requests if r[2] == draw]
            if wanted:
                counts = draw_counts(shape, self.replicates, rng, self._buffer)
                for lo in range(0, len(wanted), COLUMN_CHUNK):
                    out.update(self._means(counts, positions, wanted[lo:lo + COLUMN_CHUNK], sum(shape)))
        return out

    def _means(self, counts: np.ndarray, positions: dict, requests, n: int) -> dict:
        cols = np.column_stack([self.values[row, positions[sid]] for sid, row, _ in requests])
        if self.w is None:
            sums = counts @ cols / n
            return {r: sums[:, j] for j, r in enumerate(requests)}
        sids = sorted({sid for sid, _, _ in requests})
        where = {s: j for j, s in enumerate(sids)}
        dens = counts @ np.column_stack([self.w[positions[s]] for s in sids])
        nums = counts @ (cols * np.column_stack([self.w[positions[sid]] for sid, _, _ in requests]))
        with np.errstate(invalid="ignore", divide="ignore"):
            return {r: np.where(dens[:, where[r[0]]] > 0, nums[:, j] / dens[:, where[r[0]]], np.nan)
                    for j, r in enumerate(requests)}

    def _full_draw(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(indices (B, n) int32, counts (n, B)) of one literal draw on the full task set; the counts are
        task-major so that the tasks outside a subset are contiguous rows to gather."""
        n, b = self.n_tasks, self.replicates
        index = np.empty((b, n), dtype=np.int32)
        counts = self._buffer.ravel()[:b * n].reshape(n, b)
        for lo, idx in index_chunks((n,), b, rng):
            k = len(idx)
            index[lo:lo + k] = idx
            idx += (n * np.arange(k))[:, None]
            counts[:, lo:lo + k] = np.bincount(idx.ravel(), minlength=k * n).reshape(k, n).T
        return index, counts

    def _derived(self, requests) -> dict:
        """Means of the derived requests: per draw, one full draw, then each subset's corrections."""
        rows = sorted({row for _, row, _ in requests})
        at = {row: j for j, row in enumerate(rows)}
        filled = np.nan_to_num(self.values[rows], nan=0.0)  # a NaN cell lies outside every subset of its row
        weighted = self.w is not None
        # Rows of `columns`: the values (times the weights), the weights, then per base row r (one whose
        # scored tasks bound a subset) the indicator of r's missing tasks (times the weights).
        bases = sorted({r for sid, _, _ in requests if self.parts[sid] for r in self.parts[sid]})
        missing = {r: np.isnan(self.values[r]) for r in bases}
        flags = [missing[r].astype(np.float64) for r in bases]
        value_rows = filled * self.w if weighted else filled
        weight_row = self.w if weighted else np.ones(self.n_tasks)
        weighted_flags = [f * weight_row for f in flags] if weighted else []  # unweighted: the flags themselves
        columns = np.vstack([value_rows, weight_row[None, :], *weighted_flags, *flags])
        weight_at, flag_at = len(rows), len(rows) + 1 + len(weighted_flags)
        flag_w_at = len(rows) + 1 if weighted else flag_at
        base_at = {r: j for j, r in enumerate(bases)}
        rng = np.random.default_rng(self.seed)
        out = {}
        for draw in (0, 1):
            wanted = [r for r in requests if r[2] == draw]
            if not wanted and not any(r[2] > draw for r in requests):
                break
            index, counts = self._full_draw(rng)  # draw 1 continues the generator of draw 0
            if not wanted:
                continue
            totals = columns[:weight_at + 1] @ counts  # (rows + 1, B)
            # Sums over each base row's missing tasks, of every column: (columns, B) per base.
            outside = {r: columns[:, missing[r]] @ counts[missing[r]] for r in bases}
            by_subset: dict[int, list[int]] = {}
            for sid, row, _ in wanted:
                by_subset.setdefault(sid, []).append(row)
            for sid, subset_rows in by_subset.items():
                parts = self.parts[sid]
                fast = parts is not None and (len(parts) == 1 or all(row in parts for row in subset_rows))
                cols = [at[row] for row in subset_rows] + [weight_at]
                if fast:
                    sums, landed = self._sums_from_parts(parts, subset_rows, at, totals, outside, base_at,
                                                         weight_at, flag_w_at, flag_at)
                else:
                    sums, landed = self._sums_by_gather(sid, counts, totals[cols], columns[cols])
                sums = self._trim(sid, draw, index, landed, sums, columns[cols])
                for j, row in enumerate(subset_rows):
                    out[(sid, row, draw)] = self._finish(sums[j], sums[-1], sum(self.shape[sid]))
        return out

    def _sums_from_parts(self, parts, subset_rows, at, totals, outside, base_at, weight_at, flag_w_at, flag_at):
        """(sums (rows + 1, B), landed (B,)) over the draws that landed in S, the tasks every row of
        ``parts`` scored, from the sums over each part's missing tasks. A row's filled values are 0 where
        it is missing, so a pair's row only loses the other row's missing tasks, and the weights (and
        the count of landed draws) lose both, less their overlap."""
        n = self.n_tasks
        if len(parts) == 1:
            (a,) = parts
            sums = [totals[at[q]] - outside[a][at[q]] for q in subset_rows]
            sums.append(totals[weight_at] - outside[a][weight_at])
            return np.vstack(sums), n - np.rint(outside[a][flag_at + base_at[a]]).astype(np.int64)
        a, b = parts
        other = {a: b, b: a}
        sums = [totals[at[q]] - outside[other[q]][at[q]] for q in subset_rows]
        sums.append(totals[weight_at] - outside[a][weight_at] - outside[b][weight_at]
                    + outside[b][flag_w_at + base_at[a]])
        lost = outside[a][flag_at + base_at[a]] + outside[b][flag_at + base_at[b]] - outside[b][flag_at + base_at[a]]
        return np.vstack(sums), n - np.rint(lost).astype(np.int64)

    def _sums_by_gather(self, sid, counts, totals, columns):
        """The same sums for any subset, gathering the counts of the tasks outside it."""
        outside = np.flatnonzero(~self.mask(sid))
        missed = counts[outside]
        return totals - columns[:, outside] @ missed, self.n_tasks - np.rint(missed.sum(axis=0)).astype(np.int64)

    def _trim(self, sid, draw, index, landed, sums, columns):
        """Make every replicate exactly m draws: drop each row's last surplus draws that landed in S,
        add the missing ones from :func:`extra_generator`."""
        inside = self.mask(sid)
        m = sum(self.shape[sid])
        n = self.n_tasks
        surplus = np.maximum(landed - m, 0)
        over = np.flatnonzero(surplus)
        if len(over):
            need = surplus[over]
            expected = int(need.max()) * n / m  # columns from the end that hold that many hits, on average
            width = min(n, int(expected + 4 * np.sqrt(expected)) + 16)
            while True:
                hits = inside[index[over, n - width:]]
                seen = np.cumsum(hits, axis=1, dtype=np.int32)  # hits up to and including a column
                total = seen[:, -1]
                if width == n or (total >= need).all():
                    break
                width = min(n, 2 * width)
            # Row r drops its last need[r] hits, exactly need[r] entries: consecutive in nonzero's order.
            row, col = np.nonzero(hits & (seen > (total - need)[:, None]))
            dropped = index[over[row], n - width + col]
            starts = np.concatenate([[0], np.cumsum(need)[:-1]])
            sums[:, over] -= np.add.reduceat(columns[:, dropped], starts, axis=1)
        short = np.maximum(m - landed, 0)
        under = np.flatnonzero(short)
        if len(under):
            need = short[under]
            extra = extra_generator(self.seed, draw, m).integers(0, m, size=(self.replicates, int(need.max())))
            take = np.arange(extra.shape[1])[None, :] < need[:, None]
            added = np.flatnonzero(inside)[extra[under][take]]
            starts = np.concatenate([[0], np.cumsum(need)[:-1]])
            sums[:, under] += np.add.reduceat(columns[:, added], starts, axis=1)
        return sums

    def _finish(self, total: np.ndarray, weight: np.ndarray, m: int) -> np.ndarray:
        if self.w is None:
            return total / m
        # The drawn weight is a difference of sums: a replicate that drew only weightless tasks can be
        # off zero by rounding, and must still be NaN (undefined), not a ratio of two roundings.
        some = weight > 1e-12 * self.w.sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(some, total / np.where(some, weight, 1.0), np.nan)


def derived_reference(values: np.ndarray, mask: np.ndarray, replicates: int, seed: int, draw: int = 0,
                      weights: np.ndarray | None = None) -> np.ndarray:
    """The derived draw written out row by row (slow, for tests): (B,) replicate means of ``values``
    (n,) over subset ``mask`` from the full set's draw ``draw`` of ``default_rng(seed)``."""
    n = len(values)
    rng = np.random.default_rng(seed)
    index = [rng.integers(0, n, size=(replicates, n)) for _ in range(draw + 1)][-1]
    tasks = np.flatnonzero(mask)
    m = len(tasks)
    landed_max = max(m - int(mask[row].sum()) for row in index)
    extra = extra_generator(seed, draw, m).integers(0, m, size=(replicates, landed_max)) if landed_max > 0 else None
    w = np.ones(n) if weights is None else weights
    out = np.empty(replicates)
    for b, row in enumerate(index):
        chosen = [i for i in row if mask[i]][:m]
        if len(chosen) < m:
            chosen += list(tasks[extra[b, :m - len(chosen)]])
        chosen = np.array(chosen)
        den = w[chosen].sum()
        out[b] = (w[chosen] * values[chosen]).sum() / den if den > 0 else np.nan
    return out
