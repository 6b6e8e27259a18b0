"""Campaigns: inputs, tokens, votes stored once, restarts, concurrency, publishing, and the CLI."""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading

import numpy as np
import pandas as pd
import pytest

from core.annotators.quality import annotator_quality
from core.campaign import (
    GOLDEN_CORRECT,
    GOLDEN_WRONG,
    CampaignError,
    TokenError,
    campaign_of_dataset,
    create_campaign,
    get_campaign,
    issue_tokens,
    progress,
    publish,
    read_answers,
    read_golden,
    record_vote,
    revoke_token,
    serve_next,
    vote_records,
)
from core.cli import main
from core.io import InputError
from core.llm.cleaning import CleaningRules
from core.ranking import RankSettings, rank_votes
from core.store import Store
from core.store.connection import connect
from tests.conftest import snapshot

ANSWERS_CSV = (
    "query_id,prompt,model,answer,category\n"
    "q1,What is 2+2?,alpha,It is 4 [1]. See https://a.example,math\n"
    "q1,What is 2+2?,beta,4 😀,math\n"
    "q1,What is 2+2?,gamma,Four.,math\n"
    "q2,Capital of France?,alpha,Paris,geo\n"
    "q2,Capital of France?,beta,Lyon,geo\n"
    "q2,Capital of France?,gamma,Paris【2】,geo\n"
).encode()
GOLDEN_CSV = ("question,correct_answer,wrong_answer\n"
              "Boiling point of water at sea level?,100 °C,50 °C\n"
              "How many legs has a spider?,8,6\n"
              "Largest planet?,Jupiter,Mars\n").encode()


@pytest.fixture(autouse=True)
def fixed_tokens(monkeypatch):
    """Tokens seed each annotator's draws (golden or not, sides): fixed ones make every run the same."""
    numbers = iter(range(10_000))
    monkeypatch.setattr(secrets, "token_urlsafe", lambda n: f"fixed-secret-{next(numbers):04d}")


@pytest.fixture
def conn(db_path):
    connection = connect(db_path)
    yield connection
    connection.close()


@pytest.fixture
def campaign(conn):
    return create_campaign(conn, "demo", read_answers(ANSWERS_CSV, name="answers.csv"),
                           read_golden(GOLDEN_CSV, name="golden.csv"), dimensions=("overall", "style"),
                           golden_rate=0.3, target=5, seed=3)  # 6 pair items: always reachable


@pytest.fixture
def token(conn, campaign) -> str:
    return issue_tokens(conn, campaign, 1)[0].token


def vote_all(conn, token, outcome="model_a") -> int:
    n = 0
    while (item := serve_next(conn, token)) is not None:
        record_vote(conn, token, item.assignment_id, dict.fromkeys(item.dimensions, outcome))
        n += 1
    return n


# -- inputs ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("csv, columns, message", [
    ("query_id,prompt,answer\nq1,p,a\n", "'model'", "missing column"),
    ("query_id,prompt,model,answer\nq1,p,a,x\nq1,p,a,y\nq1,p,b,z\n", "'query_id', 'model'", "twice"),
    ("query_id,prompt,model,answer\nq1,p,a,x\nq1,p,b,\n", "'answer'", "empty value"),
    ("query_id,prompt,model,answer\nq1,p,a,x\nq1,other,b,y\n", "'prompt', 'query_id'", "different prompt"),
    ("query_id,prompt,model,answer\nq1,p,golden:correct,x\nq1,p,b,y\n", "'model'", "reserved"),
    ("query_id,prompt,model,answer\nq1,p,a,x\nq2,p2,b,y\n", "'query_id', 'model'", "nothing to compare"),
])
def test_bad_answers_files_name_rows_and_columns(csv, columns, message):
    with pytest.raises(InputError, match=message) as info:
        read_answers(csv.encode(), name="answers.csv")
    assert columns in str(info.value) and "answers.csv" in str(info.value)


