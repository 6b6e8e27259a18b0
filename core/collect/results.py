"""The result layer: each answer is cleaned (raw text kept), measured and written to the store the moment
it arrives; failures are recorded by kind; progress counts per model feed the progress bar and its ETA."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from core.collect.queries import Query
from core.collect.store import Answer, CollectStore, Failure
from core.llm.cleaning import CleaningRules, clean_answer
from core.llm.client import ChatResult, LLMError


@dataclass
class ModelProgress:
    """Counts of one model in this run (``done_before``: answers a previous session already stored)."""

    total: int
    done_before: int = 0
    answered: int = 0
    failed: int = 0
    skipped: int = 0  # not asked: the model was stopped by an authentication error
    stopped: str | None = None  # why the model was stopped, if it was
    in_flight: int = 0  # requests sent and not yet answered

    @property
    def done(self) -> int:
        return self.done_before + self.answered

    @property
    def remaining(self) -> int:
        return max(0, self.total - self.done - self.failed - self.skipped)


@dataclass
class Progress:
    """Per-model counts and an ETA; ``clock`` is injectable for tests."""

    models: dict[str, ModelProgress]
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    stopping: bool = False  # a stop request came: no new request starts, those in flight may finish

    def __post_init__(self) -> None:
        self.started = self.clock()

    @property
    def elapsed_s(self) -> float:
        return self.clock() - self.started

    @property
    def finished(self) -> bool:
        return all(m.remaining == 0 for m in self.models.values())

    @property
    def in_flight(self) -> int:
        return sum(m.in_flight for m in self.models.values())

    def totals(self) -> dict[str, int]:
        keys = ("total", "done", "answered", "failed", "skipped", "remaining")
        return {k: sum(getattr(m, k) for m in self.models.values()) for k in keys}

    def eta_s(self) -> float | None:
        """Seconds until the slowest model is through, at each model's pace so far (None: no pace yet).
        Models run side by side, so the run ends with the last of them, not after their sum."""
        elapsed = self.elapsed_s
        worst = 0.0
        for m in self.models.values():
            if m.remaining == 0:
                continue
            handled = m.answered + m.failed
            if handled == 0 or elapsed <= 0:
                return None
            worst = max(worst, m.remaining * elapsed / handled)
        return worst

    def rows(self) -> list[dict]:
        return [{"model": name, "done": m.done, "total": m.total, "failed": m.failed, "skipped": m.skipped,
                 "stopped": m.stopped or ""} for name, m in self.models.items()]

    def line(self) -> str:
        """One line: per-model counts, errors and the ETA."""
        parts = []
        for name, m in self.models.items():
            extra = f" ✗{m.failed}" if m.failed else ""
            extra += " stopped" if m.stopped else ""
            parts.append(f"{name} {m.done}/{m.total}{extra}")
        t = self.totals()
        return (f"{t['done']:,}/{t['total']:,} answers · {t['failed']:,} errors · ETA {format_seconds(self.eta_s())}"
                f" · " + " · ".join(parts))


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "…"
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class ResultRecorder:
    """Cleans, records and counts every outcome as it arrives."""

    def __init__(self, store: CollectStore, run: int, progress: Progress, rules: CleaningRules = CleaningRules(),
                 on_progress: Callable[[Progress], None] | None = None):
        self.store = store
        self.run = run
        self.progress = progress
        self.rules = rules
        self.on_progress = on_progress
        self.client_seconds: list[float] = []  # per answer: time in the client (for the overhead figure)

    def answer(self, query: Query, model: str, result: ChatResult) -> None:
        usage = result.usage or {}
        self.store.add_answer(self.run, Answer(
            query.query_id, model, clean_answer(result.text, self.rules), result.text, result.latency_s,
            usage.get("prompt_tokens"), usage.get("completion_tokens"), result.finish_reason, result.attempts))
        self.progress.models[model].answered += 1
        self._notify()

    def failure(self, query: Query, model: str, error: LLMError) -> None:
        self.store.add_failure(self.run, Failure(query.query_id, model, error.kind, error.status,
                                                 error.args[0] if error.args else error.kind, error.attempts))
        self.progress.models[model].failed += 1
        self._notify()

    def model_stopped(self, model: str, error: LLMError, skipped: int) -> None:
        """An authentication error: one row for the model, its unasked queries counted as skipped."""
        self.store.add_failure(self.run, Failure("", model, error.kind, error.status,
                                                 f"model stopped: {error.args[0] if error.args else error.kind}",
                                                 error.attempts))
        counts = self.progress.models[model]
        counts.stopped = str(error)
        counts.skipped += skipped
        self._notify()

    def stopping(self) -> None:
        self.progress.stopping = True
        self._notify()

    def _notify(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self.progress)
