"""The Decisions page's Plan tab through app.py with AppTest: the table of neighbours agrees with `plan`, the
power slider and the pair chooser change the answer, and the sentence reads as the command's."""

from __future__ import annotations

import pandas as pd

from core.decisions.plan import plan
from core.decisions.plan_render import sentence
from core.io import load
from core.ranking.request import prepare_votes
from core.store import Store
from tests.app_pages import app_router, open_page, samples  # noqa: F401 - fixtures
from tests.test_app_data import texts


def three_models() -> pd.DataFrame:
    rows = ([("A", "B", "model_a")] * 110 + [("A", "B", "model_b")] * 90 + [("B", "C", "model_a")] * 60
            + [("B", "C", "model_b")] * 40 + [("A", "C", "model_a")] * 30 + [("A", "C", "model_b")] * 20)
    return pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])


def stored(db_path) -> int:
    with Store(db_path) as store:
        return store.ingest(load(three_models().to_csv(index=False).encode(), name="three.csv"),
                            name="three").dataset.id


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.main.metric}


def expected(power: float = 0.8, pair=None):
    frame = load(three_models().to_csv(index=False).encode(), name="three.csv").frame
    return plan(prepare_votes(frame, "exclude"), [pair] if pair else None, power=power)


def test_the_plan_tab_agrees_with_the_command(app_router, db_path):
    at = open_page("decisions", stored(db_path))
    assert not at.error
    assert [t.label for t in at.tabs][0] == "Plan"
    [table] = [d.value for d in at.main.dataframe if "Extra votes (direct)" in d.value.columns]
    want = expected()
    assert list(zip(table["Model A"], table["Model B"])) == [(r.model_a, r.model_b) for r in want.pairs]
    assert list(table["Extra votes (direct)"]) == [r.extra_votes_direct for r in want.pairs]
    assert list(table["Extra votes (scheduled)"]) == [r.extra_votes_scheduled for r in want.pairs]
    top = want.pairs[0]
    assert metrics(at)["Extra votes on the pair"] == f"{top.extra_votes_direct:,}"
    assert sentence(top, 0.05, 0.8) in texts(at.main.markdown)


def test_power_and_pair_change_the_answer(app_router, db_path):
    at = open_page("decisions", stored(db_path))
    at.slider(key="plan_power").set_value(0.9).run()
    assert not at.error
    at.selectbox(key="plan_pair_a").set_value("A").run()
    at.selectbox(key="plan_pair_b").set_value("C").run()
    assert not at.error
    row = next(r for r in expected(0.9, ("A", "C")).pairs if (r.model_a, r.model_b) == ("A", "C"))
    shown = metrics(at)
    assert shown["Extra votes on the pair"] == ("not reachable" if row.extra_votes_direct is None
                                                 else f"{row.extra_votes_direct:,}")
    assert shown["Extra votes, scheduled"] == f"{row.extra_votes_scheduled:,}"
    assert sentence(row, 0.05, 0.9) in texts(at.main.markdown)
    assert "90 % power" in sentence(row, 0.05, 0.9) or row.separated


def test_the_arena_sample(app_router, samples):
    at = open_page("decisions", samples["arena_demo"])
    assert not at.error
    [table] = [d.value for d in at.main.dataframe if "Extra votes (direct)" in d.value.columns]
    assert len(table) >= 2 and table["Min. detectable gap (Elo)"].gt(0).all()
