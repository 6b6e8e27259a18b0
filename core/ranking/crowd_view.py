"""What the dashboard shows of scheme crowd (docs/methods.md §16): the reliability table of a Crowd-BT
ranking, and every annotator's reliability η next to their golden-question accuracy."""

from __future__ import annotations

import pandas as pd

from core.ranking.types import Ranking

RELIABILITY_COLUMNS = ("annotator_id", "reliability", "ci_low", "ci_high", "n_votes")


def reliability_frame(ranking: Ranking) -> pd.DataFrame:
    """One row per annotator, most reliable first: η, its interval (NaN without one) and the votes fitted."""
    frame = pd.DataFrame([[a.annotator_id, a.reliability, a.ci_low, a.ci_high, a.n_votes]
                          for a in ranking.annotators], columns=list(RELIABILITY_COLUMNS))
    return frame.astype({"ci_low": float, "ci_high": float})


def reliability_with_golden(ranking: Ranking, quality: pd.DataFrame) -> pd.DataFrame:
    """η with its interval next to golden accuracy (core.annotators.quality's columns ``golden_accuracy``,
    ``golden_ci_low``, ``golden_ci_high``, ``n_golden``), one row per annotator of either: an annotator
    seen only in golden questions has no η, one without golden answers no accuracy."""
    golden = quality[["annotator_id", "n_golden", "golden_accuracy", "golden_ci_low", "golden_ci_high"]].copy()
    golden["annotator_id"] = golden["annotator_id"].astype(str)
    merged = reliability_frame(ranking).merge(golden, on="annotator_id", how="outer")
    return merged.sort_values(["reliability", "annotator_id"], ascending=[False, True], na_position="last",
                              ignore_index=True)
