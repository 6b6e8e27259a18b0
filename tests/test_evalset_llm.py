"""The eval-set builder against a fake OpenAI-compatible server on 127.0.0.1 (real HTTP): every model
stage, deterministic answers, and programmed faults (429, 500, timeouts, malformed JSON) that the
retries absorb or the stated fallbacks replace."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from core.collect.queries import load_queries
from core.evalset import build, eval_set, reject
from core.evalset.categories import OTHER
from core.evalset.demo_pool import demo_pool
from core.evalset.results import checks, reserves, write_outputs
from core.evalset.scoring import heuristic_scores
from core.evalset.settings import BuildSettings, ModelConfig
from core.llm.client import LLMClient
from tests.fake_openai import FakeOpenAI, Fault

TOPIC_WORDS = {"Cooking": ("recipe", "cook", "bake", "oven", "make", "shopping list", "红烧肉", "饺子"),
               "Travel": ("visit", "itinerary", "travel", "trains", "neighbourhoods", "documents"),
               "Programming": ("function", "program", "csv", "threads", "unit tests"),
               "Finance": ("savings", "tax", "pay off", "dollars"),
               "Health": ("remedies", "doctor", "exercises", "causes", "manage"),
               "Account support": ("account", "reset")}
# answered in other spellings on purpose: the builder must match them back (fuzzy matching)
SPELLING = {"Cooking": "cooking", "Travel": "Travel & tourism", "Programming": "Programing", "Finance": "FINANCE",
            "Health": "Health", "Account support": "account"}


def _numbered(content: str) -> list[str]:
    out = []
    for line in content.splitlines():
        m = re.match(r"^(\d+)\t(.*)$", line)
        if m:
            out.append(m.group(2))
    return out


def _topic(text: str) -> str:
    lower = text.lower()
    return next((t for t, words in TOPIC_WORDS.items() if any(w in lower for w in words)), "Other")


def responder(request: dict) -> dict:
    """Deterministic answers for every prompt of core.evalset.prompts, keyed by the schema's name."""
    kind = request["response_format"]["json_schema"]["name"]
    content = request["messages"][-1]["content"]
    if kind == "relevance":
        query = json.loads(content.rsplit("Query: ", 1)[1])
        return {"relevant": "no" if "weather" in query.lower() else "yes"}
    if kind == "rewrite":
        query = json.loads(content.rsplit("Query: ", 1)[1])
        return {"rewritten": re.sub(r"^(please |hey, |quick question: |can you tell me )+", "", query).strip()}
    if kind == "review":
        lines = _numbered(content)
        return {"pairs": [{"id": i, "same": i % 2 == 0} for i in range(len(lines))]}
    if kind == "canonical":
        return {"choice": len(_numbered(content)) - 1}
    if kind == "categories":
        return {"categories": [c for c in TOPIC_WORDS]}
    if kind == "classification" and "first half" in content.split("\n", 1)[0]:  # into subcategories
        lines = _numbered(content)
        return {"labels": [{"id": i, "category": "First Half" if i % 2 else "second half"}  # fuzzy-matched back
                           for i in range(len(lines))]}
    if kind == "classification":
        return {"labels": [{"id": i, "category": SPELLING.get(_topic(json.loads(t)), "Other")}
                           for i, t in enumerate(_numbered(content))]}
    if kind == "exclusions":
        return {"exclude": ["Account Support"]}
    if kind == "subcategories":
        return {"subcategories": ["first half", "second half"]}
    if kind == "scores":
        out = []
        for i, t in enumerate(_numbered(content)):
            s = heuristic_scores(json.loads(t))
            out.append({"id": i, **{k: int(v) if isinstance(v, float) else v for k, v in s.items()}})
        return {"scores": out}
    raise AssertionError(f"unexpected prompt {kind}")


async def no_sleep(_seconds: float) -> None:
    return None


def settings_for(server: FakeOpenAI, size: int = 30, *, embed: bool = False, timeout_s: float = 10.0,
                 **kwargs) -> BuildSettings:
    config = ModelConfig(server.base_url, "judge", concurrency=4, embed_model="embedder" if embed else None,
                         timeout_s=timeout_s)
    clients = {"chat": LLMClient(config.endpoint(), sleep=no_sleep)}
    if embed:
        clients["embed"] = LLMClient(config.endpoint("embedder"), sleep=no_sleep)
    return BuildSettings(size=size, model=config, clients=clients, **kwargs)


