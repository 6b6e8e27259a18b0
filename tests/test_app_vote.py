"""The Vote page and campaign administration, through the router (app.py) with Streamlit's AppTest."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.campaign import (
    create_campaign,
    issue_tokens,
    publish,
    read_answers,
    read_golden,
    record_vote,
    revoke_token,
    serve_next,
    vote_records,
)
from core.io import load
from core.store import Store
from core.store.connection import connect
from tests.app_pages import APP
from tests.test_app_data import run, texts

REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")
VOTE = str(REPO / "pages" / "vote.py")
MODELS = ("model-alpha-7b", "model-beta-13b", "model-gamma-70b")
HTML = "<script>window.__pwned=1</script><img src=x onerror=alert(1)>"
ANSWERS_CSV = "\n".join(["query_id,prompt,model,answer"] + [
    f'q{q},"Question {q}: why?",{m},"**Answer {q}.{i}** {HTML if q == 0 else ""} https://leak.example/{m}"'
    for q in range(3) for i, m in enumerate(MODELS)]).encode()
GOLDEN_CSV = b"question,correct_answer,wrong_answer\nLargest planet?,Jupiter,Mars\nSpider legs?,8,6\n"


@pytest.fixture(autouse=True)
def fixed_tokens(monkeypatch):
    """Tokens seed each annotator's draws (golden or not, sides): fixed ones make every run the same."""
    numbers = iter(range(10_000))
    monkeypatch.setattr(secrets, "token_urlsafe", lambda n: f"fixed-secret-{next(numbers):04d}")


@pytest.fixture
def app(db_path, monkeypatch):
    monkeypatch.delenv("EVALBOARD_MODE", raising=False)


@pytest.fixture
def campaign_tokens(db_path):
    conn = connect(db_path)
    campaign = create_campaign(conn, "ab", read_answers(ANSWERS_CSV, name="answers.csv"),
                               read_golden(GOLDEN_CSV, name="golden.csv"), dimensions=("overall", "style"),
                               golden_rate=0.2, target=4, seed=5)
    tokens = [t.token for t in issue_tokens(conn, campaign, 2)]
    yield conn, campaign, tokens
    conn.close()


