"""The Data page, driven through the router (app.py) with Streamlit's AppTest.

Every test gets a fresh store (the ``db_path`` fixture points EVALBOARD_DB at a temp file) and
addresses widgets by key. After each interaction the app must have run without an exception.
"""

from __future__ import annotations

import importlib
import re
from datetime import datetime
from pathlib import Path

import pandas as pd
import pandas.testing as pdt
import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.errors import AppTestError

from core.io import load
from core.store import Store
from tests.conftest import snapshot

APP = str(Path(__file__).resolve().parents[1] / "app.py")

VOTES_CSV = b"model_a,model_b,winner\nalpha,beta,model_a\nbeta,gamma,model_b\nalpha,gamma,tie\nbeta,alpha,a\n"
BAD_CSV = b"model_a,model_b,winner\nalpha,beta,model_a\nbeta,gamma,maybe\ndelta,delta,tie\n"
PREFERENCE_CSV = (b"sys_left,sys_right,preference\nalpha,beta,a-is-better\nbeta,gamma,b-is-better\n"
                  b"alpha,gamma,tie\ngamma,alpha,a-is-better\n")
ODD_NAMES_CSV = (b'model_a,model_b,winner\n<script>alert(1)</script>,a|b,model_a\n=cmd,a|b,model_b\n'
                 b'"<script>alert(1)</script>",=cmd,tie\n')
RUNS_CSV = (b"model_id,task_id,metric_name,score\nm1,t1,acc,0.5\nm1,t2,acc,0.75\nm2,t1,acc,0.25\n"
            b"m2,t2,acc,1.0\n")


@pytest.fixture
def at(db_path) -> AppTest:
    app = AppTest.from_file(APP, default_timeout=60)
    return run(app)


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader(key="upload_file").set_value((name, data, "text/csv"))
    return run(at)


def click(at: AppTest, key: str) -> AppTest:
    at.button(key=key).click()
    return run(at)


def texts(elements) -> list[str]:
    """The text a reader sees: markdown backslash escapes (pages._shared.plain) removed."""
    return [re.sub(r"\\(.)", r"\1", e.value) for e in elements]


def preview(at: AppTest) -> pd.DataFrame:
    tables = list(at.main.dataframe)
    assert len(tables) == 2  # the list of datasets, then the preview
    return tables[1].value


def active(at: AppTest):
    return at.sidebar.selectbox(key="active_dataset")


def stored(db_path: Path) -> dict[str, int]:
    with Store(db_path) as store:
        return {d.name: d.id for d in store.datasets()}


# --- tests -----------------------------------------------------------------------------------------


def test_empty_store_tells_what_to_do(at):
    assert texts(at.title) == ["Data"]
    assert any("store is empty" in t and "upload a file" in t and "sample datasets" in t for t in texts(at.main.info))
    assert texts(at.sidebar.info) == ["No datasets yet: add one on the Data page."]
    assert not at.sidebar.selectbox  # no active-dataset selector without datasets
    assert not at.dataframe
    assert not at.error


def test_load_samples_once_then_already_stored(at, db_path):
    click(at, "load_samples")
    [message] = texts(at.success)
    assert "stored 20,000 votes rows as dataset 'arena_demo'" in message
    assert "dataset 'evalruns_demo'" in message
    with Store(db_path) as store:
        assert {d.name: (d.kind, d.rows) for d in store.datasets()} == {
            "arena_demo": ("votes", 20_000), "evalruns_demo": ("eval_runs", 36), "judge_demo": ("preferences", 960)}
    assert "stored 960 preferences rows as dataset 'judge_demo'" in message  # the Judge page has data too
    picker = active(at)
    assert picker.options == ["arena_demo · votes · 20,000 rows", "evalruns_demo · eval runs · 36 rows",
                              "judge_demo · preferences · 960 rows"]
    before = snapshot(db_path)

    click(at, "load_samples")
    [message] = texts(at.success)
    assert message.count("already stored") == 3 and "nothing added" in message
    assert snapshot(db_path) == before
    assert len(active(at).options) == 3


def test_upload_valid_votes_is_stored_made_active_and_previewed(at, db_path):
    upload(at, "votes.csv", VOTES_CSV)
    assert not at.error  # nothing is validated before the button is pressed
    click(at, "upload_store")
    assert texts(at.success) == ["stored 4 votes rows as dataset 'votes' (id 1)"]
    assert not at.error

    ids = stored(db_path)
    assert ids == {"votes": 1}
    with Store(db_path) as store:
        pdt.assert_frame_equal(store.load(1), load(VOTES_CSV, name="votes.csv").frame)
    assert active(at).value == 1
    assert active(at).options == ["votes · votes · 4 rows"]
    shown = preview(at)
    assert list(shown["model_a"].astype(str)) == ["alpha", "beta", "alpha", "beta"]
    assert list(shown["winner"].astype(str)) == ["model_a", "model_b", "tie", "model_a"]


