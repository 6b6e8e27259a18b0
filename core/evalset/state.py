"""The state of an eval-set build as it goes through the stages of :mod:`core.evalset.pipeline`: the pool
with every query's status, the embeddings, the audit, the categories and the selector; what
:mod:`core.evalset.results` turns into the eval set, its checks and its files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import core.evalset.llm_stages as stages
from core.evalset.audit import Audit
from core.evalset.progress import ProgressEvent, StageProgress
from core.evalset.selection import Selector
from core.evalset.settings import BuildSettings

SAMPLES_PER_CATEGORY = 3
Progress = Callable[[ProgressEvent], None]


@dataclass
class Build:
    settings: BuildSettings
    pool: pd.DataFrame
    embeddings: np.ndarray  # rows aligned with pool rows whose ``emb_row`` ≥ 0
    audit: Audit
    categories: list[str] = field(default_factory=list)
    suggested_exclusions: list[str] = field(default_factory=list)
    selector: Selector | None = None
    report: Progress | None = field(default=None, repr=False, compare=False)  # set while a run is under way

    def active(self) -> pd.Series:
        return self.pool["status"] == "candidate"

    def say(self, stage: str) -> None:
        if self.report is not None:
            self.report(ProgressEvent(stage))

    def calls(self, stage: str) -> stages.Calls:
        """The call counter of a stage with model calls, reporting to the progress callback."""
        return stages.Calls(progress=StageProgress(stage, self.report) if self.report is not None else None)

    def category_summary(self) -> pd.DataFrame:
        """Categories by query count (descending) with up to three sample queries each."""
        live = self.pool[self.pool["status"].isin(["candidate", "classification_failed"])]
        rng = np.random.default_rng(self.settings.seed)
        rows = []
        for name, group in live.groupby("category", sort=False):
            pick = rng.choice(len(group), size=min(SAMPLES_PER_CATEGORY, len(group)), replace=False)
            rows.append({"category": name, "queries": len(group),
                         "samples": [group["query"].iat[i] for i in sorted(pick)],
                         "suggested_exclusion": name in self.suggested_exclusions})
        out = pd.DataFrame(rows, columns=["category", "queries", "samples", "suggested_exclusion"])
        return out.sort_values(["queries", "category"], ascending=[False, True], ignore_index=True)
