"""A fake OpenAI-compatible HTTP server for tests: real sockets on 127.0.0.1, programmable answers,
latency and faults, and a record of every request.

It speaks enough of the OpenAI API for ``core.llm.client`` (and the official ``openai`` package):

- ``POST /v1/chat/completions`` — one choice; ``usage`` (prompt/completion/total tokens, counted as
  whitespace-separated words) and ``finish_reason`` (``"stop"``, or ``"length"`` when the content has
  more words than ``max_tokens``);
- ``POST /v1/embeddings`` — one deterministic vector per input (hashed character trigrams, L2-normalised,
  so texts that share trigrams get similar vectors), in input order with their ``index``;
- ``GET /v1/models`` — the models seen so far plus ``"fake-model"``.

Usage::

    from tests.fake_openai import Fault, FakeOpenAI

    with FakeOpenAI(latency_s=0.05) as server:
        endpoint = Endpoint(base_url=server.base_url, model="m1")
        ...
        assert server.max_in_flight <= endpoint.concurrency

Programming the answers — ``responder(request_json) -> str | dict``: the request body as the client sent
it (``model``, ``messages``, ``response_format``, ``temperature`` …). A ``str`` is the assistant content
as is; a ``dict`` (or list) is sent as its JSON text, which is what a client asking for JSON expects.
Without a responder the content is ``"<model> answers: <last user message>"``. For batch classification
or scoring prompts, parse the request's last user message and return the JSON object the prompt asks
for, e.g.::

    def classify(request):
        lines = request["messages"][-1]["content"].splitlines()
        return {"labels": [{"id": i, "category": "chat"} for i, _ in enumerate(lines)]}

    with FakeOpenAI(responder=classify) as server: ...

A responder that raises gives a 500 reply carrying the exception text (so a test bug shows up as a
server error, not a hang).

Faults — ``server.faults`` is a deque of :class:`Fault`; each chat or embeddings request takes the next
one (in arrival order) before anything else, so ``server.faults.extend([Fault(status=429,
retry_after=0.01), Fault(status=500)])`` makes the next two requests fail and the third succeed.
``server.fault_for`` is an optional hook ``(path, request_json) -> Fault | None`` consulted when the
queue is empty, e.g. to make one model always answer 401::

    server.fault_for = lambda path, req: Fault(status=401) if req.get("model") == "bad" else None

Kinds of :class:`Fault`: ``status=429`` (with ``retry_after`` seconds sent as a ``Retry-After`` header
when given), ``status=500``/``503`` (server errors), ``status=400/401/403/404`` (client errors, an
OpenAI-style ``{"error": {...}}`` body), ``timeout=True`` (the reply is held for ``delay_s`` seconds,
longer than the client's timeout, then sent if anyone still listens), ``malformed=True`` (a 200 reply
whose content is not JSON, for clients that asked for JSON).

Observability (all thread-safe to read from the test):

- ``requests`` — list of ``(path, json, headers)`` per request, headers as a dict that keeps
  ``Authorization`` so tests can check which key was sent (never print it in a real program);
- ``in_flight`` / ``max_in_flight`` — chat and embeddings requests being served now / at most at once
  (a request leaves the count just before its reply is written, so a client that sends its next request
  as soon as a reply arrives is never over-counted);
- ``calls_by_model`` — ``collections.Counter`` of chat and embeddings requests by ``model``.

``reset_counts()`` clears ``requests``, ``calls_by_model`` and ``max_in_flight`` between the phases of a test
(e.g. before resuming a run, to see exactly what the resume asked for).

``latency_s`` (mutable) is slept by every chat and embeddings request before it answers. Several servers
can run at once (each on its own free port); use one per provider to test per-provider limits. The
server runs in a daemon thread; leaving the ``with`` block (or ``stop()``) shuts it down.
"""

from __future__ import annotations

import collections
import json
import math
import socket
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict], "str | dict | list"]


@dataclass(frozen=True)
class Fault:
    """What the next request gets instead of a normal reply (see the module docstring)."""

    status: int | None = None  # an HTTP error status: 429, 500, 503, 400, 401, 403, 404 …
    retry_after: float | None = None  # seconds, sent as the Retry-After header (429)
    timeout: bool = False  # hold the reply for delay_s seconds
    delay_s: float = 2.0
    malformed: bool = False  # 200 with content that is not JSON
    message: str = "fault injected by the test server"


_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_api_key", 403: "permission_denied",
                404: "not_found", 429: "rate_limit_exceeded"}


def default_answer(request: dict) -> str:
    """``"<model> answers: <last user message>"``."""
    last = next((m.get("content", "") for m in reversed(request.get("messages", [])) if m.get("role") == "user"),
                "")
    if isinstance(last, list):  # content parts
        last = " ".join(part.get("text", "") for part in last if isinstance(part, dict))
    return f"{request.get('model', 'fake-model')} answers: {last}"


