"""The checks of the settings every analysis takes, each written once with one wording.

A check returns the value as a plain Python number, or raises :class:`~core.errors.SettingError` (a
``ValueError``) whose message names the setting and the value it got, e.g. "`alpha` must lie strictly
between 0 and 1, not 2.0". A module whose callers expect its own error class passes it as ``error``
(it derives from :class:`~core.errors.EvalBoardError` too); the rule and the wording stay the same.

Booleans are refused wherever a number is wanted: ``True`` is an ``int`` to Python, but a setting of
``True`` replicates is a mistake, not a request for one. NumPy numbers are accepted (they register as
:class:`numbers.Integral` / :class:`numbers.Real`). Only the standard library is imported, so the command
line can check its options before loading any numerical library.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

from core.errors import EvalBoardError, SettingError

ErrorClass = type[EvalBoardError]


def check_alpha(alpha: object, *, error: ErrorClass = SettingError) -> float:
    """A two-sided level: a real number strictly between 0 and 1."""
    if not _is_real(alpha) or not 0 < alpha < 1:  # NaN fails the comparison
        raise error(f"`alpha` must lie strictly between 0 and 1, not {alpha!r}")
    return float(alpha)


def check_integer(value: object, name: str, minimum: int, *, error: ErrorClass = SettingError) -> int:
    """A whole number of at least ``minimum`` (a count, a size, a number of iterations)."""
    if not _is_integer(value) or value < minimum:
        wanted = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer >= {minimum}")
        raise error(f"`{name}` must be {wanted}, not {value!r}")
    return int(value)


def check_replicates(replicates: object, *, error: ErrorClass = SettingError) -> int:
    """The number of bootstrap replicates: at least 1."""
    return check_integer(replicates, "replicates", 1, error=error)


def check_seed(seed: object, *, allow_none: bool = False, error: ErrorClass = SettingError) -> int | None:
    """A random seed: an integer >= 0 (NumPy's generators refuse negative seeds), or None where allowed."""
    if seed is None and allow_none:
        return None
    return check_integer(seed, "seed", 0, error=error)


def check_max_iter(max_iter: object, *, error: ErrorClass = SettingError) -> int:
    """An iteration limit of a solver: at least 1."""
    return check_integer(max_iter, "max_iter", 1, error=error)


def check_positive(value: object, name: str, *, error: ErrorClass = SettingError) -> float:
    """A finite number > 0 (a tolerance, a step)."""
    if not _is_real(value) or not math.isfinite(value) or value <= 0:
        raise error(f"`{name}` must be a finite number > 0, not {value!r}")
    return float(value)


def check_share(value: object, name: str, *, below_one: bool = False, error: ErrorClass = SettingError) -> float:
    """A share or probability: a number in [0, 1], or in [0, 1) with ``below_one``."""
    upper_ok = _is_real(value) and (value < 1 if below_one else value <= 1)
    if not _is_real(value) or not (value >= 0 and upper_ok):
        raise error(f"`{name}` must lie in [0, 1{')' if below_one else ']'}, not {value!r}")
    return float(value)


def check_choice(value: object, name: str, allowed: tuple[str, ...], *, error: ErrorClass = SettingError) -> str:
    """One of a fixed set of names (a policy, a scheme, a format)."""
    if value not in allowed:
        raise error(f"`{name}` must be one of {', '.join(allowed)}, not {value!r}")
    return value


def _is_real(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _is_integer(value: object) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)
