"""Stopping a collection gracefully (Ctrl-C, the Collect page's Stop button, a background job's SIGINT).

The first stop request stops new requests; the requests already in flight may finish within a grace
period and their answers are stored as usual. A second request, or the end of the grace period, abandons
what is still in flight: an abandoned request stores nothing (neither an answer nor a failure), so the
next session of the run asks for it again. Nothing else is lost: every answer already received is in the
store, and a resume asks only for the pairs that have no answer.
"""

from __future__ import annotations

import asyncio
import math
import signal
from collections.abc import Awaitable
from typing import TypeVar

from core.errors import SettingError

DEFAULT_GRACE_S = 10.0  # long enough for a typical chat answer, short enough that a person waits for it

T = TypeVar("T")


class StopSwitch:
    """Stop requests for one collection session; ``request()`` is called on the session's event loop."""

    def __init__(self, grace_s: float = DEFAULT_GRACE_S):
        if isinstance(grace_s, bool) or not isinstance(grace_s, (int, float)) or not math.isfinite(grace_s) \
                or grace_s < 0:
            raise SettingError(f"the grace period must be a finite number of seconds >= 0, not {grace_s!r}")
        self.grace_s = float(grace_s)
        self.requests = 0
        self._stopping = asyncio.Event()
        self._abandoning = asyncio.Event()

    @property
    def stopping(self) -> bool:
        """No new request starts."""
        return self.requests >= 1

    @property
    def abandoning(self) -> bool:
        """Requests in flight are given up."""
        return self.requests >= 2

    def request(self) -> None:
        self.requests += 1
        self._stopping.set()
        if self.abandoning:
            self._abandoning.set()

    async def wait_stopping(self) -> None:
        await self._stopping.wait()

    async def wait_abandoning(self) -> None:
        await self._abandoning.wait()


async def stop_on_sigint(work: Awaitable[T], stop: StopSwitch) -> T:
    """Await ``work`` with SIGINT turned into stop requests (so Ctrl-C never raises inside the session).
    Outside the main thread, where signals cannot be caught, ``work`` runs as it is."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, stop.request)
    except (RuntimeError, ValueError, NotImplementedError):  # not the main thread, or no signals here
        return await work
    try:
        return await work
    finally:
        loop.remove_signal_handler(signal.SIGINT)  # back to Python's KeyboardInterrupt
