"""The model-backed stages, each a batch of calls through :class:`core.llm.client.LLMClient`.

The client bounds concurrency (``Endpoint.concurrency``) and retries each call by its policy (429 with
Retry-After or backoff, timeouts, server errors, malformed JSON: up to ``Endpoint.max_retries`` times).
A call that still fails never stops the build: its items get ``None`` (the caller applies the stated
fallback) and the failure is counted in :class:`Calls` for the audit. Every finished call is reported
to the stage's :class:`~core.evalset.progress.StageProgress`, when it has one.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import ceil

import core.evalset.prompts as prompts
from core.errors import EvalBoardError
from core.evalset.categories import CLASSIFICATION_FAILED, match_category
from core.evalset.progress import StageProgress
from core.evalset.scoring import SCORE_COLUMNS, TAG_COLUMNS
from core.llm.client import LLMClient, LLMError, RetryPolicy


@dataclass
class Calls:
    """Requests of one stage: how many, how many failed for good, and why."""

    calls: int = 0
    failed: int = 0
    errors: Counter = field(default_factory=Counter)
    progress: StageProgress | None = field(default=None, repr=False, compare=False)

    def expect(self, n: int) -> None:
        if self.progress is not None and n:
            self.progress.expect(n)

    def skip(self, n: int) -> None:
        if self.progress is not None and n:
            self.progress.skip(n)

    def tick(self) -> None:
        if self.progress is not None:
            self.progress.tick()

    def note(self, results: Sequence) -> None:
        self.calls += len(results)
        for r in results:
            if isinstance(r, BaseException):
                self.failed += 1
                self.errors[r.kind if isinstance(r, LLMError) else type(r).__name__] += 1

    def as_dict(self) -> dict:
        return {"calls": self.calls, "failed": self.failed, "errors": dict(self.errors)}


class EndpointUnusable(EvalBoardError, ValueError):
    """The endpoint refuses every request (unreachable, bad key, unknown model): stop before the stages."""


async def preflight(client: LLMClient) -> None:
    """One relevance request, without retries: fail at once when the endpoint cannot be used at all.
    Passing errors (rate limit, server error, timeout, malformed reply) are left to the stages' retries."""
    once = LLMClient(client.endpoint, policy=RetryPolicy(max_retries=0))
    try:
        await once.chat(prompts.relevance("How do I boil an egg?", ""), temperature=prompts.RELEVANCE["temperature"],
                        max_tokens=prompts.RELEVANCE["max_tokens"], json_schema=prompts.RELEVANCE_SCHEMA)
    except LLMError as exc:
        if exc.kind in ("connection", "auth", "bad_request"):
            raise EndpointUnusable(f"the model endpoint {client.endpoint.base_url} (model "
                                   f"{client.endpoint.model!r}) cannot be used: {exc}") from None
    finally:
        await once.aclose()


def _batches(items: Sequence, size: int) -> list[list]:
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


async def _json_calls(client: LLMClient, requests: list[list[dict]], schema: dict, settings: dict,
                      calls: Calls, planned: bool = False) -> list:
    """One call per request (``planned``: already announced to the progress by the caller)."""
    if not planned:
        calls.expect(len(requests))

    async def one(msgs):
        try:
            result = await client.chat(msgs, temperature=settings["temperature"], max_tokens=settings["max_tokens"],
                                       json_schema=schema)
            return result.data
        finally:
            calls.tick()  # answered or failed for good: not asked again

    results = await client.map(one, requests)
    calls.note(results)
    return results


def _by_id(answer, key: str, n: int) -> dict[int, dict]:
    """Entries of a batch answer keyed by their id (ids outside the batch are ignored)."""
    if isinstance(answer, BaseException) or not isinstance(answer, dict):
        return {}
    return {e["id"]: e for e in answer.get(key, []) if isinstance(e, dict) and isinstance(e.get("id"), int)
            and 0 <= e["id"] < n}


async def relevance(client: LLMClient, texts: list[str], domain: str, calls: Calls) -> list[bool | None]:
    answers = await _json_calls(client, [prompts.relevance(t, domain) for t in texts], prompts.RELEVANCE_SCHEMA,
                                prompts.RELEVANCE, calls)
    return [None if isinstance(a, BaseException) else a["relevant"] == "yes" for a in answers]


async def rewrite(client: LLMClient, texts: list[str], calls: Calls) -> list[str | None]:
    answers = await _json_calls(client, [prompts.rewrite(t) for t in texts], prompts.REWRITE_SCHEMA,
                                prompts.REWRITE, calls)
    out = []
    for a in answers:
        text = None if isinstance(a, BaseException) else str(a["rewritten"]).strip()
        out.append(text or None)
    return out


