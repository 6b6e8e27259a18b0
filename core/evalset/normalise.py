"""Text normalisation, exact deduplication and the local pre-filter.

Normalisation is what makes two queries "the same text": NFKC (full-width forms become their ASCII
counterparts), case folding, every Unicode punctuation character removed (ASCII, CJK and full-width
alike: any code point whose category starts with ``P``), runs of whitespace collapsed to one space.
Symbols such as emoji are kept: they can carry meaning ("🍕 near me").
"""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# Pre-filter thresholds: a query this short, or this unreadable, has no evaluation value.
MIN_CHARS = 6  # "≤ 5 characters" is too short
MIN_READABLE_SHARE = 0.30  # letters and digits (any script) among the non-space characters


@lru_cache(maxsize=1)
def _punctuation_table() -> dict[int, None]:
    """str.translate table deleting every Unicode punctuation code point (built once, ~0.3 s)."""
    return {cp: None for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp)).startswith("P")}


def normalise(text: str) -> str:
    """The comparison form of a query: NFKC, case-folded, punctuation removed, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", str(text)).casefold()
    return " ".join(folded.translate(_punctuation_table()).split())


def exact_duplicates(texts: list[str]) -> tuple[list[str], np.ndarray]:
    """Normalised texts and, per query, the index of the first query with the same normalised text
    (its own index when it is the first occurrence)."""
    normalised = [normalise(t) for t in texts]
    first: dict[str, int] = {}
    keeper = np.fromiter((first.setdefault(key, i) for i, key in enumerate(normalised)), dtype=np.int64,
                         count=len(normalised))
    return normalised, keeper


@dataclass(frozen=True)
class PrefilterVerdict:
    keep: bool
    reason: str  # "" when kept, else "too_short" or "unreadable"


_READABLE = re.compile(r"[^\W_]")  # a letter or digit of any script (str.isalnum)
_SPACE = re.compile(r"\s")


def readable_share(text: str) -> float:
    """Share of letters and digits (any script) among the characters that are not whitespace."""
    text = str(text)
    visible = len(text) - len(_SPACE.findall(text))
    return len(_READABLE.findall(text)) / visible if visible else 0.0


def prefilter(text: str) -> PrefilterVerdict:
    """Local rules applied before any model sees the query."""
    stripped = str(text).strip()
    if len(stripped) < MIN_CHARS:
        return PrefilterVerdict(False, "too_short")
    if readable_share(stripped) < MIN_READABLE_SHARE:
        return PrefilterVerdict(False, "unreadable")
    return PrefilterVerdict(True, "")
