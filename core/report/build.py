"""``evalboard report INPUT --out DIR``: read the input, then write the bundle of its kind (docs/design.md "CLI").

Votes give ``BT_ANALYSIS_REPORT.md``, ``BT_ANALYSIS_REPORT.csv``, ``report.json`` and ``figures/*.png``
(:mod:`core.report.votes`); a score table (EvalRuns) gives ``leaderboard.json``, ``LEADERBOARD.md``,
``report.json`` and its figures (:mod:`core.report.runs`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.io import DEFAULT_MISSING, InputError, Problem, load, load_lm_eval, parse_pairs
from core.io.missing import apply_missing_rule
from core.report.bundle import Progress, ReportResult, ReportSettings, versions
from core.report.runs import build_runs_report
from core.report.votes import build_votes_report
from core.store import DatasetNotFound, Store


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
    raise InputError(str((source or {}).get("source", "input")),
                     [Problem((), f"holds {kind.replace('_', ' ')}; a report needs individual votes or a score "
                                  "table (EvalRuns)")])


def read_report_input(args) -> tuple[str, Any, dict[str, Any]]:
    """(kind, frame, source) as ``core.cli.read_input`` reads them, plus the input's sha256 and origin."""
    path = Path(args.votes)
    missing = getattr(args, "missing", DEFAULT_MISSING)
    if path.is_dir() or args.kind == "lm_eval":
        loaded = load_lm_eval([path], metric=getattr(args, "metric", None) or "acc", missing=missing)
    elif path.exists():
        loaded = load(path, kind=args.kind, columns=parse_pairs(args.map, "--map"),
                      outcomes=parse_pairs(args.outcome, "--outcome", empty_key=True), missing=missing)
    else:
        with Store(args.db) as store:
            try:
                info = store.dataset(args.votes)
            except DatasetNotFound as exc:
                raise InputError(args.votes, [Problem((), "no such file, and no stored dataset of that name")],
                                 exc.hint or None) from None
            frame = store.load(info.id)
        if info.kind == "eval_runs" and missing != DEFAULT_MISSING:
            frame, _ = apply_missing_rule(frame, missing)  # cells left out at ingest now count 0
        return info.kind, frame, {"source": f"dataset {info.name} (id {info.id})", "sha256": info.sha256,
                                  "rows": len(frame), "missing": missing}
    return loaded.kind, loaded.frame, {"source": str(loaded.source), "sha256": loaded.sha256,
                                       "rows": int(loaded.rows), "missing": missing}