def small_pool(n: int = 300) -> pd.DataFrame:
    pool = demo_pool(n, seed=5)
    extra = pd.DataFrame({"query_id": ["w1", "w2"], "query": ["What is the weather in Paris tomorrow morning?",
                                                               "Will the weather be sunny in Rome next week?"]})
    return pd.concat([pool, extra], ignore_index=True)


@pytest.fixture
def server():
    with FakeOpenAI(responder=responder) as s:
        yield s


def _stage(state, name):
    return next(s for s in state.audit.stages if s.stage == name)


def test_every_model_stage_runs_and_the_answers_are_used(server, tmp_path):
    state = build(small_pool(), settings_for(server, exclude=("account support",)))
    pool = state.pool
    # relevance: the weather queries were judged irrelevant
    assert set(pool.loc[pool["status"] == "irrelevant", "query_id"]) == {"w1", "w2"}
    # rewrite: fillers gone, original kept
    rewritten = pool[pool["query"] != pool["raw_query_original"]]
    assert len(rewritten) > 0
    assert not rewritten["query"].str.startswith("please ").any()
    # categories discovered by the model, answers matched back to its names despite the spellings
    assert set(state.categories) <= {*TOPIC_WORDS, OTHER}
    assert {"Travel", "Programming", "Finance"} <= set(pool.loc[pool["status"] == "candidate", "category"])
    assert state.suggested_exclusions == ["Account support"]
    assert (pool.loc[pool["category"] == "Account support", "status"].isin(["excluded", "duplicate",
                                                                             "exact_duplicate"])).all()
    table = eval_set(state)
    assert len(table) == 30  # exactly the size asked; the buffer is kept as reserves
    assert len(reserves(state)) == 2 and not set(reserves(state)["query_id"]) & set(table["query_id"])
    assert "Account support" not in set(table["category"])
    assert all(not v for v in checks(state).values())
    assert table["reason"].str.match(r"^(allocation|slice backfill: \w+|replacement: .+)$").all()
    # every call asked for strict JSON at the documented temperature, never more than 4 in flight
    bodies = [body for path, body, _ in server.requests if path.endswith("/chat/completions")]
    temps = {b["response_format"]["json_schema"]["name"]: b["temperature"] for b in bodies}
    assert temps["relevance"] == 0.1 and temps["classification"] == 0.1 and temps.get("subcategories", 0.3) == 0.3
    assert all(b["response_format"]["json_schema"]["strict"] for b in bodies)
    assert server.max_in_flight <= 4
    classify_batches = [b for b in bodies if b["response_format"]["json_schema"]["name"] == "classification"]
    assert max(len(_numbered(b["messages"][-1]["content"])) for b in classify_batches) == 20
    assert all(_stage(state, s).method == "model" for s in ("relevance", "rewrite", "classification", "scoring",
                                                             "subcategories"))
    # the category over 50 queries was split by the model into subcategories of at least 20
    refined = pool[(pool["status"] == "candidate") & (pool["subcategory"] != "")]
    assert not refined.empty
    assert refined.groupby(["category", "subcategory"]).size().min() >= 20
    # the file is the answer collector's queries file as it is
    [path, *_] = write_outputs(state, tmp_path / "set.csv")
    queries = load_queries(path)
    assert sorted(q.query_id for q in queries) == sorted(table["query_id"])
    assert {q.prompt for q in queries} == set(table["prompt"])


def test_retries_absorb_429_500_timeout_and_malformed(server):
    server.faults.extend([Fault(status=429, retry_after=0.01), Fault(status=500), Fault(timeout=True, delay_s=1.0),
                          Fault(malformed=True), Fault(status=503)])
    state = build(small_pool(120), settings_for(server, size=10, timeout_s=0.4))
    # five faults, each retried to success: no stage recorded a failed call
    assert all(s.calls.get("failed", 0) == 0 for s in state.audit.stages)
    assert len(server.faults) == 0
    assert len(eval_set(state)) >= 10


