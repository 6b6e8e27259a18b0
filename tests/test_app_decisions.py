"""The Decisions page through app.py with AppTest: empty states, the Robustness tab on the arena sample and on
a small file whose answer is known (A beats B in 60 of 100 votes: 21 votes flip the top), the pair selector and
the CSV of the votes."""

from __future__ import annotations

import json

import pandas as pd

from core.decisions.render import robustness_dict
from core.decisions.robustness import robustness
from core.io import load
from core.ranking.request import prepare_votes
from core.store import Store
from tests.app_pages import app_router, open_page, samples  # noqa: F401 - fixtures
from tests.test_app_data import run, texts


def small_votes() -> pd.DataFrame:
    """A beats B 60–40; B beats C 40–5 (C is far behind: only A and B contend for the top)."""
    rows = ([("A", "B", "model_a")] * 60 + [("A", "B", "model_b")] * 40 + [("B", "C", "model_a")] * 40
            + [("B", "C", "model_b")] * 5)
    frame = pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])
    frame["annotator_id"] = [f"ann{i % 3}" for i in range(len(frame))]
    frame["game_id"] = "chat"
    frame["timestamp"] = pd.date_range("2026-03-02", periods=len(frame), freq="2h", tz="UTC").strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    return frame


def small_dataset(db_path) -> int:
    with Store(db_path) as store:
        data = small_votes().to_csv(index=False).encode()
        return store.ingest(load(data, name="sixty_forty.csv"), name="sixty_forty").dataset.id


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.main.metric}


def csv_button(at):
    return [b for b in at.main.get("download_button") if "CSV" in b.proto.label]


def test_empty_store_says_what_to_do(app_router):
    at = open_page("decisions")
    [info] = texts(at.main.info)
    assert "votes dataset" in info and "Data page" in info


def test_eval_runs_are_not_decided(app_router, samples):
    at = open_page("decisions", samples["evalruns_demo"])
    assert "votes dataset" in texts(at.main.info)[0]


def test_the_known_answer_of_a_small_file(app_router, db_path):
    at = open_page("decisions", small_dataset(db_path), decisions_tab="Robustness")
    assert not at.error
    assert [t.label for t in at.tabs] == ["Plan", "Robustness", "Drift"]
    shown = metrics(at)
    assert shown["Top model"] == "A" and shown["Votes to drop"] == "21" and shown["Overtaken by"] == "B"
    assert shown["Share of the votes"] == f"{21 / 145:.3%}"
    assert shown["Confirmed"].startswith("refit")
    [ratings] = [d.value for d in at.main.dataframe if "Rating before" in d.value.columns]
    assert list(ratings["Model"]) == ["A", "B"]
    a, b = ratings.set_index("Model")["Rating after"][["A", "B"]]
    assert b > a  # after dropping them, B is ahead
    [votes] = [d.value for d in at.main.dataframe if "winner" in d.value.columns]
    assert len(votes) == 21 and set(votes["winner"]) == {"model_a"} and set(votes["model_b"]) == {"B"}
    [by_annotator] = [d.value for d in at.main.dataframe if "Annotator" in d.value.columns]
    assert by_annotator["Votes"].sum() == 21
    assert len(csv_button(at)) == 1


def test_the_tab_agrees_with_the_command(app_router, samples, db_path):
    at = open_page("decisions", samples["arena_demo"], decisions_tab="Robustness")
    assert not at.error
    with Store(db_path) as store:
        frame = store.load(samples["arena_demo"])
    expected = json.loads(json.dumps(robustness_dict(robustness(prepare_votes(frame, "exclude")))))
    shown = metrics(at)
    assert shown["Top model"] == expected["top_model"]
    assert shown["Votes to drop"] == f"{expected['flip_votes']:,}"
    assert shown["Overtaken by"] == expected["flipped_to"]
    [votes] = [d.value for d in at.main.dataframe if "winner" in d.value.columns]
    assert list(votes["row"]) == [v["row"] for v in expected["votes"]]
    assert csv_button(at)


def test_the_pair_selector_asks_about_two_models(app_router, db_path):
    dataset = small_dataset(db_path)
    at = open_page("decisions", dataset, decisions_tab="Robustness")
    at.segmented_control(key="robustness_question").set_value("A pair's order")
    run(at)
    assert [s.label for s in at.main.selectbox] == ["Model A", "Model B"]
    at.selectbox(key="robustness_pair_a").set_value("B")
    run(at)
    at.selectbox(key="robustness_pair_b").set_value("C")
    run(at)
    assert not at.error
    with Store(db_path) as store:
        expected = robustness(prepare_votes(store.load(dataset), "exclude"), ("B", "C"))
    shown = metrics(at)
    assert shown["Ahead now"] == "B" and shown["Overtaken by"] == "C"
    assert shown["Votes to drop"] == f"{expected.flip_votes:,}" and expected.flip_votes != 21
    assert len(csv_button(at)) == 1


def test_only_golden_votes_say_there_is_nothing_to_analyse(app_router, db_path):
    data = b"model_a,model_b,winner,is_golden,golden_answer\na,b,model_a,true,model_a\nb,a,tie,true,model_b\n"
    with Store(db_path) as store:
        dataset = store.ingest(load(data, name="golden.csv")).dataset
    at = open_page("decisions", dataset.id)
    assert not at.error and not at.main.metric
    assert "No votes to analyse" in texts(at.main.info)[0]
