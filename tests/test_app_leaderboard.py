"""The Leaderboard page, driven through the router (app.py) with AppTest.

Like tests/test_app_data.py: a fresh store per test (``db_path``), widgets addressed by key, no exception
after any run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.io import load
from core.samples.demo import ensure_samples
from core.store import Store
from tests.app_pages import APP
from tests.conftest import shared_file
from tests.test_app_data import texts

REPO = Path(__file__).resolve().parents[1]

# mean ranks x first (0.33 vs 0.20), win rate ranks y first (2 of 3 tasks)
DISAGREE_CSV = (b"model_id,task_id,metric_name,score\nx,t1,acc,1.0\nx,t2,acc,0.0\nx,t3,acc,0.0\n"
                b"y,t1,acc,0.0\ny,t2,acc,0.3\ny,t3,acc,0.3\n")
ODD_CSV = (b"model_id,task_id,metric_name,score\na|b,t1,acc,0.9\na|b,t2,acc,0.8\na|b,t3,acc,0.7\n"
           b"<i>c</i>,t1,acc,0.1\n<i>c</i>,t2,acc,0.2\n<i>c</i>,t3,acc,0.3\n")
VOTES_CSV = b"model_a,model_b,winner\nalpha,beta,model_a\nbeta,gamma,model_b\n"


@pytest.fixture
def app(db_path) -> AppTest:
    """The real router switched to the Leaderboard page, on a fresh store (not run yet)."""
    at = AppTest.from_file(APP, default_timeout=60)
    return at.switch_page(str(REPO / "pages" / "leaderboard.py"))


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def stored(db_path: Path, name: str, data: bytes, kind: str | None = None) -> int:
    with Store(db_path) as store:
        return store.ingest(load(data, name=f"{name}.csv", kind=kind), name=name).dataset.id


def samples(db_path: Path) -> dict[str, int]:
    with Store(db_path) as store:
        ensure_samples(store)
        return {d.name: d.id for d in store.datasets()}


def frames(at: AppTest) -> list:
    """The page's tables after the task-weights editor (which comes first)."""
    shown = [d.value for d in at.main.dataframe]
    return shown[1:] if shown and list(shown[0].columns) == ["Task", "Category", "Weight"] else shown


def table(at: AppTest):
    return frames(at)[0]


def test_empty_store_says_what_to_do(app):
    at = run(app)
    assert texts(at.title) == ["Leaderboard"]
    assert any("eval-runs dataset" in t for t in texts(at.main.info))
    assert not at.main.dataframe


def test_votes_dataset_is_not_ranked_here(app, db_path):
    app.session_state["active_dataset"] = samples(db_path)["arena_demo"]
    at = run(app)
    assert any("EvalRuns" in t for t in texts(at.main.info))
    assert not at.main.dataframe


def test_demo_runs_render_everything(app, db_path):
    app.session_state["active_dataset"] = samples(db_path)["evalruns_demo"]
    at = run(app)
    shown = table(at)
    assert list(shown["Model"]) == ["atlas-70b", "borealis-8b", "cirrus-mini"]
    first = shown.iloc[0]
    assert first["Mean"] == "0.66" and first["Rank"] == 1
    assert first["95% CI"].count("-") == 1 and all(len(p) == 4 for p in first["95% CI"].split("-"))
    assert first["Rank range"] == "1-2" and first["Tasks completed"] == 12 and first["Tasks missing"] == 0
    assert list(shown["Tie group"]) == [1, 1, 2]
    charts = at.get("plotly_chart")
    assert len(charts) == 4  # bars, category heatmap, pairwise matrix, critical-difference diagram
    pairs = frames(at)[1]
    assert len(pairs) == 3 and set(pairs["Verdict"]) <= {"differs", "tie"}
    assert {"Paired width", "Unpaired width"} <= set(pairs.columns)
    assert at.metric[0].value == "2 of 3"
    assert any("Iman–Davenport" in t and "the models differ" in t for t in texts(at.markdown))
    assert any("Nemenyi critical difference" in t for t in texts(at.markdown))
    assert len(frames(at)) == 3  # the per-task pivot, in its expander
    assert at.number_input(key="board_bootstrap").value == 500
    assert at.selectbox(key="board_metric").value is None  # 4 metric names, one per task

    at.toggle(key="board_stratified").set_value(True)
    run(at)
    assert table(at).iloc[0]["Rank range"] == "1"  # stratified draws narrow atlas-70b's rank interval
    assert any("stratified by category" in t for t in texts(at.caption))


