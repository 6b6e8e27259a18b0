"""The answer collector against fake OpenAI-compatible servers on 127.0.0.1, one per provider.

Retry waits go to a recording ``sleep`` that returns at once; only the fake servers' latencies are real.
"""

from __future__ import annotations

import asyncio
import logging
import random

import pandas as pd
import pytest

from core.collect import (
    CollectStore,
    Query,
    RunMismatch,
    RunSettings,
    answers_table,
    campaign_answers,
    collect,
    parse_models,
    summarize,
)
from core.collect.queries import queries_from_frame
from core.collect.results import ModelProgress, Progress
from core.collect.summary import to_json, to_text
from core.llm.cleaning import clean_answer
from core.llm.client import run_sync
from tests.conftest import snapshot
from tests.fake_openai import FakeOpenAI, Fault
from tests.test_llm import RecordedSleep

SECRET = "sk-collect-3b1f-never-stored"
KEY_ENV = "EVALBOARD_TEST_COLLECT_KEY"


@pytest.fixture
def servers():
    """Three fake providers."""
    made = [FakeOpenAI() for _ in range(3)]
    try:
        yield made
    finally:
        for server in made:
            server.stop()


def entry(name: str, server: FakeOpenAI, provider: str, **extra) -> dict:
    return {"name": name, "provider": provider, "base_url": server.base_url, "model": f"{name}-id", **extra}


def make_queries(n: int) -> list[Query]:
    return [Query(f"q{i:03d}", f"prompt number {i}") for i in range(n)]


def run(config, queries, db_path, sleep=None, name="r", on_progress=None, **settings):
    settings = RunSettings(name, sleep=sleep or RecordedSleep(), rng=random.Random(0), **settings)
    return run_sync(collect(config, queries, db_path, settings, on_progress))


def stored(db_path, table="collect_answers") -> list[tuple]:
    with CollectStore(db_path) as store:  # creates the tables when the run has not yet
        return store.con.execute(f"SELECT query_id, model FROM {table} ORDER BY query_id, model").fetchall()


def test_each_provider_reaches_but_never_exceeds_its_limit(servers, db_path):
    fast, slow, local = servers
    for server in servers:
        server.latency_s = 0.05  # long enough for every worker's request to overlap even on a busy machine
    config = parse_models({"providers": {"openai": {"concurrency": 4}, "gemini": {"concurrency": 2}},
                           "models": [entry("gpt", fast, "openai"), entry("gpt-mini", fast, "openai"),
                                      entry("gem", slow, "gemini"), entry("llama", local, "doubao")]})
    outcome = run(config, make_queries(24), db_path)
    assert (outcome.asked, outcome.answered, outcome.failed) == (96, 96, 0)
    # Two models share the openai limit of 4 (one server serves both); doubao's default is 3.
    assert (fast.max_in_flight, slow.max_in_flight, local.max_in_flight) == (4, 2, 3)
    assert fast.calls_by_model == {"gpt-id": 24, "gpt-mini-id": 24}


def test_a_model_share_limits_it_within_its_provider(servers, db_path):
    servers[0].latency_s = 0.03
    config = parse_models({"models": [entry("a", servers[0], "openai", concurrency=2)]})
    run(config, make_queries(12), db_path)
    assert servers[0].max_in_flight == 2


def test_a_slow_provider_does_not_hold_up_another(servers, db_path):
    slow, fast, _ = servers
    slow.latency_s = 0.3
    config = parse_models({"providers": {"slowco": {"concurrency": 1}},
                           "models": [entry("slow", slow, "slowco"), entry("fast", fast, "fastco")]})
    seen = []
    run(config, make_queries(3), db_path,
        on_progress=lambda p: seen.append((p.models["slow"].done, p.models["fast"].done)))
    fast_finished = next(slow_done for slow_done, fast_done in seen if fast_done == 3)
    assert fast_finished <= 1  # all fast answers arrived while the slow provider was on its first
    assert seen[-1] == (3, 3)