def vote_page(token: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    run(at)
    at.switch_page(VOTE)
    run(at)
    if token is not None:
        at.text_input(key="vote_token").set_value(token)
        run(at)
    return at


def everything_shown(at: AppTest) -> str:
    """Every element of the page as the protobuf messages Streamlit sends to the browser, for leak checks."""
    parts: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            parts.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(parts)


def choose(at: AppTest, *choices: str) -> AppTest:
    radios = [r for r in at.main.radio if r.key.startswith("vote_")]
    for radio, choice in zip(radios, choices):
        radio.set_value(choice)
    submit = [b for b in at.main.button if b.key and b.key.startswith("vote_submit_")]
    submit[0].click()
    return run(at)


def table_with(at: AppTest, column: str):
    """The first dataframe shown with this column, or None (AppTest does not expose dataframe keys)."""
    return next((d.value for d in at.main.dataframe if column in d.value.columns), None)


def stored_votes(conn) -> int:
    return conn.execute("SELECT count(*) FROM campaign_votes").fetchone()[0]


def test_vote_page_asks_for_a_token_and_has_no_dataset_picker(app, campaign_tokens):
    with Store() as store:
        store.ingest(load(b"model_a,model_b,winner\na,b,a\n", name="v.csv"))
    at = vote_page()
    assert [t.value for t in at.title] == ["Vote"]
    assert "Enter the token" in at.info[0].value
    assert not at.sidebar.selectbox  # annotators see no datasets


def test_an_invalid_token_cannot_vote(app, campaign_tokens):
    at = vote_page("not-a-token")
    assert "not valid" in at.error[0].value
    assert not at.main.radio


def test_a_token_copied_from_the_tokens_csv_with_its_apostrophe_still_votes(app, campaign_tokens):
    # The tokens CSV writes a token starting with "-" as "'-…" so that a spreadsheet shows it as text.
    _, _, tokens = campaign_tokens
    at = vote_page(" '" + tokens[0])
    assert not at.error and at.main.radio


def test_the_whole_flow(app, campaign_tokens):
    conn, _, (token, _) = campaign_tokens
    at = vote_page(token)
    shown = [everything_shown(at)]
    assert "0 / 4 done" in at.main.get("progress")[0].proto.text
    assert "Question" in shown[0] and "Answer A" in shown[0]  # the dump holds what the page shows
    assert [s.value for s in at.main.subheader] == ["Answer A", "Answer B"]
    first = at.main.markdown[1].value
    at = choose(at, "A")  # only one of two dimensions chosen
    assert "Choose A, B, Tie or Both bad for: style" in at.warning[0].value
    assert stored_votes(conn) == 0
    at = choose(at, "A", "Tie")
    assert stored_votes(conn) == 2
    assert "1 / 4 done" in at.main.get("progress")[0].proto.text
    for choice in ("B", "Both bad", "Tie"):
        shown.append(everything_shown(at))
        at = choose(at, choice, choice)
    assert stored_votes(conn) == 8
    assert "All done" in at.success[0].value
    assert first
    for page in shown:
        for name in MODELS:
            assert name not in page
        assert "golden:" not in page and "leak.example" not in page


def test_answers_are_markdown_without_html(app, campaign_tokens):
    _, _, (token, _) = campaign_tokens
    at = vote_page(token)
    for element in at.main.markdown:
        assert not element.proto.allow_html


def test_a_new_session_continues_with_the_pending_item(app, campaign_tokens):
    conn, _, (token, _) = campaign_tokens
    at = vote_page(token)
    at = choose(at, "A", "A")
    pending = [m.value for m in at.main.markdown]
    restarted = vote_page(token)  # the server restarted: a fresh session, the same token
    assert [m.value for m in restarted.main.markdown] == pending
    assert "1 / 4 done" in restarted.main.get("progress")[0].proto.text
    assert stored_votes(conn) == 2


def test_a_token_revoked_mid_session_stores_nothing(app, campaign_tokens):
    conn, campaign, (token, _) = campaign_tokens
    at = vote_page(token)
    revoke_token(conn, campaign, token)
    at = choose(at, "A", "B")
    assert "not valid" in at.error[0].value
    assert stored_votes(conn) == 0


def test_an_item_answered_in_another_tab_moves_on(app, campaign_tokens):
    conn, _, (token, _) = campaign_tokens
    at = vote_page(token)
    item = serve_next(conn, token)
    record_vote(conn, token, item.assignment_id, {"overall": "tie", "style": "tie"})  # the other tab was quicker
    at = choose(at, "A", "B")
    assert stored_votes(conn) == 2  # the other tab's vote, not a second one
    assert "1 / 4 done" in at.main.get("progress")[0].proto.text


def test_voting_only_mode_shows_nothing_but_the_vote_page(app, campaign_tokens, monkeypatch):
    monkeypatch.setenv("EVALBOARD_MODE", "vote")
    at = run(AppTest.from_file(APP, default_timeout=60))
    assert [t.value for t in at.title] == ["Vote"]
    assert not at.sidebar.selectbox and not at.sidebar.button
    _, _, (token, _) = campaign_tokens
    at.text_input(key="vote_token").set_value(token)
    at = choose(run(at), "Tie", "Tie")
    assert "1 / 4 done" in at.main.get("progress")[0].proto.text


# -- administration on the Data page ---------------------------------------------------------------
def test_create_a_campaign_on_the_data_page(app, db_path):
    at = run(AppTest.from_file(APP, default_timeout=60))
    at.text_input(key="campaign_name").set_value("from page")
    at.file_uploader(key="campaign_answers").set_value(("answers.csv", ANSWERS_CSV, "text/csv"))
    at.file_uploader(key="campaign_golden").set_value(("golden.csv", GOLDEN_CSV, "text/csv"))
    at.number_input(key="campaign_target").set_value(10)  # 2 golden items suffice for 1 per annotator
    at.number_input(key="campaign_overlap").set_value(0.2)
    at.text_input(key="campaign_annotators").set_value("ann, bob")
    run(at)
    assert "Golden supply: each annotator's 10 items plan 1 golden item (rate 0.1)" in " ".join(texts(at.caption))
    at.button(key="campaign_create").click()
    run(at)
    assert "Campaign 'from page' created." in texts(at.success)
    assert any("golden accuracy needs 3" in w for w in texts(at.warning))
    assert connect(db_path).execute("SELECT overlap, overlap_k FROM campaign_campaigns").fetchall() == [(0.2, 2)]
    tokens = table_with(at, "token")
    assert tokens["annotator"].tolist() == ["ann", "bob"]
    assert serve_next(connect(db_path), tokens["token"].iloc[0]) is not None
    at.button(key="campaign_tokens_done").click()
    run(at)
    assert table_with(at, "token") is None


def test_a_golden_pool_too_small_is_refused_on_the_data_page(app, db_path):
    at = run(AppTest.from_file(APP, default_timeout=60))
    at.text_input(key="campaign_name").set_value("few golden")
    at.file_uploader(key="campaign_answers").set_value(("answers.csv", ANSWERS_CSV, "text/csv"))
    at.file_uploader(key="campaign_golden").set_value(("golden.csv", GOLDEN_CSV, "text/csv"))
    run(at)  # rate 0.1 × 100 items plan 10 golden items each; the pool has 2
    assert any("Too few golden items" in e for e in texts(at.error))
    at.button(key="campaign_create").click()
    run(at)
    assert any("The campaign was not created: the golden pool has 2 items" in e for e in texts(at.error))
    assert connect(db_path).execute("SELECT count(*) FROM campaign_campaigns").fetchone()[0] == 0


def test_a_bad_answers_file_is_reported_and_nothing_created(app, db_path):
    at = run(AppTest.from_file(APP, default_timeout=60))
    at.text_input(key="campaign_name").set_value("bad")
    at.file_uploader(key="campaign_answers").set_value(
        ("answers.csv", b"query_id,prompt,model,answer\nq1,p,a,x\nq1,p,a,y\n", "text/csv"))
    run(at)
    at.button(key="campaign_create").click()
    run(at)
    assert "The campaign was not created." in texts(at.error)
    assert "twice" in at.code[0].value
    assert connect(db_path).execute("SELECT count(*) FROM campaign_campaigns").fetchone()[0] == 0


def test_revoke_and_publish_on_the_data_page(app, campaign_tokens):
    conn, campaign, (token, _) = campaign_tokens
    item = serve_next(conn, token)
    record_vote(conn, token, item.assignment_id, {"overall": "model_a", "style": "tie"})
    at = run(AppTest.from_file(APP, default_timeout=60))
    progress = table_with(at, "golden_done")
    assert progress["done"].tolist() == [1, 0]
    at.selectbox(key="campaign_revoke_who").set_value("annotator-2")
    run(at)
    at.button(key="campaign_revoke").click()
    run(at)
    assert table_with(at, "golden_done")["revoked"].tolist() == [False, True]
    at.button(key="campaign_publish").click()
    run(at)
    rows = len(vote_records(conn, campaign))
    plural = "s" if rows != 1 else ""
    assert f"{rows} judgement{plural} published as dataset 'campaign ab' (now active)." in texts(at.success)
    with Store() as store:
        (dataset,) = store.datasets()
    assert at.session_state["active_dataset"] == dataset.id




def test_the_data_page_shows_the_overlap_so_far(app, db_path):
    conn = connect(db_path)
    campaign = create_campaign(conn, "shared", read_answers(ANSWERS_CSV, name="answers.csv"), golden_rate=0,
                               target=3, seed=2, overlap=1.0)
    for token in (t.token for t in issue_tokens(conn, campaign, 2)):
        for _ in range(3):
            item = serve_next(conn, token)
            record_vote(conn, token, item.assignment_id, {"overall": "tie"})
    at = run(AppTest.from_file(APP, default_timeout=60))
    caption = " ".join(texts(at.caption))
    assert "overlap 100% by 2 annotators: 3 of 3 real items judged by 2+" in caption, caption
    conn.close()


def test_refresh_control_republishes_the_active_campaign(app, campaign_tokens, tmp_path):
    conn, campaign, (token, _) = campaign_tokens
    item = serve_next(conn, token)
    record_vote(conn, token, item.assignment_id, {"overall": "model_a", "style": "tie"})
    first = publish(Store().path, "ab")
    at = run(AppTest.from_file(APP, default_timeout=60))  # the real router draws the control
    item = serve_next(conn, token)
    record_vote(conn, token, item.assignment_id, {"overall": "model_b", "style": "tie"})
    at.button(key="campaign_refresh").click()
    run(at)
    with Store() as store:
        (fresh,) = store.datasets()
    # the same dataset (its id and name stay), now with every vote
    assert (fresh.id, fresh.name) == (first.id, "campaign ab")
    assert fresh.rows == len(vote_records(conn, campaign)) > first.rows and fresh.sha256 != first.sha256
    assert at.session_state["active_dataset"] == fresh.id
    assert at.sidebar.selectbox(key="active_dataset").value == fresh.id


def test_refresh_control_is_absent_for_other_datasets(app, tmp_path):
    with Store() as store:
        store.ingest(load(b"model_a,model_b,winner\na,b,a\n", name="v.csv"))
    at = run(AppTest.from_file(APP, default_timeout=60))  # the real router draws the control
    assert not [b for b in at.sidebar.button if b.key == "campaign_refresh"]
