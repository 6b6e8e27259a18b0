"""Progress of a build: which stage runs, and inside a stage with model calls, how many are done, how
many are planned and when the stage should end.

The pipeline reports a :class:`ProgressEvent` when a stage starts and after every finished model call
(a call that failed for good counts as finished: it will not be asked again). The estimate of the time
left is the stage's mean time per finished call so far times the calls left; it is ``None`` until one
call has finished. The planned count can grow inside a stage whose later calls depend on earlier
answers (subcategory names, then the classification into them), and shrink when a planned call turns
out not to be needed. :func:`throttled` passes on fewer events, for a terminal or a page.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ProgressEvent:
    stage: str
    done: int = 0  # model calls finished in this stage
    total: int = 0  # model calls planned in this stage so far (0: a stage without model calls)
    elapsed_s: float = 0.0
    eta_s: float | None = None  # seconds left, from the mean time per finished call; None before the first

    @property
    def fraction(self) -> float | None:
        return min(1.0, self.done / self.total) if self.total else None

    @property
    def finished(self) -> bool:
        return self.total > 0 and self.done >= self.total

    def text(self) -> str:
        """``Relevance: 120 / 805 model calls (15%) · 0:42 elapsed · about 3:58 left`` (the stage name
        alone for a stage without model calls)."""
        if not self.total:
            return self.stage
        parts = [f"{self.stage}: {self.done:,} / {self.total:,} model calls ({self.fraction:.0%})",
                 f"{clock(self.elapsed_s)} elapsed"]
        if self.eta_s is not None and not self.finished:
            parts.append(f"about {clock(self.eta_s)} left")
        return " · ".join(parts)


def clock(seconds: float) -> str:
    """``0:42``, ``12:05``, ``1:02:03``."""
    whole = int(round(max(0.0, seconds)))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


Report = Callable[[ProgressEvent], None]


@dataclass
class StageProgress:
    """Counts the model calls of one stage and reports each change to ``report``."""

    stage: str
    report: Report
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    done: int = 0
    total: int = 0

    def __post_init__(self):
        self.started = self.clock()

    def expect(self, n: int) -> None:
        """``n`` more calls are planned."""
        self.total += int(n)
        self._emit()

    def skip(self, n: int) -> None:
        """``n`` planned calls will not be made."""
        self.total = max(self.done, self.total - int(n))
        self._emit()

    def tick(self) -> None:
        """One call finished (answered, or failed for good)."""
        self.done += 1
        self._emit()

    def _emit(self) -> None:
        elapsed = self.clock() - self.started
        eta = elapsed / self.done * max(0, self.total - self.done) if self.done else None
        self.report(ProgressEvent(self.stage, self.done, self.total, elapsed, eta))


def throttled(report: Report, every_s: float = 2.0, clock: Callable[[], float] = time.monotonic) -> Report:
    """``report`` receiving every stage start and every stage's last call, and in between at most one
    event per ``every_s`` seconds (a terminal or a page need not redraw 1,600 times)."""
    last: dict[str, float] = {}

    def passed(event: ProgressEvent) -> None:
        now = clock()
        new_stage = event.stage not in last
        if new_stage or event.finished or now - last[event.stage] >= every_s:
            last[event.stage] = now
            report(event)

    return passed