def test_rank_by_win_rate_reorders(app, db_path):
    app.session_state["active_dataset"] = stored(db_path, "disagree", DISAGREE_CSV, kind="eval_runs")
    at = run(app)
    assert list(table(at)["Model"]) == ["x", "y"]
    at.radio(key="board_rank_by").set_value("win_rate")
    run(at)
    shown = table(at)
    assert list(shown["Model"]) == ["y", "x"]
    assert list(shown["Win rate"]) == ["0.67", "0.33"]


def test_settings_change_the_bootstrap(app, db_path):
    app.session_state["active_dataset"] = samples(db_path)["evalruns_demo"]
    at = run(app)
    before = table(at)["95% CI"].tolist()
    at.number_input(key="board_bootstrap").set_value(200)
    at.number_input(key="board_alpha").set_value(0.2)
    at.number_input(key="board_seed").set_value(3)
    run(at)
    shown = table(at)
    assert "80% CI" in shown.columns and shown["80% CI"].tolist() != before
    assert shown.iloc[0]["Mean"] == "0.66"


def test_uploaded_long_csv_with_odd_model_names(app, db_path):
    at = run(app)  # nothing stored yet
    at.switch_page(str(REPO / "pages" / "data.py"))
    run(at)
    at.file_uploader(key="upload_file").set_value(("odd.csv", ODD_CSV, "text/csv"))
    run(at)
    at.button(key="upload_store").click()
    run(at)
    assert texts(at.success) == ["stored 6 eval runs rows as dataset 'odd' (id 1)"]
    at.switch_page(str(REPO / "pages" / "leaderboard.py"))
    run(at)
    shown = table(at)
    assert list(shown["Model"]) == ["a|b", "<i>c</i>"]
    assert shown.iloc[0]["Mean"] == "0.80"
    pivot = frames(at)[2]  # tasks as rows, one column per model (names kept verbatim)
    assert list(pivot.columns) == ["Task", "<i>c</i>", "a|b"] and list(pivot["Task"]) == ["t1", "t2", "t3"]


def test_several_metrics_per_task_are_chosen_one_at_a_time(app, db_path):
    both = DISAGREE_CSV + b"x,t1,f1,0.1\nx,t2,f1,0.2\nx,t3,f1,0.3\ny,t1,f1,0.9\ny,t2,f1,0.8\ny,t3,f1,0.7\n"
    app.session_state["active_dataset"] = stored(db_path, "two metrics", both, kind="eval_runs")
    at = run(app)
    picker = at.selectbox(key="board_metric")
    assert picker.options == ["acc", "f1"] and picker.value == "acc"
    assert list(table(at)["Model"]) == ["x", "y"]
    picker.set_value("f1")
    run(at)
    assert list(table(at)["Model"]) == ["y", "x"] and table(at).iloc[0]["Mean"] == "0.80"


def test_one_task_shows_no_interval_and_why(app, db_path):
    # One task cannot give an interval or a verdict: the page says so instead of "0.90-0.90" and "differs".
    data = b"model_id,task_id,metric_name,score\na,t1,acc,0.9\nb,t1,acc,0.5\nc,t1,acc,0.1\n"
    app.session_state["active_dataset"] = stored(db_path, "one_task", data, kind="eval_runs")
    at = run(app)
    shown = table(at)
    assert list(shown["95% CI"]) == ["–"] * 3 and list(shown["Rank range"]) == ["1-3"] * 3
    assert set(shown["No interval because"]) == {"1 task: too few for an interval"}
    assert any("no interval" in t for t in texts(at.main.info))
    pairs = frames(at)[1]
    assert set(pairs["Verdict"]) == {"no evidence"} and at.metric[0].value == "0 of 3"


def test_mmlu_pro_renders_without_a_styler(app, db_path):
    # 29 models × 12,032 tasks, 349k pivot cells: past the 262,144 cells Streamlit lets a pandas Styler
    # render, so the per-task table must reach the page as plain numbers.
    path = shared_file("mmlu_pro_per_question/correct_matrix_wide.csv")
    with Store(db_path) as store:
        dataset = store.ingest(load(path), name="mmlu_pro").dataset.id
    app.session_state["active_dataset"] = dataset
    app.session_state["board_bootstrap"] = 1000
    at = run(app)
    shown = table(at)
    assert len(shown) == 29 and shown.iloc[0]["Model"] == "gemini-1.5-pro-002"
    pivot_table = frames(at)[-1]
    assert pivot_table.shape == (12_032, 30) and list(pivot_table.columns)[0] == "Task"
    assert pivot_table.drop(columns="Task").dtypes.map(lambda d: d.kind == "f").all()
