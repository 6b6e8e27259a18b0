"""The Rankings page, driven through the router (app.py) with AppTest.

Widgets are addressed by key and every run must end without an exception.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.io import load
from core.samples.demo import ensure_samples
from core.store import Store
from tests.app_pages import APP
from tests.test_app_data import run, texts

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def router(db_path) -> str:
    """The real router, on a fresh store."""
    return APP


@pytest.fixture
def samples(db_path) -> dict[str, int]:
    with Store(db_path) as store:
        ensure_samples(store)
        return {d.name: d.id for d in store.datasets()}


def rankings(router: str, active: int | None = None, **widgets) -> AppTest:
    """The app with the Rankings page selected (and a dataset active)."""
    at = AppTest.from_file(router, default_timeout=60)
    if active is not None:
        at.session_state["active_dataset"] = active
    for key, value in widgets.items():
        at.session_state[key] = value
    at.switch_page(str(REPO / "pages" / "rankings.py"))
    return run(at)


def test_data_page_stays_default(router, samples):
    at = run(AppTest.from_file(router, default_timeout=60))
    assert texts(at.title) == ["Data"]


def test_empty_store_says_what_to_do(router):
    at = rankings(router)
    assert texts(at.title) == ["Rankings"]
    [info] = texts(at.main.info)
    assert "votes dataset" in info and "Data page" in info
    assert not at.main.dataframe and not at.error


def test_eval_runs_dataset_is_not_ranked(router, samples):
    at = rankings(router, samples["evalruns_demo"])
    [info] = texts(at.main.info)
    assert "votes dataset" in info and "Data page" in info
    assert not at.main.dataframe and not at.error


def test_votes_page_renders_everything(router, samples):
    at = rankings(router, samples["arena_demo"], rank_bootstrap=100)
    assert not at.error
    assert at.radio(key="rank_scheme").value == "bt"
    assert at.selectbox(key="rank_ci").value == "bootstrap"
    assert at.sidebar.selectbox(key="annotator_policy").value == "exclude"  # one policy for every page
    table = at.main.dataframe[0].value
    assert list(table.columns[:3]) == ["Rank", "Model", "Elo"]
    assert table["Rank"].is_monotonic_increasing
    assert (table["CI low (95%)"] <= table["Elo"]).all() and (table["Elo"] <= table["CI high (95%)"]).all()
    assert 1350 < table["Elo"].mean() < 1650
    assert all(r != "–" for r in table["Rank range"])
    charts = at.get("plotly_chart")
    assert len(charts) == 2  # forest and the open heatmap tab (observed); the other tabs draw when opened
    labels = [t.label for t in at.tabs]
    assert labels == ["Observed win rates", "BT-predicted win rates", "Battles", "Rank per game",
                      "Rank per dimension"]
    for tab in ("BT-predicted win rates", "Battles"):  # lazy tabs: each draws its heatmap when opened
        opened = rankings(router, samples["arena_demo"], rank_bootstrap=100, rank_matrix_tab=tab)
        assert not opened.error and len(opened.get("plotly_chart")) == 2
    [by_game] = [d.value for d in at.main.dataframe if d.value.columns[0] == "Model"
                 and "chat rank" in d.value.columns]
    by_dimension = rankings(router, samples["arena_demo"], rank_bootstrap=100, rank_group_tab="Rank per dimension")
    assert len(by_dimension.get("plotly_chart")) == 3  # forest, observed, rank per dimension
    [dimensions] = [d.value for d in by_dimension.main.dataframe if "style rank" in d.value.columns]
    assert sorted(dimensions["style rank"].dropna()) == list(range(1, 13))
    assert by_game["chat rank"].min() == 1


@pytest.mark.parametrize("scheme", ["bt", "winrate", "stratified", "ipw", "adjusted"])
def test_every_scheme(router, samples, scheme):
    at = rankings(router, samples["arena_demo"], rank_bootstrap=100)
    at.radio(key="rank_scheme").set_value(scheme)
    run(at)
    assert not at.error
    table = at.main.dataframe[0].value if scheme != "adjusted" else None
    if scheme in ("winrate", "stratified"):
        assert table.columns[2] == "Win rate"
        assert table["Win rate"].between(0, 1).all()
    elif scheme in ("bt", "ipw"):
        assert table.columns[2] == "Elo"
        assert abs(table["Elo"].mean() - 1500) < 150
    else:
        covariates = at.main.dataframe[0].value
        assert list(covariates.columns) == ["Covariate", "Estimate", "SE"]
        assert set(covariates["Covariate"]) >= {"position (left)", "length"}
        adjusted, plain = at.main.dataframe[1].value, at.main.dataframe[2].value
        assert list(adjusted.columns[:3]) == list(plain.columns[:3]) == ["Rank", "Model", "Elo"]
        assert not adjusted["Elo"].equals(plain["Elo"])
        assert {"Adjusted", "Plain Bradley–Terry", "Covariates"} <= set(texts(at.subheader))


def test_ci_none_vs_bootstrap(router, samples):
    at = rankings(router, samples["arena_demo"], rank_bootstrap=100)
    boot = at.main.dataframe[0].value
    assert boot["CI low (95%)"].notna().all()
    assert at.number_input(key="rank_bootstrap").value == 100
    at.selectbox(key="rank_ci").set_value("none")
    run(at)
    none = at.main.dataframe[0].value
    assert none["CI low (95%)"].isna().all() and (none["Rank range"] == "–").all()
    assert list(none["Elo"]) == list(boot["Elo"])  # same point estimates
    assert not any(n.key == "rank_bootstrap" for n in at.number_input)
    assert not at.error


def test_annotator_policy_and_seed(router, samples):
    at = rankings(router, samples["arena_demo"], rank_bootstrap=100)
    excluded = at.main.dataframe[0].value
    at.selectbox(key="annotator_policy").set_value("keep")
    run(at)
    kept = at.main.dataframe[0].value
    assert kept["Votes"].sum() >= excluded["Votes"].sum()
    at.number_input(key="rank_seed").set_value(7)
    run(at)
    assert not at.error


def test_unidentifiable_votes_get_a_note(router, db_path):
    from core.io import load

    chain = b"model_a,model_b,winner\nalpha,beta,model_a\nbeta,gamma,model_a\nalpha,gamma,model_a\n"
    with Store(db_path) as store:
        dataset = store.ingest(load(chain, name="chain.csv"), name="chain").dataset
    at = rankings(router, dataset.id, rank_bootstrap=100)
    [note] = texts(at.warning)
    assert "Not identifiable" in note and "virtual tie" in note
    assert list(at.main.dataframe[0].value["Model"]) == ["alpha", "beta", "gamma"]


def test_core_errors_are_shown_not_raised(router, db_path):
    only_golden = (b"model_a,model_b,winner,is_golden,golden_answer\n"
                   b"a,b,model_a,true,model_a\nb,a,model_b,true,model_a\n")
    with Store(db_path) as store:
        dataset = store.ingest(load(only_golden, name="golden.csv")).dataset
    at = rankings(router, dataset.id, rank_bootstrap=100)
    [error] = texts(at.error)
    assert "could not be computed" in error and "no votes to rank" in error
    assert not at.main.dataframe


def test_one_vote_shows_no_interval_and_why(router, db_path):
    with Store(db_path) as store:
        dataset = store.ingest(load(b"model_a,model_b,winner\nalpha,beta,model_a\n", name="one.csv"), name="one")
    at = rankings(router, dataset.dataset.id, rank_bootstrap=100)
    assert not at.error
    table = at.main.dataframe[0].value
    assert table["CI low (95%)"].isna().all() and list(table["Rank range"]) == ["1–2", "1–2"]
    assert set(table["No interval because"]) == {"1 vote: too few for an interval"}
    assert any("No interval for alpha, beta (1 vote: too few for an interval)" in t for t in texts(at.main.info))


def test_a_policy_that_leaves_no_votes_says_so(router, db_path):
    rows = "".join(f"{'abc'[i % 3]},{'bca'[i % 3]},model_a,u{i % 3},1.0\n" for i in range(12))
    data = ("model_a,model_b,winner,annotator_id,response_time_s\n" + rows).encode()
    with Store(db_path) as store:
        dataset = store.ingest(load(data, name="hasty.csv"), name="hasty")
    at = rankings(router, dataset.dataset.id, rank_bootstrap=100)
    [error] = texts(at.error)
    assert "annotator policy 'exclude' left no votes" in error and "keep their votes" in error
    kept = rankings(router, dataset.dataset.id, rank_bootstrap=100, annotator_policy="keep")
    assert not kept.error and len(kept.main.dataframe[0].value) == 3


def test_the_sidebar_screen_switch_makes_flagged_annotators_unqualified(router, db_path):
    """The qualification rule "screen" (--qualify golden,fast,screen) from the sidebar: reversed voters, who
    no golden question catches here, become unqualified on the Rankings page only when it is on."""
    from core.annotators.screen_sample import population

    frame, kinds = population(seed=3, n_models=6, n_annotators=20, votes_each=40, reversed_share=0.2,
                              random_share=0.0)
    with Store(db_path) as store:
        dataset = store.ingest(load(frame.to_csv(index=False).encode(), name="planted.csv"), name="planted")
    plain_run = rankings(router, dataset.dataset.id, rank_bootstrap=100)
    assert plain_run.sidebar.toggle(key="annotator_screen").value is False
    assert not [t for t in texts(plain_run.caption) if t.startswith("Unqualified annotators")]
    screened = rankings(router, dataset.dataset.id, rank_bootstrap=100, annotator_screen=True)
    [caption] = [t for t in texts(screened.caption) if t.startswith("Unqualified annotators")]
    reversed_voters = {a for a, kind in kinds.items() if kind == "reversed"}
    named = set(caption.removeprefix("Unqualified annotators: ").rstrip(" …").split(", "))
    assert named == reversed_voters
    assert screened.main.dataframe[0].value["Votes"].sum() < plain_run.main.dataframe[0].value["Votes"].sum()