def test_bad_golden_file_is_rejected():
    with pytest.raises(InputError, match="the correct and the wrong answer are the same"):
        read_golden(b"question,correct_answer,wrong_answer\nq,a,b\nq2,same,same\n", name="golden.csv")
    with pytest.raises(InputError, match="'wrong_answer'"):
        read_golden(b"question,correct_answer\nq,a\n", name="golden.csv")


def test_answers_are_cleaned_and_raw_text_kept(conn, campaign):
    raw, clean = conn.execute("SELECT raw_text, clean_text FROM campaign_answers WHERE query_id = 'q1' "
                              "AND model = 'alpha'").fetchone()
    assert raw == "It is 4 [1]. See https://a.example"
    assert clean == "It is 4. See [link]"  # the URL's place is kept (it used to leave "See" dangling)


def test_cleaning_rules_are_kept_with_the_campaign(conn):
    answers = read_answers(ANSWERS_CSV, name="answers.csv")
    kept = create_campaign(conn, "raw", answers, golden_rate=0, cleaning=CleaningRules(urls=False, citations=False))
    assert get_campaign(conn, "raw").cleaning == CleaningRules(urls=False, citations=False)
    clean = conn.execute("SELECT clean_text FROM campaign_answers WHERE campaign_id = ? AND query_id = 'q1' "
                         "AND model = 'alpha'", [kept.id]).fetchone()[0]
    assert clean == "It is 4 [1]. See https://a.example"


@pytest.mark.parametrize("kwargs, message", [
    ({"name": " "}, "needs a name"),
    ({"dimensions": ()}, "dimensions"),
    ({"dimensions": ("overall", "overall")}, "listed twice"),
    ({"golden_rate": 1.0}, r"golden_rate must lie in \[0, 1\)"),
    ({"target": 0}, "target must be a positive"),
    ({"golden": None}, "no golden items"),
    ({"name": "demo"}, "already exists"),
])
def test_bad_campaign_settings_change_nothing(conn, campaign, db_path, kwargs, message):
    before = snapshot(db_path)
    settings = {"name": "new", "answers": read_answers(ANSWERS_CSV, name="a.csv"),
                "golden": read_golden(GOLDEN_CSV, name="g.csv"), "golden_rate": 0.1, **kwargs}
    with pytest.raises(CampaignError, match=message):
        create_campaign(conn, **settings)
    assert snapshot(db_path) == before


# -- tokens ----------------------------------------------------------------------------------------
def test_tokens_are_stored_hashed_and_ids_are_opaque(conn, campaign, db_path):
    issued = issue_tokens(conn, campaign, 2) + issue_tokens(conn, campaign, 0, ["ann", "bob"])
    assert [t.label for t in issued] == ["annotator-1", "annotator-2", "ann", "bob"]
    dump = json.dumps(snapshot(db_path), default=str)
    for t in issued:
        assert t.token not in dump and t.token not in t.annotator_id
    with pytest.raises(CampaignError, match="already used: ann"):
        issue_tokens(conn, campaign, 0, ["ann"])


def test_unknown_and_revoked_tokens_cannot_vote(conn, campaign, token):
    with pytest.raises(TokenError):
        serve_next(conn, "not-a-token")
    item = serve_next(conn, token)
    assert revoke_token(conn, campaign, token) == "annotator-1"
    with pytest.raises(TokenError):
        record_vote(conn, token, item.assignment_id, dict.fromkeys(item.dimensions, "tie"))
    with pytest.raises(TokenError):
        serve_next(conn, token)
    assert conn.execute("SELECT count(*) FROM campaign_votes").fetchone()[0] == 0


