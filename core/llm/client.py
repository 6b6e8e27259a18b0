"""One client for every OpenAI-compatible endpoint (OpenAI, Azure's v1 API, Gemini's OpenAI layer, vLLM,
Ollama, …): chat (plain or JSON), embeddings, bounded concurrency, and one retry policy.

The official ``openai`` package does the HTTP; its own retries are off because :class:`RetryPolicy`
decides them for every caller:

============  ==========================================================  ==========================
error         wait before the next attempt                                 retried?
============  ==========================================================  ==========================
429           Retry-After when the server sends it, else exponential       yes, up to ``max_retries``
              backoff with full jitter (uniform in [0, base · 2^(n-1)])
timeout       short: uniform in [1, 3] s                                   yes
5xx           medium: uniform in [4, 8] s                                  yes
connection    like 5xx (the server may be restarting)                      yes
malformed     like 5xx (a reply that is not the JSON that was asked for)   yes
400/401/403/  —                                                            no: raised at once
404
============  ==========================================================  ==========================

API keys: an :class:`Endpoint` holds only the *name* of the environment variable; the key is read when a
request is made and is never logged, stored, put into an exception message or a repr.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import os
import random
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import openai

log = logging.getLogger(__name__)

ERROR_KINDS = ("rate_limit", "timeout", "server", "auth", "bad_request", "malformed", "connection")
NO_RETRY_KINDS = frozenset({"auth", "bad_request"})
PLACEHOLDER_KEY = "not-needed"  # local servers (vLLM, Ollama) ignore the key but the protocol wants one


@dataclass(frozen=True)
class Endpoint:
    base_url: str  # e.g. "http://127.0.0.1:8000/v1"
    model: str
    api_key_env: str | None = None  # NAME of the environment variable holding the key; None: a placeholder
    timeout_s: float = 60.0
    concurrency: int = 4
    max_retries: int = 3

    def api_key(self) -> str:
        """The key, read now from the environment (never kept)."""
        if self.api_key_env is None:
            return PLACEHOLDER_KEY
        key = os.environ.get(self.api_key_env)
        if not key:
            raise LLMError("auth", f"the environment variable {self.api_key_env} (the API key for model "
                                   f"{self.model!r}) is not set")
        return key

    def key_is_set(self) -> bool:
        return self.api_key_env is None or bool(os.environ.get(self.api_key_env))


class LLMError(Exception):
    """A failed request after the policy gave up. ``kind`` is one of :data:`ERROR_KINDS`."""

    def __init__(self, kind: str, message: str, *, status: int | None = None, attempts: int = 1,
                 retry_after: float | None = None):
        if kind not in ERROR_KINDS:
            raise ValueError(f"kind must be one of {', '.join(ERROR_KINDS)}, not {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.attempts = attempts
        self.retry_after = retry_after

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status else ""
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{self.kind}{status}{tries}: {self.args[0]}"

    def __repr__(self) -> str:
        return f"LLMError(kind={self.kind!r}, status={self.status!r}, attempts={self.attempts})"


@dataclass(frozen=True)
class ChatResult:
    text: str
    data: Any | None  # the parsed JSON when JSON was asked for
    usage: dict
    finish_reason: str | None
    latency_s: float  # of the successful attempt
    attempts: int


@dataclass(frozen=True)
class RetryPolicy:
    """When to try again, and after how long (see the module docstring)."""

    max_retries: int = 3
    rate_limit_base_s: float = 1.0
    rate_limit_cap_s: float = 60.0
    retry_after_cap_s: float = 300.0  # a server asking for more is treated as asking for this
    timeout_wait_s: tuple[float, float] = (1.0, 3.0)
    server_wait_s: tuple[float, float] = (4.0, 8.0)

    def wait_for(self, kind: str, attempt: int, retry_after: float | None = None,
                 rng: random.Random | None = None) -> float | None:
        """Seconds to wait after failed attempt number ``attempt`` (1-based) of ``kind``; None: give up."""
        if kind not in ERROR_KINDS:
            raise ValueError(f"kind must be one of {', '.join(ERROR_KINDS)}, not {kind!r}")
        if kind in NO_RETRY_KINDS or attempt > self.max_retries:
            return None
        rng = rng or random.Random()
        if kind == "rate_limit":
            if retry_after is not None and retry_after >= 0:
                return min(float(retry_after), self.retry_after_cap_s)
            ceiling = min(self.rate_limit_cap_s, self.rate_limit_base_s * 2 ** (attempt - 1))
            return rng.uniform(0.0, ceiling)  # full jitter: clients throttled together spread out
        low, high = self.timeout_wait_s if kind == "timeout" else self.server_wait_s
        return rng.uniform(low, high)


def classify(exc: BaseException) -> LLMError:
    """The :class:`LLMError` for an exception of the ``openai`` package (or httpx underneath)."""
    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, openai.APITimeoutError):  # a subclass of APIConnectionError: test it first
        return LLMError("timeout", "the request timed out")
    if isinstance(exc, openai.APIConnectionError):
        return LLMError("connection", "could not connect to the endpoint")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = _server_message(exc)
        if status == 429:
            return LLMError("rate_limit", message, status=status, retry_after=_retry_after(exc))
        if status in (401, 403):
            return LLMError("auth", message, status=status)
        if status >= 500:
            return LLMError("server", message, status=status)
        return LLMError("bad_request", message, status=status)
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return LLMError("timeout", "the request timed out")
    if isinstance(exc, (ValueError, openai.APIResponseValidationError)):
        return LLMError("malformed", f"the reply could not be read: {type(exc).__name__}")
    raise exc


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    inner = body.get("error", body) if isinstance(body, dict) else {}
    message = inner.get("message") if isinstance(inner, dict) else None
    return str(message or f"HTTP {exc.status_code}")[:300]


def _retry_after(exc: openai.APIStatusError) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, ValueError):  # an HTTP date instead of seconds: fall back to the backoff
        return None


def check_schema(value: Any, schema: dict, where: str = "$") -> None:
    """Raise ValueError unless ``value`` has the schema's types, required keys and enums (a strict subset
    of JSON Schema: type, properties, required, items, enum)."""
    kinds = schema.get("type")
    if kinds is not None:
        allowed = kinds if isinstance(kinds, list) else [kinds]
        if not any(_is_type(value, k) for k in allowed):
            raise ValueError(f"{where} is not of type {'/'.join(allowed)}")
    if "enum" in schema and value not in schema["enum"]:
        raise ValueError(f"{where} is not one of the allowed values")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                raise ValueError(f"{where} lacks the required key {key!r}")
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                check_schema(value[key], sub, f"{where}.{key}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            check_schema(item, schema["items"], f"{where}[{i}]")


_JSON_TYPES = {"string": str, "boolean": bool, "array": list, "object": dict, "null": type(None)}


def _is_type(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _JSON_TYPES.get(kind, object))


class LLMClient:
    """Chat, embeddings and bounded-concurrency mapping against one :class:`Endpoint`."""

    def __init__(self, endpoint: Endpoint, *, policy: RetryPolicy | None = None,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep, rng: random.Random | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.endpoint = endpoint
        self.policy = policy or RetryPolicy(max_retries=endpoint.max_retries)
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._clock = clock
        self._sdk: tuple[asyncio.AbstractEventLoop, openai.AsyncOpenAI] | None = None
        self._sdk_lock = threading.Lock()
        # One gate per event loop, shared by every map() on this client: two maps running at once still
        # keep the endpoint's concurrency between them.
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = \
            weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        e = self.endpoint
        return f"LLMClient(base_url={e.base_url!r}, model={e.model!r}, api_key_env={e.api_key_env!r})"

    def _client(self) -> openai.AsyncOpenAI:
        """The SDK client for this event loop and the key set now (a new one when either changed)."""
        key = self.endpoint.api_key()
        loop = asyncio.get_running_loop()
        with self._sdk_lock:
            if self._sdk is None or self._sdk[0] is not loop or self._sdk[1].api_key != key:
                # Our own httpx client: the SDK's default one closes itself on garbage collection by
                # scheduling on the running loop, which fails noisily once the loop it was made on is gone.
                http = openai.DefaultAsyncHttpxClient(timeout=self.endpoint.timeout_s)
                sdk = openai.AsyncOpenAI(base_url=self.endpoint.base_url, api_key=key, max_retries=0,
                                         timeout=self.endpoint.timeout_s, http_client=http)
                self._sdk = (loop, sdk)
            return self._sdk[1]

    async def aclose(self) -> None:
        if self._sdk is not None and self._sdk[0] is asyncio.get_running_loop():
            await self._sdk[1].close()
        self._sdk = None

    async def _with_retries(self, attempt_once: Callable[[], Awaitable[Any]], what: str) -> tuple[Any, int]:
        attempt = 0
        while True:
            attempt += 1
            try:
                return await attempt_once(), attempt
            except Exception as exc:  # noqa: BLE001 - classified below; anything unknown is re-raised there
                error = self._without_key(classify(exc))
            wait = self.policy.wait_for(error.kind, attempt, error.retry_after, self._rng)
            if wait is None:
                error.attempts = attempt
                log.debug("%s for model %s failed for good: %s", what, self.endpoint.model, error)
                raise error
            log.debug("%s for model %s: %s; retrying in %.2f s", what, self.endpoint.model, error.kind, wait)
            await self._sleep(wait)

    def _without_key(self, error: LLMError) -> LLMError:
        """Some servers quote the key they refused in their error message: never pass it on."""
        key = os.environ.get(self.endpoint.api_key_env) if self.endpoint.api_key_env else None
        if key and error.args and key in str(error.args[0]):
            error.args = (str(error.args[0]).replace(key, "***"),)
        return error

    async def chat(self, messages: Sequence[dict], *, temperature: float | None = None,
                   max_tokens: int | None = None, json_schema: dict | None = None, json_mode: bool = False,
                   **params) -> ChatResult:
        """One chat completion. ``json_schema`` (a JSON Schema, optionally wrapped as ``{"name", "schema"}``)
        asks for strict structured output and checks the reply against it; ``json_mode`` asks for any JSON
        object. A reply that is not such JSON is retried like a server error, then raised as malformed."""
        request: dict[str, Any] = {"model": self.endpoint.model, "messages": list(messages), **params}
        if temperature is not None:
            request["temperature"] = temperature
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        schema = None
        if json_schema is not None:
            wrapped = "schema" in json_schema and isinstance(json_schema["schema"], dict)
            schema = json_schema["schema"] if wrapped else json_schema
            name = json_schema.get("name", "answer") if wrapped else "answer"
            request["response_format"] = {"type": "json_schema",
                                          "json_schema": {"name": name, "schema": schema, "strict": True}}
        elif json_mode:
            request["response_format"] = {"type": "json_object"}
        wants_json = schema is not None or json_mode

        async def once() -> ChatResult:
            started = self._clock()
            reply = await self._client().chat.completions.create(**request)
            latency = self._clock() - started
            if not reply.choices:
                raise LLMError("malformed", "the reply has no choices")
            choice = reply.choices[0]
            text = choice.message.content or ""
            data = None
            if wants_json:
                try:
                    data = json.loads(text)
                    if schema is not None:
                        check_schema(data, schema)
                    elif not isinstance(data, dict):
                        raise ValueError("$ is not a JSON object")
                except ValueError as exc:
                    raise LLMError("malformed", f"the reply is not the JSON asked for: {exc}") from None
            usage = reply.usage.model_dump(exclude_none=True) if reply.usage is not None else {}
            return ChatResult(text, data, usage, choice.finish_reason, latency, 1)

        result, attempts = await self._with_retries(once, "chat")
        return ChatResult(result.text, result.data, result.usage, result.finish_reason, result.latency_s, attempts)

    async def embed(self, texts: Sequence[str], batch_size: int = 128) -> np.ndarray:
        """One L2-normalised row per text, in the order given (batches run concurrently)."""
        if batch_size < 1:
            raise ValueError("batch_size must be a positive integer")
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, 0))
        batches = [texts[i:i + batch_size] for i in range(0, len(texts), batch_size)]

        async def one_batch(batch: list[str]) -> np.ndarray:
            async def once() -> np.ndarray:
                reply = await self._client().embeddings.create(model=self.endpoint.model, input=batch)
                rows = sorted(reply.data, key=lambda d: d.index)
                if len(rows) != len(batch):
                    raise LLMError("malformed", f"{len(rows)} embeddings for {len(batch)} texts")
                return np.asarray([r.embedding for r in rows], dtype=float)

            return (await self._with_retries(once, "embeddings"))[0]

        results = await self.map(one_batch, batches)
        for r in results:
            if isinstance(r, BaseException):
                raise r
        matrix = np.vstack(results)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1.0, norms)

    async def map(self, fn: Callable[[Any], Awaitable[Any]], items: Sequence[Any]) -> list:
        """``fn(item)`` for every item, at most ``endpoint.concurrency`` at once, results in item order; an
        item whose call raised gets its exception in its place."""
        loop = asyncio.get_running_loop()
        with self._sdk_lock:
            gate = self._gates.get(loop)
            if gate is None:
                gate = self._gates[loop] = asyncio.Semaphore(max(1, self.endpoint.concurrency))

        async def guarded(item: Any) -> Any:
            async with gate:
                try:
                    return await fn(item)
                except Exception as exc:  # noqa: BLE001 - returned in place, by contract
                    return exc

        return list(await asyncio.gather(*(guarded(item) for item in items)))


def run_sync(coro: Awaitable[Any]) -> Any:
    """Run a coroutine to completion from sync code (CLI, Streamlit), also when this thread already runs an
    event loop (then it runs on a fresh loop in a worker thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_as_coroutine(coro))
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="run-sync") as pool:
        return pool.submit(asyncio.run, _as_coroutine(coro)).result()


async def _as_coroutine(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


__all__ = [
    "ERROR_KINDS",
    "ChatResult",
    "Endpoint",
    "LLMClient",
    "LLMError",
    "RetryPolicy",
    "check_schema",
    "classify",
    "run_sync",
]
