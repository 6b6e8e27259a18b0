"""The Collect page through the router (app.py), with AppTest, against fake OpenAI-compatible servers.

A run starts as a background process: the tests wait for it in the store (as a person would watch the
page), and every process they start is stopped (``no_process_left``)."""

from __future__ import annotations

import re
from contextlib import closing
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.campaign import get_campaign
from core.collect import CollectStore
from core.store.connection import connect
from tests.app_pages import APP
from tests.fake_openai import FakeOpenAI, Fault
from tests.test_app_data import click, run, texts
from tests.test_collect_jobs import no_process_left, read_job, wait_until  # noqa: F401 - a fixture

REPO = Path(__file__).resolve().parents[1]
KEY_ENV = "EVALBOARD_TEST_PAGE_KEY"
UNSET_ENV = "EVALBOARD_TEST_PAGE_UNSET_KEY"
SECRET = "sk-page-0c7d-never-shown"
QUERIES = b"query_id,prompt,category\nq1,What is 2+2?,math\nq2,Name a colour.,misc\nq3,Say hi.,misc\n"


@pytest.fixture
def router(db_path) -> str:
    """The real router, on a fresh store."""
    return APP


@pytest.fixture
def servers():
    made = [FakeOpenAI(), FakeOpenAI()]
    try:
        yield made
    finally:
        for server in made:
            server.stop()


def models_toml(servers, second_key: str = KEY_ENV) -> bytes:
    return (f'[[models]]\nname = "alpha"\nprovider = "openai"\nbase_url = "{servers[0].base_url}"\nmodel = "a-id"\n'
            f'api_key_env = "{KEY_ENV}"\n\n'
            f'[[models]]\nname = "beta"\nprovider = "gemini"\nbase_url = "{servers[1].base_url}"\nmodel = "b-id"\n'
            f'api_key_env = "{second_key}"\n').encode()


def page(router: str, models: bytes | None = None, queries: bytes | None = QUERIES) -> AppTest:
    at = AppTest.from_file(router, default_timeout=60)
    at.switch_page(str(REPO / "pages" / "collect.py"))
    at = run(at)
    if models is not None:
        at.file_uploader(key="collect_models_upload").set_value(("models.toml", models, "application/toml"))
    if queries is not None:
        at.file_uploader(key="collect_queries_upload").set_value(("evalset.csv", queries, "text/csv"))
    return run(at)


def job_ended(db_path, run: str = "collection-1"):
    return wait_until(lambda: (j := read_job(db_path, run)) and not j.active and j, "the background job's end")


def everything_shown(at: AppTest) -> str:
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "success", "title", "subheader")
             for e in getattr(at, kind)]
    parts += [e.value.to_csv() for e in at.dataframe]
    parts += [str(m.value) for m in at.metric]
    return "\n".join(map(str, parts))


def test_without_inputs_the_page_says_what_to_do(router):
    at = page(router, queries=None)
    assert texts(at.title) == ["Collect"]
    assert any("Choose a models file and an eval set" in t for t in texts(at.info))


def test_an_invalid_models_file_names_the_entry_and_field(router):
    at = page(router, models=b'[[models]]\nname = "a"\nprovider = "x"\nmodel = "m"\n')
    assert any("model 1 ('a'): field 'base_url' is required" in t for t in texts(at.error))
    assert not at.button