# -- votes -----------------------------------------------------------------------------------------
def test_a_double_submit_stores_one_vote(conn, token):
    item = serve_next(conn, token)
    outcomes = {"overall": "model_a", "style": "tie"}
    assert record_vote(conn, token, item.assignment_id, outcomes) is True
    assert record_vote(conn, token, item.assignment_id, {"overall": "model_b", "style": "model_b"}) is False
    rows = conn.execute("SELECT dimension, winner FROM campaign_votes ORDER BY dimension").fetchall()
    assert rows == [("overall", "model_a"), ("style", "tie")]
    assert progress(conn, get_campaign(conn, "demo"))["done"].tolist() == [1]


@pytest.mark.parametrize("outcomes, message", [
    ({"overall": "model_a"}, "choose an outcome for style"),
    ({"overall": "model_a", "style": "maybe"}, "outcomes must be one of"),
    ({"overall": "model_a", "style": "tie", "speed": "tie"}, "not a dimension"),
])
def test_incomplete_or_unknown_outcomes_are_rejected(conn, token, outcomes, message):
    item = serve_next(conn, token)
    with pytest.raises(CampaignError, match=message):
        record_vote(conn, token, item.assignment_id, outcomes)


def test_an_item_served_to_someone_else_cannot_be_voted(conn, campaign, token):
    other = issue_tokens(conn, campaign, 1)[0].token
    item = serve_next(conn, token)
    with pytest.raises(CampaignError, match="not served to this token"):
        record_vote(conn, other, item.assignment_id, {"overall": "tie", "style": "tie"})


def test_response_time_runs_on_the_server_clock_from_the_last_display(conn, token):
    item = serve_next(conn, token, now=1000.0)
    again = serve_next(conn, token, now=1010.0)  # a reload shows the same item; its clock restarts
    assert again.assignment_id == item.assignment_id
    record_vote(conn, token, item.assignment_id, {"overall": "tie", "style": "tie"}, now=1012.5)
    assert {r[0] for r in conn.execute("SELECT response_time_s FROM campaign_votes")} == {2.5}


def test_the_clock_keeps_running_while_the_item_stays_on_screen(conn, token):
    item = serve_next(conn, token, now=1000.0)
    assert serve_next(conn, token, now=1010.0, on_screen=item.assignment_id).assignment_id == item.assignment_id
    record_vote(conn, token, item.assignment_id, {"overall": "tie", "style": "tie"}, now=1012.5)
    assert {r[0] for r in conn.execute("SELECT response_time_s FROM campaign_votes")} == {12.5}


def test_a_restart_loses_no_vote_and_shows_the_pending_item_again(db_path, campaign, token, conn):
    first = serve_next(conn, token)
    record_vote(conn, token, first.assignment_id, {"overall": "model_b", "style": "tie"})
    pending = serve_next(conn, token)
    conn.close()  # the server dies with an item on screen
    reopened = connect(db_path)
    try:
        again = serve_next(reopened, token)
        assert again.assignment_id == pending.assignment_id and again.answer_a == pending.answer_a
        assert again.done == 1
        assert reopened.execute("SELECT count(*) FROM campaign_votes").fetchone()[0] == 2
    finally:
        reopened.close()


def test_served_items_carry_no_model_names(conn, token):
    while (item := serve_next(conn, token)) is not None:
        text = json.dumps(item.__dict__, default=str)
        for name in ("alpha", "beta", "gamma", GOLDEN_CORRECT, GOLDEN_WRONG):
            assert name not in text
        record_vote(conn, token, item.assignment_id, {"overall": "tie", "style": "tie"})


def test_concurrent_annotators_lose_no_vote(db_path, conn, campaign):
    tokens = [t.token for t in issue_tokens(conn, campaign, 6)]
    stored: list[int] = []
    errors: list[BaseException] = []

    def annotate(token: str) -> None:
        own = connect(db_path)  # one connection per session, as on the server
        try:
            while (item := serve_next(own, token)) is not None:
                record_vote(own, token, item.assignment_id, {"overall": "model_a", "style": "tie"})
                record_vote(own, token, item.assignment_id, {"overall": "model_a", "style": "tie"})  # double click
                stored.append(item.assignment_id)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            own.close()

    threads = [threading.Thread(target=annotate, args=(t,)) for t in tokens]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(stored) == 6 * 5
    votes = pd.read_sql_query("SELECT assignment_id, dimension FROM campaign_votes", conn)
    assert len(votes) == 2 * len(stored)
    assert sorted(votes["assignment_id"].unique()) == sorted(stored)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# -- published votes -------------------------------------------------------------------------------