def test_second_upload_with_a_name_becomes_active_and_previewed(at, db_path):
    click(at, "load_samples")
    upload(at, "votes.csv", VOTES_CSV)
    at.text_input(key="upload_name").input("my votes")
    click(at, "upload_store")
    assert texts(at.success) == ["stored 4 votes rows as dataset 'my votes' (id 4)"]  # after the three samples
    assert stored(db_path)["my votes"] == 4
    assert active(at).value == 4
    assert at.selectbox(key="preview_dataset").value == 4
    assert len(preview(at)) == 4


def test_bad_file_shows_every_problem_and_stores_nothing(at, db_path):
    upload(at, "votes.csv", VOTES_CSV)
    click(at, "upload_store")
    before = snapshot(db_path)

    upload(at, "bad.csv", BAD_CSV)
    click(at, "upload_store")
    assert texts(at.error) == ["The file was not stored."]
    [code] = [c.value for c in at.code]
    assert code.startswith("bad.csv: rejected, nothing was stored (2 problems")
    assert "unknown winner label" in code and "[column 'winner']" in code and "1 row: 2 ('maybe')" in code
    assert "model_a == model_b" in code and "[columns 'model_a', 'model_b']" in code
    assert "1 row: 3 ('delta')" in code
    assert at.code[0].proto.wrap_lines  # long problem lines and the hint are readable without scrolling
    assert not at.success
    assert at.expander[0].proto.expanded  # the mapping is offered
    assert snapshot(db_path) == before
    assert active(at).options == ["votes · votes · 4 rows"]

    # the error belongs to bad.csv: choosing another file hides it
    upload(at, "other.csv", VOTES_CSV.replace(b"alpha", b"omega"))
    assert not at.error and not at.code


def test_unknown_columns_are_stored_through_the_mapping(at, db_path):
    upload(at, "prefs.csv", PREFERENCE_CSV)
    click(at, "upload_store")
    assert texts(at.error) == ["The file was not stored."]
    [code] = [c.value for c in at.code]
    assert code.startswith("prefs.csv: rejected")
    assert "'sys_left', 'sys_right', 'preference'" in code and "votes need model_a, model_b, winner" in code
    [expander] = [e for e in at.expander if e.label == "Map columns and outcomes"]
    assert expander.proto.expanded
    assert stored(db_path) == {}

    assert at.radio(key="map_kind").value == "votes"
    assert at.selectbox(key="map_votes_winner").value == "preference"  # guessed from the name
    assert any("model_a, model_b" in w for w in texts(at.warning))
    at.selectbox(key="map_votes_model_a").set_value("sys_left")
    at.selectbox(key="map_votes_model_b").set_value("sys_right")
    at.selectbox(key="map_votes_winner").set_value("preference")
    run(at)
    assert not at.warning
    guesses = {k: at.selectbox(key=f"map_outcome_preference_{k}").value for k in ("a-is-better", "b-is-better", "tie")}
    assert guesses == {"a-is-better": "model_a", "b-is-better": "model_b", "tie": "tie"}

    click(at, "upload_store")
    assert texts(at.success) == ["stored 4 votes rows as dataset 'prefs' (id 1)"]
    assert not at.error
    with Store(db_path) as store:
        frame = store.load("prefs")
    assert list(frame["model_a"].astype(str)) == ["alpha", "beta", "alpha", "gamma"]
    assert list(frame["model_b"].astype(str)) == ["beta", "gamma", "gamma", "alpha"]
    assert list(frame["winner"].astype(str)) == ["model_a", "model_b", "tie", "model_a"]
    assert active(at).value == 1


def test_a_failed_mapping_shows_its_error_at_once(at, db_path):
    upload(at, "prefs.csv", PREFERENCE_CSV)
    at.selectbox(key="map_votes_model_a").set_value("sys_left")
    at.selectbox(key="map_votes_model_b").set_value("sys_right")
    at.selectbox(key="map_outcome_preference_a-is-better").set_value("— choose —")  # left unmapped
    run(at)
    before = snapshot(db_path)
    click(at, "upload_store")
    assert texts(at.error) == ["The file was not stored."]  # in the same click, not after the next one
    [code] = [c.value for c in at.code]
    assert "unknown winner label" in code and "2 rows: 1 ('a-is-better'), 4 ('a-is-better')" in code
    assert not at.success and snapshot(db_path) == before
    assert at.expander[0].proto.expanded

    at.selectbox(key="map_outcome_preference_a-is-better").set_value("model_a")
    click(at, "upload_store")
    assert texts(at.success) == ["stored 4 votes rows as dataset 'prefs' (id 1)"]
    assert not at.error and not at.code