def test_failed_classification_goes_to_other_and_is_never_selected(server):
    def fail_some(path, request):
        if request.get("response_format", {}).get("json_schema", {}).get("name") == "classification" \
                and "Kyoto" in request["messages"][-1]["content"]:
            return Fault(status=500)
        return None

    server.fault_for = fail_some
    state = build(small_pool(), settings_for(server, size=40))
    failed = state.pool[state.pool["classification_failed"]]
    assert len(failed) >= 1
    assert (failed["category"] == OTHER).all() and (failed["status"] == "classification_failed").all()
    record = _stage(state, "classification")
    assert record.calls["failed"] >= 1 and record.calls["errors"] == {"server": record.calls["failed"]}
    assert record.dropped["classification_failed"] == len(failed)
    assert not set(failed["query_id"]) & set(eval_set(state)["query_id"])
    assert checks(state)["classification_failed_selected"] == []


def test_malformed_scores_fall_back_to_the_heuristic(server):
    server.fault_for = lambda path, req: Fault(malformed=True) if req.get("response_format", {}).get(
        "json_schema", {}).get("name") == "scores" else None
    state = build(small_pool(150), settings_for(server, size=10))
    record = _stage(state, "scoring")
    assert record.calls["failed"] == record.calls["calls"] > 0
    assert record.calls["errors"] == {"malformed": record.calls["failed"]}
    assert any("heuristic" in n for n in record.notes)
    row = state.pool[state.pool["status"] == "candidate"].iloc[0]
    assert row["specificity"] == heuristic_scores(row["query"])["specificity"]


def test_cli_with_the_fake_model_reports_the_suggested_exclusions(server, tmp_path, db_path, capsys):
    from core.cli import main

    pool = tmp_path / "pool.csv"
    small_pool(150).to_csv(pool, index=False)
    out = tmp_path / "set.jsonl"
    assert main(["evalset", "build", str(pool), "--size", "8", "--output", str(out), "--base-url", server.base_url,
                 "--model", "judge", "--concurrency", "3"]) == 0
    assert "the model suggests excluding: Account support" in capsys.readouterr().out
    assert len(out.read_text().splitlines()) >= 8
    assert server.max_in_flight <= 3
    audit = json.loads((tmp_path / "set.audit.json").read_text())
    assert audit["settings"]["model"]["api_key_env"] is None and audit["settings"]["model"]["concurrency"] == 3


def test_an_unusable_endpoint_stops_the_build_at_once(server, tmp_path, db_path, capsys):
    from core.cli import main
    from tests.test_browser import _free_port

    pool = tmp_path / "pool.csv"
    small_pool(50).to_csv(pool, index=False)
    out = tmp_path / "set.csv"
    closed = f"http://127.0.0.1:{_free_port()}/v1"  # nothing listens there
    assert main(["evalset", "build", str(pool), "--size", "5", "--output", str(out), "--base-url", closed,
                 "--model", "judge"]) == 2
    assert "cannot be used: connection" in capsys.readouterr().err
    server.fault_for = lambda path, req: Fault(status=401)
    assert main(["evalset", "build", str(pool), "--size", "5", "--output", str(out), "--base-url", server.base_url,
                 "--model", "judge"]) == 2
    assert "cannot be used: auth (HTTP 401)" in capsys.readouterr().err
    assert len(server.requests) == 1 and not out.exists()


def test_embeddings_from_the_endpoint(server):
    state = build(small_pool(150), settings_for(server, size=10, embed=True))
    assert "embeddings endpoint" in _stage(state, "semantic dedup").method
    embedded = [b for path, b, _ in server.requests if path.endswith("/embeddings")]
    assert embedded and all(b["model"] == "embedder" for b in embedded)
    assert state.embeddings.shape[1] == server.embed_dim


def test_manual_review_with_a_model_keeps_the_size(server):
    state = build(small_pool(), settings_for(server, size=12))
    before = eval_set(state)
    victims = before["query_id"].head(3).tolist()
    assert reject(state, victims + ["missing"]) == ["missing"]
    after = eval_set(state)
    assert len(after) == len(before) and not set(victims) & set(after["query_id"])
    assert (state.pool.set_index("query_id").loc[victims, "status"] == "rejected").all()
    assert state.audit.selection["rejected_in_review"] == victims