def test_vote_records_follow_the_vote_contract(conn, campaign, token):
    vote_all(conn, token)
    votes = vote_records(conn, campaign)
    golden = votes[votes["is_golden"]]
    assert len(golden) >= 1 and votes["vote_id"].is_unique
    # pair items are published on both dimensions, golden items once (on the first dimension)
    assert len(votes) == 2 * (5 - len(golden)) + len(golden)
    assert set(votes["dimension"]) == {"overall", "style"} and set(golden["dimension"]) == {"overall"}
    assert set(golden["model_a"]) | set(golden["model_b"]) <= {GOLDEN_CORRECT, GOLDEN_WRONG}
    assert (golden["query_id"].str.startswith("golden:")).all()
    real = votes[~votes["is_golden"]]
    assert real["golden_answer"].isna().all() and set(real["category"]) <= {"math", "geo"}
    assert (votes["len_a"] > 0).all() and (votes["response_time_s"] >= 0).all()
    assert not votes["annotator_id"].str.contains(token, regex=False).any()


def test_publish_makes_a_dataset_every_analysis_reads(db_path, conn, campaign, token):
    vote_all(conn, token, outcome="model_a")  # always the left answer: right on about half the golden items
    dataset = publish(db_path, "demo")
    assert campaign_of_dataset(dataset) == "demo" and dataset.kind == "votes"
    with Store(db_path) as store:
        frame = store.load(dataset.id)
    golden = frame[frame["is_golden"]]
    assert len(golden) >= 1 and len(frame) == 2 * (5 - len(golden)) + len(golden)
    quality = annotator_quality(frame)
    expected_correct = int((golden["golden_answer"] == "model_a").sum())
    assert quality["n_golden"].iloc[0] == len(golden)
    assert quality["golden_accuracy"].iloc[0] == pytest.approx(expected_correct / len(golden))
    ranking = rank_votes(frame, RankSettings(ci="none"))
    assert {r.model for r in ranking.rows} <= {"alpha", "beta", "gamma"}
    assert ranking.policy.golden_votes_excluded == len(golden)


def test_publish_replaces_the_previous_snapshot(db_path, conn, campaign, token):
    item = serve_next(conn, token)
    record_vote(conn, token, item.assignment_id, {"overall": "tie", "style": "tie"})
    first = publish(db_path, "demo")
    assert publish(db_path, "demo").id == first.id  # nothing new: the same snapshot
    vote_all(conn, token)
    second = publish(db_path, "demo")
    with Store(db_path) as store:
        snapshots = [d for d in store.datasets() if campaign_of_dataset(d) == "demo"]
    assert [d.id for d in snapshots] == [second.id] and second.rows == len(vote_records(conn, campaign))


