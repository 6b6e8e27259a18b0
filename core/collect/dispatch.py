"""The query queue and the dispatcher: every model's answer to every query, each provider at its own limit.

Queue: the queries in asking order (priority, then file order), one lane per model holding the queries
that model has not answered yet. Dispatcher: one semaphore per provider; each model runs as many workers
as its share of its provider's limit, and every request holds a slot of the provider's semaphore while it
is in flight (its retry waits included, so a throttled provider is not hit harder). Providers share
nothing, so a slow or throttled one never holds up another. Retries follow :class:`core.llm.client.RetryPolicy`;
an authentication error stops that model only. A stop request (:mod:`core.collect.stop`) starts no new
request and lets those in flight finish within its grace period; what is still in flight after it is
abandoned, stores nothing and is asked again by the next session.
"""

from __future__ import annotations

import asyncio
import collections
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.collect.config import CollectConfig, ModelSpec
from core.collect.queries import Query
from core.collect.results import ModelProgress, Progress, ResultRecorder
from core.collect.stop import StopSwitch
from core.collect.store import CollectStore
from core.llm.cleaning import CleaningRules
from core.llm.client import LLMClient, LLMError, RetryPolicy


@dataclass(frozen=True)
class RunSettings:
    """How a collection runs; ``sleep``, ``rng`` and ``clock`` are injectable so tests need not wait."""

    run: str
    limit: int | None = None  # ask only the first N queries (in asking order)
    rules: CleaningRules = CleaningRules()
    policy: RetryPolicy | None = None
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    rng: random.Random | None = None
    clock: Callable[[], float] = time.monotonic
    queries_source: str = ""
    stop: StopSwitch | None = None  # graceful stop requests (Ctrl-C, the Stop button); None: run to the end


@dataclass(frozen=True)
class SessionOutcome:
    """What this session did (the store holds the whole run)."""

    run: str
    asked: int  # (query, model) pairs this session set out to ask
    answered: int
    failed: int
    skipped: int
    already_answered: int  # pairs answered by an earlier session: not asked again
    stopped_models: dict[str, str]  # model -> the authentication error that stopped it
    elapsed_s: float
    store_write_s: float  # time spent writing answers and failures to the store
    interrupted: bool = False  # a stop request ended the session before every pair was asked
    not_asked: int = 0  # pairs left for a later session (a stop request came first; abandoned ones included)
    abandoned: int = 0  # requests in flight given up (second stop request or end of the grace period)


def prompt_messages(query: Query) -> list[dict]:
    return [{"role": "user", "content": query.prompt}]


async def collect(config: CollectConfig, queries: Sequence[Query], db_path: str | Path, settings: RunSettings,
                  on_progress: Callable[[Progress], None] | None = None) -> SessionOutcome:
    """Ask every model every query that has no answer yet in run ``settings.run``; write as answers arrive."""
    queries = list(queries)[:settings.limit] if settings.limit is not None else list(queries)
    with CollectStore(db_path) as store:
        run = store.start(settings.run, queries, config.models, queries_source=settings.queries_source,
                          models_source=config.source)
        store.clear_model_stop(run, [m.name for m in config.models])
        answered = store.answered(run)
        lanes = {m.name: collections.deque(q for q in queries if (q.query_id, m.name) not in answered)
                 for m in config.models}
        progress = Progress({m.name: ModelProgress(total=len(queries), done_before=len(queries) - len(lanes[m.name]))
                             for m in config.models}, clock=settings.clock)
        recorder = ResultRecorder(store, run, progress, settings.rules, on_progress)
        asked = sum(len(lane) for lane in lanes.values())
        if on_progress is not None:
            on_progress(progress)
        gates = {provider: asyncio.Semaphore(limit) for provider, limit in config.provider_limits.items()}
        stopped: dict[str, str] = {}
        workers, clients = [], []
        for spec in config.models:
            client = LLMClient(spec.endpoint(config.limit_of(spec)), policy=settings.policy, sleep=settings.sleep,
                               rng=settings.rng or random.Random())
            clients.append(client)
            lane = _Lane(spec, client, lanes[spec.name], gates[spec.provider], recorder, stopped, settings.stop)
            workers += [lane.work() for _ in range(config.model_limit(spec))]
        tasks = [asyncio.ensure_future(worker) for worker in workers]
        try:
            abandoned = await _drain(tasks, settings.stop, recorder)
        finally:
            for client in clients:
                await client.aclose()
        counts = progress.totals()
        not_asked = sum(len(lane) for lane in lanes.values())
        return SessionOutcome(settings.run, asked, counts["answered"], counts["failed"],
                              counts["skipped"], sum(m.done_before for m in progress.models.values()), stopped,
                              progress.elapsed_s, store.write_seconds,
                              interrupted=bool(settings.stop and settings.stop.stopping and (not_asked or abandoned)),
                              not_asked=not_asked, abandoned=abandoned)