def test_queries_are_asked_in_priority_order(servers, db_path):
    queries = [Query("low", "a", priority=0), Query("high", "b", priority=9), Query("mid", "c", priority=3)]
    ordered = queries_from_frame(pd.DataFrame([q.__dict__ for q in queries]))
    config = parse_models({"models": [entry("m", servers[0], "x", concurrency=1)]})
    run(config, ordered, db_path)
    assert [body["messages"][-1]["content"] for _, body, _ in servers[0].requests] == ["b", "c", "a"]


def test_generation_parameters_are_sent(servers, db_path):
    config = parse_models({"defaults": {"temperature": 0.7, "max_tokens": 64},
                           "models": [entry("m", servers[0], "x", params={"temperature": 0.1, "top_p": 0.5})]})
    run(config, make_queries(1), db_path)
    body = servers[0].requests[0][1]
    assert (body["temperature"], body["max_tokens"], body["top_p"], body["model"]) == (0.1, 64, 0.5, "m-id")
    assert body["messages"] == [{"role": "user", "content": "prompt number 0"}]


def test_each_error_type_gets_its_policy(servers, db_path):
    server = servers[0]
    # Requests go out one at a time (concurrency 1) and each takes the next fault; Fault() is a normal reply.
    server.faults.extend([Fault(status=429, retry_after=0.5), Fault(status=429), Fault(),  # q000: Retry-After, backoff
                          Fault(timeout=True, delay_s=1.0), Fault(),                       # q001: short wait
                          Fault(status=503), Fault(),                                      # q002: medium wait
                          Fault(status=400),                                               # q003: not retried
                          *[Fault(status=500)] * 4])                                       # q004: gives up
    config = parse_models({"models": [entry("m", server, "x", concurrency=1, timeout_s=0.25)]})
    sleep = RecordedSleep()
    outcome = run(config, make_queries(6), db_path, sleep=sleep)
    assert (outcome.answered, outcome.failed) == (4, 2)
    waits = sleep.waits
    assert waits[0] == 0.5 and 0 <= waits[1] <= 2.0 and 1.0 <= waits[2] <= 3.0 and 4.0 <= waits[3] <= 8.0
    assert len(waits) == 4 + 3  # and three medium waits before q004 is given up
    assert all(4.0 <= w <= 8.0 for w in waits[4:])
    with CollectStore(db_path) as store:
        answers = store.answers(store.run_id("r")).set_index("query_id")["attempts"].to_dict()
        failures = store.failures(store.run_id("r")).set_index("query_id")
    assert answers == {"q000": 3, "q001": 2, "q002": 2, "q005": 1}
    assert failures.loc["q003", ["kind", "status", "attempts"]].tolist() == ["bad_request", 400, 1]
    assert failures.loc["q004", ["kind", "status", "attempts"]].tolist() == ["server", 500, 4]
    assert len(server.requests) == 3 + 2 + 2 + 1 + 4 + 1


def test_an_auth_error_stops_only_its_model(servers, db_path):
    good, bad, _ = servers
    bad.fault_for = lambda path, body: Fault(status=401, message="invalid api key")
    config = parse_models({"models": [entry("good", good, "openai"), entry("bad", bad, "gemini")]})
    outcome = run(config, make_queries(30), db_path)
    assert outcome.answered == 30 and outcome.failed == 0 and outcome.skipped == 30
    assert list(outcome.stopped_models) == ["bad"]
    assert len(bad.requests) <= config.model_limit(config.models[1])  # only what was in flight at the first 401
    with CollectStore(db_path) as store:
        failures = store.failures(store.run_id("r"))
        summary = summarize(store, "r")
    assert failures[["query_id", "model", "kind", "status"]].values.tolist() == [["", "bad", "auth", 401]]
    bad_summary = next(m for m in summary.models if m.model == "bad")
    assert bad_summary.stopped.startswith("model stopped") and bad_summary.missing == 30
    assert "STOPPED" in to_text(summary)
    # Fixed key, same run name: only the stopped model is asked, and the stop is forgotten.
    bad.fault_for = None
    outcome = run(config, make_queries(30), db_path)
    assert (outcome.asked, outcome.answered, outcome.already_answered) == (30, 30, 30)
    assert len(stored(db_path)) == 60 and stored(db_path, "collect_errors") == []


