"""Annotator quality (docs/methods.md §7): golden-question accuracy and fast answers decide who is qualified,
and the ``--annotators`` policy applies that before any ranking.

Rules: with at least 3 answered golden items, accuracy below 0.60 is unqualified (0.60 passes);
fewer golds is "not evaluable" on that rule. The share of votes faster than 3.0 s above 0.30 is
unqualified (0.30 passes; exactly 3.0 s is not fast); no durations is "not evaluable". Unqualified =
fails either rule. A third rule, "screen" (docs/methods.md §17: core.annotators.screen), applies when the user
asks for it (``--qualify golden,fast,screen``); :data:`DEFAULT_RULES` keeps the two above.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from core.errors import SettingError
from core.schema import POLICIES
from core.stats.intervals import wilson_array

MIN_GOLDEN = 3
MIN_GOLDEN_ACCURACY = 0.60
FAST_SECONDS = 3.0
MAX_FAST_RATE = 0.30
DOWNWEIGHT = 0.5  # docs/methods.md §7 option: unqualified votes count half
RULES = ("golden", "fast", "screen")  # the qualification rules a user can choose (--qualify)
DEFAULT_RULES = ("golden", "fast")


def parse_rules(rules: str | Iterable[str] | None) -> tuple[str, ...]:
    """The qualification rules of ``--qualify`` ("golden,fast,screen"), in :data:`RULES` order; None: the
    default ones."""
    if rules is None:
        return DEFAULT_RULES
    names = [r.strip() for r in (rules.split(",") if isinstance(rules, str) else rules)]
    names = [r for r in names if r]
    unknown = [r for r in names if r not in RULES]
    if unknown or not names:
        raise SettingError(f"--qualify takes a comma-separated list of {', '.join(RULES)}; "
                           + (f"not {', '.join(map(repr, unknown))}" if unknown else "not an empty list"))
    return tuple(r for r in RULES if r in names)


def annotator_quality(votes: pd.DataFrame, alpha: float = 0.05, rules: Iterable[str] = DEFAULT_RULES
                      ) -> pd.DataFrame:
    """One row per annotator: votes, golden accuracy (Wilson CI), fast-answer rate, status, reasons.
    ``rules``: which of "golden" and "fast" decide the status ("screen" is applied by the caller:
    core.annotators.screen.mark_unqualified)."""
    rules = set(rules)
    columns = ["annotator_id", "n_votes", "n_golden", "golden_accuracy", "golden_ci_low", "golden_ci_high",
               "fast_rate", "status", "reasons"]
    if "annotator_id" not in votes or votes["annotator_id"].isna().all():
        return pd.DataFrame(columns=columns)
    frame = votes[votes["annotator_id"].notna()]
    idx, names = _codes(frame["annotator_id"])
    n_votes = np.bincount(idx, minlength=len(names))
    if "is_golden" in frame and "golden_answer" in frame:
        golden = frame["is_golden"].to_numpy(dtype=bool) & frame["golden_answer"].notna().to_numpy()
        correct = golden & (_labels(frame["winner"]) == _labels(frame["golden_answer"]))
    else:
        golden = correct = np.zeros(len(frame), dtype=bool)
    n_golden = np.bincount(idx, weights=golden, minlength=len(names))
    n_correct = np.bincount(idx, weights=correct, minlength=len(names))
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(n_golden > 0, n_correct / np.maximum(n_golden, 1), np.nan)
    low, high = wilson_array(n_correct, n_golden, alpha)
    if "response_time_s" in frame:
        rt = frame["response_time_s"].to_numpy(dtype=float)
        timed = ~np.isnan(rt)
        n_timed = np.bincount(idx, weights=timed, minlength=len(names))
        n_fast = np.bincount(idx, weights=timed & (rt < FAST_SECONDS), minlength=len(names))
        fast = np.where(n_timed > 0, n_fast / np.maximum(n_timed, 1), np.nan)
    else:
        fast = np.full(len(names), np.nan)
    rows = []
    for i, name in enumerate(names):
        reasons, evaluable = [], False
        if "golden" in rules and n_golden[i] >= MIN_GOLDEN:
            evaluable = True
            if accuracy[i] < MIN_GOLDEN_ACCURACY:
                reasons.append(f"golden accuracy {accuracy[i]:.2f} < {MIN_GOLDEN_ACCURACY:.2f}")
        if "fast" in rules and not np.isnan(fast[i]):
            evaluable = True
            if fast[i] > MAX_FAST_RATE:
                reasons.append(f"{fast[i]:.0%} of votes faster than {FAST_SECONDS:g} s (> {MAX_FAST_RATE:.0%})")
        status = "unqualified" if reasons else ("qualified" if evaluable else "not_evaluable")
        rows.append([name, int(n_votes[i]), int(n_golden[i]), accuracy[i], low[i], high[i], fast[i], status,
                     reasons])
    return pd.DataFrame(rows, columns=columns)


def apply_policy(votes: pd.DataFrame, policy: str = "exclude", unqualified: Iterable[str] | None = None
                 ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Votes after the annotator policy: keep all, exclude the unqualified, or down-weight them.
    ``unqualified``: the annotators already found unqualified on these votes (skips assessing them again,
    e.g. for a subset of the columns of votes that were assessed)."""
    if policy not in POLICIES:
        raise SettingError(f"--annotators must be one of {', '.join(POLICIES)}, not {policy!r}")
    if unqualified is None:
        quality = annotator_quality(votes)
        bad = set(quality.loc[quality["status"] == "unqualified", "annotator_id"])
    else:
        bad = set(unqualified)
    if bad:
        codes, names = _codes(votes["annotator_id"].fillna("") if not isinstance(
            votes["annotator_id"].dtype, pd.CategoricalDtype) else votes["annotator_id"])
        mask = np.isin(codes, [i for i, n in enumerate(names) if n in bad])
    else:
        mask = np.zeros(len(votes), bool)
    summary = {"annotators": policy, "unqualified_annotators": sorted(bad),
               "unqualified_votes": int(mask.sum())}
    if policy == "keep" or not bad:
        return votes, summary
    if policy == "exclude":
        return votes[~mask], summary
    weight = votes["weight"].to_numpy(dtype=float) if "weight" in votes else np.ones(len(votes))
    return votes.assign(weight=np.where(mask, weight * DOWNWEIGHT, weight)), summary