def test_odd_model_names_are_stored_and_shown_verbatim(at, db_path):
    upload(at, "names.csv", ODD_NAMES_CSV)
    click(at, "upload_store")
    assert texts(at.success) == ["stored 3 votes rows as dataset 'names' (id 1)"]
    with Store(db_path) as store:
        frame = store.load("names")
    expected_a = ["<script>alert(1)</script>", "=cmd", "<script>alert(1)</script>"]
    expected_b = ["a|b", "a|b", "=cmd"]
    assert list(frame["model_a"].astype(str)) == expected_a
    assert list(frame["model_b"].astype(str)) == expected_b
    shown = preview(at)
    assert list(shown["model_a"].astype(str)) == expected_a
    assert list(shown["model_b"].astype(str)) == expected_b
    # the names reach no markdown element of the page (where they could be rendered, not shown)
    for element in (*at.markdown, *at.caption, *at.success, *at.info):
        assert "<script>" not in element.value and "=cmd" not in element.value


def test_markdown_in_a_dataset_name_is_shown_as_typed(at, db_path):
    name = "*gpt* $5 vs $10 [link](http://example.com) :smile: <b>x</b>"
    upload(at, "votes.csv", VOTES_CSV)
    at.text_input(key="upload_name").input(name)
    click(at, "upload_store")
    assert stored(db_path) == {name: 1}
    [message] = at.success
    assert message.value == ("stored 4 votes rows as dataset '\\*gpt\\* \\$5 vs \\$10 \\[link\\](http\\://example.com) "
                             "\\:smile\\: \\<b>x\\</b>' (id 1)")
    assert texts(at.success) == [f"stored 4 votes rows as dataset '{name}' (id 1)"]
    label = at.checkbox(key="delete_confirm").label
    assert "\\$5" in label and re.sub(r"\\(.)", r"\1", label) == f"Yes, delete '{name}' and its 4 rows"
    assert active(at).options == [f"{name} · votes · 4 rows"]  # option labels are plain text already


def test_delete_needs_the_confirmation(at, db_path):
    upload(at, "votes.csv", VOTES_CSV)
    click(at, "upload_store")
    assert at.button(key="delete_dataset").disabled
    assert at.checkbox(key="delete_confirm").label == "Yes, delete 'votes' and its 4 rows"
    with pytest.raises(AppTestError, match="disabled"):  # as in a browser, it cannot be pressed
        at.button(key="delete_dataset").click()
    run(at)
    assert stored(db_path) == {"votes": 1}

    at.checkbox(key="delete_confirm").check()
    run(at)
    assert not at.button(key="delete_dataset").disabled
    click(at, "delete_dataset")
    assert stored(db_path) == {}
    assert texts(at.success) == ["Deleted 'votes'."]
    assert any("store is empty" in t for t in texts(at.main.info))
    assert texts(at.sidebar.info) == ["No datasets yet: add one on the Data page."]


def test_deleting_one_of_the_samples_keeps_another_active(at, db_path):
    click(at, "load_samples")
    at.checkbox(key="delete_confirm").check()
    run(at)
    click(at, "delete_dataset")
    assert stored(db_path) == {"evalruns_demo": 2, "judge_demo": 3}
    assert texts(at.success) == ["Deleted 'arena_demo'."]
    assert active(at).value == 2 and active(at).options == ["evalruns_demo · eval runs · 36 rows",
                                                            "judge_demo · preferences · 960 rows"]
    assert at.checkbox(key="delete_confirm").value is False  # the confirmation does not carry over
    assert at.button(key="delete_dataset").disabled
    assert len(preview(at)) == 36


def test_a_new_dataset_reusing_a_deleted_id_is_not_served_from_the_cache(at, db_path, monkeypatch):
    class FrozenClock:  # both datasets created "in the same second", under the same (reused) id
        @staticmethod
        def now(tz=None):
            return datetime(2026, 11, 30, 12, 0, 0, tzinfo=tz)

    # where Store stamps created_at (core.store is being split into a package: follow Store itself)
    monkeypatch.setattr(importlib.import_module(Store.__module__), "datetime", FrozenClock, raising=False)
    upload(at, "votes.csv", VOTES_CSV)
    click(at, "upload_store")
    assert len(preview(at)) == 4
    at.checkbox(key="delete_confirm").check()
    run(at)
    click(at, "delete_dataset")
    upload(at, "runs.csv", RUNS_CSV)
    click(at, "upload_store")
    assert stored(db_path) == {"runs": 1}  # SQLite reuses the id of the deleted dataset
    shown = preview(at)
    assert list(shown.columns) == ["model_id", "task_id", "metric_name", "score"]
    assert list(shown["score"]) == [0.5, 0.75, 0.25, 1.0]