async def _drain(tasks: list[asyncio.Future], stop: StopSwitch | None, recorder: ResultRecorder) -> int:
    """Wait for the workers. On a stop request they start nothing new; those in flight get the grace period,
    then (or at a second request) are cancelled. Returns the number of requests abandoned."""
    everything = asyncio.ensure_future(asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION))
    waiters = [asyncio.ensure_future(stop.wait_stopping()), asyncio.ensure_future(stop.wait_abandoning())] \
        if stop is not None else []
    abandoned = 0
    try:
        if waiters:
            await asyncio.wait({everything, waiters[0]}, return_when=asyncio.FIRST_COMPLETED)
            if not everything.done():
                recorder.stopping()
                await asyncio.wait({everything, waiters[1]}, timeout=stop.grace_s,
                                   return_when=asyncio.FIRST_COMPLETED)
            if not everything.done():
                abandoned = recorder.progress.in_flight
        else:
            await asyncio.shield(everything)
    finally:
        for waiter in waiters:
            waiter.cancel()
        unfinished = [task for task in tasks if not task.done()]
        for task in unfinished:  # abandoned, or the session itself was cancelled: nothing is left running
            task.cancel()
        if unfinished:
            await asyncio.wait(unfinished)
        await everything
    errors = [task.exception() for task in tasks if not task.cancelled() and task.exception() is not None]
    if errors:
        raise errors[0]  # a worker's unexpected error (the others were stopped above)
    return abandoned


class _Lane:
    """One model's pending queries and the workers that ask them."""

    def __init__(self, spec: ModelSpec, client: LLMClient, pending: collections.deque, gate: asyncio.Semaphore,
                 recorder: ResultRecorder, stopped: dict[str, str], stop: StopSwitch | None = None):
        self.spec, self.client, self.pending, self.gate = spec, client, pending, gate
        self.recorder, self.stopped, self.stop = recorder, stopped, stop
        self.params = dict(spec.params)
        self.counts = recorder.progress.models[spec.name]

    def _halted(self) -> bool:
        return self.spec.name in self.stopped or (self.stop is not None and self.stop.stopping)

    async def work(self) -> None:
        while self.pending and not self._halted():
            query = self.pending.popleft()
            async with self.gate:
                if self._halted():  # stopped while this worker waited for a slot
                    self.pending.appendleft(query)
                    break
                self.counts.in_flight += 1
                try:
                    result = await self.client.chat(prompt_messages(query), **self.params)
                except LLMError as error:
                    self._failed(query, error)
                    continue
                except asyncio.CancelledError:  # abandoned: stored nowhere, so the next session asks it again
                    self.pending.appendleft(query)
                    raise
                finally:
                    self.counts.in_flight -= 1
            self.recorder.answer(query, self.spec.name, result)
        if self.spec.name in self.stopped and self.pending:
            skipped = len(self.pending)
            self.pending.clear()
            self.recorder.progress.models[self.spec.name].skipped += skipped

    def _failed(self, query: Query, error: LLMError) -> None:
        if error.kind != "auth":
            self.recorder.failure(query, self.spec.name, error)
            return
        if self.spec.name in self.stopped:  # a request already in flight when the model was stopped
            self.recorder.progress.models[self.spec.name].skipped += 1
            return
        self.stopped[self.spec.name] = str(error)
        self.recorder.model_stopped(self.spec.name, error, skipped=1)
