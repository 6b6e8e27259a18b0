"""The Reports page through app.py with AppTest: empty state, building both kinds of bundle, previews."""

from __future__ import annotations

import io
import json
import zipfile

from core.filters import Filters
from core.report.bundle import ReportSettings
from core.report.download import build_bundle
from core.store import Store
from tests.app_pages import app_router, open_page, samples  # noqa: F401 - fixtures
from tests.test_app_data import run, texts

FAST = {"report_bootstrap": 60, "report_png": False}


def build(at):
    at.button(key="FormSubmitter:report_settings-Build the report").click()
    return run(at)


def test_empty_store_says_what_to_do(app_router):
    at = open_page("reports")
    assert "votes dataset or an EvalRuns score table" in texts(at.main.info)[0]


def test_nothing_is_built_before_the_button(app_router, samples):
    at = open_page("reports", samples["arena_demo"], **FAST)
    assert "Build the report" in texts(at.main.info)[0]
    assert not at.get("download_button")


def test_votes_bundle_previews_and_downloads(app_router, samples):
    at = build(open_page("reports", samples["arena_demo"], **FAST))
    assert not at.error and not at.exception
    downloads = at.get("download_button")
    files = {d.proto.label: d.proto.help for d in downloads}
    assert files == {"JSON": "report.json", "Markdown": "BT_ANALYSIS_REPORT.md", "CSV": "BT_ANALYSIS_REPORT.csv",
                     "Everything (zip)": ""}
    assert len(at.tabs) == 4
    preview = at.dataframe[0].value
    assert {"scope", "model", "rating"} <= set(preview.columns)
    assert (preview["scope"] == "global").sum() == 12
    doc = at.json[0].proto.body
    assert json.loads(doc)["params"]["bootstrap"] == 60
    # the bundle stays after a page switch and back
    at.switch_page("pages/data.py")
    run(at)
    at.switch_page("pages/reports.py")
    run(at)
    assert at.get("download_button") and not any("Build the report" in t for t in texts(at.main.info))


def test_changing_a_setting_asks_for_a_new_build(app_router, samples):
    at = build(open_page("reports", samples["arena_demo"], **FAST))
    at.number_input(key="report_seed").set_value(7)
    build(at)
    assert json.loads(at.json[0].proto.body)["seed"] == 7


def test_eval_runs_bundle(app_router, samples):
    at = build(open_page("reports", samples["evalruns_demo"], **FAST))
    assert not at.error
    files = {d.proto.label: d.proto.help for d in at.get("download_button")}
    assert files["CSV"] == "LEADERBOARD.csv" and files["Markdown"] == "LEADERBOARD.md"
    assert len(at.dataframe[0].value) == 3


def test_the_bundle_applies_the_filters_and_zips_every_file(db_path, samples):
    with Store(db_path) as store:
        info = store.dataset("arena_demo")
        frame = store.load(info.id)
    settings = ReportSettings(bootstrap=50, png=False)
    bundle = build_bundle(info, frame, Filters(games=("chat",)), settings, None)
    doc = json.loads(bundle.files["report.json"])
    assert doc["input"]["filters"] == "game_id ∈ {chat}"
    assert 0 < doc["input"]["rows"] < len(frame)
    assert {g["group"]["game_id"] for g in doc["groups"]["game"]} == {"chat"}
    with zipfile.ZipFile(io.BytesIO(bundle.everything_zip())) as archive:
        assert set(archive.namelist()) == set(bundle.files)
    assert bundle.figures == {} and "turned off" in bundle.png_note


def test_png_figures_zip(db_path, samples):
    import pytest

    from core.charts.export import png_available

    if not png_available():
        pytest.skip("PNG export needs kaleido and Chromium")
    with Store(db_path) as store:
        info = store.dataset("evalruns_demo")
        frame = store.load(info.id)
    bundle = build_bundle(info, frame, Filters(), ReportSettings(bootstrap=50, png=True), None)
    assert bundle.figures and bundle.png_note is None
    with zipfile.ZipFile(io.BytesIO(bundle.figures_zip())) as archive:
        names = archive.namelist()
        assert names == [f"figures/{n}" for n in bundle.figures]
        assert all(archive.read(n)[:8] == b"\x89PNG\r\n\x1a\n" for n in names)
    assert "figures/leaderboard_bars.png" in names


def test_the_annotator_policy_reaches_the_votes_bundle(app_router, samples):
    # one policy for every page: the sidebar's
    at = open_page("reports", samples["arena_demo"], **FAST, annotator_policy="keep")
    assert at.sidebar.selectbox(key="annotator_policy").value == "keep"
    at = build(at)
    params = json.loads(at.json[0].proto.body)["params"]
    assert params["annotators"] == "keep" and params["unqualified_votes"] > 0
    assert params["annotator_policy"]["policy"] == "keep" and params["annotator_policy"]["judgements_left_out"] == 0
    runs = open_page("reports", samples["evalruns_demo"], **FAST)
    assert "annotator_policy" not in [s.key for s in runs.get("selectbox")]  # a score table has no annotators