def _codes(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Integer codes and sorted names of a label column; categoricals (core.io output) cost nothing."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        used = np.unique(column.cat.codes.to_numpy())
        used = used[used >= 0]
        remap = np.full(len(column.cat.categories) + 1, -1)
        remap[used] = np.arange(len(used))
        names = [str(column.cat.categories[i]) for i in used]
        order = np.argsort(names, kind="stable")
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        codes = remap[column.cat.codes.to_numpy()]
        return np.where(codes >= 0, rank[np.maximum(codes, 0)], -1), sorted(names)
    codes, uniques = pd.factorize(column.astype(str), sort=True)
    return codes, [str(u) for u in uniques]


def _labels(column: pd.Series) -> np.ndarray:
    """Outcome labels for comparison: categorical codes mapped to their labels without string copies."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        labels = np.array([str(c) for c in column.cat.categories] + [""], dtype=object)
        return labels[column.cat.codes.to_numpy()]
    return column.astype(str).to_numpy()


def response_times(votes: pd.DataFrame) -> np.ndarray:
    """Every vote's response time in seconds (NaN where unknown); empty without a response_time_s column."""
    return votes["response_time_s"].to_numpy(dtype=float) if "response_time_s" in votes else np.array([])


STATUSES = ("qualified", "unqualified", "not_evaluable")


def status_counts(quality: pd.DataFrame) -> dict[str, int]:
    """Annotators per status of :func:`annotator_quality` (every status, 0 when nobody has it)."""
    counts = quality["status"].value_counts() if len(quality) else pd.Series(dtype=int)
    return {status: int(counts.get(status, 0)) for status in STATUSES}
