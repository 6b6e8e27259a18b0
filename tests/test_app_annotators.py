"""The Annotators page through app.py with AppTest: empty states, the planted random clickers, filters."""

from __future__ import annotations

from core.io import load
from core.samples import RANDOM_CLICKERS
from core.store import Store
from tests.app_pages import app_router, open_page, samples  # noqa: F401 - fixtures
from tests.test_app_data import run, texts


def test_empty_store_says_what_to_do(app_router):
    at = open_page("annotators")
    assert "votes dataset" in texts(at.main.info)[0]


def test_votes_without_annotators_say_what_is_missing(app_router, db_path):
    with Store(db_path) as store:
        dataset = store.ingest(load(b"model_a,model_b,winner\na,b,model_a\nb,a,tie\n", name="plain.csv")).dataset
    at = open_page("annotators", dataset.id)
    [info] = texts(at.main.info)
    assert "no annotator_id column" in info


def test_the_random_clickers_are_unqualified(app_router, samples):
    at = open_page("annotators", samples["arena_demo"])
    assert not at.error
    quality = at.dataframe[0].value
    unqualified = set(quality.loc[quality["Status"] == "unqualified", "Annotator"])
    assert set(RANDOM_CLICKERS) <= unqualified
    fast = quality.loc[quality["Annotator"].isin(RANDOM_CLICKERS), "Fast rate"].str.rstrip("%").astype(float)
    assert (fast > 30).all()
    no_golds = quality["Golden"] == 0
    assert (quality.loc[no_golds, "Golden accuracy"] == "–").all() and (quality.loc[no_golds, "Golden CI"] == "–").all()
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Unqualified"]) == len(unqualified)
    assert int(metrics["Annotators"].replace(",", "")) == len(quality)
    assert -1 <= float(metrics["Krippendorff's α"]) <= 1
    assert len(at.get("plotly_chart")) == 3  # the scatter, the response times, the screen's running log-LR
    comparison = [d.value for d in at.dataframe if "Rank (all votes)" in d.value.columns][0]
    assert sorted(comparison["Rank (qualified only)"].dropna()) == sorted(comparison["Rank (all votes)"])


def test_a_game_filter_narrows_every_count(app_router, samples):
    at = open_page("annotators", samples["arena_demo"])
    total = at.dataframe[0].value["Votes"].sum()
    at.multiselect(key=f"filter_game_id_{samples['arena_demo']}").set_value(["chat"])
    run(at)
    assert not at.error
    assert 0 < at.dataframe[0].value["Votes"].sum() < total


def test_a_larger_alpha_narrows_the_accuracy_intervals(app_router, samples):
    wide = open_page("annotators", samples["arena_demo"], annotators_alpha=0.01).dataframe[0].value
    narrow = open_page("annotators", samples["arena_demo"], annotators_alpha=0.2).dataframe[0].value
    def width(q):
        bounds = q["Golden CI"][q["Golden CI"] != "–"].str.split("–", expand=True).astype(float)
        return (bounds[1] - bounds[0]).mean()

    assert width(narrow) < width(wide)


def test_the_sequential_screen_section_shows_the_flagged_and_a_path(app_router, samples):
    at = open_page("annotators", samples["arena_demo"])
    assert "Sequential screen" in [h.value for h in at.subheader]
    screen = [d.value for d in at.dataframe if "Flagged at vote" in d.value.columns][0]
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Flagged"]) == len(screen) > 0
    assert set(screen["Annotator"]) <= set(RANDOM_CLICKERS)  # the planted random clickers, nobody else
    assert (screen["Flagged at vote"] <= screen["Votes"]).all()
    picker = at.selectbox(key="annotators_screen_pick")
    assert picker.value == screen["Annotator"].iloc[0]  # the earliest flag first
    honest = [o for o in picker.options if o not in set(screen["Annotator"])][0]
    picker.set_value(honest)
    run(at)
    assert not at.error and len(at.get("plotly_chart")) == 3
