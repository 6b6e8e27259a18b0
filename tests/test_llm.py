"""core.llm.client: the retry policy as a table, and the client against the fake OpenAI-compatible server.

Waits are recorded by an injected ``sleep`` that returns at once, so no test sleeps for a policy wait.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.llm.client import (
    ERROR_KINDS,
    Endpoint,
    LLMClient,
    LLMError,
    RetryPolicy,
    check_schema,
    run_sync,
)
from tests.fake_openai import FakeOpenAI, Fault, trigram_vector

KEY_ENV = "EVALBOARD_TEST_LLM_KEY"
SECRET = "sk-test-7f3a9c1e-never-shown"
ANSWER_SCHEMA = {"type": "object", "required": ["label", "score"],
                 "properties": {"label": {"type": "string", "enum": ["good", "bad"]},
                                "score": {"type": "number"}}}
USER = [{"role": "user", "content": "What is the capital of France?"}]


class RecordedSleep:
    def __init__(self):
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def sleep() -> RecordedSleep:
    return RecordedSleep()


def client_for(server: FakeOpenAI, sleep: RecordedSleep, **endpoint) -> LLMClient:
    endpoint.setdefault("timeout_s", 5.0)
    return LLMClient(Endpoint(server.base_url, endpoint.pop("model", "m1"), **endpoint), sleep=sleep,
                     rng=random.Random(0))


# --- the policy --------------------------------------------------------------------------------------------
POLICY = RetryPolicy()


@pytest.mark.parametrize(("kind", "low", "high"), [
    ("timeout", 1.0, 3.0), ("server", 4.0, 8.0), ("malformed", 4.0, 8.0), ("connection", 4.0, 8.0)])
@pytest.mark.parametrize("attempt", [1, 2, 3])
def test_retried_kinds_wait_in_their_band(kind, low, high, attempt):
    waits = [POLICY.wait_for(kind, attempt, None, random.Random(seed)) for seed in range(200)]
    assert all(low <= w <= high for w in waits)
    assert max(waits) - min(waits) > (high - low) / 2  # jittered, not a constant


@pytest.mark.parametrize("kind", ["auth", "bad_request"])
def test_client_errors_are_never_retried(kind):
    assert POLICY.wait_for(kind, 1, None, random.Random(0)) is None
    assert POLICY.wait_for(kind, 1, 5.0, random.Random(0)) is None


@pytest.mark.parametrize("kind", [k for k in ERROR_KINDS if k not in ("auth", "bad_request")])
def test_at_most_three_retries(kind):
    assert POLICY.wait_for(kind, 3, None, random.Random(0)) is not None
    assert POLICY.wait_for(kind, 4, None, random.Random(0)) is None
    assert RetryPolicy(max_retries=0).wait_for(kind, 1, None, random.Random(0)) is None


def test_retry_after_is_honoured_exactly_and_capped():
    assert POLICY.wait_for("rate_limit", 1, 7.5, random.Random(0)) == 7.5
    assert POLICY.wait_for("rate_limit", 2, 0.0, random.Random(0)) == 0.0
    assert POLICY.wait_for("rate_limit", 1, 10_000.0, random.Random(0)) == POLICY.retry_after_cap_s


@given(attempt=st.integers(1, 3), seed=st.integers(0, 2**32 - 1), base=st.floats(0.01, 10.0))
def test_rate_limit_backoff_is_full_jitter_below_the_exponential_ceiling(attempt, seed, base):
    policy = RetryPolicy(rate_limit_base_s=base)
    wait = policy.wait_for("rate_limit", attempt, None, random.Random(seed))
    assert 0.0 <= wait <= min(policy.rate_limit_cap_s, base * 2 ** (attempt - 1))


def test_rate_limit_backoff_grows_with_the_attempt():
    means = [np.mean([POLICY.wait_for("rate_limit", a, None, random.Random(s)) for s in range(400)])
             for a in (1, 2, 3)]
    # Full jitter: mean = base * 2^(n-1) / 2 -> 0.5, 1, 2 s.
    assert means == pytest.approx([0.5, 1.0, 2.0], rel=0.1)


def test_unknown_kind_is_an_error():
    with pytest.raises(ValueError, match="kind must be one of"):
        POLICY.wait_for("cosmic_ray", 1)
    with pytest.raises(ValueError, match="kind must be one of"):
        LLMError("cosmic_ray", "x")


def test_schema_check_names_the_path():
    check_schema({"label": "good", "score": 1}, ANSWER_SCHEMA)
    with pytest.raises(ValueError, match=r"\$\.score is not of type number"):
        check_schema({"label": "good", "score": "high"}, ANSWER_SCHEMA)
    with pytest.raises(ValueError, match="lacks the required key 'score'"):
        check_schema({"label": "good"}, ANSWER_SCHEMA)
    with pytest.raises(ValueError, match=r"\$\.label is not one of"):
        check_schema({"label": "meh", "score": 1}, ANSWER_SCHEMA)
    with pytest.raises(ValueError, match=r"\$\[1\] is not of type integer"):
        check_schema([1, True], {"type": "array", "items": {"type": "integer"}})


# --- the client against the fake server --------------------------------------------------------------------
def test_chat_returns_text_usage_and_finish_reason(server, sleep):
    result = run_sync(client_for(server, sleep).chat(USER, temperature=0.3, max_tokens=50, top_p=0.9))
    assert result.text == "m1 answers: What is the capital of France?"
    assert result.data is None and result.attempts == 1 and result.finish_reason == "stop"
    assert result.usage == {"prompt_tokens": 6, "completion_tokens": 8, "total_tokens": 14}
    path, body, _ = server.requests[0]
    assert path == "/v1/chat/completions"
    assert (body["model"], body["temperature"], body["max_tokens"], body["top_p"]) == ("m1", 0.3, 50, 0.9)
    assert "response_format" not in body


def test_finish_reason_length_is_passed_through(server, sleep):
    assert run_sync(client_for(server, sleep).chat(USER, max_tokens=2)).finish_reason == "length"


def test_json_schema_is_asked_strictly_and_parsed(server, sleep):
    server.responder = lambda request: {"label": "good", "score": 0.75}
    result = run_sync(client_for(server, sleep).chat(USER, json_schema=ANSWER_SCHEMA))
    assert result.data == {"label": "good", "score": 0.75}
    format_ = server.requests[0][1]["response_format"]
    assert format_["type"] == "json_schema"
    assert format_["json_schema"]["strict"] is True and format_["json_schema"]["schema"] == ANSWER_SCHEMA


def test_json_mode_asks_for_a_json_object(server, sleep):
    server.responder = lambda request: {"ok": True}
    result = run_sync(client_for(server, sleep).chat(USER, json_mode=True))
    assert result.data == {"ok": True}
    assert server.requests[0][1]["response_format"] == {"type": "json_object"}


def test_malformed_json_is_retried_then_succeeds(server, sleep):
    server.responder = lambda request: {"label": "bad", "score": 0}
    server.faults.extend([Fault(malformed=True), Fault(malformed=True)])
    result = run_sync(client_for(server, sleep).chat(USER, json_schema=ANSWER_SCHEMA))
    assert result.data == {"label": "bad", "score": 0} and result.attempts == 3
    assert len(sleep.waits) == 2 and all(4.0 <= w <= 8.0 for w in sleep.waits)


@pytest.mark.parametrize("reply", ['{"label": "good", "score": "high"}', '{"label": "good"}',
                                   '{"label": "good", "score": 1} trailing', "```json\n{}\n```"])
def test_json_off_the_schema_is_malformed_after_every_retry(server, sleep, reply):
    server.responder = lambda request: reply
    with pytest.raises(LLMError) as caught:
        run_sync(client_for(server, sleep).chat(USER, json_schema=ANSWER_SCHEMA))
    assert caught.value.kind == "malformed" and caught.value.attempts == 4
    assert len(server.requests) == 4 and len(sleep.waits) == 3


def test_rate_limit_honours_retry_after(server, sleep):
    server.faults.extend([Fault(status=429, retry_after=0.25), Fault(status=429)])
    result = run_sync(client_for(server, sleep).chat(USER))
    assert result.attempts == 3
    assert sleep.waits[0] == 0.25 and 0.0 <= sleep.waits[1] <= 2.0  # second: backoff ceiling 1 s · 2


def test_server_errors_are_retried_three_times_then_reported(server, sleep):
    server.faults.extend([Fault(status=500), Fault(status=503), Fault(status=502), Fault(status=500)])
    with pytest.raises(LLMError) as caught:
        run_sync(client_for(server, sleep).chat(USER))
    assert (caught.value.kind, caught.value.status, caught.value.attempts) == ("server", 500, 4)
    assert len(server.requests) == 4 and len(sleep.waits) == 3


@pytest.mark.parametrize(("status", "kind"), [(401, "auth"), (403, "auth"), (400, "bad_request"),
                                              (404, "bad_request")])
def test_client_errors_are_raised_at_once(server, sleep, status, kind):
    server.faults.append(Fault(status=status, message="go away"))
    with pytest.raises(LLMError, match="go away") as caught:
        run_sync(client_for(server, sleep).chat(USER))
    assert (caught.value.kind, caught.value.status, caught.value.attempts) == (kind, status, 1)
    assert len(server.requests) == 1 and sleep.waits == []


def test_timeout_is_retried_after_a_short_wait(server, sleep):
    server.faults.append(Fault(timeout=True, delay_s=1.0))
    result = run_sync(client_for(server, sleep, timeout_s=0.2).chat(USER))
    assert result.attempts == 2 and len(sleep.waits) == 1 and 1.0 <= sleep.waits[0] <= 3.0


def test_a_closed_port_is_a_connection_error(sleep):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = LLMClient(Endpoint(f"http://127.0.0.1:{port}/v1", "m1", timeout_s=2.0), sleep=sleep)
    with pytest.raises(LLMError) as caught:
        run_sync(client.chat(USER))
    assert caught.value.kind == "connection" and caught.value.attempts == 4


def test_embed_keeps_order_and_normalises(server, sleep):
    texts = [f"text number {i} about {'cats' if i % 2 else 'dogs'}" for i in range(7)]
    vectors = run_sync(client_for(server, sleep).embed(texts, batch_size=3))
    assert vectors.shape == (7, 64)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(vectors, [trigram_vector(t, 64) for t in texts], atol=1e-12)
    assert sorted(len(body["input"]) for _, body, _ in server.requests) == [1, 3, 3]  # batches run concurrently


def test_embeddings_of_similar_texts_are_closer(server, sleep):
    a, b, c = run_sync(client_for(server, sleep).embed(["the cat sat on the mat", "the cat sat on a mat",
                                                        "quarterly revenue forecast"]))
    assert a @ b > 0.8
    assert a @ c < 0.3


def test_embed_of_nothing_is_empty(server, sleep):
    assert run_sync(client_for(server, sleep).embed([])).shape[0] == 0
    assert server.requests == []


def test_map_reaches_but_never_exceeds_the_concurrency(server, sleep):
    server.latency_s = 0.05
    client = client_for(server, sleep, concurrency=3)
    results = run_sync(client.map(lambda q: client.chat([{"role": "user", "content": q}]),
                                  [f"q{i}" for i in range(12)]))
    assert [r.text for r in results] == [f"m1 answers: q{i}" for i in range(12)]
    assert server.max_in_flight == 3


def test_two_maps_at_once_share_the_concurrency(server, sleep):
    server.latency_s = 0.05
    client = client_for(server, sleep, concurrency=2)

    async def both():
        ask = lambda q: client.chat([{"role": "user", "content": q}])  # noqa: E731
        return await asyncio.gather(client.map(ask, [f"a{i}" for i in range(6)]),
                                    client.map(ask, [f"b{i}" for i in range(6)]))

    first, second = run_sync(both())
    assert [r.text for r in first + second] == [f"m1 answers: {p}{i}" for p in "ab" for i in range(6)]
    assert server.max_in_flight == 2


def test_map_returns_each_exception_in_place(server, sleep):
    server.fault_for = lambda path, body: Fault(status=400) if body["messages"][0]["content"] == "bad" else None
    client = client_for(server, sleep)
    results = run_sync(client.map(lambda q: client.chat([{"role": "user", "content": q}]), ["ok", "bad", "ok"]))
    assert isinstance(results[1], LLMError) and results[1].kind == "bad_request"
    assert results[0].text == results[2].text == "m1 answers: ok"


def test_run_sync_works_inside_a_running_loop(server, sleep):
    client = client_for(server, sleep)

    async def caller():
        return run_sync(client.chat(USER))  # e.g. sync code called from an async framework

    assert asyncio.run(caller()).text.startswith("m1 answers")


# --- keys ----------------------------------------------------------------------------------------------------
def test_the_key_is_sent_but_never_logged_raised_or_shown(server, sleep, monkeypatch, caplog):
    monkeypatch.setenv(KEY_ENV, SECRET)
    caplog.set_level(logging.DEBUG)
    client = client_for(server, sleep, api_key_env=KEY_ENV)
    server.faults.extend([Fault(status=500), Fault(status=429, retry_after=0)])
    run_sync(client.chat(USER))
    server.faults.append(Fault(status=401, message="invalid key"))
    with pytest.raises(LLMError) as caught:
        run_sync(client.chat(USER))
    assert {h.get("authorization") or h.get("Authorization") for _, _, h in server.requests} == {f"Bearer {SECRET}"}
    shown = [caplog.text, str(caught.value), repr(caught.value), repr(client), repr(client.endpoint),
             str(caught.value.args)]
    assert caplog.text  # something was logged at DEBUG
    assert not [text for text in shown if SECRET in text]


def test_the_key_is_read_at_call_time(server, sleep, monkeypatch):
    client = client_for(server, sleep, api_key_env=KEY_ENV)
    for key in ("sk-first", "sk-second"):
        monkeypatch.setenv(KEY_ENV, key)
        run_sync(client.chat(USER))
    assert [h.get("authorization") for _, _, h in server.requests] == ["Bearer sk-first", "Bearer sk-second"]


def test_a_missing_key_names_the_variable_and_sends_nothing(server, sleep, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(LLMError, match=KEY_ENV) as caught:
        run_sync(client_for(server, sleep, api_key_env=KEY_ENV).chat(USER))
    assert caught.value.kind == "auth" and caught.value.attempts == 1 and server.requests == []


def test_without_a_key_variable_a_placeholder_is_sent(server, sleep):
    run_sync(client_for(server, sleep).chat(USER))
    assert server.requests[0][2].get("authorization") == "Bearer not-needed"


def test_a_key_quoted_by_the_server_is_masked(server, sleep, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    server.faults.append(Fault(status=401, message=f"Incorrect API key provided: {SECRET}"))
    with pytest.raises(LLMError) as caught:
        run_sync(client_for(server, sleep, api_key_env=KEY_ENV).chat(USER))
    assert str(caught.value) == "auth (HTTP 401): Incorrect API key provided: ***"
