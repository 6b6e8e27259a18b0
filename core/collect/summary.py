"""What a collection run holds: answers and failures per model, latency percentiles and tokens."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np

from core.collect.store import CollectStore

PERCENTILES = (50, 90, 99)


@dataclass(frozen=True)
class ModelSummary:
    model: str
    answers: int
    missing: int  # queries without an answer (failed, skipped or not asked yet)
    failures: dict[str, int]  # kind -> queries whose last attempt failed that way
    stopped: str | None  # the authentication error that stopped the model, if any
    latency_p50_s: float | None
    latency_p90_s: float | None
    latency_p99_s: float | None
    prompt_tokens: int
    completion_tokens: int
    truncated: int  # answers cut off by max_tokens (finish_reason "length")


@dataclass(frozen=True)
class RunSummary:
    run: str
    queries: int
    models: tuple[ModelSummary, ...]
    latency_p50_s: float | None
    latency_p90_s: float | None
    latency_p99_s: float | None

    @property
    def answers(self) -> int:
        return sum(m.answers for m in self.models)

    @property
    def expected(self) -> int:
        return self.queries * len(self.models)

    @property
    def complete(self) -> bool:
        return self.answers == self.expected

    def failures_by_kind(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for m in self.models:
            for kind, n in m.failures.items():
                totals[kind] = totals.get(kind, 0) + n
        return dict(sorted(totals.items()))

    def rows(self) -> list[dict]:
        """One row per model, for a table."""
        return [{"model": m.model, "answers": m.answers, "missing": m.missing,
                 "failures": ", ".join(f"{k} {n}" for k, n in sorted(m.failures.items())),
                 "stopped": m.stopped or "", "p50 s": m.latency_p50_s, "p90 s": m.latency_p90_s,
                 "p99 s": m.latency_p99_s, "prompt tokens": m.prompt_tokens,
                 "completion tokens": m.completion_tokens, "truncated": m.truncated} for m in self.models]


def summarize(store: CollectStore, name: str) -> RunSummary:
    run = store.run_id(name)
    answers = store.answers(run)
    failures = store.failures(run)
    queries = store.query_count(run)
    models = []
    for model in store.models(run):
        mine = answers[answers["model"] == model]
        failed = failures[(failures["model"] == model) & (failures["query_id"] != "")]
        stop = failures[(failures["model"] == model) & (failures["query_id"] == "")]
        p50, p90, p99 = _percentiles(mine["latency_s"].to_numpy(dtype=float))
        models.append(ModelSummary(
            model, len(mine), queries - len(mine), {str(k): int(n) for k, n in failed["kind"].value_counts().items()},
            str(stop["message"].iloc[0]) if len(stop) else None, p50, p90, p99,
            int(mine["prompt_tokens"].fillna(0).sum()), int(mine["completion_tokens"].fillna(0).sum()),
            int((mine["finish_reason"] == "length").sum())))
    p50, p90, p99 = _percentiles(answers["latency_s"].to_numpy(dtype=float))
    return RunSummary(name, queries, tuple(models), p50, p90, p99)


def _percentiles(values: np.ndarray) -> tuple[float | None, ...]:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return (None,) * len(PERCENTILES)
    return tuple(float(v) for v in np.percentile(values, PERCENTILES))


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def to_text(summary: RunSummary) -> str:
    """The end-of-run summary for a terminal."""
    lines = [f"run '{summary.run}': {summary.answers:,} of {summary.expected:,} answers "
             f"({summary.queries:,} queries × {len(summary.models)} models)"
             + ("" if summary.complete else f"; {summary.expected - summary.answers:,} missing — run it again "
                                              "to ask for them")]
    kinds = summary.failures_by_kind()
    if kinds:
        lines.append("failures by type: " + ", ".join(f"{k} {n:,}" for k, n in kinds.items()))
    lines.append(f"latency (s): p50 {_seconds(summary.latency_p50_s)}, p90 {_seconds(summary.latency_p90_s)}, "
                 f"p99 {_seconds(summary.latency_p99_s)}")
    width = max([len("model")] + [len(m.model) for m in summary.models])
    lines.append(f"{'model':<{width}}  {'answers':>8}  {'missing':>8}  {'p50 s':>6}  {'p90 s':>6}  {'p99 s':>6}  "
                 f"{'prompt tok':>11}  {'compl. tok':>11}  failures")
    for m in summary.models:
        failures = ", ".join(f"{k} {n:,}" for k, n in sorted(m.failures.items()))
        if m.stopped:
            failures = (failures + "; " if failures else "") + f"STOPPED: {m.stopped}"
        lines.append(f"{m.model:<{width}}  {m.answers:>8,}  {m.missing:>8,}  {_seconds(m.latency_p50_s):>6}  "
                     f"{_seconds(m.latency_p90_s):>6}  {_seconds(m.latency_p99_s):>6}  {m.prompt_tokens:>11,}  "
                     f"{m.completion_tokens:>11,}  {failures or '–'}")
    return "\n".join(lines)


def to_json(summary: RunSummary) -> str:
    data = asdict(summary)
    data.update(answers=summary.answers, expected=summary.expected, complete=summary.complete,
                failures_by_kind=summary.failures_by_kind())
    return json.dumps(data, indent=2, ensure_ascii=False)