def test_kind_eval_runs_stores_an_eval_runs_dataset(at, db_path):
    upload(at, "runs.csv", RUNS_CSV)
    at.selectbox(key="upload_kind").set_value("eval_runs")
    run(at)
    click(at, "upload_store")
    assert texts(at.success) == ["stored 4 eval runs rows as dataset 'runs' (id 1)"]
    with Store(db_path) as store:
        [info] = store.datasets()
        frame = store.load(info.id)
    assert info.kind == "eval_runs"
    assert list(frame["model_id"]) == ["m1", "m1", "m2", "m2"]
    assert list(frame["score"]) == [0.5, 0.75, 0.25, 1.0]
    assert active(at).options == ["runs · eval runs · 4 rows"]


def test_kind_votes_for_an_eval_runs_file_is_an_error(at, db_path):
    upload(at, "runs.csv", RUNS_CSV)
    at.selectbox(key="upload_kind").set_value("votes")
    run(at)
    click(at, "upload_store")
    assert texts(at.error) == ["The file was not stored."]
    [code] = [c.value for c in at.code]
    assert "missing required columns for votes" in code and "model_id, task_id, metric_name, score" in code
    assert stored(db_path) == {}


def lm_eval_file(model: str, shots: int, scores: dict[str, float]) -> bytes:
    import json

    results = {task: {"acc": value, "acc_stderr": 0.01} for task, value in scores.items()}
    return json.dumps({"results": results, "config": {"model_args": f"pretrained={model}",
                                                      "num_fewshot": shots}}).encode()


def test_several_lm_eval_files_become_one_eval_run(at, db_path):
    at.file_uploader(key="lm_eval_files").set_value([
        ("a.json", lm_eval_file("org/small", 0, {"arc": 0.4, "piqa": 0.6}), "application/json"),
        ("b.json", lm_eval_file("org/large", 5, {"arc": 0.7, "piqa": 0.8}), "application/json"),
    ])
    run(at)
    click(at, "lm_eval_store")
    assert texts(at.success) == ["stored 4 eval runs rows as dataset '2 lm-eval files' (id 1)"]
    with Store(db_path) as store:
        [info] = store.datasets()
        frame = store.load(info.id)
    assert sorted(set(frame["model_id"])) == ["org/large (5-shot)", "org/small"]
    assert frame.set_index(["model_id", "task_id"])["score"].to_dict() == {
        ("org/small", "arc"): 0.4, ("org/small", "piqa"): 0.6,
        ("org/large (5-shot)", "arc"): 0.7, ("org/large (5-shot)", "piqa"): 0.8}


def test_lm_eval_files_without_the_metric_show_the_error(at, db_path):
    at.file_uploader(key="lm_eval_files").set_value([
        ("a.json", lm_eval_file("org/small", 0, {"arc": 0.4}), "application/json")])
    at.text_input(key="lm_eval_metric").set_value("exact_match")
    run(at)
    click(at, "lm_eval_store")
    assert texts(at.error) == ["The file was not stored."]
    assert "no task reports the metric 'exact_match'" in at.code[0].value
    assert stored(db_path) == {}


def test_win_rate_matrix_with_counts(at, db_path):
    rates = b"model,x,y,z\nx,,0.6,0.75\ny,0.4,,0.5\nz,0.25,0.5,\n"
    counts = b"model,x,y,z\nx,0,10,8\ny,10,0,4\nz,8,4,0\n"
    at.file_uploader(key="matrix_rates").set_value(("rates.csv", rates, "text/csv"))
    at.file_uploader(key="matrix_counts").set_value(("counts.csv", counts, "text/csv"))
    run(at)
    click(at, "matrix_store")
    assert texts(at.success) == ["stored 6 winrate matrix rows as dataset 'rates' (id 1)"]
    with Store(db_path) as store:
        frame = store.load("rates")
    assert frame.set_index(["model_row", "model_col"]).loc[("x", "y")].tolist() == [0.6, 10.0]
    assert frame.set_index(["model_row", "model_col"]).loc[("z", "x")].tolist() == [0.25, 8.0]
