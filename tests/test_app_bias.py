"""The Bias page through app.py with AppTest: empty state, the planted biases of the sample, filters."""

from __future__ import annotations

from core.samples import BIASED_MODEL
from tests.app_pages import app_router, open_page, samples  # noqa: F401 - fixtures
from tests.test_app_data import run, texts

# Charts per tab: per-model left shares; early shares; the length curve; pairing; raw vs corrected twice.
TAB_CHARTS = {"Position": 1, "Time exposure": 1, "Length": 1, "Pairing": 1, "Raw vs corrected": 2, "IPW weights": 0}


def tile_texts(at) -> list[str]:
    return [m.value for m in at.main.markdown if m.value.startswith("**") or m.value.startswith("###")]


def test_empty_store_says_what_to_do(app_router):
    at = open_page("bias")
    [info] = texts(at.main.info)
    assert "votes dataset" in info and "Data page" in info


def test_eval_runs_are_not_diagnosed(app_router, samples):
    at = open_page("bias", samples["evalruns_demo"])
    assert "votes dataset" in texts(at.main.info)[0]


def test_the_planted_biases_of_the_sample_are_flagged(app_router, samples):
    at = open_page("bias", samples["arena_demo"])
    assert not at.error
    shown = tile_texts(at)
    assert "**Left answer chosen**" in shown and "**Model shown early**" in shown
    badges = [b.proto.body for b in at.main.get("markdown") if ":red-badge" in b.proto.body
              or ":green-badge" in b.proto.body]
    assert sum("bias detected" in b for b in badges) >= 3  # left preference, model on the left, shown early
    assert [t.label for t in at.tabs] == list(TAB_CHARTS)
    for tab, charts in TAB_CHARTS.items():  # lazy tabs: only the open one is drawn
        at = open_page("bias", samples["arena_demo"], bias_tab=tab)
        assert not at.error and len(at.get("plotly_chart")) == charts, tab
    at = open_page("bias", samples["arena_demo"], bias_tab="Raw vs corrected")
    [corrections] = [d.value for d in at.dataframe if "Raw win rate" in d.value.columns]
    assert set(corrections.columns) >= {"Raw win rate", "Stratified win rate", "Elo (IPW)"}
    assert BIASED_MODEL in set(corrections["Model"])
    metrics = {m.label: m.value for m in open_page("bias", samples["arena_demo"], bias_tab="IPW weights").metric}
    ess = float(metrics["Kish effective sample size"].replace(",", ""))
    assert 0 < ess <= 20_000
    assert float(metrics["Design effect"]) >= 1.0


def test_alpha_and_filters_change_what_is_diagnosed(app_router, samples):
    at = open_page("bias", samples["arena_demo"])
    before = at.caption[1].value if len(at.caption) > 1 else ""
    key = f"filter_game_id_{samples['arena_demo']}"
    at.multiselect(key=key).set_value(["chat"])
    run(at)
    assert not at.error
    analysed = [c.value for c in at.main.caption if "analysed votes" in c.value]
    assert analysed and analysed[0] != before
    n = int(analysed[0].split(" analysed")[0].replace(",", ""))
    assert 0 < n < 20_000


def test_a_date_range_with_no_votes_says_so(app_router, samples):
    at = open_page("bias", samples["arena_demo"])
    key = f"filter_timestamp_{samples['arena_demo']}"
    first, last = at.date_input(key=key).value
    assert first <= last
    if first == last:
        return  # one day of data: no empty range to pick
    at.date_input(key=key).set_value((first, first))
    run(at)
    assert not at.error
