"""The Eval set page through the router (app.py), with AppTest:
offline path end to end (upload, prepare, exclude, select, reject, store), bad input, and one build
against the fake model server."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.evalset.demo_pool import demo_pool
from core.evalset.store import list_sets, load, load_reserves
from tests.app_pages import APP
from tests.fake_openai import FakeOpenAI
from tests.test_app_data import run, texts
from tests.test_evalset_llm import responder

REPO = Path(__file__).resolve().parents[1]
PAGE = str(REPO / "pages" / "evalset.py")


@pytest.fixture
def router(db_path) -> str:
    """The real router, on a fresh store."""
    return APP


def page(router: str) -> AppTest:
    at = AppTest.from_file(router, default_timeout=120)
    at.switch_page(PAGE)
    return run(at)


def pool_csv(n: int = 400) -> bytes:
    return demo_pool(n, seed=4).to_csv(index=False).encode()


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader(key="evs_upload").set_value((name, data, "text/csv"))
    return run(at)


def frames(at: AppTest) -> list:
    """The page's tables in order: categories, selection, reserves, prompt lengths, audit, dropped queries."""
    return [d.value for d in at.main.dataframe]


def click(at: AppTest, key: str) -> AppTest:
    at.button(key=key).click()
    return run(at)


def test_without_a_pool_the_page_says_what_to_do(router):
    at = page(router)
    assert texts(at.title) == ["Eval set"]
    assert "Upload a query pool" in texts(at.main.info)[0]
    assert not at.error


def test_offline_build_exclude_review_and_store(router, db_path):
    at = page(router)
    at = upload(at, "pool.csv", pool_csv())
    at.number_input(key="evs_size").set_value(60)
    at = click(at, "evs_prepare")
    assert not at.error
    categories = frames(at)[0]
    assert categories["queries"].is_monotonic_decreasing
    assert categories["samples"].str.count(" · ").max() == 2  # three samples
    smallest = categories["category"].iloc[-1]
    at.multiselect(key="evs_exclude").set_value([smallest])
    at.number_input(key="evs_size").set_value(20)  # the size may change after preparing
    at.number_input(key="evs_reserves").set_value(3)  # and the number of reserves
    at = click(at, "evs_finish")
    selected = frames(at)[1]
    # exactly the size asked (it used to be up to size + buffer); the buffer is kept apart as reserves
    assert len(selected) == 20 and smallest not in set(selected["category"])
    spare = frames(at)[2]
    assert len(spare) == 3 and not set(spare["query_id"]) & set(selected["query_id"])
    assert set(selected["reason"].str.split(":").str[0]) <= {"allocation", "slice backfill", "replacement"}
    lengths = frames(at)[3].set_index("")
    assert lengths.loc["chosen", "n"] == 20 and lengths.loc["reserves", "n"] == 3
    assert lengths.loc["chosen", "median"] == int(round(selected["prompt"].str.len().median()))
    assert len(at.get("plotly_chart")) == 1
    audit = frames(at)[4]
    assert audit["stage"].tolist()[:2] == ["exact dedup", "pre-filter"]
    assert "Automatic checks passed" in texts(at.success)[0]
    dropped = frames(at)[5]
    assert set(dropped["status"]) >= {"exact_duplicate", "duplicate"}
    assert (dropped.loc[dropped["status"] == "duplicate", "duplicate_of"] != "").all()
    # manual review: reject two, get two replacements, same size
    victims = selected["query_id"].head(2).tolist()
    at.text_input(key="evs_reject_ids").set_value(", ".join(victims + ["zzz"]))
    at = click(at, "evs_reject")
    after = frames(at)[1]
    assert len(after) == len(selected) and not set(victims) & set(after["query_id"])
    assert (after["reason"].str.startswith("replacement: rejected")).sum() >= 2
    assert "zzz" in texts(at.main.info)[-1]
    at.text_input(key="evs_name").set_value("reviewed")
    at = click(at, "evs_store")
    assert "Stored as eval set reviewed" in texts(at.success)[-1]
    info, stored = load("reviewed", db_path)
    assert info.size == len(after) and set(stored["query_id"]) == set(after["query_id"])
    assert load_reserves("reviewed", db_path)["query_id"].tolist() == frames(at)[2]["query_id"].tolist()
    at = click(at, "evs_store")  # the same name again: refused, nothing changes
    assert "already stored" in texts(at.error)[-1]
    assert len(list_sets(db_path)) == 1


