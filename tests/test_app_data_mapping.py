"""The Data page's mapping step for files detection cannot settle (AppTest): the kind chooses the form,
a proposal fills it, numeric winners get a threshold, empty winners a meaning, and the one
"Validate and store" button stores what the form shows."""

from __future__ import annotations

from core.store import Store
from tests.test_app_data import at, click, run, stored, texts, upload  # noqa: F401 - ``at`` is a fixture

PROPOSED_LONG = (b"model,instruction_id,dataset,preference,score\n"
                 b"m1,0,koala,1.75,0.75\nm1,1,oasst,1.25,0.25\nm2,0,koala,1.5,0.5\nm2,1,oasst,2.0,1.0\n")
NUMERIC_WINNERS = b"model_a,model_b,winner\n" + b"".join(
    f"x,y,{1 + k / 10:.1f}\n".encode() for k in range(11))
EMPTY_WINNERS = b"model_a,model_b,winner\nx,y,model_a\nx,y,\ny,x,model_b\nx,y,\n"
WIDE_GAPS = b"task_id,m1,m2\nt1,1,\nt2,0,1\nt3,1,NA\n"


def test_the_proposal_fills_the_form_and_the_one_button_stores_it(at, db_path):
    upload(at, "prefs.csv", PROPOSED_LONG)
    assert at.radio(key="map_kind").value == "eval_runs"
    assert any("Detection is unsure" in i for i in texts(at.info))
    assert at.selectbox(key="map_eval_runs_task_id").value == "instruction_id"
    assert at.selectbox(key="map_eval_runs_category").value == "dataset"
    click(at, "upload_store")
    assert texts(at.success) == ["stored 4 eval runs rows as dataset 'prefs' (id 1)"]
    with Store(db_path) as store:
        frame = store.load("prefs")
    assert frame.groupby("model_id")["score"].mean().to_dict() == {"m1": 0.5, "m2": 0.75}


def test_a_detected_file_reads_as_detected(at, db_path):
    upload(at, "w.csv", WIDE_GAPS)
    assert at.radio(key="map_kind").value == "detected"
    click(at, "upload_store")
    assert texts(at.success) == ["stored 4 eval runs rows as dataset 'w' (id 1)"]


def test_missing_zero_from_the_page(at, db_path):
    upload(at, "w.csv", WIDE_GAPS)
    at.radio(key="upload_missing").set_value("zero")
    run(at)
    click(at, "upload_store")
    assert texts(at.success) == ["stored 6 eval runs rows as dataset 'w' (id 1)"]
    assert any("scored 0 (missing=zero)" in c for c in texts(at.caption))


def test_numeric_winners_get_a_threshold(at, db_path):
    upload(at, "num.csv", NUMERIC_WINNERS)
    at.radio(key="map_kind").set_value("votes")
    run(at)
    assert at.number_input(key="map_threshold").value == 1.5  # the middle of 1.0 … 2.0
    assert not [s for s in at.selectbox if s.key and s.key.startswith("map_outcome_winner_")]  # no 11 dropdowns
    click(at, "upload_store")
    assert texts(at.success) == ["stored 11 votes rows as dataset 'num' (id 1)"]
    with Store(db_path) as store:
        winners = store.load("num")["winner"].astype(str).tolist()
    assert winners == ["model_a"] * 5 + ["tie"] + ["model_b"] * 5


def test_empty_winners_are_dropped_and_counted(at, db_path):
    upload(at, "e.csv", EMPTY_WINNERS)
    click(at, "upload_store")  # as detected: refused, with the way out
    [code] = [c.value for c in at.code]
    assert "--outcome =drop" in code and stored(db_path) == {}
    at.radio(key="map_kind").set_value("votes")
    run(at)
    assert at.selectbox(key="map_outcome_empty").value == "drop these rows"
    click(at, "upload_store")
    assert texts(at.success) == ["stored 2 votes rows as dataset 'e' (id 1)"]
    assert any("2 rows dropped by the outcome mapping" in c for c in texts(at.caption))