def test_a_missing_key_variable_stops_the_model_without_a_request(servers, db_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    config = parse_models({"models": [entry("keyed", servers[0], "openai", api_key_env=KEY_ENV),
                                      entry("local", servers[1], "local")]})
    outcome = run(config, make_queries(4), db_path)
    assert servers[0].requests == [] and outcome.answered == 4
    assert KEY_ENV in outcome.stopped_models["keyed"]


def test_interrupted_then_resumed_gives_every_answer_exactly_once(servers, db_path):
    for server in servers[:2]:
        server.latency_s = 0.02
    config = parse_models({"models": [entry("a", servers[0], "openai"), entry("b", servers[1], "gemini")]})
    queries = make_queries(40)

    async def interrupted():
        task = asyncio.ensure_future(collect(config, queries, db_path, RunSettings("r", sleep=RecordedSleep())))
        while len(stored(db_path)) < 25:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run_sync(interrupted())
    first = set(stored(db_path))
    assert 25 <= len(first) < 80
    for server in servers:
        server.reset_counts()
    outcome = run(config, queries, db_path)
    asked_again = {(body["messages"][0]["content"], body["model"]) for s in servers for _, body, _ in s.requests}
    assert not {(f"prompt number {int(q[1:])}", f"{m}-id") for q, m in first} & asked_again
    assert outcome.already_answered == len(first) and outcome.answered == 80 - len(first)
    everything = stored(db_path)
    assert len(everything) == len(set(everything)) == 80


def test_a_changed_prompt_under_the_same_run_name_is_refused(servers, db_path):
    config = parse_models({"models": [entry("a", servers[0], "x")]})
    run(config, make_queries(3), db_path)
    before = snapshot(db_path)
    changed = [Query("q000", "a different prompt"), *make_queries(3)[1:]]
    with pytest.raises(RunMismatch, match="query id\\(s\\) q000"):
        run(config, changed, db_path)
    assert snapshot(db_path) == before


def test_answers_are_cleaned_and_the_raw_text_kept(servers, db_path):
    raw = "Paris is the capital [1]. See https://en.wikipedia.org/wiki/Paris 🇫🇷  for more.【2】"
    servers[0].responder = lambda body: raw
    config = parse_models({"models": [entry("a", servers[0], "x"), entry("b", servers[1], "y")]})
    run(config, make_queries(2), db_path)
    with CollectStore(db_path) as store:
        answers = store.answers(store.run_id("r"))
    mine = answers[answers["model"] == "a"]
    assert (mine["answer_raw"] == raw).all()
    assert (mine["answer"] == clean_answer(raw)).all()
    assert not mine["answer"].str.contains("https|\\[1\\]|【2】|🇫🇷").any()


def test_no_key_in_any_log_line_or_stored_row(servers, db_path, monkeypatch, caplog):
    monkeypatch.setenv(KEY_ENV, SECRET)
    caplog.set_level(logging.DEBUG)
    servers[0].faults.extend([Fault(status=500), Fault(status=429, retry_after=0), Fault(status=400)])
    servers[1].fault_for = lambda path, body: Fault(status=401, message="bad key")
    config = parse_models({"models": [entry("a", servers[0], "x", api_key_env=KEY_ENV),
                                      entry("b", servers[1], "y", api_key_env=KEY_ENV)]})
    run(config, make_queries(5), db_path)
    assert servers[0].requests[0][2]["authorization"] == f"Bearer {SECRET}"  # the key was used …
    with CollectStore(db_path) as store:
        summary = summarize(store, "r")
        exported = answers_table(store, "r", include_raw=True).frame
    everything = [caplog.text, repr(snapshot(db_path)), to_text(summary), to_json(summary), exported.to_csv()]
    assert caplog.text and not [text for text in everything if SECRET in text]  # … and shown nowhere


def test_summary_counts_latency_and_tokens(servers, db_path):
    servers[0].faults.append(Fault(status=400))
    config = parse_models({"models": [entry("a", servers[0], "x", concurrency=1), entry("b", servers[1], "y")]})
    run(config, make_queries(4), db_path)
    with CollectStore(db_path) as store:
        summary = summarize(store, "r")
    a, b = sorted(summary.models, key=lambda m: m.model)
    assert (summary.queries, summary.answers, summary.expected, summary.complete) == (4, 7, 8, False)
    assert summary.failures_by_kind() == {"bad_request": 1}
    assert (a.answers, a.missing, a.failures) == (3, 1, {"bad_request": 1})
    # Fake usage: prompt = words of the prompt (3), completion = words of "<model-id> answers: <prompt>" (5).
    assert (b.prompt_tokens, b.completion_tokens) == (4 * 3, 4 * 5)
    assert 0 < b.latency_p50_s <= b.latency_p90_s <= b.latency_p99_s
    assert "1 missing" in to_text(summary)


def test_export_is_a_campaign_answers_file(servers, db_path, tmp_path):
    config = parse_models({"models": [entry("a", servers[0], "x"), entry("b", servers[1], "y")]})
    queries = [Query("q1", "first?", "geo"), Query("q2", "second?", "math")]
    run(config, queries, db_path)
    with CollectStore(db_path) as store:
        plain = answers_table(store, "r").frame
        raw = answers_table(store, "r", include_raw=True, game_id="search").frame
        campaign = campaign_answers(store, "r", game_id="search")
    assert list(plain.columns) == ["query_id", "prompt", "model", "answer", "category"]
    assert list(raw.columns) == ["query_id", "prompt", "model", "answer", "category", "game_id", "answer_raw"]
    assert plain[["query_id", "model"]].values.tolist() == [["q1", "a"], ["q1", "b"], ["q2", "a"], ["q2", "b"]]
    assert campaign[["query_id", "model", "category", "game_id"]].values.tolist() == [
        ["q1", "a", "geo", "search"], ["q1", "b", "geo", "search"], ["q2", "a", "math", "search"],
        ["q2", "b", "math", "search"]]


def test_an_answer_cleaned_to_nothing_is_left_out_of_the_export(servers, db_path):
    servers[0].responder = lambda body: "https://example.com 😀"
    config = parse_models({"models": [entry("a", servers[0], "x"), entry("b", servers[1], "y")]})
    run(config, make_queries(2), db_path)
    with CollectStore(db_path) as store:
        exported = answers_table(store, "r")
    assert exported.left_out_empty == 2 and set(exported.frame["model"]) == {"b"}


# --- progress -------------------------------------------------------------------------------------------------
class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_eta_follows_the_slowest_model():
    clock = FakeClock()
    progress = Progress({"fast": ModelProgress(total=100), "slow": ModelProgress(total=100, done_before=20)},
                        clock=clock)
    assert progress.eta_s() is None  # no pace yet
    clock.now += 10
    progress.models["fast"].answered = 50  # 5/s, 50 left -> 10 s
    progress.models["slow"].answered = 8
    progress.models["slow"].failed = 2     # 1/s, 70 left -> 70 s
    assert progress.eta_s() == pytest.approx(70.0)
    assert progress.totals() == {"total": 200, "done": 78, "answered": 58, "failed": 2, "skipped": 0,
                                 "remaining": 120}
    assert progress.line().startswith("78/200 answers · 2 errors · ETA 1m10s · fast 50/100 · slow 28/100 ✗2")