async def review(client: LLMClient, pairs: list[tuple[str, str]], calls: Calls) -> list[bool | None]:
    batches = _batches(pairs, prompts.REVIEW["batch"])
    answers = await _json_calls(client, [prompts.review(b) for b in batches], prompts.REVIEW_SCHEMA,
                                prompts.REVIEW, calls)
    out: list[bool | None] = []
    for batch, answer in zip(batches, answers):
        got = _by_id(answer, "pairs", len(batch))
        out.extend(bool(got[i]["same"]) if i in got else None for i in range(len(batch)))
    return out


async def canonical(client: LLMClient, groups: list[list[str]], calls: Calls) -> list[int | None]:
    answers = await _json_calls(client, [prompts.canonical(g) for g in groups], prompts.CANONICAL_SCHEMA,
                                prompts.CANONICAL, calls)
    return [a["choice"] if not isinstance(a, BaseException) and 0 <= a["choice"] < len(g) else None
            for g, a in zip(groups, answers)]


async def discover(client: LLMClient, sample: list[str], calls: Calls) -> list[str] | None:
    [answer] = await _json_calls(client, [prompts.discover(sample)], prompts.DISCOVER_SCHEMA, prompts.DISCOVER,
                                 calls)
    if isinstance(answer, BaseException):
        return None
    return [str(c).strip() for c in answer["categories"] if str(c).strip()] or None


def classify_calls(n_texts: int) -> int:
    return ceil(n_texts / prompts.CLASSIFY["batch"])


async def classify(client: LLMClient, texts: list[str], categories: list[str], calls: Calls,
                   planned: bool = False) -> list[str]:
    """A known category per query; ``classification_failed`` when its batch failed or the answer named
    nothing that matches."""
    batches = _batches(texts, prompts.CLASSIFY["batch"])
    answers = await _json_calls(client, [prompts.classify(b, categories) for b in batches],
                                prompts.CLASSIFY_SCHEMA, prompts.CLASSIFY, calls, planned)
    out = []
    for batch, answer in zip(batches, answers):
        got = _by_id(answer, "labels", len(batch))
        for i in range(len(batch)):
            name = match_category(got[i]["category"], categories) if i in got else None
            out.append(name or CLASSIFICATION_FAILED)
    return out


async def exclusions(client: LLMClient, summary: list[tuple[str, int, list[str]]], calls: Calls) -> list[str]:
    [answer] = await _json_calls(client, [prompts.exclusions(summary)], prompts.EXCLUSIONS_SCHEMA,
                                 prompts.EXCLUSIONS, calls)
    if isinstance(answer, BaseException):
        return []
    known = [name for name, _, _ in summary]
    return sorted({m for m in (match_category(x, known) for x in answer["exclude"]) if m})


async def subcategories(client: LLMClient, groups: list[tuple[str, list[str]]], min_size: int,
                        calls: Calls, seed: int = 0) -> list[list[str | None] | None]:
    """Per category: names proposed from a sample (≤ 200 queries, one call at temperature 0.3), then every
    query classified into them in batches of 20, like the categories. None when no names came back."""
    rng = random.Random(seed)
    samples = [rng.sample(texts, min(len(texts), prompts.SUBCATEGORIES["sample"])) for _, texts in groups]
    calls.expect(sum(classify_calls(len(texts)) for _, texts in groups))  # the classifications that follow
    answers = await _json_calls(client, [prompts.subcategories(c, smp, min_size / len(t))
                                         for (c, t), smp in zip(groups, samples)],
                                prompts.SUBCATEGORIES_SCHEMA, prompts.SUBCATEGORIES, calls)
    out: list[list[str | None] | None] = []
    for (_, texts), answer in zip(groups, answers):
        names = [] if isinstance(answer, BaseException) else \
            list(dict.fromkeys(str(n).strip() for n in answer["subcategories"] if str(n).strip()))
        if len(names) < 2:
            calls.skip(classify_calls(len(texts)))  # no names: no classification
            out.append(None)
            continue
        labels = await classify(client, texts, names, calls, planned=True)
        out.append([None if lab == CLASSIFICATION_FAILED else lab for lab in labels])
    return out


async def score(client: LLMClient, texts: list[str], calls: Calls) -> list[dict | None]:
    batches = _batches(texts, prompts.SCORE["batch"])
    answers = await _json_calls(client, [prompts.score(b) for b in batches], prompts.SCORE_SCHEMA,
                                prompts.SCORE, calls)
    out: list[dict | None] = []
    for batch, answer in zip(batches, answers):
        got = _by_id(answer, "scores", len(batch))
        for i in range(len(batch)):
            if i not in got:
                out.append(None)
                continue
            e = got[i]
            row = {k: float(min(100, max(0, e[k]))) for k in SCORE_COLUMNS}
            row.update({k: bool(e[k]) for k in TAG_COLUMNS})
            out.append(row)
    return out