def trigram_vector(text: str, dim: int) -> list[float]:
    """Hashed character trigrams of the lower-cased text, L2-normalised (a zero text gets e_0)."""
    padded = f"  {text.lower()} "
    vector = [0.0] * dim
    for i in range(len(padded) - 2):
        vector[zlib.crc32(padded[i:i + 3].encode("utf-8")) % dim] += 1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0:
        vector[0] = 1.0
        return vector
    return [v / norm for v in vector]


def _words(text: str) -> int:
    return len(str(text).split())


class FakeOpenAI:
    """A running fake OpenAI-compatible server (see the module docstring)."""

    def __init__(self, responder: Responder | None = None, latency_s: float = 0.0, embed_dim: int = 64):
        self.responder = responder or default_answer
        self.latency_s = latency_s
        self.embed_dim = embed_dim
        self.faults: collections.deque[Fault] = collections.deque()
        self.fault_for: Callable[[str, dict], Fault | None] | None = None
        self.requests: list[tuple[str, dict, dict]] = []
        self.calls_by_model: collections.Counter[str] = collections.Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fake-openai-{self.port}", daemon=True)
        self._thread.start()

    def __enter__(self) -> FakeOpenAI:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

    def reset_counts(self) -> None:
        with self._lock:
            self.requests.clear()
            self.calls_by_model.clear()
            self.max_in_flight = self.in_flight

    # --- used by the handler threads -------------------------------------------------------------------
    def _enter(self, path: str, body: dict, headers: dict) -> Fault | None:
        with self._lock:
            self.requests.append((path, body, headers))
            self.calls_by_model[str(body.get("model"))] += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            fault = self.faults.popleft() if self.faults else None
        if fault is None and self.fault_for is not None:
            fault = self.fault_for(path, body)
        return fault

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _models(self) -> dict:
        with self._lock:
            names = sorted(set(self.calls_by_model) | {"fake-model"})
        return {"object": "list", "data": [{"id": n, "object": "model", "owned_by": "fake"} for n in names]}

    def _chat(self, body: dict, fault: Fault | None) -> dict:
        if fault is not None and fault.malformed:
            content = "Sure! Here is the answer you wanted: {not json"
        else:
            produced = self.responder(body)
            content = produced if isinstance(produced, str) else json.dumps(produced, ensure_ascii=False)
        prompt_tokens = sum(_words(m.get("content", "")) for m in body.get("messages", []))
        completion_tokens = _words(content)
        limit = body.get("max_tokens") or body.get("max_completion_tokens")
        finish = "length" if limit is not None and completion_tokens > int(limit) else "stop"
        return {
            "id": f"chatcmpl-fake-{time.monotonic_ns()}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake-model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }

    def _embeddings(self, body: dict) -> dict:
        inputs = body.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        data = [{"object": "embedding", "index": i, "embedding": trigram_vector(str(t), self.embed_dim)}
                for i, t in enumerate(inputs)]
        tokens = sum(_words(t) for t in inputs)
        return {"object": "list", "model": body.get("model", "fake-model"), "data": data,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def _handler_for(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints do

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in two writes: without NODELAY, Nagle's algorithm meets the client's
            # delayed ACK and every reply waits ~40 ms.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, server._models())
            else:
                self._send(404, _error_body(404, f"no route GET {self.path}"))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._send(400, _error_body(400, "request body is not JSON"))
                return
            path = self.path.split("?")[0].rstrip("/")
            if not path.endswith(("/chat/completions", "/embeddings")):
                self._send(404, _error_body(404, f"no route POST {self.path}"))
                return
            fault = server._enter(path, body, dict(self.headers.items()))
            status, headers, reply = 200, {}, None
            try:
                if server.latency_s:
                    time.sleep(server.latency_s)
                if fault is not None and fault.timeout:
                    time.sleep(fault.delay_s)
                if fault is not None and fault.status is not None:
                    status, reply = fault.status, _error_body(fault.status, fault.message)
                    if fault.retry_after is not None:
                        headers["Retry-After"] = f"{fault.retry_after:g}"
                elif path.endswith("/chat/completions"):
                    reply = server._chat(body, fault)
                else:
                    reply = server._embeddings(body)
            except Exception as exc:  # noqa: BLE001 - a responder bug becomes a visible 500
                status, reply = 500, _error_body(500, f"responder failed: {type(exc).__name__}: {exc}")
            finally:
                server._leave()
            self._send(status, reply, headers)

        def _send(self, status: int, reply: dict, headers: dict | None = None) -> None:
            data = json.dumps(reply).encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout): nothing to do
                self.close_connection = True

    return Handler


def _error_body(status: int, message: str) -> dict:
    kind = _ERROR_TYPES.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}
