"""``evalboard report INPUT --out DIR``: read the input, then write the bundle of its kind (docs/design.md "CLI").

Votes give ``BT_ANALYSIS_REPORT.md``, ``BT_ANALYSIS_REPORT.csv``, ``report.json`` and ``figures/*.png``
(:mod:`core.report.votes`); a score table (EvalRuns) gives ``leaderboard.json``, ``LEADERBOARD.md``,
``report.json`` and its figures (:mod:`core.report.runs`); judged preferences give ``JUDGE_REPORT.md``,
``judge.csv``, ``report.json`` and ``figures/lc_vs_raw.png`` (:mod:`core.report.judge`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.io import InputError, Problem
from core.report.bundle import Progress, ReportResult, ReportSettings, versions
from core.report.judge import build_judge_report
from core.report.runs import build_runs_report
from core.report.votes import build_votes_report


def build_report(kind: str, frame, out_dir: str | Path, settings: ReportSettings = ReportSettings(),
                 source: dict[str, Any] | None = None, progress: Progress | None = None) -> ReportResult:
    """Write the bundle of a validated input (``kind``, ``frame`` as core.io or the store give them)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    common = {"seed": settings.seed, "input": source or {}, "versions": versions()}
    if kind == "votes":
        return build_votes_report(frame, out, settings, common, progress)
    if kind == "eval_runs":
        return build_runs_report(frame, out, settings, common, progress)
    if kind == "preferences":
        return build_judge_report(frame, out, settings, common, progress)
    raise InputError(str((source or {}).get("source", "input")),
                     [Problem((), f"holds {kind.replace('_', ' ')}; a report needs individual votes, a score "
                                  "table (EvalRuns) or judged preferences")])