def test_a_bad_pool_shows_the_rows_and_stores_nothing(router, db_path):
    at = page(router)
    at = upload(at, "bad.csv", b"query_id,question\n1,hello there\n")
    [error] = texts(at.error)
    assert "no query text column" in error and "'question'" in error
    assert not [b for b in at.button if b.key == "evs_prepare"]
    assert not list_sets(db_path)


def test_the_mapping_step_reads_a_pool_with_other_column_names(router):
    frame = demo_pool(120, seed=4).rename(columns={"query": "instruction", "query_id": "instruction_id"})
    frame["dataset"] = ["koala", "oasst", "vicuna"] * 40
    data = frame.to_csv(index=False).encode()
    at = page(router)
    at = upload(at, "alpaca_like.csv", data)
    assert "no query text column" in texts(at.error)[0]  # not read until the user confirms the columns
    assert not [b for b in at.button if b.key == "evs_prepare"]
    # the proposal: the longest text column is the prompt, *_id the id, "dataset" the category
    assert at.selectbox(key="evs_map_prompt").value == "instruction"
    assert at.selectbox(key="evs_map_query_id").value == "instruction_id"
    assert at.selectbox(key="evs_map_category").value == "dataset"
    at = click(at, "evs_map_apply")
    assert not at.error
    assert "Pool: 120 queries (alpaca_like.csv)" in texts(at.caption)
    at.number_input(key="evs_size").set_value(10)
    at = click(at, "evs_prepare")
    assert not at.error
    assert set(frames(at)[0]["category"]) == {"koala", "oasst", "vicuna"}  # the mapped category column


def test_an_unreachable_endpoint_is_an_error_message(router):
    from tests.test_browser import _free_port

    at = page(router)
    at = click(at, "evs_demo")
    at.toggle(key="evs_use_model").set_value(True)
    at = run(at)
    at.text_input(key="evs_base_url").set_value(f"http://127.0.0.1:{_free_port()}/v1")
    at.text_input(key="evs_model").set_value("judge")
    at = run(at)
    at = click(at, "evs_prepare")
    assert "cannot be used: connection" in texts(at.error)[0]
    assert not [b for b in at.button if b.key == "evs_finish"]


def test_demo_pool_with_the_fake_model(router, monkeypatch):
    with FakeOpenAI(responder=responder) as server:
        at = page(router)
        at = click(at, "evs_demo")
        at.number_input(key="evs_size").set_value(15)
        at.toggle(key="evs_use_model").set_value(True)
        at = run(at)
        assert "needs both a base URL and a model name" in texts(at.error)[0]  # until both are given
        at.text_input(key="evs_base_url").set_value(server.base_url)
        at.text_input(key="evs_model").set_value("judge")
        at = run(at)
        at = click(at, "evs_prepare")
        assert not at.error
        bars = [b.proto.text for b in at.main.get("progress")]  # one per stage with model calls, counts and time
        assert any(t.startswith("Relevance: ") and "model calls (100%)" in t for t in bars), bars
        assert any(t.startswith("Rewrite: ") for t in bars)
        assert at.multiselect(key="evs_exclude").value == ["Account support"]  # the model's suggestion
        at = click(at, "evs_finish")
        audit = frames(at)[4].set_index("stage")
        assert audit.loc["relevance", "method"] == "model" and audit.loc["relevance", "model calls"] > 0
        assert audit.loc["category exclusion", "dropped"].startswith("excluded")
        assert server.max_in_flight <= 4