def test_bad_queries_name_rows_and_columns(router, servers, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    at = page(router, models=models_toml(servers), queries=b"query_id,prompt\nq1,\n")
    assert any("empty prompt" in t and "prompt" in t for t in texts(at.error))


def test_collect_show_progress_summary_resume_and_download(router, servers, db_path, monkeypatch, no_process_left):
    monkeypatch.setenv(KEY_ENV, SECRET)
    servers[1].faults.append(Fault(status=400))
    at = page(router, models=models_toml(servers))
    config = at.dataframe[0].value
    assert config[["Model", "Key variable", "Key"]].values.tolist() == [["alpha", KEY_ENV, "set"],
                                                                        ["beta", KEY_ENV, "set"]]
    assert config["Concurrency"].tolist() == [10, 5]
    assert at.button(key="collect_start").label == "Start collection"
    at = click(at, "collect_start")
    assert job_ended(db_path).status == "finished with errors"
    at = run(at)
    assert any("5 answered, 1 failed" in t for t in texts(at.warning))
    assert [m.value for m in at.metric][:2] == ["5 / 6", "1"]
    assert any("bad_request 1" in t for t in texts(at.caption))
    assert any("1 answers are missing" in t for t in texts(at.info))
    assert at.button(key="collect_start").label == "Resume collection"
    at = click(at, "collect_start")
    assert job_ended(db_path).status == "finished"
    at = run(at)
    assert any("asked 1 (query, model) pairs" in t and "5 already answered before" in t for t in texts(at.success))
    assert at.metric[0].value == "6 / 6"
    summary = at.dataframe[-1].value
    assert summary["answers"].tolist() == [3, 3]
    assert "Download 6 answers (CSV)" in at.get("download_button")[0].proto.label
    assert SECRET not in everything_shown(at)
    with CollectStore(db_path) as store:
        assert len(store.answers(store.run_id("collection-1"))) == 6


def test_an_unset_key_is_flagged_and_stops_only_that_model(router, servers, db_path, monkeypatch, no_process_left):
    monkeypatch.setenv(KEY_ENV, SECRET)
    monkeypatch.delenv(UNSET_ENV, raising=False)
    at = page(router, models=models_toml(servers, second_key=UNSET_ENV))
    assert at.dataframe[0].value["Key"].tolist() == ["set", "NOT SET"]
    assert any(UNSET_ENV in t for t in texts(at.warning))
    at = click(at, "collect_start")
    job_ended(db_path)
    at = run(at)
    assert any("beta" in t and "was stopped" in t and UNSET_ENV in t for t in texts(at.error))
    assert servers[1].requests == [] and len(servers[0].requests) == 3
    assert SECRET not in everything_shown(at)


def slow_models(servers, concurrency: int = 1) -> bytes:
    return models_toml(servers).replace(b'api_key_env = "' + KEY_ENV.encode() + b'"\n',
                                        f'api_key_env = "{KEY_ENV}"\nconcurrency = {concurrency}\n'.encode())


def test_a_run_goes_on_without_its_tab_and_a_new_session_follows_and_stops_it(router, servers, db_path,
                                                                               monkeypatch, no_process_left):
    monkeypatch.setenv(KEY_ENV, SECRET)
    for server in servers:
        server.latency_s = 1.0
    queries = b"query_id,prompt\n" + b"".join(b"q%d,question %d\n" % (i, i) for i in range(15))
    first = page(router, models=slow_models(servers), queries=queries)
    first = click(first, "collect_start")
    assert first.button(key="collect_start").disabled  # one job per run: no second start while it runs
    del first  # the tab is closed: its session ends, the job does not
    wait_until(lambda: len(stored_pairs(db_path)) >= 2, "the first answers")
    job = read_job(db_path, "collection-1")
    assert job.active and job.origin == "background"
    second = page(router, queries=None)  # a new session, no inputs chosen
    shown = everything_shown(second)
    assert "Being collected now" in shown and "collection-1" in shown and f"process {job.pid}" in shown
    bar = second.get("progress")[0].proto
    assert re.match(r"\d+ of 30 answers", bar.text) and bar.value > 0
    second = click(second, f"collect_stop_{job.job_id}")
    ended = job_ended(db_path)
    assert (ended.status, ended.exit_code) == ("interrupted", 130)
    answers = len(stored_pairs(db_path))
    assert answers == sum(len(s.requests) for s in servers) < 30  # the answers in flight were stored, none lost
    second = run(second)
    assert "Being collected now" not in everything_shown(second)
    assert any("interrupted" in t and f"{answers} answers stored" in t for t in texts(second.warning))
    assert second.metric[0].value == f"{answers} / 30"


def stored_pairs(db_path) -> list[tuple]:
    with CollectStore(db_path) as store:
        return store.con.execute("SELECT query_id, model FROM collect_answers").fetchall()


def test_a_finished_run_makes_a_campaign_from_its_answers(router, servers, db_path, monkeypatch, no_process_left):
    monkeypatch.setenv(KEY_ENV, SECRET)
    at = click(page(router, models=models_toml(servers)), "collect_start")
    job_ended(db_path)
    at = page(router, queries=None)  # later, in a new session
    assert at.text_input(key="collect_campaign_name").value == "collection-1"
    at.text_input(key="collect_campaign_name").set_value("from-run")
    at.text_input(key="collect_campaign_dimensions").set_value("overall, helpfulness")
    at.text_input(key="collect_campaign_annotators").set_value("ann, bob")
    at.number_input(key="collect_campaign_overlap").set_value(0.25)
    at.number_input(key="collect_campaign_overlap_k").set_value(3)
    at = click(at, "collect_campaign_create")
    assert any("from-run" in t and "created" in t for t in texts(at.success))
    tokens = [d.value for d in at.dataframe if list(d.value.columns) == ["annotator", "token"]]
    assert tokens[0]["annotator"].tolist() == ["ann", "bob"]
    with closing(connect(db_path)) as conn:
        campaign = get_campaign(conn, "from-run")
        stored = conn.execute("SELECT query_id, model FROM campaign_answers WHERE campaign_id = ? ORDER BY 1, 2",
                              [campaign.id]).fetchall()
    assert campaign.dimensions == ("overall", "helpfulness")
    assert (campaign.overlap, campaign.overlap_k) == (0.25, 3)  # the same settings as the Data page's form
    assert stored == sorted(stored_pairs(db_path))
    at = click(at, "collect_campaign_create")  # the same name again: refused, nothing changed
    assert any("already exists" in t for t in texts(at.error))


def test_a_campaign_from_a_run_takes_a_golden_file_and_a_target(router, servers, db_path, monkeypatch,
                                                                   no_process_left):
    monkeypatch.setenv(KEY_ENV, SECRET)
    click(page(router, models=models_toml(servers)), "collect_start")
    job_ended(db_path)
    at = page(router, queries=None)
    golden = b"question,correct_answer,wrong_answer\nWhat is 1+1?,2,3\nCapital of France?,Paris,Rome\n"
    at.file_uploader(key="collect_campaign_golden").set_value(("golden.csv", golden, "text/csv"))
    at.number_input(key="collect_campaign_target").set_value(20)
    at = run(at)
    # the golden supply is shown before anything is stored, as on the Data page
    assert any("Golden supply: each annotator's 20 items plan 2 golden items" in t for t in texts(at.caption))
    assert not at.error
    at = click(at, "collect_campaign_create")
    with closing(connect(db_path)) as conn:
        campaign = get_campaign(conn, "collection-1")
        n_golden = conn.execute("SELECT COUNT(*) FROM campaign_golden WHERE campaign_id = ?",
                                [campaign.id]).fetchone()[0]
    assert (campaign.golden_rate, campaign.target, n_golden) == (0.1, 20, 2)
    assert len([d for d in at.dataframe if list(d.value.columns) == ["annotator", "token"]][0].value) == 3
