"""Across analysis pages through app.py: the sidebar filters reach Rankings and Leaderboard, and the
Leaderboard's task weights change its means."""

from __future__ import annotations

from tests.app_pages import app_router, open_page, samples  # noqa: F401 - fixtures
from tests.test_app_data import run


def test_rankings_and_leaderboard_follow_the_filters(app_router, samples):
    votes = samples["arena_demo"]
    at = open_page("rankings", votes, rank_ci="none")
    every = at.dataframe[0].value["Votes"].sum()
    at.multiselect(key=f"filter_game_id_{votes}").set_value(["chat"])
    run(at)
    chat = at.dataframe[0].value["Votes"].sum()
    assert 0 < chat < every
    runs = samples["evalruns_demo"]
    at = open_page("leaderboard", runs)
    tasks = at.dataframe[1].value["Tasks completed"].max()  # after the task-weights editor
    at.multiselect(key=f"filter_category_{runs}").set_value(["math"])
    run(at)
    assert not at.error
    assert 0 < at.dataframe[1].value["Tasks completed"].max() < tasks


def test_task_weights_edited_on_the_leaderboard_change_the_means(app_router, samples):
    from core.samples import evalruns_demo

    at = open_page("leaderboard", samples["evalruns_demo"])
    editor = at.dataframe[0]
    assert list(editor.value.columns) == ["Task", "Category", "Weight"] and (editor.value["Weight"] == 1).all()
    others = [i for i, c in enumerate(editor.value["Category"]) if c != "math"]
    at.session_state[editor.key] = {"edited_rows": {i: {"Weight": 0.0} for i in others}, "added_rows": [],
                                    "deleted_rows": []}
    run(at)
    assert not at.error
    board = at.dataframe[1].value.set_index("Model")["Mean"].astype(float)
    runs = evalruns_demo()
    math = runs[runs["category"] == "math"].groupby("model_id")["score"].mean().round(2)
    assert board.sort_index().tolist() == math.sort_index().tolist()
