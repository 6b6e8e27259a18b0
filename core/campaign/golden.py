"""Golden supply: how many golden items a campaign needs, and where each annotator meets them.

Each annotator's session plans ``planned = round(golden_rate × target)`` golden items (at least one when
the rate is above 0), and meets ``per_annotator = min(pool, planned)`` distinct ones: nobody sees a
golden item twice, so a pool smaller than the plan is shared out over the whole session rather than used
up at the start. The count is exact (a plan, not a random draw), so the pool a campaign needs is exactly
``planned`` items; no quantile is involved.

A pool short of ``planned`` is allowed with a warning (each annotator is checked on fewer items, at a
lower rate than asked). A pool that cannot give every annotator :data:`MIN_GOLDEN` items (or the whole
plan, when the plan is smaller) is refused: golden accuracy is "not evaluable" below three answered
golden items, so a smaller pool checks nobody while looking as if it did.

Where: the session (``target`` items, or fewer when the campaign has fewer real items than that) is cut
into ``per_annotator`` consecutive blocks of near-equal length, and each block holds one golden item at
a random position inside it, drawn from a generator seeded by (campaign seed, annotator). The last golden
item therefore falls in the last block, and since a block's golden item may sit anywhere in it, the gap
after one golden item says little about when the next comes (it varies from 1 to almost two blocks).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

MIN_GOLDEN = 3  # golden accuracy is not evaluable below this many answered golden items (annotator quality)


def planned_golden(golden_rate: float, target: int) -> int:
    """Golden items one annotator's session plans: rate × target rounded half up, at least 1 for a rate > 0."""
    if golden_rate <= 0:
        return 0
    return max(1, math.floor(golden_rate * target + 0.5 + 1e-9))


@dataclass(frozen=True)
class GoldenSupply:
    """What a golden pool gives each annotator under a rate and a target."""

    pool: int  # golden items in the campaign
    golden_rate: float
    target: int
    planned: int  # golden items each session asks for
    per_annotator: int  # distinct golden items each annotator meets: min(pool, planned)

    @property
    def minimum(self) -> int:
        """The fewest golden items per annotator a campaign may be created with."""
        return min(MIN_GOLDEN, self.planned)

    @property
    def refused(self) -> bool:
        return self.pool < self.minimum

    @property
    def short(self) -> bool:
        return self.pool < self.planned

    def summary(self) -> str:
        if self.planned == 0:
            return "no golden items (golden rate 0)"
        return (f"golden supply: each annotator's {self.target:,} items plan {_items(self.planned, 'golden item')} "
                f"(rate {self.golden_rate:g}); the pool has {self.pool:,}, so each annotator meets "
                f"{self.per_annotator:,}, spread over the whole session")

    def warnings(self) -> list[str]:
        out = []
        if self.short and not self.refused:
            out.append(f"the golden pool ({self.pool:,} items) is short of the {self.planned:,} each annotator's "
                       f"session plans (rate {self.golden_rate:g} × target {self.target:,}): each annotator meets "
                       f"only {self.per_annotator:,}, one every ~{self.target // max(self.per_annotator, 1):,} items; "
                       f"add {self.planned - self.pool:,} golden items to check at the rate asked")
        if 0 < self.per_annotator < MIN_GOLDEN and not self.refused:
            out.append(f"each annotator meets only {self.per_annotator} golden item"
                       f"{'s' if self.per_annotator != 1 else ''}: golden accuracy needs {MIN_GOLDEN} to judge an "
                       "annotator; raise the golden rate or the target")
        return out

    def refusal(self) -> str:
        return (f"the golden pool has {self.pool:,} item{'s' if self.pool != 1 else ''} but each annotator needs at "
                f"least {self.minimum} (golden accuracy is not evaluable below {MIN_GOLDEN} golden items, so a "
                f"smaller pool checks nobody): add golden items or set the golden rate to 0")


def _items(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'s' if n != 1 else ''}"


def golden_supply(pool: int, golden_rate: float, target: int) -> GoldenSupply:
    planned = planned_golden(golden_rate, target)
    return GoldenSupply(int(pool), float(golden_rate), int(target), planned, min(int(pool), planned))


def session_length(target: int, real_items: int, per_annotator: int) -> int:
    """Items one annotator can be served: the target, or fewer when the real items run out first."""
    return min(int(target), int(real_items) + int(per_annotator))


def golden_positions(seed: int | str, annotator: str, length: int, count: int) -> frozenset[int]:
    """Serve numbers (1-based) at which this annotator gets a golden item: one per block, at random inside it."""
    count = min(count, length)
    return frozenset(_position_in_block(seed, annotator, length, count, block) for block in range(max(count, 0)))


def is_golden_serve(seed: int | str, annotator: str, length: int, count: int, seq: int) -> bool:
    """Whether serve number ``seq`` is one of :func:`golden_positions`, in constant time (one block's draw)."""
    count = min(count, length)
    if count <= 0 or not 1 <= seq <= length:
        return False
    block = ((seq - 1) * count + count - 1) // length  # the block whose bounds hold seq (see _position_in_block)
    while length * block // count >= seq:
        block -= 1
    while length * (block + 1) // count < seq:
        block += 1
    return _position_in_block(seed, annotator, length, count, block) == seq


def _position_in_block(seed: int | str, annotator: str, length: int, count: int, block: int) -> int:
    # Block i covers serves length·i//count + 1 … length·(i+1)//count (never empty: count ≤ length); each
    # block has its own seeded draw, so a serve asks about its own block only.
    rng = random.Random(f"{seed}:{annotator}:golden-plan:{block}")
    return rng.randint(length * block // count + 1, length * (block + 1) // count)