def test_a_failed_publish_keeps_the_previous_snapshot(db_path, conn, campaign, token, monkeypatch):
    item = serve_next(conn, token)
    record_vote(conn, token, item.assignment_id, {"overall": "tie", "style": "tie"})
    first = publish(db_path, "demo")
    vote_all(conn, token)

    def broken(self, *args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(Store, "ingest", broken)
    with pytest.raises(sqlite3.OperationalError):
        publish(db_path, "demo")
    with Store(db_path) as store:
        assert [d.id for d in store.datasets()] == [first.id]


def test_publish_without_votes_says_so(db_path, campaign):
    with pytest.raises(CampaignError, match="no votes yet"):
        publish(db_path, "demo")


# -- CLI -------------------------------------------------------------------------------------------
@pytest.fixture
def files(tmp_path):
    (tmp_path / "answers.csv").write_bytes(ANSWERS_CSV)
    (tmp_path / "golden.csv").write_bytes(GOLDEN_CSV)
    (tmp_path / "bad.csv").write_text("query_id,prompt,model,answer\nq1,p,a,x\nq1,p,a,y\n")
    return tmp_path


def test_cli_create_vote_status_publish(files, db_path, capsys):
    code = main(["campaign", "create", "cli", "--answers", str(files / "answers.csv"), "--golden",
                 str(files / "golden.csv"), "--dimensions", "overall,helpfulness", "--annotators", "ann,bob",
                 "--target", "5", "--seed", "1", "--active-sampling"])
    out = capsys.readouterr().out
    assert code == 0 and "2 queries, 3 models, 3 golden items (rate 0.1)" in out
    tokens = dict(line.split("\t") for line in out.splitlines() if "\t" in line)
    assert set(tokens) == {"ann", "bob"}
    conn = connect(db_path)
    try:
        vote_all(conn, tokens["ann"])
    finally:
        conn.close()
    assert main(["campaign", "status", "cli", "--format", "json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["active_sampling"] is True and status["dimensions"] == ["overall", "helpfulness"]
    assert [(a["annotator"], a["done"]) for a in status["annotators"]] == [("ann", 5), ("bob", 0)]
    # items and judgements apart: 4 pair items on 2 dimensions and 1 golden item once
    assert (status["items"], status["judgements"]) == (5, 9)
    assert main(["campaign", "status", "cli"]) == 0
    assert "5 items judged (9 judgements over 2 dimensions, a golden item once)" in capsys.readouterr().out
    assert main(["campaign", "tokens", "cli", "--revoke", "bob", "--add", "1"]) == 0
    out = capsys.readouterr().out
    assert "revoked the token of bob" in out and "annotator-3\t" in out
    assert main(["campaign", "publish", "cli"]) == 0
    # 4 pair items × 2 dimensions, 1 golden item on its first dimension
    assert "9 judgements (5 judged items) stored as dataset 'campaign cli'" in capsys.readouterr().out
    assert main(["rank", "cli", "--annotators", "keep", "--ci", "none"]) == 0  # the campaign's name ranks its votes
    assert json.loads(capsys.readouterr().out)["n_models"] == 3
    assert main(["campaign", "status"]) == 0 and capsys.readouterr().out.split() == ["cli"]


@pytest.mark.parametrize("args, message", [
    (["--answers", "{files}/bad.csv"], "bad.csv: rejected"),
    (["--answers", "{files}/missing.csv"], "no such file"),
    (["--answers", "{files}/answers.csv", "--golden-rate", "0.2"], "no golden items"),
    (["--answers", "{files}/answers.csv", "--target", "0"], "target must be a positive"),
])
def test_cli_invalid_input_exits_2(files, db_path, capsys, args, message):
    code = main(["campaign", "create", "bad", *[a.format(files=files) for a in args]])
    assert code == 2
    assert message in capsys.readouterr().err
    assert main(["campaign", "status"]) == 0 and capsys.readouterr().out == ""


def test_cli_unknown_campaign_exits_2(db_path, capsys):
    assert main(["campaign", "publish", "nope"]) == 2
    assert "no campaign named 'nope'" in capsys.readouterr().err


def test_scheduler_never_picks_a_model_missing_from_the_answers(conn):
    answers = read_answers(ANSWERS_CSV, name="answers.csv")
    campaign = create_campaign(conn, "plain", answers, golden_rate=0, target=6, seed=0)
    token = issue_tokens(conn, campaign, 1)[0].token
    assert vote_all(conn, token) == 6
    votes = vote_records(conn, campaign)
    assert set(np.unique(votes[["model_a", "model_b"]].to_numpy())) == {"alpha", "beta", "gamma"}
