"""The models file (TOML) and the eval-set file of the answer collector."""

from __future__ import annotations

import pytest

from core.collect.config import ConfigError, load_models, parse_models
from core.collect.queries import load_queries
from core.io import InputError

EXAMPLE = b"""
[defaults]
temperature = 0.7
max_tokens = 1024
[providers.openai]
concurrency = 10
[[models]]
name = "gpt-4o"
provider = "openai"
base_url = "https://api.openai.com/v1"
model = "gpt-4o-2024-08-06"
api_key_env = "OPENAI_API_KEY"
params = { temperature = 0.2 }
concurrency = 8   # optional
"""


def model(**fields) -> dict:
    entry = {"name": "m", "provider": "other", "base_url": "http://127.0.0.1:1/v1", "model": "m-id"}
    entry.update(fields)
    return entry


def test_the_documented_example():
    config = load_models(EXAMPLE, name="models.toml")
    (spec,) = config.models
    assert (spec.name, spec.provider, spec.model, spec.api_key_env) == ("gpt-4o", "openai", "gpt-4o-2024-08-06",
                                                                        "OPENAI_API_KEY")
    assert spec.params == {"temperature": 0.2, "max_tokens": 1024}  # the model's own value wins over [defaults]
    assert config.provider_limits == {"openai": 10}
    assert config.model_limit(spec) == 8
    endpoint = spec.endpoint(config.limit_of(spec))
    assert (endpoint.concurrency, endpoint.api_key_env, endpoint.base_url) == (8, "OPENAI_API_KEY",
                                                                             "https://api.openai.com/v1")


def test_a_path_is_read_too(tmp_path):
    path = tmp_path / "models.toml"
    path.write_bytes(EXAMPLE)
    assert load_models(path).models[0].name == "gpt-4o"
    assert load_models(str(path)).source == str(path)


@pytest.mark.parametrize(("provider", "limit"), [("openai", 10), ("Azure", 10), ("gemini", 5), ("doubao", 3),
                                                 ("anthropic", 5), ("local-vllm", 5)])
def test_provider_default_concurrency(provider, limit):
    config = parse_models({"models": [model(provider=provider)]})
    assert config.provider_limits == {provider.lower(): limit}


def test_provider_override_and_a_model_share_never_above_its_provider():
    config = parse_models({"providers": {"gemini": {"concurrency": 2}},
                           "models": [model(name="a", provider="gemini", concurrency=7),
                                      model(name="b", provider="gemini"), model(name="c", provider="doubao")]})
    a, b, c = config.models
    assert config.provider_limits == {"gemini": 2, "doubao": 3}
    assert (config.model_limit(a), config.model_limit(b), config.model_limit(c)) == (2, 2, 3)


def test_the_config_table_shows_only_the_key_variable(monkeypatch):
    monkeypatch.setenv("SET_KEY", "sk-secret-value")
    monkeypatch.delenv("UNSET_KEY", raising=False)
    config = parse_models({"models": [model(name="a", api_key_env="SET_KEY"), model(name="b", api_key_env="UNSET_KEY"),
                                      model(name="c")]})
    rows = config.table({"SET_KEY": "sk-secret-value"})
    assert [(r["api_key_env"], r["key_set"]) for r in rows] == [("SET_KEY", True), ("UNSET_KEY", False),
                                                                 ("(none: local server)", None)]
    assert "sk-secret-value" not in repr(rows) + repr(config)


