"""Representativeness scores and slice tags, and the heuristic used when no model scores them.

Scores (0–100): specificity (how precisely the query names what it asks about), completeness (whether
it carries the context an answer needs), depth (how much reasoning an answer takes). The
representativeness ``score`` that orders queries inside a category is their mean.

Heuristic (stated, deterministic, any script):
- specificity = 25 + 8 per distinct content token beyond the third (numbers and capitalised names count
  twice), capped at 100; a CJK character counts as half a token;
- completeness = length in tokens mapped through 100 × (1 − exp(−tokens / 12)), +10 for a stated
  context ("I am", "for my", "with", "without" …), capped at 100;
- depth = 30 + 20 for an explanation or comparison word (why, explain, compare, difference, 为什么,
  比较 …) + 15 for a step request + 15 for two or more clauses, capped at 100.
Tags come from word patterns (English and Chinese): steps → is_procedural; table/list/compare →
needs_structured_output; two or more constraints (without, only, no, under, at most, 不要, 只 …) →
has_heavy_constraints; next/upcoming/unreleased/release date → is_trap_unreleased.

Every one of these scores grows with the length of the query (more tokens, more clauses), and a model's
scores do too: ranked by them, an eval set of 40 AlpacaEval instructions had a median of 379 characters
where the pool had 100. Selection therefore ranks by the **length-neutral score**
(:func:`length_neutral_scores`): the percentile of a query's representativeness among the eligible
queries of similar length (the same length stratum: up to 10 equal-count strata of the length, at least
20 queries each). In every stratum the percentiles spread evenly over 0–100, so taking the best of them
takes queries of every length in the proportions of the pool, while the score still orders queries of
the same length.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

SCORE_COLUMNS = ("specificity", "completeness", "depth")
TAG_COLUMNS = ("is_procedural", "needs_structured_output", "has_heavy_constraints", "is_trap_unreleased")

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_STOP = frozenset(["a", "an", "the", "is", "are", "was", "were", "do", "does", "did", "i", "me", "my", "you",
                   "your", "to", "of", "in", "on", "for", "and", "or", "it", "this", "that", "what", "how", "can",
                   "could", "should", "would", "will", "with", "be", "at", "by", "from", "as"])
_PROCEDURAL = re.compile(r"\b(how (do|can|should) i|how to|steps?|step by step|walk me through|guide|set ?up|"
                         r"install|unlock|process)\b|步骤|怎么|如何|流程|攻略", re.IGNORECASE)
_STRUCTURED = re.compile(r"\b(table|list|compare|comparison|tier list|bullet|chart|versus|vs\.?|schedule|"
                         r"plan)\b|表格|列表|对比|清单|比较", re.IGNORECASE)
_CONSTRAINT = re.compile(r"\b(without|only|no|not|never|under|at most|at least|except|must|budget|"
                         r"no more than|within)\b|不要|不能|只|除了|必须|以内", re.IGNORECASE)
_TRAP = re.compile(r"\b(next (event|update|version|season|patch)|upcoming|unreleased|release date|"
                   r"will .* (come out|be released)|leak(ed)?)\b|下个|下一个|什么时候上线|爆料|未上线", re.IGNORECASE)
_DEPTH = re.compile(r"\b(why|explain|compare|difference|trade-?offs?|analy[sz]e|pros and cons|best|"
                    r"strategy|risks?)\b|为什么|比较|区别|分析|原理", re.IGNORECASE)
_CONTEXT = re.compile(r"\b(i am|i'm|i have|for my|we are|my \w+ is|with|without|as a)\b|我是|我有", re.IGNORECASE)
_CLAUSE = re.compile(r"[,;:，；：]|\b(and|but|because|while|if|when)\b")


def _tokens(text: str) -> tuple[list[str], float]:
    words = _TOKEN.findall(text)
    cjk = len(_CJK.findall(text))
    latin = [w for w in words if not _CJK.search(w)]
    return latin, len(latin) + 0.5 * cjk


def heuristic_scores(text: str) -> dict[str, float | bool]:
    """Scores and tags of one query by the stated rules (module docstring)."""
    latin, n_tokens = _tokens(text)
    content = {w.lower() for w in latin if w.lower() not in _STOP}
    strong = sum(1 for w in latin if w[:1].isupper() or w.isdigit())
    cjk = len(_CJK.findall(text))
    spec_tokens = len(content) + strong + 0.5 * cjk
    specificity = min(100.0, 25.0 + 8.0 * max(0.0, spec_tokens - 3))
    completeness = min(100.0, 100.0 * (1 - math.exp(-n_tokens / 12.0)) + (10.0 if _CONTEXT.search(text) else 0))
    clauses = len(_CLAUSE.findall(text))
    procedural = bool(_PROCEDURAL.search(text))
    depth = min(100.0, 30.0 + (20.0 if _DEPTH.search(text) else 0) + (15.0 if procedural else 0)
                + (15.0 if clauses >= 2 else 0))
    return {"specificity": round(specificity, 1), "completeness": round(completeness, 1), "depth": round(depth, 1),
            "is_procedural": procedural, "needs_structured_output": bool(_STRUCTURED.search(text)),
            "has_heavy_constraints": len(_CONSTRAINT.findall(text)) >= 2,
            "is_trap_unreleased": bool(_TRAP.search(text))}


def representativeness(specificity: float, completeness: float, depth: float) -> float:
    return round((float(specificity) + float(completeness) + float(depth)) / 3.0, 2)


def canonical_rank_key(text: str) -> tuple[int, int]:
    """Order of preference inside a duplicate group without a model: the most specific and complete
    query first, measured by its number of distinct words (CJK characters count one each), then the
    longer one. (Cheap on purpose: it runs on every member of every duplicate group.)"""
    words = set(_TOKEN.findall(text.casefold()))
    return (-(len(words) + len(_CJK.findall(text))), -len(text))


LENGTH_STRATA = 10  # at most this many length strata …
MIN_PER_STRATUM = 20  # … of at least this many queries each (fewer queries: fewer strata)
LENGTH_QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def length_strata(lengths: np.ndarray) -> np.ndarray:
    """Equal-count strata of the lengths (0 = shortest), min(10, n // 20) of them (at least one). Queries
    of equal length share a stratum."""
    lengths = np.asarray(lengths, dtype=float)
    n = lengths.size
    k = max(1, min(LENGTH_STRATA, n // MIN_PER_STRATUM))
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    ranks = pd.Series(lengths).rank(method="min").to_numpy() - 1  # ties: the first rank of the tied run
    return np.minimum((ranks * k // n).astype(np.int64), k - 1)


def length_neutral_scores(scores: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The mid-rank percentile (0–100) of each score inside its length stratum (:func:`length_strata`):
    100 × (rank − 0.5) / n with tied scores sharing their average rank."""
    scores = np.asarray(scores, dtype=float)
    out = np.zeros(scores.size, dtype=float)
    strata = length_strata(lengths)
    for stratum in np.unique(strata):
        members = np.flatnonzero(strata == stratum)
        ranks = pd.Series(scores[members]).rank(method="average").to_numpy()
        out[members] = 100.0 * (ranks - 0.5) / members.size
    return np.round(out, 2)


def length_summary(lengths) -> dict[str, int]:
    """n, min, the 10/25/50/75/90 % quantiles and max of prompt lengths (characters), as whole numbers;
    only ``n`` (0) when there are none."""
    values = np.asarray(list(lengths), dtype=float)
    if values.size == 0:
        return {"n": 0}
    quantiles = np.quantile(values, LENGTH_QUANTILES)
    return {"n": int(values.size), "min": int(values.min()),
            **{f"p{round(q * 100)}": int(round(v)) for q, v in zip(LENGTH_QUANTILES, quantiles)},
            "max": int(values.max())}
