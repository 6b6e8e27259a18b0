"""Hamilton (largest remainder) allocation of eval-set places over categories.

quota_c = size × count_c / total; each category first gets floor(quota_c); the places left go one each
to the categories with the largest remainders quota_c − floor(quota_c). Equal remainders are broken by
the larger category first, then by name (alphabetical), so the result never depends on input order.
No category gets more places than it has queries: places a category cannot fill are handed out again
over the others, by the same rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from core.errors import SettingError


def hamilton(counts: Mapping[str, int], size: int) -> dict[str, int]:
    """Places per category, summing to min(size, total); each within one of its quota when no category
    is exhausted."""
    if size < 0:
        raise SettingError("size must be a non-negative integer")
    available = {name: int(c) for name, c in counts.items() if int(c) > 0}
    seats = {name: 0 for name in counts}
    left = min(size, sum(available.values()))
    while left > 0 and available:
        total = sum(available.values())
        # exact fractions: a remainder of .5 must tie with another .5, not lose to float rounding
        quotas = {name: Fraction(left * c, total) for name, c in available.items()}
        given = {name: min(int(q), available[name]) for name, q in quotas.items()}
        rest = left - sum(given.values())
        order = sorted(available, key=lambda nm: (-(quotas[nm] - int(quotas[nm])), -available[nm], nm))
        for name in order:
            if rest == 0:
                break
            if given[name] < available[name]:
                given[name] += 1
                rest -= 1
        for name, g in given.items():
            seats[name] += g
            available[name] -= g
        left = rest
        available = {nm: c for nm, c in available.items() if c > 0}
    return seats