@pytest.mark.parametrize(("entry", "message"), [
    ({"base_url": None}, r"model 1 \('m'\): field 'base_url' is required"),
    ({"name": ""}, r"model 1: field 'name' is required"),
    ({"base_url": "api.openai.com/v1"}, r"model 1 \('m'\): field 'base_url' must start with http"),
    ({"concurrency": 0}, r"model 1 \('m'\): field 'concurrency' must be a positive integer, not 0"),
    ({"concurrency": 2.5}, r"field 'concurrency' must be a positive integer"),
    ({"api_key_env": "sk-abc123"}, r"field 'api_key_env' must be the NAME of an environment variable"),
    ({"params": "hot"}, r"model 1 \('m'\): field 'params' must be a table"),
    ({"timeout_s": -1}, r"field 'timeout_s' must be a positive number"),
    ({"temperature": 0.3}, r"model 1 \('m'\): unknown field 'temperature'"),
])
def test_a_bad_model_entry_names_the_entry_and_the_field(entry, message):
    fields = model(**entry)
    fields = {k: v for k, v in fields.items() if v is not None}
    with pytest.raises(ConfigError, match=message):
        parse_models({"models": [fields]})


def test_every_problem_is_reported_at_once():
    with pytest.raises(ConfigError) as caught:
        parse_models({"providers": {"openai": {"concurrency": "lots"}},
                      "models": [model(name="a"), model(name="a"), model(name="b", model="")]})
    text = str(caught.value)
    assert "3 problems" in text
    assert "[providers.openai]: field 'concurrency'" in text
    assert "model 2 ('a'): field 'name' repeats model 1" in text
    assert "model 3 ('b'): field 'model' is required" in text


@pytest.mark.parametrize(("text", "message"), [(b"models = [", "not valid TOML"),
                                                (b"[defaults]\ntemperature = 1\n", "no \\[\\[models\\]\\] entries"),
                                                (b"\xff\xfe", "not UTF-8"),
                                                (b"[model]\nname='x'\n[[models]]\nname='y'", "unknown section")])
def test_a_file_that_is_not_a_models_file(text, message):
    with pytest.raises(ConfigError, match=message):
        load_models(text, name="models.toml")


def test_a_missing_file():
    with pytest.raises(ConfigError, match="no such file"):
        load_models("/nonexistent/models.toml")


# --- queries ------------------------------------------------------------------------------------------------
def test_queries_from_csv_in_priority_then_file_order():
    csv = b"query_id,prompt,category,priority\nq1,one,a,\nq2,two,b,2\nq3,three,,5\nq4,four,a,2\n"
    queries = load_queries(csv, name="evalset.csv")
    assert [q.query_id for q in queries] == ["q3", "q2", "q4", "q1"]
    assert (queries[0].category, queries[0].priority, queries[-1].category) == (None, 5.0, "a")


def test_queries_from_jsonl_keep_text_ids():
    jsonl = b'{"query_id": 7, "prompt": "seven"}\n{"query_id": "007", "prompt": " spaced "}\n'
    queries = load_queries(jsonl, name="evalset.jsonl")
    assert [(q.query_id, q.prompt) for q in queries] == [("7", "seven"), ("007", " spaced ")]


def test_a_query_column_is_the_prompt_when_there_is_no_prompt_column():
    queries = load_queries(b"query_id,query,category\nq1,How do I bake bread?,Cooking\n", name="evalset.csv")
    assert [(q.query_id, q.prompt, q.category) for q in queries] == [("q1", "How do I bake bread?", "Cooking")]


def test_bad_queries_name_rows_and_columns():
    csv = b"query_id,prompt,priority\nq1,one,1\nq1,two,x\n,three,\nq4,  ,\n"
    with pytest.raises(InputError) as caught:
        load_queries(csv, name="evalset.csv")
    text = str(caught.value)
    assert "evalset.csv: rejected" in text
    assert "empty query id [column 'query_id']\n    1 row: 3" in text
    assert "empty prompt [column 'prompt']\n    1 row: 4" in text
    assert "query id appears more than once [column 'query_id']\n    2 rows: 1 ('q1'), 2 ('q1')" in text
    assert "priority must be a number [column 'priority']\n    1 row: 2 ('x')" in text


def test_missing_columns_are_named():
    with pytest.raises(InputError, match=r"required column missing.*\[columns 'query_id', 'prompt'\]"):
        load_queries(b"id,text\n1,hello\n", name="evalset.csv")
